"""tenferro's one Krylov eigensolver: Krylov-Schur (thick-restart Lanczos for Hermitian
operators), on any kind of vector (``vectors.py``), and its entry for the lowest eigenpair.

Every eigenvalue computation by products goes through ``krylov_schur``: ``linalg.eigsh`` and
``linalg.eigs`` (with implicit derivatives, in ``krylov.py``), and ``lowest_eigenpair``, the
forward-only local solver of the dense DMRG, the block-sparse DMRG and VUMPS (eigsh and eigs
solve problems of at most ``2 ncv`` dimensions densely, ``dense_eig``: their cold starts
would need restarts).
design/krylov.md, "One eigensolver", has the choice of the algorithm and its measurements.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.linalg.lapack import dstev as _dstev
from scipy.linalg.lapack import dsyevd as _dsyevd

from ..errors import LinAlgError
from ..ops import asarray
from ._iterative import SolveInfo, basis, value
from .vectors import TENSORS

__all__ = ["GENERAL_WHICH", "HERMITIAN_WHICH", "RitzResult", "dense_eig", "krylov_schur",
           "lowest_eigenpair", "order"]

HERMITIAN_WHICH = ("SA", "LA", "LM")
GENERAL_WHICH = ("LM", "LR", "SR")


def order(vals, which: str) -> np.ndarray:
    """Indices of ``vals`` from most to least wanted."""
    if which == "SA" or which == "SR":
        key = np.real(vals)
    elif which == "LA" or which == "LR":
        key = -np.real(vals)
    else:  # LM
        key = -np.abs(vals)
    return np.argsort(key, kind="stable")


class RitzResult(NamedTuple):
    values: np.ndarray  # host, most wanted first
    vectors: object  # a block of k unit vectors (tensors: an (n, k) tensor on the device)
    info: SolveInfo
    scale: float = 0.0  # estimate of ||A|| (largest Ritz value / projected entry seen)


def require_finite(what: str, small) -> None:
    """A projected (host) matrix built from the operator's products must be finite: NaN or
    inf there means the operator produced them, and LAPACK would fail with a bare error."""
    if not np.all(np.isfinite(small)):
        raise LinAlgError(
            f"{what}: the operator's products are not finite (NaN or inf); eigenpairs of a "
            f"non-finite operator are not defined. Check the matrix (or the tensors the "
            f"LinearOperator's matvec uses) for NaN/inf.")


def _ritz(H, mm, which, hermitian, tridiagonal=False):
    """Ritz values (most wanted first), small eigenvectors Y, residual norms |b^T y| and the
    largest |Ritz value| of the Krylov decomposition of size mm held in H[:mm + 1, :mm].

    Hermitian: the projected matrix is real symmetric, its lower triangle the recurrence
    (Lanczos' alphas and betas, after a thick restart also the row that couples the kept
    Ritz vectors), the upper one also the reorthogonalisation noise; the lower triangle goes
    to LAPACK directly, ``stev`` while it is tridiagonal (no restart yet), ``syevd`` after.
    The test runs after every product: numpy's eigh would cost several times as much in
    argument handling at these sizes."""
    b = H[mm, :mm]
    if not math.isfinite(abs(H[mm - 1, mm - 1]) + abs(b[-1])):  # the newest column: the
        require_finite("the Krylov eigensolver", H[:mm + 1, :mm])  # products' NaN/inf land
    if hermitian:
        R = H.real
        if tridiagonal and mm > 1:
            theta, Y, info = _dstev(R.diagonal()[:mm].copy(), R.diagonal(-1)[: mm - 1].copy())
        else:
            theta, Y, info = _dsyevd(R[:mm, :mm], lower=1)
        if info != 0:  # pragma: no cover - LAPACK does not fail on finite input
            raise np.linalg.LinAlgError(f"krylov_schur: LAPACK returned info={info}.")
        vmax = max(abs(theta[0]), abs(theta[-1]))  # (ascending)
        if which == "LA":
            theta, Y = theta[::-1], Y[:, ::-1]
        elif which != "SA":
            idx = order(theta, which)
            theta, Y = theta[idx], Y[:, idx]
        return theta, Y, np.abs(b @ Y), float(vmax)
    theta, Y = np.linalg.eig(H[:mm, :mm])
    Y = Y / np.linalg.norm(Y, axis=0)
    idx = order(theta, which)
    theta, Y = theta[idx], Y[:, idx]
    return theta, Y, np.abs(b @ Y), float(np.abs(theta).max())


def krylov_schur(mv, v0, k: int, which: str, hermitian: bool, *, tol: float, ncv: int,
                 maxiter: int, rng, project=None, vectors=TENSORS) -> RitzResult:
    """The ``k`` most wanted eigenpairs of ``mv`` by the Krylov-Schur method (Stewart 2001):
    a Krylov decomposition A Q = Q H + q b^T of up to ``ncv`` vectors (full
    reorthogonalisation, CGS2), Ritz pairs from the small matrix H, and a thick restart that
    keeps the ``k + (ncv - k) // 2`` most wanted Schur (Hermitian: eigen-) vectors. For a
    Hermitian operator this is thick-restart Lanczos. Converged when every wanted Ritz pair
    has a residual ``|b^T y| <= tol * max|theta|``; the test runs after every product (the
    small problem is cheap), so a good start vector costs only a few products.
    ``project(x)`` (optional) maps vectors into an invariant complement (deflation).
    ``vectors``: the kind of vector ``v0`` and ``mv`` work on (``vectors.py``)."""
    V = vectors
    n = V.size(v0)
    dtype = V.dtype(v0)
    cplx = dtype.kind == "c"
    hdt = np.complex128 if cplx else np.float64
    m = min(int(ncv), n)
    k = min(k, n)
    if m <= k:
        m = min(n, k + 1)
    last = V.normalize(v0)  # the basis' last vector (the next one to multiply)
    Q = V.basis(last, m)
    H = np.zeros((m + 1, m), dtype=hdt)
    p = 0  # vectors kept from the last restart
    nmv = 0
    scale = 0.0
    res_max = math.inf
    vals = Y = None
    done = False
    for _restart in range(maxiter):
        for j in range(p, m):
            w = mv(last)
            if project is not None:
                w = project(w)
            nmv += 1
            w, hv, beta = V.orthogonalize(Q, w)
            H[: j + 1, j] = hv
            # ||A|| estimate: Hermitian, the Rayleigh quotient (the other coefficients are
            # below the Ritz values' range or rounding noise); else every coefficient
            scale = max(scale, float(abs(hv[j]) if hermitian else np.abs(hv).max()), beta)
            if j + 1 == n:  # the whole space: exact
                H[j + 1, j] = 0.0
                last = V.zeros_like(last)
                Q = V.append(Q, last)
                break
            if beta <= 1e-12 * max(scale, 1e-300):
                # invariant subspace found: continue from a random orthogonal direction
                H[j + 1, j] = 0.0
                w = V.random(v0, rng)
                if project is not None:
                    w = project(w)
                last = V.normalize(V.purge(Q, w))
            else:
                H[j + 1, j] = beta
                last = V.divide(w, beta)
            Q = V.append(Q, last)
            if k <= j + 1 < m:  # early convergence test
                vals, Y, resid, vmax = _ritz(H, j + 1, which, hermitian, p == 0)
                scale = max(scale, vmax)
                res_max = float(resid[0] if k == 1 else resid[:k].max())
                if res_max <= tol * max(scale, 1e-300):
                    done = True
                    break
        mm = V.count(Q) - 1  # size of the decomposition
        if not done:
            vals, Y, resid, vmax = _ritz(H, mm, which, hermitian, p == 0)
            scale = max(scale, vmax)
            res_max = float(resid[:k].max()) if k else 0.0
        if done or res_max <= tol * max(scale, 1e-300) or mm == n or _restart == maxiter - 1:
            break
        # thick restart: keep the p most wanted Schur vectors
        Hm = H[:mm, :mm]
        b = H[mm, :mm]
        p = min(mm - 1, max(k + (mm - k) // 2, k + 1))
        if hermitian:
            Z = Y[:, :p]
            T = np.diag(np.real(vals[:p])).astype(hdt)
        else:
            Z, T, p = _ordered_schur(Hm, which, p, cplx)
        Q = V.restart(Q, V.combine(Q, mm, Z.astype(dtype)), last)
        H = np.zeros((m + 1, m), dtype=hdt)
        H[:p, :p] = T
        H[p, :p] = b @ Z
    mm = V.count(Q) - 1
    X = V.normalize_block(V.combine(Q, mm, Y[:, :k]))
    rel = res_max / max(scale, 1e-300)
    return RitzResult(vals[:k], X, SolveInfo(nmv, rel <= tol, rel), scale)


def _ordered_schur(Hm, which, p, cplx):
    """Schur vectors Z (mm x p') of the small matrix whose leading block holds the p most
    wanted eigenvalues (p' = p, or p + 1 not to split a complex-conjugate pair)."""
    ev = np.linalg.eigvals(Hm)
    idx = order(ev, which)
    if which == "LM":
        score = np.abs
    elif which == "LR":
        score = np.real
    else:
        def score(z):
            return -np.real(z)
    thresh = score(ev[idx[p - 1]])
    slack = 1e-12 * max(np.abs(ev).max(), 1e-300)
    if cplx:
        T, Z, sdim = sla.schur(Hm, output="complex", sort=lambda z: score(z) >= thresh - slack)
    else:
        T, Z, sdim = sla.schur(Hm, output="real",
                               sort=lambda re, im: score(re + 1j * im) >= thresh - slack)
    sdim = max(int(sdim), 1)
    return Z[:, :sdim], T[:sdim, :sdim], sdim


def dense_eig(mv, like, k, which, hermitian) -> RitzResult:
    """Small problems (eigsh, eigs): the matrix from n products, then LAPACK (forward only).
    ``like``: a vector of the space (its size, dtype and device)."""
    n = like.shape[0]
    eye = asarray(np.eye(n, dtype=like.dtype), device=like.device)
    M = value(basis([mv(eye[:, j]) for j in range(n)]))
    require_finite("the eigensolver", M)
    if hermitian:
        w, U = np.linalg.eigh((M + M.conj().T) / 2)
    else:
        w, U = np.linalg.eig(M)
    idx = order(w, which)[:k]
    w, U = w[idx], U[:, idx]
    U = U / np.linalg.norm(U, axis=0)
    dtype = np.dtype(like.dtype)
    vd = dtype if (dtype.kind == "c" or not np.iscomplexobj(U)) else np.complex128
    return RitzResult(w, asarray(U.astype(vd), device=like.device), SolveInfo(n, True, 0.0),
                      float(np.abs(w).max()) if w.size else 0.0)


def lowest_eigenpair(mv, v0, *, tol: float, ncv: int, maxiter: int, rng,
                     vectors=TENSORS) -> tuple:
    """The lowest eigenpair of the Hermitian map ``mv``, warm-started from ``v0``: Krylov-Schur
    with ``ncv`` vectors, converged when the residual is at most ``tol`` times the operator's
    norm (estimated). Small problems need no special case: a space of n <= ncv dimensions is
    exhausted (exactly) after at most n products, fewer from a good start. Forward only.
    Returns (eigenvalue, unit eigenvector, products). ``mv``'s result may be a buffer it
    reuses: the solver reads each product once."""
    res = krylov_schur(mv, v0, 1, "SA", True, tol=tol, ncv=ncv, maxiter=maxiter, rng=rng,
                       vectors=vectors)
    return float(np.real(res.values[0])), vectors.column(res.vectors, 0), res.info.iterations
