"""``jacfwd``/``jacrev``/``hessian`` batch their basis with ``vmap``: one forward pass (one
call of ``f``), the same values as one ``jvp``/``vjp`` per direction."""

import numpy as np

import tenferro as tf


def _f(x, y):
    return {"a": tf.sin(x) @ y, "b": tf.sum(x * x) * y[0]}


def _loop_jacfwd(f, x, n_out_shape):
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1
        cols.append(tf.jvp(f, (x,), (tf.tensor(e.reshape(x.shape)),))[1].numpy())
    return np.moveaxis(np.stack(cols), 0, -1).reshape(n_out_shape + tuple(x.shape))


def test_jacobians_match_one_pass_per_direction(rng):
    x = tf.tensor(rng.standard_normal((3, 2)))
    y = tf.tensor(rng.standard_normal((2, 4)))
    jf = tf.jacfwd(_f, argnums=(0, 1))(x, y)
    jr = tf.jacrev(_f, argnums=(0, 1))(x, y)
    for key, shape in (("a", (3, 4)), ("b", (4,))):
        wx = _loop_jacfwd(lambda v: _f(v, y)[key], x, shape)
        wy = _loop_jacfwd(lambda v: _f(x, v)[key], y, shape)
        for j in (jf, jr):
            np.testing.assert_allclose(j[0][key].numpy(), wx, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(j[1][key].numpy(), wy, rtol=1e-12, atol=1e-14)


def test_jacobians_run_f_once(rng):
    calls = []

    def f(x):
        calls.append(1)
        return tf.tanh(x) * x[0]

    x = tf.tensor(rng.standard_normal(5))
    for jac in (tf.jacfwd, tf.jacrev):
        calls.clear()
        jac(f)(x)
        assert len(calls) == 1


def test_hessian_of_complex_free_function_and_under_jit(rng):
    x = tf.tensor(rng.standard_normal(4))
    f = lambda v: tf.sum(tf.sin(v) * v[::-1]) ** 2  # noqa: E731
    h = tf.hessian(f)(x).numpy()
    cols = [tf.hvp(f, (x,), (tf.tensor(np.eye(4)[i]),)).numpy() for i in range(4)]
    np.testing.assert_allclose(h, np.stack(cols, 1), rtol=1e-11)
    np.testing.assert_allclose(tf.jit(tf.hessian(f))(x).numpy(), h, rtol=1e-11)
    np.testing.assert_allclose(tf.jacrev(tf.jacrev(f))(x).numpy(), h, rtol=1e-11)
