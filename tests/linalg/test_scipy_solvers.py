"""SciPy's structured solves (solve_triangular, cho_factor/cho_solve, solve_sylvester,
solve_banded) and PyTorch's cholesky_solve / solve_triangular keywords: values against SciPy
and torch, derivatives against finite differences (forward and reverse, second order), eager
against jit."""

import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.core.dispatch import bind
from tenferro.errors import ShapeError
from tenferro.testing import check_grads, check_transpose
from tests import skips
from tests.linalg._util import DTYPES, T, rand

LA = tf.linalg


def _tri(rng, n, dtype, lower, batch=()):
    a = rand(rng, batch + (n, n), dtype) + 3 * np.eye(n)
    junk = rand(rng, batch + (n, n), dtype)  # the unread triangle: must be ignored
    return a + (np.triu(junk, 1) if lower else np.tril(junk, -1))


def _spd(rng, n, dtype):
    a = rand(rng, (n, n), dtype)
    return a @ a.conj().T + n * np.eye(n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2, "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_scipy_and_fd(dtype, trans, lower, unit, rng):
    a, b = _tri(rng, 4, dtype, lower), rand(rng, (4, 2), dtype)
    kw = dict(trans=trans, lower=lower, unit_diagonal=unit)
    got = LA.solve_triangular(T(a), T(b), **kw).numpy()
    np.testing.assert_allclose(got, sl.solve_triangular(a, b, **kw), rtol=1e-12, atol=1e-12)
    vec = LA.solve_triangular(T(a), T(b[:, 0]), **kw).numpy()
    np.testing.assert_allclose(vec, sl.solve_triangular(a, b[:, 0], **kw), rtol=1e-12,
                               atol=1e-12)
    check_grads(lambda p, q: LA.solve_triangular(p, q, **kw), (T(a), T(b)), order=2,
                rtol=1e-5, atol=1e-7)


def test_solve_triangular_reads_one_triangle_and_unit_diagonal_gets_no_gradient(rng):
    a, b = _tri(rng, 3, "float64", True), rand(rng, (3, 2), "float64")
    g = tf.grad(lambda x: tf.sum(LA.solve_triangular(x, T(b), lower=True,
                                                     unit_diagonal=True) ** 2))(T(a)).numpy()
    assert np.all(np.triu(g) == 0)  # strict upper triangle unread, diagonal taken as ones
    assert np.any(np.tril(g, -1) != 0)


def test_solve_triangular_batches_and_jit_agree(rng):
    a, b = _tri(rng, 3, "complex128", False, (2,)), rand(rng, (2, 3, 2), "complex128")

    def loss(x, y):
        return tf.sum(tf.abs(LA.solve_triangular(x, y, trans=2)) ** 2)

    want = np.stack([sl.solve_triangular(a[i], b[i], trans=2) for i in range(2)])
    np.testing.assert_allclose(LA.solve_triangular(T(a), T(b), trans=2).numpy(), want,
                               rtol=1e-12)
    ge = tf.grad(loss, argnums=(0, 1))(T(a), T(b))
    gj = tf.jit(tf.grad(loss, argnums=(0, 1)))(T(a), T(b))
    for x, y in zip(ge, gj):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_torch_keywords(upper, left, unitriangular, rng):
    torch = skips.torch()
    a = _tri(rng, 3, "float64", not upper, (2,))
    b = rand(rng, (2, 3, 4) if left else (2, 4, 3), "float64")
    kw = dict(upper=upper, left=left, unitriangular=unitriangular)
    got = LA.solve_triangular(T(a), T(b), **kw).numpy()
    want = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), **kw).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_grads(lambda p, q: LA.solve_triangular(p, q, **kw), (T(a), T(b)), rtol=1e-5,
                atol=1e-7)


