"""expm_multiply: exp(tA) v by Krylov substeps, derivatives against expm and finite
differences (real and imaginary time)."""

import numpy as np
import pytest
import scipy.linalg as sla

import tenferro as tf

from ._util import DTYPES, close, fd_directional, grad_dot, rand

N = 60


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("t", [0.7, -0.5j], ids=["real-t", "imag-t"])
def test_expm_multiply_value_and_gradient(dtype, t):
    rng = np.random.default_rng(0)
    a0 = rand(rng, (N, N), dtype) / np.sqrt(N) * 2
    v0 = rand(rng, (N,), dtype)
    np.testing.assert_allclose(
        tf.linalg.expm_multiply(tf.tensor(a0), tf.tensor(v0), t).numpy(),
        sla.expm(t * a0) @ v0, rtol=1e-10, atol=1e-10)
    w = tf.arange(N) / N

    def krylov(a, v):
        return tf.sum(tf.abs2(tf.linalg.expm_multiply(a, v, t)) * w)

    def dense(a, v):
        tt = tf.tensor(np.asarray(t, dtype=np.result_type(dtype, type(t))))
        return tf.sum(tf.abs2(tf.linalg.expm(tt * a) @ v) * w)

    args = (tf.tensor(a0), tf.tensor(v0))
    g = tf.grad(krylov, argnums=(0, 1))(*args)
    gd = tf.grad(dense, argnums=(0, 1))(*args)
    for x, y in zip(g, gd):
        assert close(x.numpy(), y.numpy(), 1e-8)
    d = rand(rng, (N, N), dtype)
    fd = fd_directional(lambda a: krylov(a, args[1]), a0, d)
    assert abs(fd - grad_dot(g[0].numpy(), d)) <= 1e-6 * abs(fd)


def test_a_too_small_krylov_dimension_grows_instead_of_crawling():
    """krylov_dim=2 on a 4x4 matrix took 16-30 s of halved substeps (10^4 of them) and then
    raised a plain RuntimeError. The dimension now grows when the substeps would be too
    many: fast, and exact (the full space)."""
    import time

    rng = np.random.default_rng(1)
    a, v = 3 * rng.standard_normal((4, 4)), np.ones(4)
    t0 = time.perf_counter()
    y = tf.linalg.expm_multiply(tf.tensor(a), tf.tensor(v), krylov_dim=2).numpy()
    assert time.perf_counter() - t0 < 5.0
    np.testing.assert_allclose(y, sla.expm(a) @ v, rtol=1e-10)
    b, w = rng.standard_normal((N, N)) / np.sqrt(N) * 3, rng.standard_normal(N)
    y = tf.linalg.expm_multiply(tf.tensor(b), tf.tensor(w), krylov_dim=2).numpy()
    np.testing.assert_allclose(y, sla.expm(b) @ w, rtol=1e-10, atol=1e-10)


def test_non_finite_input_raises_a_named_error():
    a = np.eye(4)
    with pytest.raises(tf.errors.LinAlgError, match="NaN or inf"):
        tf.linalg.expm_multiply(tf.tensor(a), tf.tensor([1.0, np.nan, 0.0, 0.0]))
    a[0, 1] = np.inf
    with pytest.raises(tf.errors.LinAlgError, match="not finite"):
        tf.linalg.expm_multiply(tf.tensor(a), tf.ones(4))
