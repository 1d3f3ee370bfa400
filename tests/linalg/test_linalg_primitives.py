"""The linalg primitives on their own: JVP vs finite differences, reverse vs forward mode,
transposition of the linear ones (the dot-product identity), second order; and their
documented conventions."""

import itertools

import numpy as np
import pytest

import chainrules
import tenferro as tf
from chainrules import primitives as P
from tenferro._src.core.dispatch import bind
from tenferro.testing import check_grads, check_transpose
from tests.linalg._util import DTYPES, T, rand

FLAGS = list(itertools.product([True, False], repeat=4))


def _trisolve(a, b, left_side, lower, transpose_a, conjugate_a):
    return bind(P.triangular_solve_p, a, b, left_side=left_side, lower=lower,
                transpose_a=transpose_a, conjugate_a=conjugate_a)


def _triangular(rng, n, dtype, lower):
    a = rand(rng, (2, n, n), dtype) + 3 * np.eye(n)
    return np.tril(a) if lower else np.triu(a)


@pytest.mark.parametrize("left_side,lower,transpose_a,conjugate_a", FLAGS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_triangular_solve(left_side, lower, transpose_a, conjugate_a, dtype, rng):
    n = 3
    a = _triangular(rng, n, dtype, lower)
    junk = rand(rng, (2, n, n), dtype)  # the other triangle must be ignored
    a_full = a + (np.triu(junk, 1) if lower else np.tril(junk, -1))
    b = rand(rng, (2, n, 2) if left_side else (2, 2, n), dtype)
    flags = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                 conjugate_a=conjugate_a)
    x = _trisolve(T(a_full), T(b), **flags).numpy()
    op = a
    if transpose_a:
        op = np.swapaxes(op, -1, -2)
    if conjugate_a:
        op = op.conj()
    np.testing.assert_allclose(op @ x if left_side else x @ op, b, atol=1e-12)
    check_grads(lambda p, q: _trisolve(p, q, **flags), (T(a_full), T(b)), order=2, rtol=1e-5,
                atol=1e-7)
    check_transpose(lambda q: _trisolve(T(a_full), q, **flags), (T(b),))


