"""jit: caching and retracing, static arguments, composition with transformations in both
orders, the tape, and clear errors for data-dependent Python control flow."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, ShapeError

T = tf.tensor


@pytest.mark.default_device_cpu  # device checks relative to the cpu default
def test_cache_key_shapes_dtypes_devices_static_args():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n

    jf = tf.jit(f, static_argnums=1)
    jf(T([1.0, 2.0]), 2)
    jf(T([3.0, 4.0]), 2)
    assert jf.traces == 1
    jf(T([1.0, 2.0, 3.0]), 2)  # new shape
    jf(T([1.0, 2.0], dtype=tf.float32), 2)  # new dtype
    jf(T([1.0, 2.0]), 3)  # new static value
    jf(T([1.0, 2.0], device="strict:1"), 2)  # new device
    assert jf.traces == 5 and len(calls) == 5
    np.testing.assert_array_equal(jf(T([1.0, 2.0]), 3).numpy(), [3.0, 6.0])


def test_python_numbers_are_dynamic():
    jf = tf.jit(lambda x, beta: tf.exp(-beta * x))
    a = jf(T([1.0]), 0.5)
    b = jf(T([1.0]), 2.0)
    assert jf.traces == 1
    np.testing.assert_allclose([a.item(), b.item()], np.exp([-0.5, -2.0]))


def test_python_branch_on_traced_value_is_a_clear_error():
    def f(x):
        if x.sum() > 0:  # data-dependent control flow
            return x
        return -x

    with pytest.raises(ConcretizationError) as e:
        tf.jit(f)(T([1.0]))
    msg = str(e.value)
    assert "reduce_sum" in msg or "gt" in msg
    assert "test_jit.py" in msg and "where" in msg and "static_argnums" in msg


def test_shape_mismatch_at_trace_time_names_op_and_line():
    def f(x, y):
        return x @ y

    with pytest.raises(ShapeError) as e:
        tf.jit(f)(T(np.ones((2, 3))), T(np.ones((4, 5))))
    assert "matmul" in str(e.value) and "test_jit.py" in str(e.value)


def test_jit_of_grad_and_grad_of_jit(rng):
    f = lambda x: tf.sum(tf.sin(x) * tf.exp(x))  # noqa: E731
    x = T(rng.standard_normal(5))
    expected = tf.grad(f)(x).numpy()
    np.testing.assert_allclose(tf.jit(tf.grad(f))(x).numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(tf.grad(tf.jit(f))(x).numpy(), expected, rtol=1e-14)
    # nested: jit(grad(jit(f)))
    np.testing.assert_allclose(tf.jit(tf.grad(tf.jit(f)))(x).numpy(), expected, rtol=1e-14)


def test_jit_of_vjp_and_hvp(rng):
    f = lambda x: tf.sum(tf.tanh(x) ** 3)  # noqa: E731
    x, v = T(rng.standard_normal(4)), T(rng.standard_normal(4))
    jv = tf.jit(lambda x, ct: tf.vjp(f, x)[1](ct))
    np.testing.assert_allclose(jv(x, T(2.0))[0].numpy(), 2 * tf.grad(f)(x).numpy(), rtol=1e-14)
    jh = tf.jit(lambda x, v: tf.hvp(f, (x,), (v,)))
    np.testing.assert_allclose(jh(x, v).numpy(), tf.hvp(f, (x,), (v,)).numpy(), rtol=1e-13)
    # hvp through a jitted function, and third order through jit
    np.testing.assert_allclose(tf.hvp(tf.jit(f), (x,), (v,)).numpy(),
                               tf.hvp(f, (x,), (v,)).numpy(), rtol=1e-13)
    g3 = tf.jit(tf.grad(lambda y: tf.sum(tf.hvp(f, (y,), (v,)))))
    np.testing.assert_allclose(g3(x).numpy(),
                               tf.grad(lambda y: tf.sum(tf.hvp(f, (y,), (v,))))(x).numpy(),
                               rtol=1e-12)


def test_jit_jvp_linearize_and_transpose(rng):
    f = lambda x: tf.sin(x) * x  # noqa: E731
    x, t = T(rng.standard_normal(3)), T(rng.standard_normal(3))
    jj = tf.jit(lambda x, t: tf.jvp(f, (x,), (t,)))
    out, tout = jj(x, t)
    np.testing.assert_allclose(tout.numpy(), tf.jvp(f, (x,), (t,))[1].numpy(), rtol=1e-14)
    _, f_lin = tf.linearize(f, x)
    jt = tf.jit(lambda ct: tf.linear_transpose(f_lin, x)(ct))
    np.testing.assert_allclose(jt(t)[0].numpy(), tf.vjp(f, x)[1](t)[0].numpy(), rtol=1e-14)


def test_tape_records_through_a_jitted_function(rng):
    f = tf.jit(lambda x: tf.sum(tf.sin(x) ** 2))
    x = T(rng.standard_normal(3), requires_grad=True)
    f(x).backward(create_graph=True)
    g = x.grad
    np.testing.assert_allclose(g.detach().numpy(), np.sin(2 * x.detach().numpy()), rtol=1e-14)
    x.grad = None
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * x.detach().numpy()), rtol=1e-14)


def test_pytrees_and_closures(rng):
    W = T(rng.standard_normal((3, 3)))

    @tf.jit
    def f(params, x):
        return {"y": tf.tanh(x @ W * params["s"] + params["b"][0])}

    params = {"s": T(2.0), "b": [T(np.zeros(3))]}
    x = T(rng.standard_normal((2, 3)))
    np.testing.assert_allclose(f(params, x)["y"].numpy(), np.tanh(x.numpy() @ W.numpy() * 2))


def test_random_numbers_inside_traced_code_are_refused():
    from tenferro.errors import GraphError

    with pytest.raises(GraphError, match="random"):
        tf.jit(lambda x: x + tf.randn(2))(T([1.0, 2.0]))


def test_trace_with_shape_dtype_and_example_arrays():
    g = tf.make_graph(lambda a, b: a @ b, tf.ShapeDtype((2, 3)), np.ones((3, 4)))
    assert [tuple(a.shape) for a in g.in_avals] == [(2, 3), (3, 4)]
    out = g(T(np.ones((2, 3))), T(np.ones((3, 4))))
    np.testing.assert_array_equal(out.numpy(), np.full((2, 4), 3.0))
    with pytest.raises(ShapeError, match="traced for"):
        g(T(np.ones((3, 3))), T(np.ones((3, 4))))
