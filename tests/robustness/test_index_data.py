"""Index data (take, gather, take_along_axis, integer-array indexing, class targets, one_hot,
embedding) is checked against the axis it indexes, eager and under ``jit``: an index past the
axis used to read the next row through the flattened gather (index 5 on a size-3 axis returned
element (1, 2)) and its gradient landed on that row; class indices wrapped or gave zero rows.
NumPy's rule for positions (``-n <= i < n``, negative ones wrap once), PyTorch's for classes
(``0 <= i < C``)."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.nn.functional as F
from tenferro.errors import IndexOutOfBoundsError, ShapeError
from tenferro.testing import check_grads

X = np.arange(6.0).reshape(2, 3)

# (name, f(x, i), index that is in range for f, axis size)
GATHERS = [
    ("take", lambda x, i: tf.take(x, i, axis=1), [1]),
    ("take_along_axis", lambda x, i: tf.take_along_axis(x, tf.reshape(i, (1, -1)), axis=1), [1]),
    ("gather", lambda x, i: tf.gather(x, 1, tf.broadcast_to(i, (2, i.shape[0]))), [1]),
    ("getitem", lambda x, i: x[:, i], [1]),
    ("index_select", lambda x, i: tf.index_select(x, 1, i), [1]),
]


@pytest.mark.parametrize("name,f,_ok", GATHERS, ids=[g[0] for g in GATHERS])
@pytest.mark.parametrize("bad", [3, 5, -4, -7])
def test_an_index_past_the_axis_raises_eager_and_jit(name, f, _ok, bad):
    x, i = tf.tensor(X), tf.tensor([0, bad])
    with pytest.raises(IndexOutOfBoundsError, match=rf"index {bad} is out of bounds"):
        f(x, i)
    with pytest.raises(IndexOutOfBoundsError, match=rf"index {bad} is out of bounds.*\[at "):
        tf.jit(f)(x, i)


@pytest.mark.parametrize("name,f,_ok", GATHERS, ids=[g[0] for g in GATHERS])
@pytest.mark.parametrize("idx", [[-1, 0], [-3, 2], [2, -2]], ids=str)
def test_negative_indices_wrap_once_as_numpy(name, f, _ok, idx):
    x, i = tf.tensor(X), tf.tensor(idx)
    want = X[:, np.asarray(idx) % 3]
    np.testing.assert_array_equal(f(x, i).numpy().reshape(want.shape), want)
    np.testing.assert_array_equal(tf.jit(f)(x, i).numpy().reshape(want.shape), want)


def test_the_error_is_named_and_also_an_index_error():
    with pytest.raises(IndexError):  # ported code catching IndexError keeps working
        tf.take(tf.tensor(X), tf.tensor([5]), axis=1)
    with pytest.raises(ShapeError, match=r"take: index 5 is out of bounds \(valid: -3\.\.2"):
        tf.take(tf.tensor(X), tf.tensor([5]), axis=1)


def test_the_gradient_of_a_gather_never_lands_on_another_row():
    x = tf.tensor(X)
    f = lambda x: tf.sum(tf.take_along_axis(x, tf.tensor([[2], [5]]), axis=1))  # noqa: E731
    with pytest.raises(IndexOutOfBoundsError):
        tf.grad(f)(x)
    with pytest.raises(IndexOutOfBoundsError):
        tf.jit(tf.grad(f))(x)
    g = tf.grad(lambda x: tf.sum(tf.take_along_axis(x, tf.tensor([[2], [-1]]), axis=1)))(x)
    np.testing.assert_array_equal(g.numpy(), [[0, 0, 1], [0, 0, 1]])


def test_scatter_add_checks_its_indices():
    with pytest.raises(IndexOutOfBoundsError, match="scatter_add: index 3"):
        tf.scatter_add(tf.zeros(3), tf.tensor([3]), tf.ones(1))
    with pytest.raises(IndexOutOfBoundsError, match="scatter_add: index -4"):
        tf.jit(lambda i: tf.scatter_add(tf.zeros(3), i, tf.ones(1)))(tf.tensor([-4]))
    np.testing.assert_array_equal(
        tf.scatter_add(tf.zeros(3), tf.tensor([-1, 0]), tf.ones(2)).numpy(), [1, 0, 1])


def test_the_check_runs_under_vmap_on_each_member():
    x = tf.tensor(X)
    out = tf.vmap(lambda i: tf.take(x, i, axis=1))(tf.tensor([[0], [-1]]))
    np.testing.assert_array_equal(out.numpy()[:, :, 0], [[0, 3], [2, 5]])
    with pytest.raises(IndexOutOfBoundsError):
        tf.vmap(lambda i: tf.take(x, i, axis=1))(tf.tensor([[0], [3]]))
    with pytest.raises(IndexOutOfBoundsError):
        tf.jit(tf.vmap(lambda i: tf.take(x, i, axis=1)))(tf.tensor([[0], [3]]))


@pytest.mark.numpy_only
def test_the_check_survives_a_saved_graph(tmp_path):
    tf.make_graph(lambda x, i: tf.take(x, i, axis=1), tf.tensor(X), tf.tensor([0])).save(
        tmp_path / "take.tfg")
    loaded = tf.load(tmp_path / "take.tfg")
    np.testing.assert_array_equal(loaded(tf.tensor(X), tf.tensor([-1])).numpy(), X[:, [2]])
    with pytest.raises(IndexOutOfBoundsError, match="take: index 3"):
        loaded(tf.tensor(X), tf.tensor([3]))


# ------------------------------------------------------------------- class indices
LOGITS = np.array([[0.1, 0.7, -0.2], [1.0, 0.3, 0.5]])


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss], ids=["cross_entropy",
                                                                      "nll_loss"])
@pytest.mark.parametrize("target", [[3, 0], [-1, 0], [0, -3]], ids=str)
def test_a_class_target_outside_0_c_raises(loss, target):
    x, t = tf.tensor(LOGITS), tf.tensor(target)
    name = loss.__name__
    with pytest.raises(IndexOutOfBoundsError, match=rf"{name}: target class -?\d.*ignore_index"):
        loss(x, t)
    with pytest.raises(IndexOutOfBoundsError, match=rf"{name}: target class .*\[at "):
        tf.jit(lambda x, t: loss(x, t))(x, t)
    with pytest.raises(IndexOutOfBoundsError):  # the label-smoothing and weight paths too
        loss(x, t, weight=tf.ones(3))


def test_ignore_index_still_skips_its_entries():
    x = tf.tensor(LOGITS)
    logp = LOGITS - np.log(np.exp(LOGITS).sum(1, keepdims=True))
    got = F.cross_entropy(x, tf.tensor([1, -100]))
    np.testing.assert_allclose(got.item(), -logp[0, 1])
    got = tf.jit(lambda x, t: F.nll_loss(x, t, ignore_index=-1))(tf.tensor(logp),
                                                                  tf.tensor([-1, 2]))
    np.testing.assert_allclose(got.item(), -logp[1, 2])


@pytest.mark.parametrize("idx", [[5], [-1], [3]], ids=str)
def test_one_hot_refuses_classes_outside_0_num_classes(idx):
    with pytest.raises(IndexOutOfBoundsError, match=rf"one_hot: class index {idx[0]}"):
        F.one_hot(tf.tensor(idx), 3)
    with pytest.raises(IndexOutOfBoundsError):
        tf.jit(lambda i: F.one_hot(i, 3))(tf.tensor(idx))
    np.testing.assert_array_equal(F.one_hot(tf.tensor([2, 0]), 3).numpy(), [[0, 0, 1], [1, 0, 0]])


def test_one_hot_num_classes_is_checked():
    with pytest.raises(ShapeError, match="num_classes"):
        F.one_hot(tf.tensor([0]), -2)
    with pytest.raises(tf.errors.DTypeError, match="num_classes"):
        F.one_hot(tf.tensor([0]), 2.5)
    with pytest.raises(IndexOutOfBoundsError):  # max + 1 classes: a negative one still raises
        F.one_hot(tf.tensor([-1, 1]))


@pytest.mark.parametrize("idx", [[-1], [3], [0, 4]], ids=str)
def test_embedding_refuses_indices_outside_the_table(idx):
    w = tf.tensor(np.eye(3))
    with pytest.raises(IndexOutOfBoundsError, match=r"embedding: index -?\d+ .*valid: 0\.\.2"):
        F.embedding(tf.tensor(idx), w)
    with pytest.raises(IndexOutOfBoundsError):
        tf.jit(F.embedding)(tf.tensor(idx), w)
    with pytest.raises(IndexOutOfBoundsError):
        tf.nn.Embedding(3, 2)(tf.tensor(idx))


@pytest.mark.parametrize("name,f,_ok", GATHERS, ids=[g[0] for g in GATHERS])
def test_gathers_with_checked_index_data_pass_the_rule_checks(name, f, _ok):
    """Under vmap the indices are batched data, so every gather goes through the check_index
    primitive: the derivatives (finite differences, transpose identity) are unchanged by it."""
    idx = tf.tensor([[0, -1], [2, 1]])
    check_grads(lambda x: tf.vmap(lambda i: f(x, i))(idx), (tf.tensor(X),))
