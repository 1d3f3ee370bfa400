"""solve, inv, det, slogdet, cholesky, pinv, expm and norms: values against NumPy/SciPy and
derivatives (first and second order, forward and reverse) through every output."""

import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
from tenferro import linalg as la
from tenferro.testing import check_grads
from tests.linalg._util import DTYPES, T, hermitian, rand, rel_err, with_singular_values

ORDER2 = {"order": 2, "rtol": 1e-5, "atol": 1e-7}


def _well_conditioned(rng, shape, dtype):
    a = rand(rng, shape, dtype)
    return a + 3 * np.eye(shape[-1])


# ---------------------------------------------------------------------------- solve
@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_values_and_broadcasting(dtype, rng):
    a = _well_conditioned(rng, (2, 4, 4), dtype)
    b = rand(rng, (4, 3), dtype)
    x = la.solve(T(a), T(b)).numpy()
    assert x.shape == (2, 4, 3)
    np.testing.assert_allclose(a @ x, np.broadcast_to(b, (2, 4, 3)), atol=1e-12)
    v = rand(rng, (4,), dtype)
    xv = la.solve(T(a[0]), T(v)).numpy()
    assert xv.shape == (4,)
    np.testing.assert_allclose(a[0] @ xv, v, atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_derivatives(dtype, rng):
    a = T(_well_conditioned(rng, (2, 4, 4), dtype))
    b = T(rand(rng, (2, 4, 2), dtype))
    check_grads(la.solve, (a, b), **ORDER2)
    check_grads(lambda x, y: la.solve(x, y), (a[0], b[0, :, 0]), **ORDER2)  # vector rhs


def test_solve_mixed_dtypes_promote(rng):
    a = _well_conditioned(rng, (3, 3), "float64")
    b = rand(rng, (3, 2), "complex128")
    x = la.solve(T(a), T(b))
    assert x.dtype == tf.complex128
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-12)
    check_grads(la.solve, (T(a), T(b)), order=1)


# ---------------------------------------------------------------------- inv and det
@pytest.mark.parametrize("dtype", DTYPES)
def test_inv_det_slogdet(dtype, rng):
    a = _well_conditioned(rng, (2, 4, 4), dtype)
    np.testing.assert_allclose(la.inv(T(a)).numpy(), np.linalg.inv(a), atol=1e-12)
    np.testing.assert_allclose(la.det(T(a)).numpy(), np.linalg.det(a), rtol=1e-12)
    sign, logabs = la.slogdet(T(a))
    ws, wl = np.linalg.slogdet(a)
    np.testing.assert_allclose(sign.numpy(), ws, rtol=1e-12)
    np.testing.assert_allclose(logabs.numpy(), wl, rtol=1e-12)
    for f in (la.inv, la.det, la.slogdet):
        check_grads(f, (T(a),), **ORDER2)


def test_det_of_negative_determinant_and_sign_derivative(rng):
    a = np.diag([-2.0, 1.0, 3.0]) + 0.1 * rand(rng, (3, 3), "float64")
    assert float(la.det(T(a))) < 0
    sign, _ = la.slogdet(T(a))
    _, dsign = tf.jvp(lambda x: la.slogdet(x)[0], (T(a),), (T(rand(rng, (3, 3), "float64")),))
    # the sign of a real matrix is locally constant
    assert float(sign) == -1.0 and float(dsign) == 0.0


# ------------------------------------------------------------------------- cholesky
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cholesky(dtype, upper, rng):
    x = rand(rng, (2, 4, 4), dtype)
    a = x @ np.swapaxes(x.conj(), -1, -2) + 4 * np.eye(4)
    c = la.cholesky(T(a), upper=upper).numpy()
    if upper:
        np.testing.assert_allclose(np.swapaxes(c.conj(), -1, -2) @ c, a, atol=1e-12)
        np.testing.assert_allclose(np.tril(c, -1), 0, atol=0)
    else:
        np.testing.assert_allclose(c @ np.swapaxes(c.conj(), -1, -2), a, atol=1e-12)
        np.testing.assert_allclose(c, np.linalg.cholesky(a), atol=1e-12)
    check_grads(lambda y: la.cholesky(y, upper=upper), (T(a),), **ORDER2)

    def via_factor(y):  # a parametrisation that stays positive definite
        return la.cholesky(y @ tf.conj(tf.swapaxes(y, -1, -2)) + 4.0 * tf.eye(4, dtype=y.dtype),
                           upper=upper)

    check_grads(via_factor, (T(x),), order=1)


# ----------------------------------------------------------------------------- pinv
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
def test_pinv_full_rank(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    np.testing.assert_allclose(la.pinv(T(a)).numpy(), np.linalg.pinv(a), atol=1e-12)
    check_grads(la.pinv, (T(a),), **ORDER2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pinv_rank_deficient_constant_rank(dtype, rng):
    """A rank-3 6x5 matrix; perturbations that keep the rank (A -> A + U_3 E V_3^H...) are the
    directions where the pseudo-inverse is differentiable; a rank-preserving parametrisation
    A(x) = L(x) R(x) is used."""
    lf = rand(rng, (6, 3), dtype)
    rf = rand(rng, (3, 5), dtype)
    a = lf @ rf
    np.testing.assert_allclose(la.pinv(T(a)).numpy(), np.linalg.pinv(a), atol=1e-10)

    def f(x, y):
        return la.pinv(x @ y)

    check_grads(f, (T(lf), T(rf)), order=1)


def test_pinv_hermitian(rng):
    h = hermitian(rng, 4, "complex128", [2.0, -1.0, 0.5, 0.0])
    np.testing.assert_allclose(la.pinv(T(h), hermitian=True).numpy(), np.linalg.pinv(h),
                               atol=1e-10)
    check_grads(lambda x: la.pinv(x, hermitian=True), (T(hermitian(rng, 4, "complex128")),),
                order=1)


# ------------------------------------------------------------------------------ expm
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.3, 1.0, 20.0])
def test_expm_values(dtype, scale, rng):
    a = scale * rand(rng, (2, 4, 4), dtype)
    np.testing.assert_allclose(la.expm(T(a)).numpy(), sl.expm(a), rtol=1e-11,
                               atol=1e-13 * np.abs(sl.expm(a)).max())


