"""grad / value_and_grad / vjp: argnums, has_aux, pytrees, complex convention, zeros."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError, GradientError


def test_grad_of_abs_squared_is_2z():
    z = tf.tensor([1 + 2j, -0.5 + 0.25j])
    g = tf.grad(lambda z: (tf.abs(z) ** 2).sum())(z)
    np.testing.assert_allclose(g.numpy(), 2 * z.numpy())


def test_complex_gradient_matches_real_and_imag_finite_differences(rng):
    z0 = rng.standard_normal(3) + 1j * rng.standard_normal(3)

    def loss(z):
        return tf.real(tf.sum(tf.exp(z) * tf.conj(z))) + tf.sum(tf.abs(tf.sin(z)))

    g = tf.grad(loss)(tf.tensor(z0)).numpy()
    eps = 1e-6
    for k in range(3):
        e = np.zeros(3)
        e[k] = eps
        d_re = (loss(tf.tensor(z0 + e)).item() - loss(tf.tensor(z0 - e)).item()) / (2 * eps)
        d_im = (loss(tf.tensor(z0 + 1j * e)).item() - loss(tf.tensor(z0 - 1j * e)).item()) / (
            2 * eps
        )
        np.testing.assert_allclose(g[k].real, d_re, rtol=1e-7)
        np.testing.assert_allclose(g[k].imag, d_im, rtol=1e-7)


def test_argnums_and_has_aux():
    def f(x, y, z):
        return (x * y + z).sum(), {"aux": x * 2}

    x, y, z = tf.tensor([1.0, 2.0]), tf.tensor([3.0, 4.0]), tf.tensor(5.0)
    (val, aux), (gx, gz) = tf.value_and_grad(f, argnums=(0, 2), has_aux=True)(x, y, z)
    assert val.item() == 21.0
    np.testing.assert_array_equal(aux["aux"].numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(gx.numpy(), [3.0, 4.0])
    assert gz.item() == 2.0
    g, aux2 = tf.grad(f, argnums=1, has_aux=True)(x, y, z)
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0])


def test_pytree_inputs_and_outputs():
    params = {"w": tf.tensor([1.0, 2.0]), "b": [tf.tensor(0.5), tf.tensor(-1.0)]}

    def f(p):
        return (p["w"] * p["b"][0]).sum() + p["b"][1] ** 2

    g = tf.grad(f)(params)
    np.testing.assert_array_equal(g["w"].numpy(), [0.5, 0.5])
    assert g["b"][0].item() == 3.0 and g["b"][1].item() == -2.0

    out, pull = tf.vjp(lambda a, b: (a * b, {"s": a.sum()}), tf.tensor([1.0, 2.0]),
                       tf.tensor([3.0, 4.0]))
    ga, gb = pull((tf.tensor([1.0, 1.0]), {"s": tf.tensor(2.0)}))
    np.testing.assert_array_equal(ga.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(gb.numpy(), [1.0, 2.0])


def test_unused_input_gets_zeros_of_right_shape_and_dtype():
    g = tf.grad(lambda x, y: x.sum(), argnums=(0, 1))(tf.tensor([1.0]), tf.ones((2, 3),
                                                                            tf.complex64))
    assert g[1].shape == (2, 3) and g[1].dtype == tf.complex64
    assert not g[1].numpy().any()


def test_vjp_fn_can_be_called_repeatedly():
    out, pull = tf.vjp(tf.sin, tf.tensor([0.1, 0.2]))
    a = pull(tf.tensor([1.0, 1.0]))[0].numpy()
    b = pull(tf.tensor([2.0, 2.0]))[0].numpy()
    np.testing.assert_allclose(b, 2 * a)


def test_grad_errors():
    with pytest.raises(GradientError, match="one-element"):
        tf.grad(lambda x: x * 2)(tf.tensor([1.0, 2.0]))
    with pytest.raises(DTypeError, match="real float"):
        tf.grad(lambda x: (x * 1j).sum())(tf.tensor([1.0, 2.0]))


def test_integer_inputs_are_not_differentiated():
    """An integer input is passed through undifferentiated when it is not in argnums, and
    asking for its gradient raises (a silently zero gradient would hide the mistake)."""
    g = tf.grad(lambda x, i: (x * i).sum())(tf.tensor([1.0, 2.0]), tf.tensor([3, 4]))
    np.testing.assert_array_equal(g.numpy(), [3.0, 4.0])
    with pytest.raises(tf.errors.DTypeError, match="argument 1 has dtype int64"):
        tf.grad(lambda x, i: (x * i).sum(), argnums=(0, 1))(tf.tensor([1.0, 2.0]),
                                                           tf.tensor([3, 4]))


def test_functional_grad_of_tape_tensor_records_on_the_tape():
    """grad() inside a tape computation: the gradient is itself differentiable by backward()."""
    x = tf.tensor(0.7, requires_grad=True)
    g = tf.grad(lambda t: tf.sin(t) * t)(x)  # cos(x) x + sin(x)
    assert g.requires_grad
    g.backward()
    np.testing.assert_allclose(x.grad.item(), 2 * np.cos(0.7) - 0.7 * np.sin(0.7), rtol=1e-14)


def test_leaked_tracer_is_a_clear_error():
    from tenferro.errors import LeakedTracerError

    box = []

    def f(x):
        box.append(x)
        return x.sum()

    tf.grad(f)(tf.tensor([1.0]))
    with pytest.raises(LeakedTracerError, match="leaked|outside the transformation"):
        box[0] * 2


def test_every_primitive_is_reachable_through_lax():
    import chainrules

    for name in chainrules.PRIMITIVES:
        assert callable(getattr(tf.lax, name))
    x = tf.tensor(np.arange(6.0).reshape(2, 3))
    y = tf.lax.dot_general(x, x, dimension_numbers=(((1,), (1,)), ((), ())))
    np.testing.assert_array_equal(y.numpy(), x.numpy() @ x.numpy().T)
    s = tf.lax.slice(x, start_indices=(0, 1), limit_indices=(2, 3), strides=(1, 2))
    np.testing.assert_array_equal(s.numpy(), x.numpy()[:, 1:3:2])
    from tenferro.errors import ShapeError

    with pytest.raises(ShapeError, match="add: operand shapes differ"):
        tf.lax.add(x, tf.ones(3))
