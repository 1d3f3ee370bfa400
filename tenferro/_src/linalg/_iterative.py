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

from ..core.tensor import Tensor
from ..errors import ConcretizationError
from ..ops import (
    abs2,
    asarray,
    conj,
    matmul,
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


def reshape_vec(x, n):
    return reshape(x, (n,))


_ = (_scalar, _device_put)
