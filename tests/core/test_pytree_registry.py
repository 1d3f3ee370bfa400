"""The general pytree registry: a user-defined class registered with
``register_pytree_node`` goes through grad, jit (both orders), vmap, custom_vjp and the tree
utilities, and its static data is part of the structure."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.pytree import (
    is_registered,
    register_pytree_node,
    register_pytree_serialization,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)


class Affine:
    """A user class: two tensors and a static label (not a tensor, not a leaf)."""

    def __init__(self, w, b, label):
        self.w, self.b, self.label = w, b, label


register_pytree_node(Affine, lambda a: ((a.w, a.b), a.label),
                     lambda label, kids: Affine(kids[0], kids[1], label))


class Unregistered:
    def __init__(self, w):
        self.w = w


def _affine(seed=0, label="scale"):
    rng = np.random.default_rng(seed)
    return Affine(tf.asarray(rng.standard_normal((3, 2))), tf.asarray(rng.standard_normal(2)),
                  label)


def loss(a: Affine, x):
    y = tf.tanh(x @ a.w + a.b)
    return tf.sum(y ** 2) * (2.0 if a.label == "scale" else 1.0)


def test_flatten_unflatten_round_trip_keeps_static_data():
    a = _affine()
    leaves, td = tree_flatten({"p": a, "q": [a.w]})
    assert len(leaves) == 3 and is_registered(Affine) and not is_registered(Unregistered)
    b = tree_unflatten(td, leaves)["p"]
    assert isinstance(b, Affine) and b.label == "scale" and b.w is a.w
    # the static data is part of the structure
    assert tree_flatten(a)[1] != tree_flatten(_affine(label="other"))[1]
    assert tree_flatten(a)[1] == tree_flatten(_affine(seed=1))[1]
    doubled = tree_map(lambda t: t * 2.0, a)
    assert isinstance(doubled, Affine) and doubled.label == "scale"
    np.testing.assert_allclose(doubled.b.numpy(), 2 * a.b.numpy())
    # an unregistered object stays one leaf
    u = Unregistered(a.w)
    assert tree_leaves(u) == [u]


def test_registered_class_through_grad_jit_and_vmap():
    a = _affine()
    x = tf.asarray(np.random.default_rng(3).standard_normal((4, 3)))
    g = tf.grad(loss)(a, x)
    assert isinstance(g, Affine) and g.label == "scale"
    # finite differences on one entry of w
    e = np.zeros((3, 2))
    e[1, 0] = 1e-6
    ap = Affine(a.w + tf.asarray(e), a.b, a.label)
    am = Affine(a.w - tf.asarray(e), a.b, a.label)
    fd = (loss(ap, x).numpy() - loss(am, x).numpy()) / 2e-6
    np.testing.assert_allclose(g.w.numpy()[1, 0], fd, rtol=1e-7)
    for h in (tf.jit(tf.grad(loss)), tf.grad(tf.jit(loss))):
        gj = h(a, x)
        assert isinstance(gj, Affine) and gj.label == "scale"
        np.testing.assert_allclose(gj.w.numpy(), g.w.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(gj.b.numpy(), g.b.numpy(), rtol=1e-12, atol=1e-14)
    # the static data is part of jit's cache key: another label is another trace
    jl = tf.jit(loss)
    np.testing.assert_allclose(jl(_affine(label="other"), x).numpy(),
                               loss(_affine(label="other"), x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(jl(a, x).numpy(), loss(a, x).numpy(), rtol=1e-13)
    # vmap over a batch of Affines (leaves batched along axis 0)
    batch = Affine(tf.stack([a.w, 2.0 * a.w]), tf.stack([a.b, -a.b]), "scale")
    out = tf.vmap(loss, in_axes=(0, None))(batch, x)
    want = [loss(Affine(batch.w[i], batch.b[i], "scale"), x).numpy() for i in range(2)]
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-12)


def test_registered_result_and_custom_vjp():
    @tf.custom_vjp
    def halve(a):
        return Affine(a.w * 0.5, a.b * 0.5, a.label)

    halve.defvjp(lambda a: (halve(a), None),
                 lambda _, ct: (Affine(ct.w * 7.0, ct.b * 7.0, ct.label),))  # marks the rule
    a = _affine()
    g = tf.grad(lambda p: tf.sum(halve(p).w) + tf.sum(halve(p).b))(a)
    np.testing.assert_allclose(g.w.numpy(), np.full((3, 2), 7.0))
    out = tf.jit(halve)(a)
    assert isinstance(out, Affine) and out.label == "scale"
    np.testing.assert_allclose(out.w.numpy(), 0.5 * a.w.numpy())


def test_register_rejects_non_classes():
    with pytest.raises(TypeError, match="expected a class"):
        register_pytree_node("Affine", lambda a: ((), None), lambda aux, k: None)


# ------------------------------------------------------------ saved graphs keep the class
class Labelled:
    """A registered class that also says how saved graphs write its static data."""

    def __init__(self, w, label):
        self.w, self.label = w, label


def _labelled_from_value(v):
    if not (isinstance(v, tuple) and len(v) == 1 and isinstance(v[0], str)):
        raise ValueError(f"expected (label,), got {v!r}")
    return Labelled, v[0]


register_pytree_node(Labelled, lambda a: ((a.w,), a.label), lambda lab, k: Labelled(k[0], lab))
register_pytree_serialization(Labelled, "tests.Labelled", lambda lab: (lab,),
                              _labelled_from_value)


def _doubled(a: Labelled) -> Labelled:
    return Labelled(a.w * 2.0, a.label + "!")


def test_a_saved_graph_keeps_a_serializable_class(tmp_path):
    a = Labelled(tf.asarray([1.0, 2.0]), "x")
    tf.make_graph(_doubled, a).save(tmp_path / "g.tfg")
    out = tf.load(tmp_path / "g.tfg")(a)
    assert isinstance(out, Labelled) and out.label == "x!"
    np.testing.assert_allclose(out.w.numpy(), [2.0, 4.0])
    # without a serialization the class is saved as the tuple of its children
    b = _affine()
    tf.make_graph(lambda t: t.w.sum() + t.b.sum(), b).save(tmp_path / "h.tfg")
    assert float(tf.load(tmp_path / "h.tfg")((b.w, b.b))) == pytest.approx(
        float(b.w.sum() + b.b.sum()))


def _edit_tree(path, edit):
    from tests.robustness.test_errors_and_graph_files import _rewrite

    _rewrite(path, lambda doc: edit(doc["in_tree"]["children"][0]))


@pytest.mark.parametrize("edit, match", [
    (lambda n: n.update(name="nobody.Knows"), r"'nobody\.Knows' object.*import the module"),
    (lambda n: n.update(aux=7), r"invalid data for tests\.Labelled"),
    (lambda n: n.update(name=3), r"expected a string"),
])
def test_a_saved_node_is_checked_when_loaded(tmp_path, edit, match):
    from tenferro.errors import GraphFormatError

    a = Labelled(tf.asarray([1.0, 2.0]), "x")
    tf.make_graph(_doubled, a).save(tmp_path / "g.tfg")
    _edit_tree(tmp_path / "g.tfg", edit)
    with pytest.raises(GraphFormatError, match=match):
        tf.load(tmp_path / "g.tfg")
