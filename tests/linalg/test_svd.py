"""SVD: forward values, gauge convention, and derivatives branch by branch (U only, V only,
S only, U and V jointly) in forward and reverse mode, tall / wide / square, real / complex;
second order (HVP); full_matrices; svdvals."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.testing import check_grads, check_jvp, check_vjp
from tests.linalg._util import (
    DTYPES,
    SHAPE_IDS,
    SHAPES,
    T,
    fd_gradient,
    hermitian,
    rand,
    rel_err,
)


def _v(vh):
    return tf.conj(tf.swapaxes(vh, -1, -2))


# ----------------------------------------------------------------------------- forward
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + ((3, 6, 4), (2, 3, 4, 4)), ids=SHAPE_IDS + ("batch",
                                                                                   "batch2"))
def test_forward_reconstructs_and_is_orthonormal(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    u, s, vh = (x.numpy() for x in la.svd(T(a)))
    k = min(shape[-2:])
    assert u.shape == shape[:-1] + (k,) and s.shape == shape[:-2] + (k,)
    assert vh.shape == shape[:-2] + (k, shape[-1])
    np.testing.assert_allclose((u * s[..., None, :]) @ vh, a, atol=1e-12)
    eye = np.broadcast_to(np.eye(k), s.shape + (k,))
    np.testing.assert_allclose(np.swapaxes(u.conj(), -1, -2) @ u, eye, atol=1e-12)
    np.testing.assert_allclose(vh @ np.swapaxes(vh.conj(), -1, -2), eye, atol=1e-12)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    assert np.all(np.diff(s, axis=-1) <= 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_gauge_convention_largest_entry_of_v_is_real_positive(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    u, s, vh = (x.numpy() for x in la.svd(T(a)))
    v = vh.conj().T
    p = np.argmax(np.abs(v), axis=0)
    vp = v[p, np.arange(v.shape[1])]
    assert np.all(np.abs(vp.imag) < 1e-14) and np.all(vp.real > 0)
    np.testing.assert_allclose(a @ v, u * s, atol=1e-12)  # U follows from A v_j = s_j u_j


def test_integer_input_is_converted_like_numpy(rng):
    a = rng.integers(-3, 4, size=(4, 3))
    s = la.svdvals(T(a))
    assert s.dtype == tf.float64
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a.astype(float), compute_uv=False))


# -------------------------------------------------------------- branch-isolating checks
def _loss_u_only(h):
    return lambda a: _herm(la.svd(a).U[..., :, 0], h)


def _loss_v_only(h):
    return lambda a: _herm(_v(la.svd(a).Vh)[..., :, 0], h)


def _loss_s_only(w):
    return lambda a: tf.sum(la.svd(a).S * T(w))


def _loss_uv_joint(m):
    def loss(a):
        u, s, vh = la.svd(a)
        return tf.real(tf.sum(tf.conj(u[:, 0]) * (T(m) @ _v(vh)[:, 0])))

    return loss


def _herm(psi, h):
    return tf.real(tf.sum(tf.conj(psi) * (T(h) @ psi)))


def _branch_loss(branch, shape, dtype, rng):
    m, n = shape
    k = min(m, n)
    if branch == "U":
        return _loss_u_only(hermitian(rng, m, dtype))
    if branch == "V":
        return _loss_v_only(hermitian(rng, n, dtype))
    if branch == "S":
        return _loss_s_only(rng.standard_normal(k))
    return _loss_uv_joint(rand(rng, (m, n), dtype))


@pytest.mark.parametrize("branch", ["U", "V", "S", "UV"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_branch_isolated_gradients_match_finite_differences(branch, shape, dtype, rng):
    """Each loss reads one branch of the SVD (psi = U[:, 0] in Re psi^H H psi, ...); forward
    mode and reverse mode are both checked against central differences."""
    a = T(rand(rng, shape, dtype))
    check_grads(_branch_loss(branch, shape, dtype, rng), (a,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("branch", ["U", "V", "S", "UV"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_branch_gradient_elementwise_vs_finite_differences(branch, dtype, rng):
    """The whole gradient, entry by entry (real and imaginary parts separately)."""
    shape = (5, 3)
    a = rand(rng, shape, dtype)
    loss = _branch_loss(branch, shape, dtype, rng)
    g = tf.grad(loss)(T(a)).numpy()
    assert rel_err(g, fd_gradient(loss, a)) < 1e-7


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + ((2, 5, 3),), ids=SHAPE_IDS + ("batch",))
def test_all_outputs_jvp_and_vjp(shape, dtype, rng):
    a = T(rand(rng, shape, dtype))
    check_jvp(la.svd, (a,))
    check_vjp(la.svd, (a,))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_phase_dependent_loss_matches_finite_differences(shape, dtype, rng):
    """Re sum(c * U[:, 0]) depends on the phase of U's first column: the documented gauge
    (largest entry of each column of V real positive) makes it a smooth function."""
    a = T(rand(rng, shape, dtype))
    c = T(rand(rng, (shape[0],), dtype))
    d = T(rand(rng, (shape[1],), dtype))

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(c * u[:, 0])) + tf.imag(tf.sum(d * vh[1])) if dtype == \
            "complex128" else tf.sum(c * u[:, 0]) + tf.sum(d * vh[1])

    check_grads(loss, (a,), order=1)


# ------------------------------------------------------------------------ second order
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_hvp_matches_finite_differences_of_gradients(shape, dtype, rng):
    a = T(rand(rng, shape, dtype))
    t = T(rand(rng, shape, dtype))
    h_u = hermitian(rng, shape[0], dtype)
    w = rng.standard_normal(min(shape))

    def loss(x):
        u, s, vh = la.svd(x)
        return _herm(u[:, 0], h_u) + tf.sum(s * T(w)) + tf.sum(tf.abs2(u[:, :2] @ vh[:2]))

    hv = tf.hvp(loss, (a,), (t,)).numpy()
    g = tf.grad(loss)
    eps = 1e-5
    fd = (g(a + eps * t).numpy() - g(a - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-7


@pytest.mark.parametrize("dtype", DTYPES)
def test_second_order_all_outputs(dtype, rng):
    a = T(rand(rng, (4, 3), dtype))
    check_grads(la.svd, (a,), order=2, rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------- full_matrices
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_full_matrices_forward(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    u, s, vh = (x.numpy() for x in la.svd(T(a), full_matrices=True))
    m, n = shape
    assert u.shape == (m, m) and vh.shape == (n, n)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(m), atol=1e-12)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(n), atol=1e-12)
    sm = np.zeros((m, n))
    sm[np.arange(min(m, n)), np.arange(min(m, n))] = s
    np.testing.assert_allclose(u @ sm @ vh, a, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_full_matrices_complement_projectors(shape, dtype, rng):
    """The extra columns of U (rows of Vh) are a basis of the orthogonal complement; rotating
    it is not determined by A, so the checked outputs are the complement projectors (and the
    thin part, which must be unaffected by full_matrices)."""
    m, n = shape
    k = min(m, n)
    c1 = rand(rng, (m, m), dtype)
    c2 = rand(rng, (n, n), dtype)

    def f(x):
        u, s, vh = la.svd(x, full_matrices=True)
        up, vp = u[:, k:], vh[k:, :]
        pu = up @ tf.conj(up.T)
        pv = tf.conj(vp.T) @ vp
        return (tf.real(tf.sum(T(c1) * pu)) + tf.real(tf.sum(T(c2) * pv)) + tf.sum(s)
                + tf.real(tf.sum(u[:, :k] @ vh[:k])))

    check_grads(f, (T(rand(rng, shape, dtype)),), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_full_matrices_thin_part_equals_thin_svd_derivative(dtype, rng):
    a = T(rand(rng, (6, 4), dtype))
    t = T(rand(rng, (6, 4), dtype))
    _, (du_f, ds_f, dvh_f) = tf.jvp(lambda x: la.svd(x, full_matrices=True), (a,), (t,))
    _, (du, ds, dvh) = tf.jvp(la.svd, (a,), (t,))
    np.testing.assert_allclose(du_f.numpy()[:, :4], du.numpy(), atol=1e-12)
    np.testing.assert_allclose(ds_f.numpy(), ds.numpy(), atol=1e-12)
    np.testing.assert_allclose(dvh_f.numpy(), dvh.numpy(), atol=1e-12)


# ------------------------------------------------------------------------------ svdvals
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + ((2, 5, 3),), ids=SHAPE_IDS + ("batch",))
def test_svdvals(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    s = la.svdvals(T(a))
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a, compute_uv=False), rtol=1e-12)
    np.testing.assert_allclose(la.svd(T(a), compute_uv=False).numpy(), s.numpy(), rtol=1e-12)
    check_grads(la.svdvals, (T(a),), order=2, rtol=1e-5, atol=1e-7)


def test_matrix_rank(rng):
    from tests.linalg._util import with_singular_values

    a = with_singular_values(rng, 6, 5, [3.0, 2.0, 1.0, 0.0, 0.0], "float64")
    assert int(la.matrix_rank(T(a))) == 3
    assert la.matrix_rank(T(np.stack([a, rand(rng, (6, 5), "float64")]))).tolist() == [3, 5]


def test_eps_is_relative_to_the_spectrum_scale(rng):
    """Scaling A scales every derivative predictably: the tie tolerance is relative."""
    a = rand(rng, (5, 4), "float64")
    h = hermitian(rng, 5, "float64")
    g1 = tf.grad(_loss_u_only(h))(T(a)).numpy()
    for c in (1e-8, 1e8):
        gc = tf.grad(_loss_u_only(h))(T(c * a)).numpy()
        np.testing.assert_allclose(gc * c, g1, rtol=1e-9, atol=1e-12)


def test_gradient_of_complex_svd_follows_the_conjugate_convention(rng):
    """grad of |S_0|^2 equals dL/dRe + i dL/dIm, checked on real and imaginary parts."""
    a = rand(rng, (3, 3), "complex128")

    def loss(x):
        return la.svdvals(x)[0] ** 2

    g = tf.grad(loss)(T(a)).numpy()
    np.testing.assert_allclose(g, fd_gradient(loss, a), rtol=1e-7, atol=1e-8)


@pytest.mark.numpy_only  # the LAPACK driver choice exists only on the SciPy path
def test_gesdd_failure_falls_back_to_gesvd(monkeypatch, rng):
    """gesdd occasionally fails to converge; gesvd then gives the decomposition. Single
    matrices call LAPACK directly, batches go through SciPy: both paths fall back."""
    import scipy.linalg

    from tenferro._src.backends import linalg_ext

    calls = []
    real_svd = scipy.linalg.svd

    def flaky_svd(a, *args, lapack_driver="gesdd", **kw):
        calls.append(lapack_driver)
        if lapack_driver == "gesdd":
            raise np.linalg.LinAlgError("SVD did not converge")
        return real_svd(a, *args, lapack_driver=lapack_driver, **kw)

    def failing_gesdd(*args):
        def gesdd(a, **kw):
            calls.append("direct gesdd")
            return None, None, None, 1  # LAPACK's info > 0: no convergence

        return gesdd, 1

    monkeypatch.setattr(scipy.linalg, "svd", flaky_svd)
    monkeypatch.setattr(linalg_ext, "_gesdd", failing_gesdd)
    a = rand(rng, (5, 3), "float64")
    u, s, vh = la.svd(T(a))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), a, atol=1e-12)
    np.testing.assert_allclose(la.svdvals(T(a)).numpy(), s.numpy(), rtol=1e-12)
    assert calls == ["direct gesdd", "gesvd", "direct gesdd", "gesvd"]
    calls.clear()
    batch = rand(rng, (2, 5, 3), "float64")
    ub, sb, vhb = la.svd(T(batch))
    np.testing.assert_allclose(np.einsum("bij,bj,bjk->bik", ub.numpy(), sb.numpy(),
                                         vhb.numpy()), batch, atol=1e-12)
    assert calls == ["gesdd", "gesvd"]