@pytest.mark.parametrize("dtype", DTYPES)
def test_solve_is_linear_in_b(dtype, rng):
    a = T(rand(rng, (2, 3, 3), dtype) + 3 * np.eye(3))
    b = T(rand(rng, (2, 3, 2), dtype))
    check_transpose(lambda q: bind(P.solve_p, a, q), (b,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_expm_frechet(dtype, rng):
    import scipy.linalg as sl

    a = rand(rng, (2, 3, 3), dtype)
    e = rand(rng, (2, 3, 3), dtype)
    got = bind(P.expm_frechet_p, T(a), T(e)).numpy()
    want = np.stack([sl.expm_frechet(a[i], e[i], compute_expm=False) for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-13)
    check_transpose(lambda q: bind(P.expm_frechet_p, T(a), q), (T(e),))
    check_grads(lambda p, q: bind(P.expm_frechet_p, p, q), (T(a), T(e)), order=2, rtol=1e-5,
                atol=1e-7)


def test_cut_inverse_convention(rng):
    """F = 1/d where |d| > w, 0 on ties (|d| <= w); dF/dd = -F^2 (exact off the cut, 0 on it),
    dF/dw = 0."""
    d = np.array([0.0, 0.5, -1.3, 2.0, 1e-20, 2e-6, -1e-6])
    w = np.full(7, 1e-6)
    f = bind(P.cut_inverse_p, T(d), T(w)).numpy()
    np.testing.assert_allclose(f[[1, 2, 3, 5]], 1 / d[[1, 2, 3, 5]], rtol=1e-15)
    assert f[0] == 0.0 and f[4] == 0.0 and f[6] == 0.0
    t = np.ones(7)
    _, df = tf.jvp(lambda x: bind(P.cut_inverse_p, x, T(w)), (T(d),), (T(t),))
    np.testing.assert_allclose(df.numpy(), -f**2, rtol=1e-15)
    dd = T(np.array([0.5, -1.3, 2.0]))
    check_grads(lambda x: bind(P.cut_inverse_p, x, T(np.full(3, 1e-3))), (dd,), order=3)
    _, dw = tf.jvp(lambda y: bind(P.cut_inverse_p, dd, y), (T(np.full(3, 1e-3)),),
                   (T(np.ones(3)),))
    assert np.all(dw.numpy() == 0)


def test_degeneracy_guard_and_check_are_identities(rng):
    """Linear identities in the quantities; each transposes to the other; forward mode of a
    check checks the tangent (so Hessian-vector products are inspected too)."""
    s = T(np.array([3.0, 2.0, 1.0]))
    x, y = T(rand(rng, (3,), "float64")), T(rand(rng, (3, 3), "complex128"))
    for prim in (P.degeneracy_guard_p, P.degeneracy_check_p):
        out = bind(prim, x, y, s, op="svd", parts=("values", "rotation"), eps=1e-10)
        np.testing.assert_array_equal(out[0].numpy(), x.numpy())
        np.testing.assert_array_equal(out[1].numpy(), y.numpy())
        check_transpose(lambda p, q, prim=prim: bind(prim, p, q, s, op="svd",
                                                     parts=("values", "rotation"), eps=1e-10),
                        (x, y))
        check_grads(lambda p, prim=prim: bind(prim, p, s, op="eigh", parts=("values",),
                                              eps=1e-10)[0], (x,), order=2)


def test_broadened_inverse_convention(rng):
    """(Kept so that graphs saved by earlier versions load; no rule uses it now.)
    F = d/(d^2 + w^2); dF/dd is taken as -F^2 (the derivative of 1/d at the broadened
    value), which agrees with finite differences where |d| >> w, and is exactly 0 at d = 0."""
    d = np.array([0.0, 0.5, -1.3, 2.0, 1e-20])
    w = np.full(5, 1e-6)
    f = bind(P.broadened_inverse_p, T(d), T(w)).numpy()
    np.testing.assert_allclose(f[1:4], 1 / d[1:4], rtol=1e-11)
    assert f[0] == 0.0 and abs(f[4]) < 1e-7
    t = np.array([1.0, 1.0, 1.0, 1.0, 1.0])
    _, df = tf.jvp(lambda x: bind(P.broadened_inverse_p, x, T(w)), (T(d),), (T(t),))
    np.testing.assert_allclose(df.numpy(), -f**2 * t, rtol=1e-14)
    np.testing.assert_allclose(df.numpy()[1:4], -1 / d[1:4] ** 2, rtol=1e-10)
    # in w the derivative is exact
    dd, ww = T(np.array([0.5, -1.3])), T(np.array([0.2, 0.4]))
    check_grads(lambda y: bind(P.broadened_inverse_p, dd, y), (ww,), order=2)
    zero = bind(P.broadened_inverse_p, T(np.zeros(2)), T(np.zeros(2))).numpy()
    assert np.all(zero == 0)  # no NaN where d = w = 0


def test_every_linalg_primitive_is_exercised():
    """Every primitive of chainrules.primitives.linalg is used by the suite above or by the
    tenferro.linalg functions (guards against adding one without tests)."""
    from chainrules.primitives import linalg as lp

    names = {p.name for p in vars(lp).values() if isinstance(p, chainrules.Primitive)}
    assert names == {"svd", "svdvals", "eigh", "eigvalsh", "qr", "cholesky", "triangular_solve",
                     "solve", "inv", "det", "slogdet", "expm", "expm_frechet", "sylvester",
                     "broadened_inverse", "truncation_indices", "cut_inverse", "adjugate",
                     "degeneracy_guard", "degeneracy_check", "funm"}


@pytest.mark.parametrize("name", ["svd", "qr", "eigh", "cholesky", "inv", "det", "slogdet",
                                  "expm"])
def test_float32_stays_float32_and_agrees(name, rng):
    from tenferro import linalg as la

    fn = {"svd": la.svd, "qr": la.qr, "eigh": la.eigh, "inv": la.inv, "det": la.det,
          "slogdet": la.slogdet, "expm": la.expm,
          "cholesky": lambda x: la.cholesky(x @ x.T + 4.0 * tf.eye(3, dtype=x.dtype))}[name]
    a = rand(rng, (3, 3), "float64")

    def loss(x):
        outs = fn(x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return sum(tf.sum(tf.abs2(o)) for o in outs)

    g64 = tf.grad(loss)(T(a)).numpy()
    g32 = tf.grad(loss)(T(a.astype(np.float32)))
    assert g32.dtype == tf.float32
    np.testing.assert_allclose(g32.numpy(), g64, rtol=2e-3, atol=2e-3)
