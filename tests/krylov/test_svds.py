"""svds / randomized_svd: values and the exact truncated pullback against the full-SVD
truncated gradient (kept/discarded coupling included) and finite differences."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.trg import sqrt_singular_values
from tenferro.errors import GaugeWarning

from ._util import DTYPES, close, fd_directional, grad_dot, rand


def _with_spectrum(rng, m, n, s, dtype):
    u, _ = np.linalg.qr(rand(rng, (m, m), dtype))
    v, _ = np.linalg.qr(rand(rng, (n, n), dtype))
    k = min(m, n)
    return (u[:, :k] * s[:k]) @ v[:, :k].conj().T


def _loss(c_u, c_a):
    """Gauge invariant and sensitive to U and V separately (projectors), to S, and to the
    truncated matrix."""

    def loss(res):
        u, s, vh = res
        pu = u @ tf.conj(u.T)
        pv = tf.conj(vh.T) @ vh
        trunc = (u * s) @ vh
        return (tf.sum(s ** 3) + tf.real(tf.sum(pu * c_u)) + tf.real(tf.sum(pv[:5] ** 2))
                + tf.real(tf.sum(trunc * tf.conj(c_a))))

    return loss


def _naive_truncated_gradient(a, k, gu, gs, gvh):
    """The textbook truncated-only SVD adjoint (no kept/discarded coupling): what the exact
    pullback must differ from when the discarded singular values are not zero."""
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    u, s, v = u[:, :k], s[:k], vh[:k].conj().T
    gv = gvh.conj().T
    f = 1 / (s[None, :] ** 2 - s[:, None] ** 2 + np.eye(k)) * (1 - np.eye(k))
    j = f * (u.conj().T @ gu - gu.conj().T @ u)
    kk = f * (v.conj().T @ gv - gv.conj().T @ v)
    inner = j * s[None, :] + s[:, None] * kk + np.diag(gs)
    pu = np.eye(a.shape[0]) - u @ u.conj().T
    pv = np.eye(a.shape[1]) - v @ v.conj().T
    return (u @ inner @ v.conj().T + pu @ gu / s @ v.conj().T
            + u @ (gv / s).conj().T @ pv)


@pytest.mark.numpy_only  # 7 s; the algorithm is backend-independent (checked below)
def test_truncated_pullback_of_a_1024_matrix_equals_the_full_svd_gradient():
    """1024 x 1024 truncated to 32, discarded singular values far from zero: the pullback
    from U, S, V and products with A alone equals the full-SVD truncated gradient to 1e-8;
    the truncated-only textbook formula is off by O(1) (the coupling matters)."""
    rng = np.random.default_rng(0)
    n, k = 1024, 32
    s = 0.9 ** np.arange(n) + 0.05 * np.exp(-np.arange(n) / 300)
    a0 = _with_spectrum(rng, n, n, s, "float64")
    loss = _loss(tf.tensor(rand(rng, (n, n), "float64")), tf.tensor(rand(rng, (n, n),
                                                                        "float64")))
    a = tf.tensor(a0)
    g = tf.grad(lambda t: loss(tf.linalg.svds(t, k)))(a).numpy()
    full = tf.linalg.svd(a, max_rank=k)
    gd = tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(a).numpy()
    assert close(g, gd, 1e-8)
    _, pull = tf.vjp(lambda u, s_, vh: loss((u, s_, vh)), *full)
    cts = [c.numpy() for c in pull(tf.tensor(1.0))]
    naive = _naive_truncated_gradient(a0, k, *cts)
    assert np.abs(naive - gd).max() > 1e-2 * np.abs(gd).max()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(300, 260), (260, 300)], ids=["tall", "wide"])
def test_svds_gradient_matches_dense_and_finite_differences(dtype, shape):
    rng = np.random.default_rng(1)
    m, n = shape
    k = 10
    s = 0.97 ** np.arange(min(m, n))
    a0 = _with_spectrum(rng, m, n, s, dtype)
    loss = _loss(tf.tensor(rand(rng, (m, m), dtype)), tf.tensor(rand(rng, (m, n), dtype)))
    res = tf.linalg.svds(tf.tensor(a0), k)
    np.testing.assert_allclose(res.S.numpy(), s[:k], rtol=1e-11)
    g = tf.grad(lambda t: loss(tf.linalg.svds(t, k)))(tf.tensor(a0)).numpy()
    gd = tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(tf.tensor(a0)).numpy()
    assert close(g, gd, 1e-9)
    d = rand(rng, (m, n), dtype)
    fd = fd_directional(lambda t: loss(tf.linalg.svds(t, k)), a0, d)
    assert abs(fd - grad_dot(g, d)) <= 1e-6 * abs(fd)


@pytest.mark.parametrize("dtype", DTYPES)
def test_svds_gauge_matches_svd(dtype):
    """Same vectors as svd(max_rank=k) (same gauge), so even phase-dependent losses have the
    same gradient; for complex vectors the phase dependence is reported."""
    rng = np.random.default_rng(2)
    m, n, k = 260, 240, 6
    a0 = _with_spectrum(rng, m, n, 0.95 ** np.arange(n), dtype)
    cu, cv = tf.tensor(rand(rng, (m, k), dtype)), tf.tensor(rand(rng, (k, n), dtype))

    def loss(res):
        return tf.real(tf.sum(res[0] * cu)) + tf.real(tf.sum(res[2] * cv))

    a = tf.tensor(a0)
    r1, r2 = tf.linalg.svds(a, k), tf.linalg.svd(a, max_rank=k)
    for x, y in zip(r1, r2):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-10)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tf.grad(lambda t: loss(tf.linalg.svds(t, k)))(a).numpy()
    assert any(issubclass(w.category, GaugeWarning) for w in caught) == (dtype == "complex128")
    gd = tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(a).numpy()
    assert close(g, gd, 1e-9)


@pytest.mark.numpy_only
def test_svds_of_an_operator_closing_over_two_tensors():
    """A = kron(P, Q) applied without forming it: values and gradients (w.r.t. both factors)
    equal the dense truncated SVD's."""
    rng = np.random.default_rng(3)
    p0, q0 = rng.standard_normal((16, 15)), rng.standard_normal((15, 14))
    k = 5

    def loss_op(p, q):
        def mv(v):
            return tf.reshape(p @ tf.reshape(v, (15, 14)) @ q.T, (16 * 15,))

        def rmv(w):
            return tf.reshape(p.T @ tf.reshape(w, (16, 15)) @ q, (15 * 14,))

        op = tf.linalg.LinearOperator(mv, (240, 210), tf.float64, rmatvec=rmv)
        u, s, vh = tf.linalg.svds(op, k, dense_below=0)
        return tf.sum(s ** 2) + tf.sum((u @ vh)[:7] ** 2)

    def loss_dense(p, q):
        u, s, vh = tf.linalg.svd(tf.kron(p, q), max_rank=k)
        return tf.sum(s ** 2) + tf.sum((u @ vh)[:7] ** 2)

    args = (tf.tensor(p0), tf.tensor(q0))
    g = tf.grad(loss_op, argnums=(0, 1))(*args)
    gd = tf.grad(loss_dense, argnums=(0, 1))(*args)
    for x, y in zip(g, gd):
        assert close(x.numpy(), y.numpy(), 1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_randomized_svd(dtype):
    """Accurate when (s_{k+p+1}/s_k)^(2q+1) is tiny; its gradient is then the exact one."""
    rng = np.random.default_rng(4)
    m, n, k = 300, 250, 8
    s = 0.5 ** np.arange(n)
    a0 = _with_spectrum(rng, m, n, s, dtype)
    res = tf.linalg.randomized_svd(tf.tensor(a0), k, oversample=10, power_iters=3)
    np.testing.assert_allclose(res.S.numpy(), s[:k], rtol=1e-12)
    loss = _loss(tf.tensor(rand(rng, (m, m), dtype)), tf.tensor(rand(rng, (m, n), dtype)))
    g = tf.grad(lambda t: loss(tf.linalg.randomized_svd(t, k, power_iters=3)))(tf.tensor(a0))
    gd = tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(tf.tensor(a0))
    assert close(g.numpy(), gd.numpy(), 1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rank_deficient_matrix(dtype):
    """Rank 10 < k = 16: the block Krylov space runs out of directions after one product
    (the kind of matrix the first TRG steps produce); the kept zero singular values come
    with orthonormal vectors and the nonzero ones are exact; gradients of functions of the
    nonzero part equal the dense SVD's."""
    rng = np.random.default_rng(6)
    m, n, k = 300, 280, 16
    s = np.zeros(n)
    s[:10] = 2.0 ** -np.arange(10)
    a0 = _with_spectrum(rng, m, n, s, dtype)
    u, sv, vh = tf.linalg.svds(tf.tensor(a0), k)
    np.testing.assert_allclose(sv.numpy()[:10], s[:10], rtol=1e-12)
    assert np.abs(sv.numpy()[10:]).max() < 1e-13
    np.testing.assert_allclose(u.numpy().conj().T @ u.numpy(), np.eye(k), atol=1e-12)
    np.testing.assert_allclose(vh.numpy() @ vh.numpy().conj().T, np.eye(k), atol=1e-12)
    c = tf.tensor(rand(rng, (m, n), dtype))

    def loss(res):
        u_, s_, vh_ = res
        r = sqrt_singular_values(s_)  # as TRG: derivative 0 where s vanishes
        return tf.real(tf.sum(((u_ * r) @ (r[:, None] * vh_)) * c)) + tf.sum(s_[:10] ** 2)

    g = tf.grad(lambda t: loss(tf.linalg.svds(t, k)))(tf.tensor(a0)).numpy()
    gd = tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(tf.tensor(a0)).numpy()
    assert close(g, gd, 1e-8)


def test_small_problems_use_the_dense_svd():
    rng = np.random.default_rng(5)
    a = tf.tensor(rng.standard_normal((40, 30)))
    u, s, vh = tf.linalg.svds(a, 4)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a.numpy(), compute_uv=False)[:4])