def test_expm_of_hermitian_matches_spectral_formula(rng):
    """exp(-tau H), the imaginary-time gate, against V exp(-tau w) V^H."""
    h = hermitian(rng, 5, "complex128")
    w, v = np.linalg.eigh(h)
    want = (v * np.exp(-0.3 * w)) @ v.conj().T
    np.testing.assert_allclose(la.expm(T(-0.3 * h)).numpy(), want, atol=1e-13)


@pytest.mark.parametrize("dtype", DTYPES)
def test_expm_derivatives(dtype, rng):
    a = T(rand(rng, (2, 3, 3), dtype))
    check_grads(la.expm, (a,), **ORDER2)


def test_expm_third_order(rng):
    """Higher orders go through the block-triangular identity, recursively."""
    a = T(0.5 * rand(rng, (3, 3), "float64"))
    t = T(rand(rng, (3, 3), "float64"))

    def d2(x):
        return tf.jvp(lambda y: tf.jvp(la.expm, (y,), (t,))[1], (x,), (t,))[1]

    check_grads(d2, (a,), order=1)


def test_expm_hvp_imaginary_time_energy(rng):
    """E(H) = <psi| e^{-H} H e^{-H} |psi> / <psi| e^{-2H} |psi>, Hessian-vector product."""
    n = 4
    h = T(hermitian(rng, n, "complex128"))
    t = T(hermitian(rng, n, "complex128"))
    psi = T(rand(rng, (n,), "complex128"))

    def energy(x):
        phi = la.expm(-0.5 * x) @ psi
        return tf.real(tf.sum(tf.conj(phi) * (x @ phi))) / tf.sum(tf.abs2(phi))

    hv = tf.hvp(energy, (h,), (t,)).numpy()
    g = tf.grad(energy)
    eps = 1e-5
    fd = (g(h + eps * t).numpy() - g(h - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-7


# ----------------------------------------------------------------------------- norms
MATRIX_ORDS = [None, "fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_norms(ord, dtype, rng):
    a = rand(rng, (2, 5, 4), dtype)
    got = la.norm(T(a), ord=ord, axis=(1, 2))
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(a, ord=ord, axis=(1, 2)), rtol=1e-12)
    kd = la.norm(T(a), ord=ord, axis=(2, 1), keepdims=True)
    np.testing.assert_allclose(kd.numpy(), np.linalg.norm(a, ord=ord, axis=(2, 1),
                                                           keepdims=True), rtol=1e-12)
    check_grads(lambda x: la.norm(x, ord=ord, axis=(-2, -1)), (T(a),), order=1)
    if ord is not None:
        np.testing.assert_allclose(la.norm(T(a[0]), ord=ord).numpy(),
                                   np.linalg.norm(a[0], ord=ord), rtol=1e-12)


@pytest.mark.parametrize("ord", [None, 2, 1, 0, np.inf, -np.inf, 3, 0.5, -1.5])
def test_vector_norms(ord, rng):
    a = rand(rng, (3, 4), "complex128")
    for axis in (0, 1, -1):
        np.testing.assert_allclose(la.norm(T(a), ord=ord, axis=axis).numpy(),
                                   np.linalg.norm(a, ord=ord, axis=axis), rtol=1e-12)
    np.testing.assert_allclose(la.norm(T(a[0]), ord=ord).numpy(), np.linalg.norm(a[0], ord=ord),
                               rtol=1e-12)
    if ord != 0:
        check_grads(lambda x: la.norm(x, ord=ord, axis=1), (T(a),), order=1)


def test_norm_defaults_and_ops_delegation(rng):
    assert tf.norm is la.norm  # one implementation: tf.norm(v, -1.5) cannot diverge again
    v = rand(rng, (5,), "float64")
    for ord in (-1.5, -1, 0.5, 3):
        np.testing.assert_allclose(T(v).norm(ord).numpy(), np.linalg.norm(v, ord), rtol=1e-12)
    a = rand(rng, (2, 3, 4), "float64")
    np.testing.assert_allclose(la.norm(T(a)).numpy(), np.linalg.norm(a), rtol=1e-12)
    np.testing.assert_allclose(la.norm(T(a), keepdims=True).numpy(),
                               np.linalg.norm(a, keepdims=True), rtol=1e-12)
    m = a[0]
    np.testing.assert_allclose(tf.norm(T(m), "nuc").numpy(), np.linalg.norm(m, "nuc"))
    np.testing.assert_allclose(tf.norm(T(m), 2, axis=(0, 1)).numpy(), np.linalg.norm(m, 2))


def test_nuclear_norm_gradient_on_low_rank_gap(rng):
    """The nuclear norm of a full-rank matrix: gradient U V^H."""
    a = with_singular_values(rng, 4, 3, [3.0, 2.0, 1.0], "complex128")
    g = tf.grad(lambda x: la.norm(x, "nuc"))(T(a)).numpy()
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(g, u @ vh, atol=1e-10)
