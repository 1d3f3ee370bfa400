"""custom_vjp: user-supplied reverse-mode rules, in every mode."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError

T = tf.tensor


# A fixed point differentiated implicitly: x = sqrt(a) by Newton's iteration, whose unrolled
# derivative we do not want; the implicit function theorem gives dx/da = 1 / (2 x).
@tf.custom_vjp
def newton_sqrt(a):
    x = a * 0 + 1.0
    for _ in range(30):
        x = 0.5 * (x + a / x)
    return x


def _fwd(a):
    x = newton_sqrt(a)
    return x, (x,)


def _bwd(res, ct):
    (x,) = res
    return (ct / (2 * x),)


newton_sqrt.defvjp(_fwd, _bwd)


def test_implicit_gradient_in_every_reverse_api():
    a = T([2.0, 9.0])
    expected = 0.5 / np.sqrt(a.numpy())
    np.testing.assert_allclose(tf.grad(lambda t: tf.sum(newton_sqrt(t)))(a).numpy(), expected)
    at = T(a.numpy(), requires_grad=True)
    tf.sum(newton_sqrt(at)).backward()
    np.testing.assert_allclose(at.grad.numpy(), expected)
    np.testing.assert_allclose(
        tf.jit(tf.grad(lambda t: tf.sum(newton_sqrt(t))))(a).numpy(), expected)
    np.testing.assert_allclose(
        tf.grad(tf.jit(lambda t: tf.sum(newton_sqrt(t))))(a).numpy(), expected)


def test_the_rule_is_used_not_the_unrolled_derivative():
    @tf.custom_vjp
    def clipped_identity(x):
        return x

    clipped_identity.defvjp(lambda x: (x, ()), lambda res, ct: (tf.clip(ct, -1.0, 1.0),))
    g = tf.vjp(clipped_identity, T([1.0, 2.0]))[1](T([5.0, -0.5]))[0]
    np.testing.assert_array_equal(g.numpy(), [1.0, -0.5])


def test_second_order_through_a_differentiable_bwd():
    a = T(4.0)
    # d/da (1 / (2 sqrt a)) = -1 / (4 a^1.5)
    d2 = tf.grad(tf.grad(lambda t: newton_sqrt(t)))(a).item()
    np.testing.assert_allclose(d2, -1 / (4 * 4.0**1.5), rtol=1e-12)
    hv = tf.hvp(lambda t: tf.sum(newton_sqrt(t)), (T([4.0]),), (T([1.0]),))
    np.testing.assert_allclose(hv.numpy(), [-1 / (4 * 4.0**1.5)], rtol=1e-12)


def test_forward_mode_differentiates_the_function_itself():
    _, t = tf.jvp(newton_sqrt, (T(9.0),), (T(1.0),))
    np.testing.assert_allclose(t.item(), 1 / 6, rtol=1e-12)


def test_pytrees_multiple_outputs_and_unused_inputs():
    @tf.custom_vjp
    def f(x, y):
        return {"s": x + y, "p": x * y}

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, ct):
        x, y = res
        return ct["s"] + ct["p"] * y, ct["s"] + ct["p"] * x

    f.defvjp(fwd, bwd)
    gx, gy = tf.grad(lambda x, y: tf.sum(f(x, y)["p"]), argnums=(0, 1))(T([2.0]), T([3.0]))
    assert gx.item() == 3.0 and gy.item() == 2.0


def test_errors():
    @tf.custom_vjp
    def f(x):
        return x * 2

    with pytest.raises(GradientError, match="defvjp"):
        f(T(1.0))
    f.defvjp(lambda x: (f(x), ()), lambda res, ct: (ct, ct))
    with pytest.raises(GradientError, match="returned 2 cotangents"):
        tf.grad(lambda x: tf.sum(f(x)))(T([1.0]))
