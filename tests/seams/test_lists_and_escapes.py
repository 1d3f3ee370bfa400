"""Values passing through Python lists keep their derivative; values leaving the AD system
(``.numpy()``, ``float()``, ``.item()``) raise instead of silently contributing zero."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, GradientError, ShapeError

T = tf.tensor


# ----------------------------------------------------------------- lists of tensors
@pytest.mark.parametrize("make", [tf.asarray, tf.tensor], ids=["asarray", "tensor"])
def test_a_list_of_tensors_keeps_its_derivative(make):
    f = lambda x: tf.sum(make([x, 2 * x]))  # noqa: E731
    assert tf.grad(f)(T(1.0)).item() == 3.0
    assert tf.jit(tf.grad(f))(T(1.0)).item() == 3.0
    assert tf.grad(tf.jit(f))(T(1.0)).item() == 3.0
    assert tf.jvp(f, (T(1.0),), (T(1.0),))[1].item() == 3.0


def test_functions_taking_array_likes_keep_the_derivative():
    assert tf.grad(lambda x: tf.mean([x, x + 2]))(T(1.5)).item() == 1.0
    g = tf.grad(lambda x: tf.linalg.norm([x, x + 2]))(T(1.0)).item()
    np.testing.assert_allclose(g, 4 / np.sqrt(10), rtol=1e-15)
    g = tf.grad(lambda x: tf.sum(tf.maximum([x, 3.0], [1.0, x])))(T(2.0)).item()
    assert g == 1.0  # only the first slot depends on x where it wins


def test_nested_lists_mixing_numbers_and_tensors():
    def f(x):
        m = tf.asarray([[x, 1.0], [2 * x, x * x]])
        assert m.shape == (2, 2)
        return tf.sum(m)

    assert tf.grad(f)(T(2.0)).item() == 1 + 2 + 4


def test_the_tape_sees_through_lists():
    x = T([1.0, 2.0], requires_grad=True)
    tf.sum(tf.tensor([x, 3 * x]) ** 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20.0, 40.0])


def test_requires_grad_makes_a_new_leaf_from_tensors():
    x = T([1.0, 2.0], requires_grad=True)
    y = tf.tensor([x, x], requires_grad=True)
    assert y.is_leaf and y.requires_grad and y.shape == (2, 2)


def test_ragged_lists_of_tensors_are_a_named_error():
    with pytest.raises(ShapeError, match="ragged"):
        tf.asarray([T([1.0, 2.0]), T([1.0])])


# ------------------------------------------------------------------------ escapes
@pytest.mark.parametrize("escape", [
    lambda x: tf.tensor(np.sin(x.numpy())),
    lambda x: tf.tensor(float(x[0])),
    lambda x: tf.tensor(x[0].item()),
    lambda x: tf.tensor(np.asarray(x)),
    lambda x: tf.tensor(x.tolist()),
], ids=["numpy", "float", "item", "asarray", "tolist"])
@pytest.mark.parametrize("transform", ["grad", "vjp", "hvp", "jvp"])
def test_leaving_the_ad_system_raises_under_every_transformation(escape, transform):
    def f(x):
        return tf.sum(escape(x) * x)

    x = T([0.3, 0.7])
    with pytest.raises(GradientError, match="detach"):
        if transform == "grad":
            tf.grad(f)(x)
        elif transform == "vjp":
            tf.vjp(f, x)
        elif transform == "hvp":
            tf.hvp(f, (x,), (x,))
        else:
            tf.jvp(f, (x,), (x,))


def test_the_escape_is_allowed_after_stop_gradient_or_detach():
    def f(x):
        c = tf.tensor(np.sin(x.detach().numpy()))
        return tf.sum(c * x) + float(tf.stop_gradient(x)[0])

    g = tf.grad(f)(T([0.3, 0.7]))
    np.testing.assert_allclose(g.numpy(), np.sin([0.3, 0.7]), rtol=1e-15)


def test_branching_on_a_differentiated_value_is_allowed():
    def f(x):
        return x * x if x > 0 else -x  # Python control flow: each branch is differentiated

    assert tf.grad(f)(T(3.0)).item() == 6.0
    assert tf.grad(f)(T(-3.0)).item() == -1.0


def test_eager_numpy_of_a_tensor_that_requires_grad_raises_like_pytorch():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradientError, match=r"detach\(\)\.numpy\(\)"):
        x.numpy()
    with pytest.raises(GradientError):
        np.asarray(x * 2)
    assert x.item if x.size == 1 else True  # .item()/float() stay allowed, as in PyTorch
    assert float(tf.sum(x)) == 3.0
    np.testing.assert_array_equal(x.detach().numpy(), [1.0, 2.0])


def test_escape_under_jit_is_a_concretization_error():
    with pytest.raises(ConcretizationError):
        tf.jit(lambda x: tf.tensor(x.numpy()))(T([1.0]))