def test_solve_triangular_refuses_mixed_spellings():
    a, b = tf.eye(2), tf.ones((2, 1))
    with pytest.raises(TypeError, match="not both"):
        LA.solve_triangular(a, b, lower=True, upper=False)
    with pytest.raises(TypeError, match="need upper="):
        LA.solve_triangular(a, b, left=False)
    with pytest.raises(ValueError, match="trans must be"):
        LA.solve_triangular(a, b, trans=3)
    with pytest.raises(ShapeError, match="solve_triangular: b of shape"):
        LA.solve_triangular(a, tf.ones((3, 1)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [False, True])
def test_cho_factor_and_cho_solve(dtype, lower, rng):
    a, b = _spd(rng, 4, dtype), rand(rng, (4, 3), dtype)
    c, low = LA.cho_factor(T(a), lower=lower)
    assert low is lower
    want_c = sl.cho_factor(a, lower=lower)[0]
    tri = np.tril if lower else np.triu
    np.testing.assert_allclose(c.numpy(), tri(want_c), rtol=1e-12, atol=1e-12)
    x = LA.cho_solve((c, low), T(b)).numpy()
    np.testing.assert_allclose(x, sl.cho_solve((want_c, lower), b), rtol=1e-11)
    np.testing.assert_allclose(LA.cho_solve((c, low), T(b[:, 1])).numpy(),
                               sl.cho_solve((want_c, lower), b[:, 1]), rtol=1e-11)

    def through_factor(m, q):  # the derivative of the whole pipeline in the matrix
        return LA.cho_solve(LA.cho_factor((m + tf.conj(m.T)) / 2, lower=lower), q)

    check_grads(through_factor, (T(a), T(b)), order=2, rtol=1e-5, atol=1e-7)
    check_grads(lambda cc, q: LA.cho_solve((cc, lower), q), (c, T(b)), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_matches_torch(dtype, upper, rng):
    torch = skips.torch()
    a, b = _spd(rng, 3, dtype), rand(rng, (2, 3, 2), dtype)
    fac = np.linalg.cholesky(a)
    fac = fac.conj().T if upper else fac
    got = LA.cholesky_solve(T(b), T(fac), upper=upper).numpy()
    want = torch.cholesky_solve(torch.tensor(b), torch.tensor(fac), upper=upper).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-11)
    np.testing.assert_allclose(a @ got, b, atol=1e-12)
    check_grads(lambda q, f: LA.cholesky_solve(q, f, upper=upper), (T(b), T(fac)), order=2,
                rtol=1e-5, atol=1e-7)
    with pytest.raises(ShapeError, match="cholesky_solve.*note the order"):
        LA.cholesky_solve(T(fac), T(b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_sylvester(dtype, rng):
    a, b, q = rand(rng, (4, 4), dtype), rand(rng, (3, 3), dtype), rand(rng, (4, 3), dtype)
    x = LA.solve_sylvester(T(a), T(b), T(q)).numpy()
    np.testing.assert_allclose(x, sl.solve_sylvester(a, b, q), rtol=1e-10)
    np.testing.assert_allclose(a @ x + x @ b, q, atol=1e-12)
    check_grads(LA.solve_sylvester, (T(a), T(b), T(q)), order=2, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sylvester_primitive_batches_and_transposes(dtype, rng):
    a, b, q = (rand(rng, (2, 3, 3), dtype), rand(rng, (2, 2, 2), dtype),
               rand(rng, (2, 3, 2), dtype))
    got = bind(P.sylvester_p, T(a), T(b), T(q)).numpy()
    want = np.stack([sl.solve_sylvester(a[i], b[i], q[i]) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    check_transpose(lambda r: bind(P.sylvester_p, T(a), T(b), r), (T(q),))

    def loss(x, y, z):
        return tf.sum(tf.abs(LA.solve_sylvester(x, y, z)) ** 2)

    ge = tf.grad(loss, argnums=(0, 1, 2))(T(a), T(b), T(q))
    gj = tf.jit(tf.grad(loss, argnums=(0, 1, 2)))(T(a), T(b), T(q))
    for u, v in zip(ge, gj):
        np.testing.assert_allclose(u.numpy(), v.numpy(), rtol=1e-10, atol=1e-12)


def test_sylvester_singular_and_shape_errors():
    from tenferro.linalg import SingularMatrixError

    with pytest.raises(SingularMatrixError, match="sylvester"):
        LA.solve_sylvester(tf.eye(2), -tf.eye(2), tf.ones((2, 2)))
    with pytest.raises(ShapeError, match="solve_sylvester: q of shape"):
        LA.solve_sylvester(tf.eye(2), tf.eye(3), tf.ones((3, 2)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lu", [(1, 2), (0, 1), (2, 0)])
def test_solve_banded(dtype, lu, rng):
    lo, up = lu
    n = 5
    ab = rand(rng, (lo + up + 1, n), dtype)
    ab[up] += 4  # the diagonal: a well-conditioned matrix
    b = rand(rng, (n, 2), dtype)
    got = LA.solve_banded(lu, T(ab), T(b)).numpy()
    np.testing.assert_allclose(got, sl.solve_banded(lu, ab, b), rtol=1e-11)
    np.testing.assert_allclose(LA.solve_banded(lu, T(ab), T(b[:, 0])).numpy(),
                               sl.solve_banded(lu, ab, b[:, 0]), rtol=1e-11)
    check_grads(lambda p, q: LA.solve_banded(lu, p, q), (T(ab), T(b)), order=2, rtol=1e-5,
                atol=1e-7)
    loss = lambda p, q: tf.sum(tf.abs(LA.solve_banded(lu, p, q)) ** 2)  # noqa: E731
    ge = tf.grad(loss)(T(ab), T(b)).numpy()
    np.testing.assert_allclose(tf.jit(tf.grad(loss))(T(ab), T(b)).numpy(), ge, rtol=1e-12)
    if up:  # the unused top-left corner of ab gets no gradient
        assert ge[0, 0] == 0
    with pytest.raises(ShapeError, match="solve_banded: ab of shape"):
        LA.solve_banded((lo + 1, up), T(ab), T(b))
