"""Partial SVDs (``svds``, ``randomized_svd``) and the exact truncated SVD pullback.

Forward. ``svds`` runs restarted *block* Golub-Kahan-Lanczos bidiagonalisation: from an
orthonormal block Q_1 (n x b), P_j = orth(A Q_j) and Q_{j+1} = orth(A^H P_j), each block
reorthogonalised (CGS2) against all earlier ones, for q steps; then A Q = P B with B = P^H A Q
block bidiagonal, and the SVD of the small B gives Ritz triplets. Converged when
||A^H u_i - s_i v_i|| <= tol * s_1 for the k wanted ones; otherwise restart from the b leading
Ritz vectors. Blocks make every product a matrix-matrix product (BLAS 3) and let b > k
oversampling set the convergence rate by s_k / s_{b+1} rather than s_k / s_{k+1}.
``randomized_svd`` is Halko-Martinsson-Tropp: Q = orth((A A^H)^p A Omega) with
re-orthonormalisation between the power steps, then the SVD of Q^H A (no convergence test:
an approximation whose accuracy ``oversample`` and ``power_iters`` set).

Backward: the *exact truncated pullback* (Francuz, Schuch, Vanhecke, PRR 7, 013237 (2025);
MatrixAlgebraKit's svd_trunc_pullback!). It needs only the kept U, S, V and the operator,
not the discarded part of the spectrum, yet it contains the coupling between kept and
discarded singular vectors that a truncated-only formula misses:

    A_bar = U [J S + S K + diag(S_bar) + i Im diag(U^H U_bar) / S] V^H + X V^H + U Y^H,
    J = F o (U^H U_bar - U_bar^H U),  K = F o (V^H V_bar - V_bar^H V),  F_ij = 1/(s_j^2 - s_i^2)

(Lorentzian-broadened as in ``tenferro.linalg.svd``), with X (m x k), Y (n x k) in the
complements of U and V solving, column by column, the Sylvester-type system

    s_i X_i - P A Q Y_i = P U_bar_i,     s_i Y_i - Q A^H P X_i = Q V_bar_i

(P = 1 - U U^H, Q = 1 - V V^H). For s_i larger than every discarded singular value its
matrix [[s_i, -PAQ], [-QA^HP, s_i]] is Hermitian positive definite: preconditioned conjugate
gradients solve all columns at once (one block product with A and one with A^H per step).
The preconditioner is exact on the extra Ritz triplets the forward pass found beyond k, so
the convergence rate is set by s_i against the first singular value *not* in the Krylov
space. Gauge: like ``svd``, the largest-magnitude entry of each column of V is real and
positive; the derivative is that of this convention (phase-dependent losses warn).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..core.tensor import Tensor
from ..errors import ConcretizationError, ShapeError
from ..ops import (
    abs,
    arange,
    asarray,
    astype,
    concatenate,
    conj,
    diag,
    diagonal,
    eye,
    imag,
    matmul,
    real,
    stop_gradient,
    swapaxes,
    tensor_of,
    where,
)
from ..ops import abs as tabs
from . import _iterative as it
from .dense import SVDResult, _eps, qr, svd
from .dense import svd as dsvd
from .krylov import (
    ConvergenceWarning,
    _carries,
    _check_gauge,
    _is_zero,
    check_backward_mode,
    gauge_index,
    implicit,
    pullback,
    take_columns,
)
from .operator import as_operator

__all__ = ["randomized_svd", "svds"]


# ------------------------------------------------------------------------- forward
def _orth(x) -> Tensor:
    return qr(x)[0]


def _orth_against(basis, x, rng=None):
    """An orthonormal basis (same number of columns as x) of x's component orthogonal to
    ``basis``, completed by random directions where x has none. Products with a low-rank
    matrix are (numerically) rank deficient: QR would turn the rounding noise left by the
    Gram-Schmidt pass into unit vectors that are not orthogonal to ``basis``. Columns whose
    R diagonal is at the rounding level are therefore replaced by random vectors,
    orthogonalised against everything kept."""

    scale = it.value(it.vnorm(x))
    if basis is not None:
        x, _ = it.orthogonalize(basis, x)
    q, r = qr(x)
    d = it.value(tabs(diagonal(r)))
    if d is None or scale is None:
        return q
    bad = d <= 1e-13 * max(float(np.max(scale)), 1e-300)  # the rounding level
    if not bad.any():
        return q
    good = np.flatnonzero(~bad)
    keep = q[:, good] if good.size else None
    parts = [p for p in (basis, keep) if p is not None]
    full = concatenate(parts, axis=1) if parts else None
    rng = rng or np.random.default_rng(int(bad.sum()) + x.shape[0])
    rnd = it.random_vector((x.shape[0], int(bad.sum())), x.dtype, getattr(x, "device", None),
                           rng)
    for _ in range(2):
        if full is not None:
            rnd, _ = it.orthogonalize(full, rnd)
        rnd = _orth(rnd)
    return rnd if keep is None else concatenate([keep, rnd], axis=1)


def _mH(x):
    return conj(swapaxes(x, -1, -2))


def _fix_svd_gauge(U, V):
    """Largest-magnitude entry of each column of V real and positive (as ``svd``); U gets the
    same phases."""
    idx = gauge_index(V)
    p = take_columns(V, idx)
    a = abs(p)

    ph = where(a > 0, p / astype(where(a > 0, a, 1.0), p.dtype), 1.0)
    c = conj(ph)[None, :]
    return U * c, V * c


def _block_gkl(bop, m, n, k, b, q, tol, maxiter, rng, dtype, device, v0=None):
    """Restarted block Golub-Kahan-Lanczos. Returns (U, S (host), V, extras, info) with
    extras = (Ue, Se (host), Ve), the further Ritz triplets of the last Krylov space."""
    X = it.random_vector((n, b), dtype, device, rng) if v0 is None else v0
    Qb = _orth(X)
    nprod, res = 0, math.inf
    hist = []
    U = S = V = extras = None
    for _cycle in range(maxiter):
        Qs, Ps, AQ = [Qb], [], []
        for j in range(q):
            Z = bop.matmat(Qs[j])
            nprod += Qs[j].shape[1]
            AQ.append(Z)
            Ps.append(_orth_against(concatenate(Ps, axis=1) if Ps else None, Z))
            if j == q - 1 or (j + 2) * b > n:
                break
            W = bop.rmatmat(Ps[j])
            nprod += Ps[j].shape[1]
            Qs.append(_orth_against(concatenate(Qs, axis=1), W))
        Pm = concatenate(Ps, axis=1)
        Qm = concatenate(Qs[: len(Ps)], axis=1)
        B = it.value(matmul(_mH(Pm), concatenate(AQ, axis=1)))
        if B is None:
            raise ConcretizationError(
                "svds: the Krylov iteration needs concrete values (its small SVD and "
                "convergence test run on the host); it cannot be traced by jit. Use "
                "tenferro.linalg.svd(a, max_rank=k) under jit.")
        ub, sb, vbh = np.linalg.svd(B)
        cdt = dtype if np.dtype(dtype).kind == "c" else np.dtype(dtype)
        Ub = it.host(ub, cdt, Pm)
        Vb = it.host(vbh.conj().T, cdt, Qm)
        Uall = matmul(Pm, Ub)
        Vall = matmul(Qm, Vb)
        U, V, S = Uall[:, :k], Vall[:, :k], sb[:k]
        R = bop.rmatmat(U) - V * it.host(S, np.dtype(it.real_dtype(dtype)), V)[None, :]
        nprod += k
        rn = it.value(it.vnorm(R))
        res = float(rn.max()) / max(float(sb[0]), 1e-300)
        extras = (Uall[:, k:], sb[k:], Vall[:, k:])
        if res <= tol:
            return U, S, V, extras, it.SolveInfo(nprod, True, res)
        # at the rounding level the residual stops decreasing: accept it there
        hist.append(res)
        if len(hist) >= 3 and res <= 1e3 * tol and res > 0.5 * min(hist[-3:-1]):
            return U, S, V, extras, it.SolveInfo(nprod, True, res)
        Qb = Vall[:, :b]
    return U, S, V, extras, it.SolveInfo(nprod, False, res)


def _randomized(bop, m, n, k, p, power_iters, rng, dtype, device):
    X = it.random_vector((n, k + p), dtype, device, rng)
    Y = _orth(bop.matmat(X))
    for _ in range(power_iters):
        Y = _orth(bop.matmat(_orth(bop.rmatmat(Y))))
    B = _mH(bop.rmatmat(Y))  # (k + p) x n = Y^H A
    Bv = it.value(B)
    if Bv is None:
        ub, sb, vbh = dsvd(B)
        U = matmul(Y, ub)
        return U, sb, _mH(vbh), None
    ub, sb, vbh = np.linalg.svd(Bv, full_matrices=False)
    cdt = dtype if np.dtype(dtype).kind == "c" else np.dtype(dtype)
    U = matmul(Y, it.host(ub, cdt, Y))
    V = asarray(vbh.conj().T.astype(cdt), device=device)
    return U, sb, V, None


# -------------------------------------------------------------------------- backward
def truncated_svd_pullback(op, params, U, S, V, Ubar, Sbar, Vbar, *, eps: float,
                           tol: float, maxiter: int, extras=None, name: str = "svds"):
    """Cotangents of the operator's parameters for the truncated SVD A ~ U diag(S) V^H (the
    k leading triplets of A), from cotangents Ubar (m, k), Sbar (k,), Vbar (n, k) (``None``
    = zero): see the module docstring. ``extras = (Ue, Se, Ve)``: further (approximate)
    singular triplets orthogonal to U and V, used to precondition the complement solve."""
    bop = op.bind(list(params))
    k = S.shape[0]
    dt = U.dtype
    smax = stop_gradient(S.max()) if k else 1.0
    e = eps * smax
    Sc = astype(S, dt)
    zero_u, zero_v, zero_s = _is_zero(Ubar), _is_zero(Vbar), _is_zero(Sbar)
    Ubar = U * 0 if zero_u else astype(Ubar, dt)
    Vbar = V * 0 if zero_v else astype(Vbar, dt)
    # gauge: V's largest entries are real positive; fold the phase freedom into Vbar
    if dt.kind == "c" and not (zero_u and zero_v):
        idx = gauge_index(V)
        g = -imag(it.col_dot(Ubar, U)) - imag(it.col_dot(Vbar, V))
        _check_gauge(name, g, concatenate([Ubar, Vbar], axis=0))
        vk = real(take_columns(V, idx))
        onehot = astype(arange(V.shape[0])[:, None] == idx[None, :], dt)
        Vbar = Vbar - onehot * astype(1j * g / vk, dt)[None, :]
    # kept-kept block (as the dense rule restricted to the k triplets)
    M = 0
    if not zero_s:
        M = diag(astype(Sbar, dt))
    if not (zero_u and zero_v):
        gu = matmul(_mH(U), Ubar)
        gv = matmul(_mH(V), Vbar)
        # 1/(s_j^2 - s_i^2) = E D, each factor broadened with width e (as the dense rule)
        dm = S[None, :] - S[:, None]
        dp = S[None, :] + S[:, None]
        F = astype(dm / (dm * dm + e * e) * (dp / (dp * dp + e * e)), dt)
        J = F * (gu - _mH(gu))
        K = F * (gv - _mH(gv))
        sinv = astype(S / (S * S + e * e), dt)
        M = M + J * Sc[None, :] + Sc[:, None] * K
        if dt.kind == "c":
            M = M + diag(1j * astype(imag(diag(gu)), dt) * sinv)
        # complement: X, Y from the Sylvester system
        X, Y = _complement_solve(bop, U, S, V, Ubar, Vbar, e, tol, maxiter, extras, name)
    else:
        X = Y = None
    W = matmul(U, M) if not isinstance(M, int) else U * 0
    if X is not None:
        W = W + X
        return pullback(op, params, concatenate([W, U], axis=1), concatenate([V, Y], axis=1))
    return pullback(op, params, W, V)


def _complement_solve(bop, U, S, V, Ubar, Vbar, e, tol, maxiter, extras, name):
    """PCG for s_i X_i - P A Q Y_i = P Ubar_i, s_i Y_i - Q A^H P X_i = Q Vbar_i."""
    dt = U.dtype
    m = U.shape[0]

    def projU(x):
        return x - matmul(U, matmul(_mH(U), x))

    def projV(y):
        return y - matmul(V, matmul(_mH(V), y))

    r = projU(Ubar)
    s = projV(Vbar)
    Sv = it.value(S)
    smax = float(Sv.max()) if Sv is not None and Sv.size else 1.0
    ev = float(it.value(e)) if isinstance(e, Tensor) else float(e)
    # columns whose singular value is zero to working precision: broadened 1/s -> 0
    sig = astype(S, dt)[None, :]
    alive = None
    if Sv is not None:
        alive = Sv > max(ev, 1e-300)
    if alive is not None and not alive.all():
        keep = astype(asarray(alive.astype(np.float64), device=getattr(U, "device", None)), dt)
        r, s = r * keep[None, :], s * keep[None, :]
        sig = sig + astype(asarray((~alive).astype(np.float64)), dt)[None, :]  # avoid 0

    def K(z):
        x, y = z[:m], z[m:]
        ax = projU(bop.matmat(projV(y)))
        ahx = projV(bop.rmatmat(projU(x)))
        return concatenate([x * sig - ax, y * sig - ahx], axis=0)

    precond = _deflation_preconditioner(extras, sig, m, dt)
    rhs = concatenate([r, s], axis=0)
    if _is_zero(rhs):
        return r * 0, s * 0
    z, info = it.cg(K, rhs, tol=tol, maxiter=maxiter, precond=precond)
    if not info.converged and not math.isnan(info.residual):
        warnings.warn(
            f"{name}: the truncated-SVD pullback's complement solve did not converge "
            f"({info.iterations} iterations, relative residual {info.residual:.1e}). The kept "
            f"and discarded singular values are (nearly) degenerate at the cut; truncate "
            f"elsewhere or raise maxiter.", ConvergenceWarning, stacklevel=4)
    _ = smax
    return projU(z[:m]), projV(z[m:])


def _deflation_preconditioner(extras, sig, m, dt):
    """Exact inverse of the system on span(Ue) x span(Ve) with A_perp = Ue Se Ve^H there
    (2x2 blocks [[s_i, -se_j], [-se_j, s_i]]), 1/s_i elsewhere. HPD for s_i > se_j."""
    if extras is None or extras[0] is None or extras[0].shape[1] == 0:
        def pre(z):
            return z / sig
        return pre
    Ue, Se, Ve = extras
    se = astype(asarray(np.asarray(Se), device=sig.device), dt)[:, None] if not isinstance(
        Se, Tensor) else \
        astype(Se, dt)[:, None]
    den = sig * sig - se * se  # (p, k)

    def pre(z):
        x, y = z[:m], z[m:]
        a = matmul(_mH(Ue), x)  # (p, k)
        c = matmul(_mH(Ve), y)
        xo = x - matmul(Ue, a)
        yo = y - matmul(Ve, c)
        alpha = (sig * a + se * c) / den
        gamma = (sig * c + se * a) / den
        return concatenate([xo / sig + matmul(Ue, alpha), yo / sig + matmul(Ve, gamma)], axis=0)

    return pre


# --------------------------------------------------------------------------- public
def _check(op_name, A, k):
    op = as_operator(A, op_name)
    m, n = op.shape
    k = int(k)
    if not 1 <= k <= min(m, n):
        raise ShapeError(f"{op_name}: k must be in 1..{min(m, n)} for an operator of shape "
                         f"{op.shape}, got {k}.")
    return op, m, n, k


def _dense_fallback(op, k):
    """Small problems: the thin SVD of the materialised matrix, sliced (its derivative is the
    dense rule, which contains the same kept/discarded coupling)."""
    if op.is_dense:
        a = op.params[0]
    else:
        b = op.bind()
        a = b.matmat(eye(op.shape[1], dtype=op.dtype, device=op.device))
    return svd(a, max_rank=k)


def svds(A, k: int, *, tol: float = 1e-12, block: int | None = None, steps: int = 4,
         maxiter: int = 50, seed: int = 0, eps: float | None = None,
         adjoint_tol: float = 1e-12, adjoint_maxiter: int = 1000, dense_below: int | None =
         None, return_info: bool = False) -> SVDResult:
    """The ``k`` largest singular triplets of an operator or matrix: ``SVDResult(U (m, k),
    S (k,) descending, Vh (k, n))``, the same convention (and gauge) as
    ``tenferro.linalg.svd(a, max_rank=k)``.

    Restarted block Golub-Kahan-Lanczos with ``block`` vectors (default k + max(8, k // 2))
    and ``steps`` block steps per restart, to residual ``tol`` relative to the largest
    singular value. Problems with min(m, n) <= ``dense_below`` (default max(8k, 200)) use the
    dense SVD. The derivative is the exact truncated pullback (module docstring): it needs
    only U, S, V and products with A and A^H, and equals the derivative of the full SVD
    truncated to k, kept/discarded coupling included, whenever s_k > s_{k+1}."""
    op, m, n, k = _check("svds", A, k)
    dtype = np.dtype(op.dtype)
    eps_ = _eps(eps, dtype)
    dense_below = max(8 * k, 200) if dense_below is None else int(dense_below)
    if min(m, n) <= dense_below:
        out = _dense_fallback(op, k)
        return (out, it.SolveInfo(0, True, 0.0)) if return_info else out
    b = min(block or k + max(8, k // 2), min(m, n))
    b = max(b, k)
    device = op.device
    infos = {}

    def forward(*params):
        bop = op.bind(list(params))
        rng = np.random.default_rng(seed)
        U, S, V, extras, info = _block_gkl(bop, m, n, k, b, steps, tol, maxiter, rng, dtype,
                                           device)
        infos["fwd"] = info
        if not info.converged:
            warnings.warn(f"svds: not converged after {info.iterations} products (relative "
                          f"residual {info.residual:.1e}); raise maxiter, steps or block.",
                          ConvergenceWarning, stacklevel=4)
        U, V = _fix_svd_gauge(U, V)
        rdt = it.real_dtype(dtype)
        Ue, Se, Ve = extras
        return (U, asarray(S.astype(rdt), device=device), _mH(V), Ue,
                asarray(np.asarray(Se, dtype=rdt), device=device), Ve)

    def backward(params, outs, cts):
        U, S, Vh, Ue, Se, Ve = outs
        Ubar, Sbar, Vhbar = cts[:3]
        check_backward_mode("svds", [Ubar, Vhbar], U)
        Vbar = None if _is_zero(Vhbar) else _mH(Vhbar)
        if _is_zero(Ubar) and _is_zero(Sbar) and Vbar is None:
            return [None] * len(params)
        return truncated_svd_pullback(op, params, U, S, _mH(Vh), Ubar, Sbar, Vbar, eps=eps_,
                                      tol=adjoint_tol, maxiter=adjoint_maxiter,
                                      extras=(Ue, Se, Ve), name="svds")

    params = list(op.params)
    if _carries(params):
        outs = implicit("svds", forward, backward, params)
    else:
        outs = forward(*params)
    out = SVDResult(*outs[:3])
    return (out, infos.get("fwd")) if return_info else out


def randomized_svd(A, k: int, *, oversample: int = 10, power_iters: int = 2, seed: int = 0,
                   eps: float | None = None, adjoint_tol: float = 1e-12,
                   adjoint_maxiter: int = 1000) -> SVDResult:
    """Approximate ``k`` leading singular triplets by the randomized range finder (Halko,
    Martinsson, Tropp 2011): Q = orth((A A^H)^p A Omega) with ``k + oversample`` random
    vectors and p = ``power_iters`` (re-orthonormalised between steps), then the SVD of
    Q^H A. Same output convention and gauge as ``svds``. Its error is set by
    (s_{k+oversample+1} / s_k)^(2p+1); no convergence test is made (use ``svds`` for a
    guaranteed tolerance). The derivative is the exact truncated pullback evaluated at the
    result, i.e. exact to the extent that the result is the true truncated SVD."""
    op, m, n, k = _check("randomized_svd", A, k)
    dtype = np.dtype(op.dtype)
    eps_ = _eps(eps, dtype)
    p = max(0, min(int(oversample), min(m, n) - k))
    device = op.device

    def forward(*params):
        bop = op.bind(list(params))
        rng = np.random.default_rng(seed)
        U, S, V, _ = _randomized(bop, m, n, k, p, int(power_iters), rng, dtype, device)
        rdt = it.real_dtype(dtype)
        Sk = S[:k]
        Ue, Se, Ve = U[:, k:], S[k:], V[:, k:]
        U, V = _fix_svd_gauge(U[:, :k], V[:, :k])
        if not isinstance(Sk, Tensor):
            Sk = asarray(np.asarray(Sk, dtype=rdt), device=device)
            Se = asarray(np.asarray(Se, dtype=rdt), device=device)
        return U, Sk, _mH(V), Ue, Se, Ve

    def backward(params, outs, cts):
        U, S, Vh, Ue, Se, Ve = outs
        Ubar, Sbar, Vhbar = cts[:3]
        check_backward_mode("randomized_svd", [Ubar, Vhbar], U)
        Vbar = None if _is_zero(Vhbar) else _mH(Vhbar)
        if _is_zero(Ubar) and _is_zero(Sbar) and Vbar is None:
            return [None] * len(params)
        return truncated_svd_pullback(op, params, U, S, _mH(Vh), Ubar, Sbar, Vbar, eps=eps_,
                                      tol=adjoint_tol, maxiter=adjoint_maxiter,
                                      extras=(Ue, Se, Ve), name="randomized_svd")

    params = list(op.params)
    if _carries(params):
        outs = implicit("randomized_svd", forward, backward, params)
    else:
        outs = forward(*params)
    return SVDResult(*outs[:3])


_ = tensor_of
