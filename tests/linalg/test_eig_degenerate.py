"""``linalg.eig`` at repeated and defective eigenvalues: the same guarantees as svd/eigh (exact
where a derivative exists and the factors can express it, a ``DegeneracyWarning`` otherwise,
never a finite wrong number in silence), with eig's own gauge freedom (an invertible change
of basis inside a repeated eigenvalue, GL rather than U) and its own failure, the defective
(Jordan) eigenvalue."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import DegeneracyWarning
from tests.linalg._util import DTYPES, T, haar, rand

pytestmark = pytest.mark.default_device_cpu

JORDAN = np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 3.0]])


@pytest.fixture
def strict():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        yield


def _det(x):
    return tf.real(tf.prod(la.eigvals(x)))


def _directional_fd(loss, a, d, h=1e-5):
    return (float(loss(T(a + h * d))) - float(loss(T(a - h * d)))) / (2 * h)


def test_det_through_a_jordan_block_is_reported():
    """prod(w) = det(A) is smooth, gradient adj(A)^T = [[3, 0, 0], [-3, 3, 0], [0, 0, 1]];
    through eig at the Jordan block the eigenvalues are tied outright, the rule loses the
    term the square-root splitting carries, and returned [[3, 0, 0], [0, 3, 0], [0, 0, 1]]
    silently. Reported as a defective eigenvalue now."""
    with pytest.warns(DegeneracyWarning, match=r"defective \(a Jordan block"):
        tf.grad(_det)(T(JORDAN))
    np.testing.assert_allclose(tf.grad(lambda x: la.det(x))(T(JORDAN)).numpy(),
                               [[3, 0, 0], [-3, 3, 0], [0, 0, 1]], atol=1e-12)


def test_smallest_eigenvalue_at_a_jordan_block_is_reported():
    """Re(min w) moves as sqrt(dA) at the Jordan block (an infinite derivative); the old rule
    returned a finite number (1.4e15 in the issue's probe) silently."""
    with pytest.warns(DegeneracyWarning, match="defective"):
        tf.grad(lambda x: tf.min(tf.real(la.eigvals(x))))(T(JORDAN))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rounded_jordan_block_symmetric_functions_exact_individual_reported(dtype, rng):
    """A rotated Jordan block comes out of LAPACK split by ~1e-8 (sqrt of rounding). The rule
    then differentiates the rounded matrix: symmetric functions of the block (det, sum w^2)
    are exact and silent, individual eigenvalues and eigenvectors of the block (whose
    derivatives are infinite) are reported."""
    q = haar(rng, 3, dtype)
    a = q @ JORDAN.astype(dtype) @ q.conj().T
    d = rand(rng, (3, 3), dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        for loss in (_det, lambda x: tf.real(tf.sum(la.eigvals(x) ** 2))):
            g = tf.grad(loss)(T(a)).numpy()
            fd = _directional_fd(loss, a, d)
            assert abs(np.real(np.vdot(g, d)) - fd) < 1e-6 * max(1, abs(fd))

    def nearest_one(x):
        w = la.eigvals(x)
        return tf.real(w[int(np.argmin(np.abs(tf.stop_gradient(w).numpy() - 0.9)))])

    with pytest.warns(DegeneracyWarning, match="defective"):
        tf.grad(nearest_one)(T(a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("structured", [False, True])
def test_derogatory_eigenvalue(structured, dtype, rng):
    """A repeated eigenvalue with two eigenvectors: symmetric functions of the spectrum and
    the spectral projector are exact and silent; an individual member, or a loss of the
    chosen eigenvectors, is reported (also at diag(1, 1, 3), where LAPACK's basis is the
    coordinate axes: the returned basis is generic)."""
    p = rand(rng, (3, 3), dtype) + 2 * np.eye(3)
    lam = np.diag([1.0, 1.0, 3.0]).astype(dtype)
    a = lam if structured else p @ lam @ np.linalg.inv(p)
    d = rand(rng, (3, 3), dtype)
    c = rand(rng, (3, 3), "complex128")

    def projector(x):
        w, v = la.eig(x)
        sel = np.flatnonzero(np.abs(tf.stop_gradient(w).numpy() - 1.0) < 0.5).tolist()
        return tf.real(tf.sum(T(c) * (v[:, sel] @ la.inv(v)[sel, :])))

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        for loss in (_det, projector):
            g = tf.grad(loss)(T(a)).numpy()
            fd = _directional_fd(loss, a, d)
            assert abs(np.real(np.vdot(g, d)) - fd) < 1e-6 * max(1, abs(fd))

    def member(x):
        w = la.eigvals(x)
        return tf.real(w[int(np.argmin(np.abs(tf.stop_gradient(w).numpy() - 0.9)))])

    def vector(x):
        w, v = la.eig(x)
        return tf.abs2(v[0, int(np.argmin(np.abs(tf.stop_gradient(w).numpy() - 0.9)))])

    with pytest.warns(DegeneracyWarning, match="individual eigenvalues"):
        tf.grad(member)(T(a))
    with pytest.warns(DegeneracyWarning, match="choice of eigenvectors"):
        tf.grad(vector)(T(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_near_repeated_eigenvalues_are_exact(dtype, rng):
    """Split by 1e-6 (resolved: ties are closer than 1e-10 max|w|) every loss is exact: the
    old Lorentzian broadening of 1/(w_j - w_i) is gone (a cut, as svd/eigh)."""
    p = rand(rng, (3, 3), dtype) + 2 * np.eye(3)
    a = p @ np.diag([1.0, 1.0 + 1e-6, 3.0]).astype(dtype) @ np.linalg.inv(p)
    e = rand(rng, (3, 3), "complex128")

    def expm_through_eig(x):
        w, v = la.eig(x)
        return tf.real(tf.sum(T(e) * ((v * tf.exp(w)[None, :]) @ la.inv(v))))

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(expm_through_eig)(T(a)).numpy()
    want = tf.grad(lambda x: tf.real(tf.sum(T(e) * la.expm(tf.astype(x, "complex128")))))(
        T(a)).numpy()
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6 * np.abs(want).max())


def test_generic_matrix_is_silent_and_free(rng, monkeypatch):
    """No tie: the check compares values and returns; the inspection never runs."""
    import chainrules.primitives.degeneracy as deg

    def boom(*args, **kwargs):
        raise AssertionError("inspected a spectrum without ties")

    monkeypatch.setattr(deg, "_inspect_eig", boom)
    a = rand(rng, (5, 5), "complex128")
    tf.grad(lambda x: tf.abs2(la.eig(x).eigenvectors[0, 1]) + _det(x))(T(a))


def test_eig_check_in_traced_gradients():
    """The check is a node of the gradient graph, as for svd/eigh."""
    f = tf.jit(tf.grad(_det))
    with pytest.warns(DegeneracyWarning, match="defective"):
        f(T(JORDAN))
