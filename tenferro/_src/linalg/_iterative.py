"""The iterative algorithms behind ``tenferro.linalg``'s Krylov solvers (no derivative rules
here: ``krylov.py`` and ``partial_svd.py`` wrap these in ``custom_vjp`` functions).

Vectors live on the operator's device and are tenferro tensors, so every algorithm runs on
every backend. Small projected problems (a Krylov space of a few dozen vectors) are solved on
the host with NumPy/SciPy when values are concrete: the convergence tests, the selection of
wanted Ritz values and restarts need them anyway. In a traced graph (``jit``) there are no
values: the algorithms that support it then run a fixed number of iterations with the small
problems solved by tenferro operations; the others raise ``ConcretizationError`` naming the fix.

Conventions: ``mv`` is a function vector -> vector (tenferro tensors); inner products are
``<a, b> = sum conj(a) b``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import ConcretizationError, LinAlgError
from ..ops import (
    abs2,
    asarray,
    concatenate,
    conj,
    matmul,
    real,
    reshape,
    sqrt,
    stack,
    stop_gradient,
    sum,
    to_device,
    where,
)


class SolveInfo(NamedTuple):
    """What an iterative solver did: iterations (matrix-vector products for eigensolvers),
    whether it met its tolerance, and the last (relative) residual norm."""

    iterations: int
    converged: bool
    residual: float


# ------------------------------------------------------------------------ helpers
def value(x):
    """The NumPy value of ``x`` (a constant for every transformation), or ``None`` in a
    traced graph."""
    try:
        return np.asarray(stop_gradient(x))
    except ConcretizationError:
        return None


def is_concrete(x) -> bool:
    return value(x) is not None if isinstance(x, Tensor) else True


def vnorm(v) -> Tensor:
    """2-norm over the first axis (a vector's norm, or one norm per column)."""
    return sqrt(sum(abs2(v), axis=0))


def col_dot(a, b) -> Tensor:
    """<a, b> per column (or the scalar for vectors)."""
    return sum(conj(a) * b, axis=0)


def adjoint(x) -> Tensor:
    return conj(x.T)


def real_dtype(dtype) -> np.dtype:
    return np.dtype(np.finfo(np.dtype(dtype)).dtype)


def eps_of(dtype) -> float:
    return float(np.finfo(np.dtype(dtype)).eps)


def random_vector(shape, dtype, device, rng) -> Tensor:
    """A Gaussian vector (complex: independent real and imaginary parts) on ``device``."""
    dtype = np.dtype(dtype)
    a = rng.standard_normal(shape)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return asarray(a.astype(dtype), device=device)


def host(x, dtype=None, like=None) -> Tensor:
    """A small host NumPy array (Krylov coefficients) as a tensor on the device of ``like``,
    the device vectors it combines with (an explicit host-to-device copy of a few numbers)."""
    return asarray(np.ascontiguousarray(x if dtype is None else x.astype(dtype)),
                   device=None if like is None else like.device)


def basis(vectors: list) -> Tensor:
    """The matrix (n, j) whose columns are ``vectors``."""
    return stack(vectors, axis=1)


def orthogonalize(Q, w, passes: int = 2):
    """``w`` minus its projection on the orthonormal columns of ``Q`` (classical Gram-Schmidt,
    repeated: CGS2 is as stable as modified Gram-Schmidt and uses matrix-vector products).
    Returns (w, h) with h the accumulated coefficients Q^H w."""
    h = None
    for _ in range(passes):
        c = matmul(adjoint(Q), w)
        w = w - matmul(Q, c)
        h = c if h is None else h + c
    return w, h


def _dg(a, b, ca: int, cb: int) -> Tensor:
    """One ``dot_general`` contracting axis ``ca`` of a with axis ``cb`` of b (the Krylov
    loops' vector products: one primitive each, no broadcasting logic)."""
    return bind(P.dot_general_p, a, b, dimension_numbers=(((ca,), (cb,)), ((), ())))


def _coeffs(Q, w, cplx):
    """Q^H w for a vector w."""
    if cplx:
        return conj(_dg(Q, conj(w), 0, 0))
    return _dg(Q, w, 0, 0)


def _sqnorm(w, cplx):
    return real(_dg(conj(w), w, 0, 0)) if cplx else _dg(w, w, 0, 0)


def orthogonalize_vector(Q, w):
    """(w', h, ||w'||) with w' = w - Q h orthogonal to the orthonormal columns of Q: classical
    Gram-Schmidt, repeated only when it cancelled more than half of w's norm (the DGKS
    criterion; one pass is then as good as two), with the norms computed on the host."""
    cplx = np.dtype(w.dtype).kind == "c" or np.dtype(Q.dtype).kind == "c"
    n0 = float(value(_sqnorm(w, cplx)))
    h = _coeffs(Q, w, cplx)
    w = w - _dg(Q, h, 1, 0)
    n1 = float(value(_sqnorm(w, cplx)))
    hv = value(h)
    if n1 < 0.5 * n0:
        c = _coeffs(Q, w, cplx)
        w = w - _dg(Q, c, 1, 0)
        cv = value(c)
        hv = hv + cv
        h = h + c
        n1 = float(value(_sqnorm(w, cplx)))
    return w, hv, math.sqrt(max(n1, 0.0))


def _device_put(x, like):
    d = getattr(like, "device", None)
    return x if d is None else to_device(x, d)


# ------------------------------------------------------------------- linear systems
def cg(mv, b, x0=None, *, tol: float, maxiter: int, precond=None):
    """Conjugate gradients for Hermitian positive-definite ``mv``. ``b`` may be a block
    (n, r): each column is an independent system (column-wise scalars), so one block product
    serves all. ``precond(r)`` applies an HPD preconditioner. Stops when every column's
    residual is below ``tol * ||b_col||`` (traced: after ``maxiter`` iterations)."""
    x = b * 0 if x0 is None else x0
    r = b - mv(x) if x0 is not None else b
    z = r if precond is None else precond(r)
    p = z
    rz = col_dot(r, z)
    bn = value(vnorm(b))
    concrete = bn is not None
    it, res = 0, math.nan
    tiny = np.finfo(real_dtype(b.dtype)).tiny
    for it in range(1, maxiter + 1):
        ap = mv(p)
        pap = col_dot(p, ap)
        alpha = rz / _nonzero(pap, tiny)
        x = x + p * alpha
        r = r - ap * alpha
        if concrete:
            rn = value(vnorm(r))
            rel = rn / np.maximum(bn, tiny)
            res = float(np.max(rel))
            if res <= tol:
                return x, SolveInfo(it, True, res)
        z = r if precond is None else precond(r)
        rz_new = col_dot(r, z)
        beta = rz_new / _nonzero(rz, tiny)
        rz = rz_new
        p = z + p * beta
    return x, SolveInfo(it, False, res)


def _nonzero(x, tiny):
    """``x`` with exact zeros replaced by ``tiny`` (a converged column stops changing instead
    of producing NaN)."""

    return where(x == 0, tiny, x)


def gmres(mv, b, x0=None, *, tol: float, restart: int, maxiter: int):
    """Restarted GMRES(restart) for a general ``mv`` (one right-hand side). Stops when
    ``||b - A x|| <= tol ||b||`` or after ``maxiter`` restart cycles. The Hessenberg least-
    squares problem is solved on the host (concrete values are required)."""
    bn = value(vnorm(b))
    if bn is None:
        raise ConcretizationError(
            "gmres/bicgstab need concrete values (their stopping test and small least-squares "
            "problem run on the host); under jit use method='cg' for Hermitian positive "
            "definite operators, or call the solver outside jit."
        )
    bn = float(bn)
    n = b.shape[0]
    x = b * 0 if x0 is None else x0
    if bn == 0:
        return x, SolveInfo(0, True, 0.0)
    m = max(1, min(int(restart), n))
    total, res = 0, math.nan
    cplx = np.dtype(b.dtype).kind == "c"
    hdt = np.complex128 if cplx else np.float64
    for _cycle in range(maxiter):
        r = b - mv(x) if (x0 is not None or _cycle) else b
        beta = float(value(vnorm(r)))
        res = beta / bn
        if res <= tol:
            return x, SolveInfo(total, True, res)
        Q = [r / beta]
        H = np.zeros((m + 1, m), dtype=hdt)
        g = np.zeros(m + 1, dtype=hdt)
        g[0] = beta
        j_done = 0
        for j in range(m):
            w = mv(Q[j])
            total += 1
            w, h = orthogonalize(basis(Q), w)
            hn = float(value(vnorm(w)))
            H[: j + 1, j] = value(h)
            H[j + 1, j] = hn
            j_done = j + 1
            # residual of the least-squares problem so far
            y, rres = _lstsq_small(H[: j + 2, : j + 1], g[: j + 2])
            res = rres / bn
            if res <= tol or hn <= 1e-14 * max(np.abs(H[: j + 2, : j + 1]).max(), 1e-300):
                break
            Q.append(w / hn)
        y, _ = _lstsq_small(H[: j_done + 1, :j_done], g[: j_done + 1])
        x = x + matmul(basis(Q[:j_done]), host(y, b.dtype if cplx else np.dtype(b.dtype), b))
        if res <= tol:
            # confirm with the true residual (guards against loss of orthogonality)
            tr = float(value(vnorm(b - mv(x)))) / bn
            if tr <= 10 * tol:
                return x, SolveInfo(total, True, tr)
    r = b - mv(x)
    res = float(value(vnorm(r))) / bn
    return x, SolveInfo(total, res <= tol, res)


def _lstsq_small(H, g):
    y, *_ = np.linalg.lstsq(H, g, rcond=None)
    return y, float(np.linalg.norm(H @ y - g))


def bicgstab(mv, b, x0=None, *, tol: float, maxiter: int):
    """BiCGStab (van der Vorst) for a general ``mv``; two products per iteration."""
    bn = value(vnorm(b))
    if bn is None:
        raise ConcretizationError(
            "bicgstab needs concrete values for its stopping test; under jit use method='cg' "
            "for Hermitian positive-definite operators."
        )
    bn = float(bn)
    x = b * 0 if x0 is None else x0
    if bn == 0:
        return x, SolveInfo(0, True, 0.0)
    r = b - mv(x) if x0 is not None else b
    rhat = r
    rho = alpha = omega = 1.0
    dt = b.dtype  # real vectors stay real: the scalars of a real problem are real
    v = p = b * 0
    res = float(value(vnorm(r))) / bn
    for it in range(1, maxiter + 1):
        rho_new = complex(value(col_dot(rhat, r)))
        if rho_new == 0:
            break
        beta = _scalar((rho_new / rho) * (alpha / omega), dt)
        p = r + (p - v * omega) * beta
        v = mv(p)
        alpha = _scalar(rho_new / complex(value(col_dot(rhat, v))), dt)
        s = r - v * alpha
        sn = float(value(vnorm(s)))
        if sn / bn <= tol:
            x = x + p * alpha
            return x, SolveInfo(it, True, sn / bn)
        t = mv(s)
        tt = float(value(col_dot(t, t)).real)
        omega = _scalar(complex(value(col_dot(t, s))) / tt, dt) if tt else 0.0
        x = x + p * alpha + s * omega
        r = s - t * omega
        rho = rho_new
        res = float(value(vnorm(r))) / bn
        if res <= tol:
            return x, SolveInfo(it, True, res)
        if omega == 0:
            break
    return x, SolveInfo(it, res <= tol, res)


def _scalar(z, dtype):
    """A Python scalar in the vectors' dtype (real when it can be)."""
    return z.real if np.dtype(dtype).kind == "f" else z


def require_finite(what: str, small) -> None:
    """A projected (host) matrix built from the operator's products must be finite: NaN or
    inf there means the operator produced them, and LAPACK would fail with a bare error."""
    if not np.all(np.isfinite(small)):
        raise LinAlgError(
            f"{what}: the operator's products are not finite (NaN or inf); eigenpairs of a "
            f"non-finite operator are not defined. Check the matrix (or the tensors the "
            f"LinearOperator's matvec uses) for NaN/inf.")


# ---------------------------------------------------------------- eigenproblems
_HERMITIAN_WHICH = ("SA", "LA", "LM")
_GENERAL_WHICH = ("LM", "LR", "SR")


def _order(vals, which: str) -> np.ndarray:
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
    vectors: Tensor  # (n, k) on the device, unit columns
    info: SolveInfo
    scale: float = 0.0  # estimate of ||A|| (largest Ritz value / projected entry seen)


def _ritz(H, mm, which, hermitian):
    """Ritz values (most wanted first), small eigenvectors Y and residual norms |b^T y| of
    the Krylov decomposition of size mm held in H[:mm + 1, :mm]."""
    Hm = H[:mm, :mm]
    b = H[mm, :mm]
    require_finite("the Krylov eigensolver", Hm)
    if hermitian:
        theta, Y = np.linalg.eigh((Hm + Hm.conj().T) / 2)
    else:
        theta, Y = np.linalg.eig(Hm)
        Y = Y / np.linalg.norm(Y, axis=0)
    order = _order(theta, which)
    theta, Y = theta[order], Y[:, order]
    return theta, Y, np.abs(b @ Y)


def krylov_schur(mv, v0: Tensor, k: int, which: str, hermitian: bool, *, tol: float,
                 ncv: int, maxiter: int, rng, project=None) -> RitzResult:
    """The ``k`` most wanted eigenpairs of ``mv`` by the Krylov-Schur method (Stewart 2001):
    a Krylov decomposition A Q = Q H + q b^T of up to ``ncv`` vectors (full
    reorthogonalisation, CGS2), Ritz pairs from the small matrix H, and a thick restart that
    keeps the ``k + (ncv - k) // 2`` most wanted Schur (Hermitian: eigen-) vectors. For a
    Hermitian operator this is thick-restart Lanczos. Converged when every wanted Ritz pair
    has a residual ``|b^T y| <= tol * max|theta|``; the test runs after every product (the
    small problem is cheap), so a good start vector costs only a few products.
    ``project(x)`` (optional) maps vectors into an invariant complement (deflation)."""
    n = v0.shape[0]
    dtype = np.dtype(v0.dtype)
    cplx = dtype.kind == "c"
    hdt = np.complex128 if cplx else np.float64
    m = min(int(ncv), n)
    k = min(k, n)
    if m <= k:
        m = min(n, k + 1)
    q = v0 / vnorm(v0)
    Qm = reshape(q, (n, 1))  # the basis as one matrix, grown column by column
    last = q  # its last column (the next vector to multiply)
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
            w, hv, beta = orthogonalize_vector(Qm, w)
            H[: j + 1, j] = hv
            scale = max(scale, float(np.abs(hv).max()), beta)
            if j + 1 == n:  # the whole space: exact
                H[j + 1, j] = 0.0
                last = last * 0
                Qm = concatenate([Qm, reshape(last, (n, 1))], axis=1)
                break
            if beta <= 1e-12 * max(scale, 1e-300):
                # invariant subspace found: continue from a random orthogonal direction
                H[j + 1, j] = 0.0
                w = random_vector((n,), dtype, getattr(v0, "device", None), rng)
                if project is not None:
                    w = project(w)
                w, _ = orthogonalize(Qm, w)
                w, _ = orthogonalize(Qm, w)
                last = w / vnorm(w)
            else:
                H[j + 1, j] = beta
                last = w / beta
            Qm = concatenate([Qm, reshape(last, (n, 1))], axis=1)
            if k <= j + 1 < m:  # early convergence test
                vals, Y, resid = _ritz(H, j + 1, which, hermitian)
                scale = max(scale, float(np.abs(vals).max()))
                res_max = float(resid[:k].max())
                if res_max <= tol * max(scale, 1e-300):
                    done = True
                    break
        mm = Qm.shape[1] - 1  # size of the decomposition
        if not done:
            vals, Y, resid = _ritz(H, mm, which, hermitian)
            scale = max(scale, float(np.abs(vals).max()) if vals.size else 0.0)
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
        newQ = matmul(Qm[:, :mm], host(Z, dtype, Qm))
        Qm = concatenate([newQ, reshape(last, (n, 1))], axis=1)
        H = np.zeros((m + 1, m), dtype=hdt)
        H[:p, :p] = T
        H[p, :p] = b @ Z
    mm = Qm.shape[1] - 1
    ydt = np.complex128 if (np.iscomplexobj(Y) and not cplx) else dtype
    X = matmul(Qm[:, :mm], host(Y[:, :k], ydt, Qm))
    X = X / vnorm(X)
    rel = res_max / max(scale, 1e-300)
    return RitzResult(vals[:k], X, SolveInfo(nmv, rel <= tol, rel), scale)


def _ordered_schur(Hm, which, p, cplx):
    """Schur vectors Z (mm x p') of the small matrix whose leading block holds the p most
    wanted eigenvalues (p' = p, or p + 1 not to split a complex-conjugate pair)."""
    import scipy.linalg as sla

    ev = np.linalg.eigvals(Hm)
    order = _order(ev, which)
    if which == "LM":
        score = np.abs
    elif which == "LR":
        score = np.real
    else:
        def score(z):
            return -np.real(z)
    thresh = score(ev[order[p - 1]])
    slack = 1e-12 * max(np.abs(ev).max(), 1e-300)
    if cplx:
        T, Z, sdim = sla.schur(Hm, output="complex", sort=lambda z: score(z) >= thresh - slack)
    else:
        T, Z, sdim = sla.schur(Hm, output="real",
                               sort=lambda re, im: score(re + 1j * im) >= thresh - slack)
    sdim = max(int(sdim), 1)
    return Z[:, :sdim], T[:sdim, :sdim], sdim


def dense_eig(mv, n, dtype, device, k, which, hermitian):
    """Small problems: the matrix from n products, then LAPACK (forward only)."""
    eye = asarray(np.eye(n, dtype=dtype), device=device)
    cols = [mv(eye[:, j]) for j in range(n)]
    M = value(basis(cols))
    require_finite("the eigensolver", M)
    if hermitian:
        w, V = np.linalg.eigh((M + M.conj().T) / 2)
    else:
        w, V = np.linalg.eig(M)
    order = _order(w, which)[:k]
    w, V = w[order], V[:, order]
    V = V / np.linalg.norm(V, axis=0)
    vd = dtype if (np.dtype(dtype).kind == "c" or not np.iscomplexobj(V)) else np.complex128
    return RitzResult(w, asarray(V.astype(vd), device=device), SolveInfo(n, True, 0.0),
                      float(np.abs(w).max()) if w.size else 0.0)


def reshape_vec(x, n):
    return reshape(x, (n,))


_ = (_scalar, _device_put)
