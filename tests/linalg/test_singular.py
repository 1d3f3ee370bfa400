"""det at singular matrices (the adjugate), and clear errors where no derivative or inverse
exists (inv, solve, slogdet, cholesky)."""

import numpy as np
import pytest

import tenferro as tf
from chainrules import primitives as P
from tenferro import linalg as la
from tenferro._src.core.dispatch import bind
from tenferro.errors import TenferroError
from tenferro.testing import check_grads
from tests.linalg._util import DTYPES, T, fd_gradient_extrapolated, rand, with_singular_values


def _adjugate_by_cofactors(a):
    n = a.shape[-1]
    adj = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            adj[j, i] = (-1) ** (i + j) * np.linalg.det(minor)
    return adj


@pytest.mark.parametrize("svals", [[3.0, 2.0, 1.0, 0.0], [3.0, 2.0, 0.0, 0.0],
                                   [2.0, 0.0, 0.0, 0.0], [3.0, 2.0, 1.0, 1e-9]],
                         ids=["rank3", "rank2", "rank1", "nearly_singular"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_det_at_singular_matrices(svals, dtype, rng):
    """grad(det) used to raise "Singular matrix". d det = tr(adj(A) dA), so the gradient of
    Re det is conj(adj(A))^T: rank-one at rank n - 1, zero at rank <= n - 2."""
    a = with_singular_values(rng, 4, 4, svals, dtype)

    def loss(x):
        return tf.real(la.det(x))

    g = tf.grad(loss)(T(a)).numpy()
    want = _adjugate_by_cofactors(a).T.conj()
    np.testing.assert_allclose(g, want, atol=1e-12 * max(1.0, np.abs(want).max()))
    if svals[1] == 0.0:
        assert np.abs(g).max() < 1e-13
    np.testing.assert_allclose(g, fd_gradient_extrapolated(loss, a, h=1e-3), atol=1e-9)
    if svals.count(0.0) == 1:
        assert np.linalg.matrix_rank(g, tol=1e-8) == 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_adjugate_primitive(dtype, rng):
    a = rand(rng, (2, 3, 3), dtype) + 2 * np.eye(3)
    got = bind(P.adjugate_p, T(a)).numpy()
    want = np.stack([_adjugate_by_cofactors(m) for m in a])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_grads(lambda x: bind(P.adjugate_p, x), (T(a),), order=2, rtol=1e-5, atol=1e-7)
    check_grads(la.det, (T(a),), order=2, rtol=1e-5, atol=1e-7)
    batch = np.stack([with_singular_values(rng, 3, 3, [2.0, 1.0, 0.0], dtype), a[0]])
    np.testing.assert_allclose(bind(P.adjugate_p, T(batch)).numpy(),
                               np.stack([_adjugate_by_cofactors(m) for m in batch]),
                               atol=1e-12)


def test_second_derivative_of_det_at_a_singular_matrix_is_an_error(rng):
    a = T(with_singular_values(rng, 3, 3, [2.0, 1.0, 0.0], "float64"))
    with pytest.raises(la.SingularMatrixError, match="inv: the matrix is singular"):
        tf.hessian(la.det)(T(np.zeros((3, 3))))
    assert np.isfinite(tf.grad(la.det)(a).numpy()).all()


def test_inv_solve_cholesky_of_singular_matrices():
    z = T(np.zeros((3, 3)))
    with pytest.raises(la.SingularMatrixError, match=r"inv: the matrix is singular, it has no "
                                                     r"inverse \(f64\[3,3\]\).*pinv"):
        la.inv(z)
    with pytest.raises(la.SingularMatrixError, match=r"solve: the matrix is singular"):
        la.solve(z, T(np.ones(3)))
    with pytest.raises(la.SingularMatrixError, match="cholesky: the Hermitian part of the "
                                                     "matrix is not positive definite"):
        la.cholesky(T(-np.eye(3)))
    err = la.SingularMatrixError("x")
    assert isinstance(err, TenferroError) and isinstance(err, np.linalg.LinAlgError)


def test_slogdet_at_a_singular_matrix(rng):
    a = T(with_singular_values(rng, 3, 3, [2.0, 1.0, 0.0], "float64"))
    sign, logabs = la.slogdet(a)
    assert sign.item() == 0 and logabs.item() == -np.inf
    with pytest.raises(la.SingularMatrixError, match=r"slogdet"):
        tf.grad(lambda x: la.slogdet(x).logabsdet)(a)


def test_solve_gradient_with_an_inf_cotangent_is_not_called_singular():
    """A well-conditioned matrix and an infinite cotangent: the backward solve gets an inf
    right-hand side, so its non-finite result is the answer, not a sign that A is singular."""
    a = T(np.array([[2.0, 1.0], [0.0, 3.0]]))
    b = T(np.array([1.0, 2.0]))
    w = T(np.array([np.inf, 1.0]))
    g = tf.grad(lambda a: (la.solve(a, b) * w).sum())(a).numpy()
    assert not np.isfinite(g).all()
    with pytest.raises(TenferroError, match="singular"):  # a singular matrix still says so
        tf.grad(lambda a: (la.solve(a, b) * w).sum())(T(np.array([[1.0, 1.0], [1.0, 1.0]])))
