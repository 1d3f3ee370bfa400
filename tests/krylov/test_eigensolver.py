"""The one Krylov eigensolver (Krylov-Schur, ``linalg/eigensolver.py``) on both kinds of
vector: tenferro tensors and raw backend arrays. Both run the same arithmetic, so they agree
with each other (same products) and with LAPACK, including the corners: spaces smaller than
the Krylov dimension, restarts, and a start inside an invariant subspace (the breakdown
path)."""

import importlib

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
import tenferro.tn  # noqa: F401
from tenferro._src.linalg.eigensolver import lowest_eigenpair
from tenferro._src.linalg.vectors import TENSORS, ArrayVectors
from tenferro.tn import mpo as M

from ._util import DTYPES, rand


def _hermitian(rng, n, dtype):
    a = rand(rng, (n, n), dtype)
    return (a + a.conj().T) / 2


def _kinds():
    """(vector space, host array -> its vector, its vector -> host array) for the tensors
    and for the raw arrays of the current CPU backend."""
    backend = tf.ones(1).backend
    arrays = ArrayVectors(None if backend.name == "numpy" else backend)
    to_arr = (np.asarray if arrays.numpy else backend.xp.asarray)
    from_arr = (np.asarray if arrays.numpy else backend.to_numpy)
    return {"tensors": (TENSORS, tf.asarray, lambda x: x.numpy()),
            "arrays": (arrays, to_arr, from_arr)}


def _solve(kind, A, v0, **kw):
    space, to, back = _kinds()[kind]
    a = to(A)

    def mv(x):
        return a @ x

    opts = dict(tol=1e-13, ncv=8, maxiter=100, rng=np.random.default_rng(0))
    opts.update(kw)
    e, x, k = lowest_eigenpair(mv, to(v0), vectors=space, **opts)
    return e, back(x), k


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 8, 40])
def test_lowest_eigenpair_matches_lapack_on_both_kinds(rng, n, dtype):
    """n <= ncv: the space is exhausted exactly; n = 40 with ncv = 8 needs restarts."""
    A = _hermitian(rng, n, dtype)
    v0 = rand(rng, (n,), dtype)
    w, V = np.linalg.eigh(A)
    found = {}
    for kind in ("tensors", "arrays"):
        e, x, k = _solve(kind, A, v0)
        assert abs(e - w[0]) <= 1e-11 * max(1.0, abs(w).max())
        assert abs(np.linalg.norm(x) - 1) < 1e-12
        assert np.linalg.norm(A @ x - e * x) <= 1e-9 * abs(w).max()
        assert k <= n or n > 8
        found[kind] = (e, k)
    # the same arithmetic: the same number of products, the same value to rounding
    assert found["tensors"][1] == found["arrays"][1]
    assert abs(found["tensors"][0] - found["arrays"][0]) <= 1e-12 * max(1.0, abs(w).max())


@pytest.mark.parametrize("kind", ["tensors", "arrays"])
def test_start_in_an_invariant_subspace(kind):
    """v0 spans two eigenvectors, the lowest among them: the Krylov space closes after two
    products (beta = 0, the breakdown path draws a random orthogonal direction to continue
    from) and the Ritz pair is exact. (A Krylov method cannot see eigenvectors orthogonal to
    its start beyond rounding: from a start without the lowest eigenvector it returns the
    lowest one it can reach, as ARPACK does.)"""
    n = 30
    A = np.diag(np.arange(n, dtype=float))
    v0 = np.zeros(n)
    v0[[0, 9]] = 1.0
    e, x, k = _solve(kind, A, v0)
    assert abs(e) < 1e-12 and abs(abs(x[0]) - 1) < 1e-12
    assert k == 2


def test_warm_start_converges_in_few_products():
    """A start close to the eigenvector (a DMRG's warm start) costs a few products."""
    rng = np.random.default_rng(3)
    A = _hermitian(rng, 200, "float64")
    w, V = np.linalg.eigh(A)
    cold = rng.standard_normal(200)
    warm = V[:, 0] + 1e-6 * cold
    for kind in ("tensors", "arrays"):
        e, _, k = _solve(kind, A, warm, tol=1e-10, ncv=12)
        _, _, k_cold = _solve(kind, A, cold, tol=1e-10, ncv=12)
        assert abs(e - w[0]) < 1e-9 and 2 * k < k_cold


def test_a_matvec_that_reuses_its_output_buffer():
    """The block-sparse DMRG's products write into one buffer they own: the solver reads
    each product once, before the next."""
    rng = np.random.default_rng(4)
    A = _hermitian(rng, 50, "float64")
    buf = np.empty(50)

    def mv(x):
        np.matmul(A, x, out=buf)
        return buf

    e, x, _ = lowest_eigenpair(mv, rng.standard_normal(50), tol=1e-12, ncv=10, maxiter=100,
                               rng=np.random.default_rng(0), vectors=ArrayVectors(None))
    assert abs(e - np.linalg.eigvalsh(A)[0]) < 1e-10


def test_dense_dmrg_symmetric_dmrg_and_vumps_share_the_solver(monkeypatch):
    """One Krylov eigensolver: every local problem of the three goes through
    ``eigensolver.krylov_schur`` (no private Lanczos)."""
    es = importlib.import_module("tenferro._src.linalg.eigensolver")
    calls = {"n": 0}
    original = es.krylov_schur

    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(es, "krylov_schur", counted)
    H = M.heisenberg_mpo(6)
    for run in (lambda: tf.tn.dmrg(H, 8, progress=False),
                lambda: S.dmrg(S.mpo_from_dense(H, [1, -1]), 8, progress=False),
                lambda: tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=0, progress=False,
                                    maxiter=3)):  # tol=0: exactly 3 iterations, no warning
        before = calls["n"]
        run()
        assert calls["n"] > before
