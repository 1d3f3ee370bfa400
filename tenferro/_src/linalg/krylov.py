"""Krylov solvers with implicit derivatives: ``linsolve``, ``eigsh``, ``eigs``,
``expm_multiply``.

Each takes a ``LinearOperator`` (whose ``matvec`` may close over tensors being differentiated)
or a matrix. The forward pass iterates to convergence with tenferro operations (any backend);
the derivative never unrolls the iterations: it is the implicit-function rule of the converged
result, evaluated with one more iterative solve (``design/krylov.md`` has the derivations).

* ``linsolve``: x = A^{-1} b. Backward: the adjoint solve lambda = A^{-H} x_bar, then
  b_bar = lambda and A_bar = -lambda x^H.
* ``eigsh`` (Hermitian; thick-restart Lanczos): for eigenpairs (w_i, v_i),
  A_bar = V (diag(w_bar) + G) V^H - Z V^H, with G_ji = (v_j^H v_bar_i) / (w_i - w_j)
  (exact off ties, 0 on them, and checked like ``eigh``) over the computed pairs, and z_i
  solving P (A - w_i) P z_i = P v_bar_i in the complement of the computed eigenvectors
  (GMRES).
* ``eigs`` (general; Krylov-Schur): with left eigenvectors u_i,
  A_bar = sum_i (lambda_bar_i u_i / (v_i^H u_i) - xi_i) v_i^H, where
  (A - lambda_i)^H xi_i = v_bar_i (projected on the normalisation/gauge) with v_i^H xi_i = 0.
* ``expm_multiply``: y = exp(t A) v by Krylov projection with time stepping. Backward:
  v_bar = exp(t A)^H y_bar and A_bar = int_0^t exp((t-s) A)^H y_bar (exp(s A) v)^H ds
  (Gauss-Legendre quadrature, checked for convergence).

A_bar is never formed: it is the pair of vector blocks (W, V) of A_bar = W V^H, and the
cotangents of the operator's parameters are ``vjp`` of ``params -> A(params) V`` at W.

Gauges. Eigenvectors are normalised and, like ``tenferro.linalg.eigh``, fixed so that their
largest-magnitude entry is real and positive; the derivative is that of this convention, so
it agrees with finite differences even for phase-dependent losses. Such a loss depends on an
arbitrary convention, though, and a ``GaugeWarning`` naming the op says so (as KrylovKit
does). Degenerate eigenvalues: gauge-invariant losses (functions of eigenvalues, of projectors
on fully computed degenerate subspaces) get finite, right gradients.

Complex convention: gradients of real losses are dL/dRe z + i dL/dIm z, as everywhere.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from chainrules.primitives.degeneracy import check_cotangents, checks_on, report

from ..autodiff.custom import custom_vjp
from ..autodiff.reverse import vjp
from ..core.tensor import Tensor
from ..errors import (
    ConcretizationError,
    ConvergenceWarning,
    GaugeWarning,
    GradientError,
    LinAlgError,
    NotHermitianError,
    ShapeError,
)
from ..ops import (
    abs,
    arange,
    argmax,
    asarray,
    astype,
    concatenate,
    conj,
    imag,
    matmul,
    real,
    reshape,
    stack,
    stop_gradient,
    take,
    tensor_of,
    where,
    zeros,
)
from . import _iterative as it
from . import eigensolver as es
from ._iterative import SolveInfo
from .dense import _eps
from .nonhermitian import EigResult
from .operator import LinearOperator, _carries_derivative, as_operator, flat_vector

__all__ = ["EigResult", "eigs", "eigsh", "expm_multiply", "linsolve"]


# ------------------------------------------------------------------ shared plumbing
def _warn_unconverged(op: str, info: SolveInfo, what: str = "") -> None:
    if not info.converged and not math.isnan(info.residual):
        warnings.warn(
            f"{op}: {what}not converged after {info.iterations} iterations (relative residual "
            f"{info.residual:.2e}); raise maxiter or loosen tol.", ConvergenceWarning,
            stacklevel=4)


def _carries(params) -> bool:
    return any(_carries_derivative(p) for p in params)


def implicit(name: str, forward, backward, args: list):
    """Call ``forward(*args)`` as a ``custom_vjp`` function whose rule is
    ``backward(args, outputs, cotangents) -> one cotangent (or None) per arg``."""

    def fun(*a):
        return forward(*a)

    fun.__name__ = fun.__qualname__ = name
    f = custom_vjp(fun)

    def fwd(*a):
        out = f(*a)
        return out, (list(a), out)

    def bwd(res, ct):
        a, out = res
        return tuple(backward(a, out, ct))

    f.defvjp(fwd, bwd)
    return f(*args)


def pullback(op: LinearOperator, params, W, V) -> list:
    """Cotangents of the operator's parameters for A_bar = W V^H, i.e. the gradient of
    ``params -> Re sum_j <W_j, A(params) V_j>``. W (m, r) and V (n, r) may be complex for a
    real operator (then real and imaginary parts contribute separately)."""
    if W.ndim == 1:
        W, V = W[:, None], V[:, None]
    if op.is_dense:
        g = matmul(W, it.adjoint(V))
        return [real(g) if op.dtype.kind == "f" and g.dtype.kind == "c" else
                astype(g, op.dtype)]
    if op.dtype.kind == "f" and (W.dtype.kind == "c" or V.dtype.kind == "c"):
        gr = pullback(op, params, real(W), real(V))
        gi = pullback(op, params, imag(W), imag(V))
        return [a + b for a, b in zip(gr, gi)]
    _, fn = vjp(lambda *p: op.bind(list(p)).matmat(V), *params)
    return list(fn(astype(W, op.dtype)))


def gauge_index(V) -> Tensor:
    """Row of the largest-magnitude entry of each column (the gauge entry)."""
    return argmax(abs(stop_gradient(V)), axis=0)


def fix_gauge(V) -> Tensor:
    """Make the largest-magnitude entry of each column real and positive."""
    idx = gauge_index(V)
    cols = []
    for j in range(V.shape[1]):
        c = V[:, j]
        p = take(c, idx[j])
        a = abs(p)
        ph = where(a > 0, p / astype(where(a > 0, a, 1.0), p.dtype), 1.0)
        cols.append(c * conj(ph))

    return stack(cols, axis=1)


def gauge_cotangent(op_name: str, V, Vbar) -> Tensor:
    """The cotangent of the gauge-free vectors equivalent to ``Vbar`` for gauge-fixed ``V``
    (largest entry real positive): v_bar - (g / v_k) i e_k with g = Re<v_bar, i v>. Warns when
    the loss depends on the phase (g != 0)."""
    if V.dtype.kind != "c":
        return Vbar
    n = V.shape[0]
    idx = gauge_index(V)
    g = -imag(it.col_dot(Vbar, V))  # Re<vbar, i v> per column
    vk = real(take_columns(V, idx))
    onehot = astype(arange(n)[:, None] == idx[None, :], V.dtype)
    _check_gauge(op_name, g, Vbar)
    return Vbar - onehot * astype(1j * g / vk, V.dtype)


def take_columns(V, idx) -> Tensor:
    """V[idx[j], j] for each column j."""

    return stack([take(V[:, j], idx[j]) for j in range(V.shape[1])])


def _check_gauge(op_name, g, Vbar) -> None:
    gv, nv = it.value(g), it.value(it.vnorm(Vbar))
    if gv is None or nv is None:
        return
    bad = np.abs(gv) > 1e-6 * np.maximum(nv, 1e-300)
    if bad.any():
        warnings.warn(
            f"{op_name}: the loss depends on the phase (gauge) of eigen/singular vector(s) "
            f"{np.flatnonzero(bad).tolist()} (relative phase sensitivity "
            f"{float(np.max(np.abs(gv) / np.maximum(nv, 1e-300))):.1e}). The gradient is that "
            f"of the documented gauge (largest-magnitude entry real and positive), an arbitrary "
            f"convention; make the loss gauge invariant (e.g. use |v><v| or |<a|v>|^2).",
            GaugeWarning, stacklevel=5)


def _device(op, *vs):
    for v in vs:
        d = getattr(v, "device", None)
        if d is not None:
            return d
    return op.device


def _start_vector(op_name, v0, n, dtype, device, seed) -> Tensor:
    if v0 is None:
        rng = np.random.default_rng(seed)
        return it.random_vector((n,), dtype, device, rng)
    v0 = flat_vector(stop_gradient(tensor_of(v0)), n, dtype, op_name, "v0")
    return astype(v0, np.result_type(v0.dtype, dtype))


def check_backward_mode(op_name: str, ct, residual) -> None:
    """Forward mode (``jvp``, ``jacfwd``, ``hvp``) through a ``custom_vjp`` transposes the
    backward rule staged on abstract cotangents: an iterative solve there has no values to
    iterate on. Say so instead of failing inside the solver."""
    cts = [c for c in (ct if isinstance(ct, (list, tuple)) else [ct]) if c is not None]
    if any(not it.is_concrete(c) for c in cts) and it.is_concrete(residual):
        raise GradientError(
            f"{op_name}: forward-mode differentiation (jvp, jacfwd, hvp) is not available: the "
            f"implicit derivative needs an iterative solve on the tangent, which a transposed "
            f"backward rule cannot iterate on. Use reverse mode (grad, vjp, backward())."
        )


def _is_zero(x) -> bool:
    if x is None:
        return True
    v = it.value(x)
    return v is not None and not np.any(v)


# ------------------------------------------------------------------------ linsolve
_METHODS = ("gmres", "bicgstab", "cg")


def _solve(bop, b, method, tol, maxiter, restart, x0=None, adjoint=False):
    mv = bop.rmatvec if adjoint and method != "cg" else bop.matvec
    n = b.shape[0]
    if method == "cg":
        x, info = it.cg(mv, b, x0, tol=tol, maxiter=maxiter or 10 * n)
    elif method == "gmres":
        x, info = it.gmres(mv, b, x0, tol=tol, restart=restart, maxiter=maxiter or max(
            10, 2 * n // max(restart, 1)))
    else:
        x, info = it.bicgstab(mv, b, x0, tol=tol, maxiter=maxiter or 10 * n)
    return x, info


def linsolve(A, b, x0=None, *, method: str = "gmres", tol: float = 1e-12,
             maxiter: int | None = None, restart: int = 40, return_info: bool = False):
    """Solve ``A x = b`` iteratively. ``method``: "gmres" (restarted GMRES(``restart``), any
    invertible A), "bicgstab", or "cg" (conjugate gradients: A must be Hermitian positive
    definite). ``tol``: relative residual ||b - A x|| / ||b||. ``b`` is a vector (any shape with
    n elements; x has b's shape). The derivative is implicit: the adjoint system
    A^H lambda = x_bar is solved with the same method; nothing is unrolled. A ``LinearOperator``
    without ``rmatvec`` gets its adjoint by transposing its ``matvec``.
    Returns x (and ``SolveInfo`` with ``return_info=True``)."""
    if method not in _METHODS:
        raise ValueError(f"linsolve: method must be one of {_METHODS}, got {method!r}.")
    op = as_operator(A, "linsolve")
    m, n = op.shape
    if m != n:
        raise ShapeError(f"linsolve: the operator must be square, got shape {op.shape}.")
    b = tensor_of(b)
    bshape = tuple(b.shape)
    dt = np.result_type(op.dtype, b.dtype if b.dtype.kind in "fc" else np.float64)
    bf = astype(flat_vector(b, n, dt, "linsolve", "b"), dt)
    x0f = None if x0 is None else astype(flat_vector(stop_gradient(tensor_of(x0)), n, dt,
                                                     "linsolve", "x0"), dt)
    infos = {}

    def forward(bb, *params):
        x, info = _solve(op.bind(list(params)), bb, method, tol, maxiter, restart, x0f)
        infos["fwd"] = info
        _warn_unconverged("linsolve", info)
        return x

    def backward(args, x, xbar):
        params = args[1:]
        check_backward_mode("linsolve", xbar, x)
        if _is_zero(xbar):
            return [None] * len(args)
        bop = op.bind(list(params))
        lam, info = _solve(bop, xbar, method, tol, maxiter, restart, adjoint=True)
        _warn_unconverged("linsolve (adjoint solve in the backward pass)", info)
        return [lam] + pullback(op, params, -lam, x)

    args = [bf] + list(op.params)
    if _carries([bf] + list(op.params)):
        x = implicit("linsolve", forward, backward, args)
    else:
        x = forward(*args)
    x = x.reshape(bshape) if len(bshape) != 1 else x
    return (x, infos.get("fwd")) if return_info else x


# ---------------------------------------------------------------------- eigensolvers
def _eig_forward(op_name, bop, n, dtype, device, k, which, hermitian, v0, tol, ncv, maxiter,
                 seed, dense_below=None):
    rng = np.random.default_rng(seed)
    if dense_below is None:
        dense_below = 2 * ncv
    if not all(it.is_concrete(p) for p in bop.params):
        raise ConcretizationError(
            f"{op_name}: the Krylov iteration needs concrete values (convergence tests and "
            f"the selection of wanted Ritz values run on the host); it cannot be traced by "
            f"jit. Call it outside jit (derivatives still work: they are implicit)."
        )
    if n <= dense_below:
        return es.dense_eig(bop.matvec, v0, k, which, hermitian)
    res = es.krylov_schur(bop.matvec, v0, k, which, hermitian, tol=tol, ncv=ncv,
                          maxiter=maxiter, rng=rng)
    if hermitian and k > 1:
        res = _complete_multiplets(bop, res, k, which, tol, ncv, maxiter, rng)
    return res


def _complete_multiplets(bop, res, k, which, tol, ncv, maxiter, rng):
    """Lanczos from one start vector sees one vector per degenerate eigenspace (the others
    appear only through rounding). Search the rest of the spectrum -- the operator with the
    converged eigenvalues shifted out of the way (Hotelling deflation A + sigma X X^H) -- for an
    eigenvalue strictly more wanted than the k-th, and swap it in, until there is none."""
    if which == "LM":
        return res

    vals, X = np.asarray(res.values), res.vectors
    n = X.shape[0]
    nmv = res.info.iterations
    sign = 1.0 if which == "SA" else -1.0
    scale = max(res.scale, float(np.abs(vals).max()), 1e-300)
    for _ in range(k):
        if X.shape[1] >= n:
            break
        shift = sign * 4 * scale

        def mv(w, X=X, shift=shift):
            return bop.matvec(w) + matmul(X, matmul(it.adjoint(X), w)) * shift

        start = it.random_vector((n,), X.dtype, getattr(X, "device", None), rng)
        chk = es.krylov_schur(mv, start, 1, which, True, tol=tol, ncv=ncv, maxiter=maxiter,
                              rng=rng)
        nmv += chk.info.iterations
        cand = float(np.real(chk.values[0]))
        if sign * cand >= sign * float(vals[-1]) - 10 * tol * scale:
            break
        vals = np.append(vals, cand)
        X = concatenate([X, chk.vectors], axis=1)
        order = es.order(vals, which)[:k]
        vals = vals[order]
        X = take(X, order, axis=1)
    return es.RitzResult(vals, X, SolveInfo(nmv, res.info.converged, res.info.residual), scale)


def _hermitian_ncv(k, ncv):
    return max(int(ncv), 2 * k + 1) if ncv is not None else max(20, 2 * k + 1)


def eigsh(A, k: int = 1, which: str = "SA", v0=None, *, tol: float = 1e-12,
          ncv: int | None = None, maxiter: int = 300, seed: int = 0,
          eps: float | None = None, adjoint_tol: float = 1e-12,
          return_info: bool = False) -> EigResult:
    """A few eigenpairs of a Hermitian matrix or operator, with implicit derivatives.

    Thick-restart Lanczos with full reorthogonalisation: only products ``A v`` are needed, so
    ``A`` may be a ``LinearOperator`` (a transfer matrix, an effective Hamiltonian) too large
    to form. Derivatives with respect to the matrix, or to the tensors the operator closes
    over, are implicit: they never differentiate through the iterations.

    Parameters
    ----------
    A : Tensor or LinearOperator
        A Hermitian (n, n) matrix, or a ``LinearOperator`` of shape (n, n).
    k : int, optional
        Number of eigenpairs, 1 <= k <= n (default 1).
    which : {"SA", "LA", "LM"}, optional
        Smallest algebraic (default), largest algebraic, or largest magnitude.
    v0 : Tensor, optional
        Starting vector (default: random from ``seed``).
    tol : float, optional
        Residual target ``||A v - w v|| <= tol * ||A||`` (default 1e-12).
    ncv : int, optional
        Krylov dimension (default max(20, 2k + 1)).
    maxiter : int, optional
        The most restarts (default 300).
    seed : int, optional
        Seed of the random starting vector.
    eps : float, optional
        Relative tie tolerance of the derivative (default as ``eigh``).
    adjoint_tol : float, optional
        Tolerance of the GMRES solves of the backward pass (default 1e-12).
    return_info : bool, optional
        Also return a ``SolveInfo`` (iterations, converged, residual).

    Returns
    -------
    EigResult
        ``(eigenvalues, eigenvectors)``: eigenvalues (k,) real, ascending (as ``eigh``);
        eigenvectors the columns of an (n, k) tensor, unit norm, largest-magnitude entry real
        and positive. With ``return_info=True``, ``(result, info)``.

    Raises
    ------
    tenferro.errors.NotHermitianError
        A dense ``A`` that is not Hermitian to the rounding of its entries
        (100 sqrt(n) eps |A|_F): use ``eigs``.
    tenferro.errors.LinAlgError
        Non-finite entries or products.
    tenferro.errors.ShapeError
        ``A`` is not square, or ``k`` is not in 1..n.
    ValueError
        ``which`` is not one of the three.

    Warns
    -----
    tenferro.errors.ConvergenceWarning
        ``tol`` not reached after ``maxiter`` restarts.
    tenferro.errors.DegeneracyWarning, tenferro.errors.GaugeWarning
        The backward pass of a loss that has no derivative (see Notes).

    Notes
    -----
    Derivative (implicit): the computed pairs couple through ``1/(w_i - w_j)``, exact off
    ties and 0 on ties (closer than ``eps`` relative), the rest of the spectrum through one
    GMRES solve per eigenvector with a non-zero cotangent, to ``adjoint_tol``. Degenerate
    spectra with gauge-invariant losses give finite, right gradients. As for ``eigh``, the
    backward pass reports (``DegeneracyWarning``) a loss that uses individual eigenvalues or
    the basis of a computed multiplet, and also one that uses a multiplet the k computed
    pairs cut through (found by one more Krylov search in the backward pass). A loss that
    depends on the phase of an eigenvector gets a ``GaugeWarning``. For k > 1 the complement
    of the converged vectors is searched for missed degenerate partners.

    A ``LinearOperator`` is known only through its products, so it cannot be checked:
    eigsh then computes eigenpairs of the Hermitian part of what it sees. Complex operators:
    gradients follow ``grad``'s convention.

    Examples
    --------
    >>> import tenferro as tf
    >>> H = tf.tensor([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    >>> w, V = tf.linalg.eigsh(H, k=1)
    >>> round(float(w[0]), 10)  # 2 - sqrt(2)
    0.5857864376

    The gradient of the lowest eigenvalue is ``v v^T`` (Hellmann-Feynman), here through an
    operator given by its products only:

    >>> d = tf.tensor([3.0, 1.0, 2.0])
    >>> def lowest(d):
    ...     A = tf.linalg.LinearOperator(lambda v: d * v, (3, 3), tf.float64)
    ...     return tf.linalg.eigsh(A, k=1).eigenvalues[0]
    >>> tf.grad(lowest)(d)
    tensor([0., 1., 0.])
    """
    op = as_operator(A, "eigsh")
    m, n = op.shape
    if m != n:
        raise ShapeError(f"eigsh: the operator must be square, got shape {op.shape}.")
    _check_hermitian(op)
    if which not in es.HERMITIAN_WHICH:
        raise ValueError(f"eigsh: which must be one of {es.HERMITIAN_WHICH}, got {which!r}.")
    k = int(k)
    if not 1 <= k <= n:
        raise ShapeError(f"eigsh: k must be in 1..{n} for an operator of shape {op.shape}, "
                         f"got {k}.")
    dtype = np.dtype(op.dtype)
    device = _device(op, v0)
    v0 = _start_vector("eigsh", v0, n, dtype, device, seed)
    dtype = np.dtype(v0.dtype)
    ncv_ = min(_hermitian_ncv(k, ncv), n)

    eps_ = _eps(eps, dtype)
    infos = {}

    def forward(*params):
        res = _eig_forward("eigsh", op.bind(list(params)), n, dtype, device, k, which, True,
                           v0, tol, ncv_, maxiter, seed)
        infos["fwd"], infos["scale"] = res.info, res.scale
        _warn_unconverged("eigsh", res.info)
        order = np.argsort(np.real(res.values), kind="stable")
        w = asarray(np.real(res.values[order]).astype(it.real_dtype(dtype)), device=device)
        V = take(res.vectors, order, axis=1)
        return w, fix_gauge(V)

    def backward(params, out, ct):
        w, V = out
        wbar, Vbar = ct
        if not _is_zero(Vbar):
            check_backward_mode("eigsh", Vbar, V)
        bop = op.bind(list(params))
        if not _is_zero(Vbar):
            Vbar = gauge_cotangent("eigsh", V, astype(Vbar, V.dtype))
        _check_eigsh_ties(bop, w, V, wbar, Vbar, which, eps_, infos.get("scale", 0.0),
                          tol, ncv_, maxiter, seed)
        W = None
        if not _is_zero(wbar):
            W = V * astype(wbar, V.dtype)[None, :]
        if not _is_zero(Vbar):
            W2 = _eigsh_vector_adjoint(bop, w, V, Vbar, eps_, adjoint_tol, maxiter)
            W = W2 if W is None else W + W2
        if W is None:
            return [None] * len(params)
        return pullback(op, params, W, V)

    params = list(op.params)
    if _carries(params):
        w, V = implicit("eigsh", forward, backward, params)
    else:
        w, V = forward(*params)
    out = EigResult(w, V)
    return (out, infos.get("fwd")) if return_info else out


def _eigsh_vector_adjoint(bop, w, V, Vbar, eps, tol, maxiter):
    """W such that A_bar = W V^H is the eigenvector part of the eigsh pullback (``Vbar``:
    the gauge-free cotangent, ``gauge_cotangent``)."""
    C = matmul(it.adjoint(V), Vbar)  # C[j, i] = v_j^H vbar_i
    d = w[None, :] - w[:, None]  # d[j, i] = w_i - w_j
    scale = stop_gradient(abs(w).max()) if w.shape[0] else 1.0
    tie = abs(d) <= eps * scale  # 1/d exact off ties, 0 on them (as eigh)
    F = where(tie, 0.0, 1.0 / where(tie, 1.0, d))
    G = C * astype(F, C.dtype)
    W = matmul(V, G)
    R = Vbar - matmul(V, C)
    k = V.shape[1]
    Z = []
    for i in range(k):
        r = R[:, i]
        if _is_zero(r):
            Z.append(r * 0)
            continue
        wi = w[i]

        def mv(x, wi=wi):
            x = x - matmul(V, matmul(it.adjoint(V), x))
            y = bop.matvec(x) - x * astype(wi, x.dtype)
            return y - matmul(V, matmul(it.adjoint(V), y))

        z, info = it.gmres(mv, r, tol=tol, restart=min(40, V.shape[0]), maxiter=maxiter)
        _warn_unconverged("eigsh (eigenvector adjoint solve)", info)
        Z.append(z - matmul(V, matmul(it.adjoint(V), z)))

    return W - stack(Z, axis=1)


def _check_hermitian(op) -> None:
    """eigsh solves Hermitian problems: a dense matrix is checked (its anti-Hermitian part
    against the rounding of its entries, 100 sqrt(n) eps |A|_F, two norms on the matrix's
    device) and must be finite. A ``LinearOperator`` is only known through its products, so
    nothing can be checked: eigsh then uses the Hermitian part of what it sees (the Lanczos
    recurrence symmetrises the projected matrix)."""
    if not op.is_dense:
        return
    a = op._dense
    n = a.shape[0]
    if not it.is_concrete(a):
        return  # traced: eigsh raises ConcretizationError itself
    a = stop_gradient(a)  # a check on the values: no derivative (|A - A^H| = 0 has none)
    skew = float(it.value(it.vnorm(reshape(a - it.adjoint(a), (-1,)))))
    size = float(it.value(it.vnorm(reshape(a, (-1,)))))
    if not math.isfinite(size):
        raise LinAlgError(
            f"eigsh: the matrix ({a.dtype}[{n},{n}]) has NaN or inf entries; eigenpairs of a "
            f"non-finite matrix are not defined. Check how it was built.")
    rtol = 100 * math.sqrt(n) * it.eps_of(a.dtype)
    if skew > rtol * size:
        raise NotHermitianError(
            f"eigsh: the matrix ({a.dtype}[{n},{n}]) is not Hermitian: |A - A^H|_F = "
            f"{skew:.3g}, {skew / max(size, 1e-300):.2e} of |A|_F (tolerance {rtol:.1e}). "
            f"eigsh computes eigenpairs of Hermitian operators; use tenferro.linalg.eigs for a "
            f"general matrix, or pass the Hermitian part (A + A^H) / 2 if that is what you "
            f"mean.")


def _check_eigsh_ties(bop, w, V, wbar, Vbar, which, eps, scale, tol, ncv, maxiter, seed):
    """The degeneracy check of the eigsh pullback (as eigh's): inside the computed
    eigenpairs, a loss must not depend on individual values of a multiplet or on the basis
    inside it; and the computed set must not cut through a multiplet (its edge eigenvalue
    tied to one that was not computed) if the loss uses that multiplet at all: the k-th
    eigenpair is then an arbitrary member, like a truncation through a multiplet."""
    if not checks_on(True):
        return
    wv = it.value(w)
    wb = None if _is_zero(wbar) else it.value(wbar)
    C = None if _is_zero(Vbar) else it.value(matmul(it.adjoint(V), Vbar))
    if wv is None or (wb is None and C is None):
        return
    cts = {"values": np.zeros(wv.shape) if wb is None else np.real(wb), "rotation": C}
    check_cotangents(cts, wv, op="eigh", eps=eps)
    k, n = V.shape[1], V.shape[0]
    if k >= n:
        return
    edge = k - 1 if which in ("SA",) else 0 if which == "LA" else int(np.argmin(np.abs(wv)))
    width = eps * max(float(np.max(np.abs(wv))), 1e-300)
    block = np.flatnonzero(np.abs(wv - wv[edge]) <= width)
    used = (wb is not None and np.any(np.abs(wb[block]) > 0)) or (
        C is not None and np.any(np.abs(C[:, block]) > 0))
    if not used:
        return
    partner = _next_eigenvalue(bop, V, wv, which, scale, tol, ncv, maxiter, seed)
    if partner is not None and abs(partner - wv[edge]) <= eps * max(
            float(np.max(np.abs(wv))), abs(partner)):
        report(
            f"eigsh: the {k} computed eigenpair(s) cut through a degenerate eigenvalue "
            f"{float(wv[edge]):.6g} (eigenvalue index {edge} of those computed; another one "
            f"equal to it was not computed, {partner:.6g}): which member was computed is "
            f"arbitrary, so the loss, which uses it, has no derivative there and the "
            f"gradient returned is not one. Compute k covering the whole multiplet (k = "
            f"{k + 1} or more), or use quantities of the whole multiplet.")


def _next_eigenvalue(bop, V, wv, which, scale, tol, ncv, maxiter, seed):
    """The most wanted eigenvalue after the computed ones: the same search on the operator
    with the computed pairs moved out of the way (A + sigma V V^H for "SA"/"LA", A - V W V^H
    for "LM")."""
    n, k = V.shape
    big = 4 * max(scale, float(np.max(np.abs(wv))), 1e-300)
    Vh = it.adjoint(V)
    if which == "LM":
        shifts = astype(asarray(wv, device=getattr(V, "device", None)), V.dtype)

        def mv(x):
            return bop.matvec(x) - matmul(V, matmul(Vh, x) * shifts)
    else:
        sigma = big if which == "SA" else -big

        def mv(x):
            return bop.matvec(x) + matmul(V, matmul(Vh, x)) * sigma
    rng = np.random.default_rng(seed + 7)
    if n <= 2 * ncv:
        res = es.dense_eig(mv, V[:, 0], 1, which, True)
    else:
        start = it.random_vector((n,), V.dtype, getattr(V, "device", None), rng)
        res = es.krylov_schur(mv, start, 1, which, True, tol=tol, ncv=ncv, maxiter=maxiter,
                              rng=rng)
    return float(np.real(res.values[0])) if len(res.values) else None


# --------------------------------------------------------------------------- eigs
def eigs(A, k: int = 1, which: str = "LM", v0=None, *, tol: float = 1e-12,
         ncv: int | None = None, maxiter: int = 300, seed: int = 0,
         adjoint_tol: float = 1e-12, return_info: bool = False) -> EigResult:
    """``k`` eigenpairs of a general (non-Hermitian) operator by the Krylov-Schur method
    (restarted Arnoldi). ``which``: "LM" (largest magnitude, default), "LR" (largest real
    part), "SR" (smallest real part). Returns complex eigenvalues, most wanted first, and unit
    eigenvectors (n, k) with their largest-magnitude entry real and positive.

    Derivative (implicit): the eigenvalue cotangents need the left eigenvectors (a second
    Krylov-Schur run on A^H); eigenvector cotangents one GMRES solve each of
    (A - lambda)^H xi = v_bar (projected on the normalisation and gauge). Non-degenerate
    eigenvalues only."""
    op = as_operator(A, "eigs")
    m, n = op.shape
    if m != n:
        raise ShapeError(f"eigs: the operator must be square, got shape {op.shape}.")
    if which not in es.GENERAL_WHICH:
        raise ValueError(f"eigs: which must be one of {es.GENERAL_WHICH}, got {which!r}.")
    k = int(k)
    if not 1 <= k <= n:
        raise ShapeError(f"eigs: k must be in 1..{n} for an operator of shape {op.shape}, "
                         f"got {k}.")
    dtype = np.dtype(op.dtype)
    cdt = np.result_type(dtype, np.complex64)
    device = _device(op, v0)
    v0 = _start_vector("eigs", v0, n, dtype, device, seed)
    ncv_ = min(max(int(ncv), 2 * k + 2) if ncv is not None else max(20, 2 * k + 2), n)
    infos = {}

    def forward(*params):
        res = _eig_forward("eigs", op.bind(list(params)), n, np.dtype(v0.dtype), device, k,
                           which, False, v0, tol, ncv_, maxiter, seed)
        infos["fwd"] = res.info
        _warn_unconverged("eigs", res.info)
        lam = asarray(np.asarray(res.values, dtype=cdt), device=device)
        return lam, fix_gauge(astype(res.vectors, cdt))

    def backward(params, out, ct):
        lam, V = out
        lbar, Vbar = ct
        check_backward_mode("eigs", ct, V)
        bop = op.bind(list(params))
        need_l = not _is_zero(lbar)
        need_v = not _is_zero(Vbar)
        if not (need_l or need_v):
            return [None] * len(params)
        U = _left_eigenvectors(op, bop, lam, V, n, which, tol, ncv_, maxiter, seed)
        vu = it.col_dot(V, U)  # v_i^H u_i
        W = U * (astype(lbar, cdt) / vu)[None, :] if need_l else V * 0
        if need_v:
            W = W - _eigs_vector_adjoint(bop, lam, V, U, vu, Vbar, adjoint_tol, maxiter)
        return pullback(op, params, W, V)

    params = list(op.params)
    if _carries(params):
        lam, V = implicit("eigs", forward, backward, params)
    else:
        lam, V = forward(*params)
    out = EigResult(lam, V)
    return (out, infos.get("fwd")) if return_info else out


def _left_eigenvectors(op, bop, lam, V, n, which, tol, ncv, maxiter, seed):
    """u_i with A^H u_i = conj(lambda_i) u_i, matched to the right pairs by eigenvalue."""
    k = V.shape[1]
    lv = it.value(lam)
    rng = np.random.default_rng(seed + 1)
    start = it.random_vector((n,), V.dtype, getattr(V, "device", None), rng)
    kk = min(n, k + 2) if n > k + 2 else k
    if n <= 2 * ncv:
        res = es.dense_eig(bop.rmatvec, V[:, 0], n, which, False)
    else:
        res = es.krylov_schur(bop.rmatvec, start, kk, which, False, tol=tol, ncv=ncv,
                              maxiter=maxiter, rng=rng)
        _warn_unconverged("eigs (left eigenvectors in the backward pass)", res.info)
    cols = []
    for i in range(k):
        j = int(np.argmin(np.abs(np.conj(res.values) - lv[i])))
        cols.append(res.vectors[:, j])

    return astype(stack(cols, axis=1), V.dtype)


def _eigs_vector_adjoint(bop, lam, V, U, vu, Vbar, tol, maxiter):
    """xi_i: (A - lambda_i)^H xi_i = w_i with v_i^H xi_i = 0, w_i the cotangent projected on
    the normalisation (Re v^H dv = 0) and gauge (Im dv_k = 0) constraints."""
    Vbar = astype(Vbar, V.dtype)
    s = it.col_dot(Vbar, V)  # vbar_i^H v_i
    idx = gauge_index(V)
    vk = real(take_columns(V, idx))
    onehot = astype(arange(V.shape[0])[:, None] == idx[None, :], V.dtype)
    _check_gauge("eigs", imag(s), Vbar)
    Wc = Vbar - V * astype(real(s), V.dtype)[None, :] + onehot * astype(
        1j * imag(s) / vk, V.dtype)[None, :]
    xs = []
    for i in range(V.shape[1]):
        wi = Wc[:, i]
        if _is_zero(wi):
            xs.append(wi * 0)
            continue
        cl = conj(lam[i])

        def mv(x, cl=cl):
            return bop.rmatvec(x) - x * cl

        xi, info = it.gmres(mv, wi, tol=tol, restart=min(40, V.shape[0]), maxiter=maxiter)
        _warn_unconverged("eigs (eigenvector adjoint solve)", info)
        u, v = U[:, i], V[:, i]
        xi = xi - u * (it.col_dot(v, xi) / vu[i])
        xs.append(xi)

    return stack(xs, axis=1)


# --------------------------------------------------------------------- expm_multiply
def expm_multiply(A, v, t: float = 1.0, *, tol: float = 1e-12, krylov_dim: int = 30,
                  hermitian: bool = False, quadrature: int | None = None):
    """``exp(t A) v`` by Krylov projection (Arnoldi, or Lanczos with ``hermitian=True``):
    ``exp(t A) v ~ ||v|| Q exp(t H) e_1``, with the step split into substeps until the a
    posteriori error estimate h_{m+1,m} |e_m^T exp(tau H) e_1| is below ``tol`` (relative).
    ``krylov_dim`` is the starting dimension: when the substeps the estimate accepts would be
    more than 64, it doubles (up to n, where the projection is exact, or max(4 krylov_dim,
    64)); a tolerance no dimension reaches, or NaN/inf, raises ``LinAlgError``.
    ``t`` may be complex (``t = -1j * dt`` for real-time evolution). Derivative: v_bar =
    exp(t A)^H y_bar by the same method, and the operator's parameters by Gauss-Legendre
    quadrature of int_0^1 pullback(exp(t(1-s)A)^H y_bar, exp(t s A) v) ds (``quadrature``
    nodes, default: doubled until two rules agree to 1e-10)."""
    op = as_operator(A, "expm_multiply")
    m, n = op.shape
    if m != n:
        raise ShapeError(f"expm_multiply: the operator must be square, got shape {op.shape}.")
    v = tensor_of(v)
    vshape = tuple(v.shape)
    tt = complex(t)
    dt = np.result_type(op.dtype, v.dtype if v.dtype.kind in "fc" else np.float64,
                        np.complex64 if tt.imag else np.float32)
    vf = astype(flat_vector(v, n, dt, "expm_multiply", "v"), dt)
    tv = tt if tt.imag else tt.real

    def apply(bop, x, tau, adjoint=False):
        mv = bop.rmatvec if adjoint else bop.matvec
        tau_ = np.conj(tau) if adjoint else tau
        return _krylov_expm(mv, x, tau_, tol, krylov_dim, hermitian)

    def forward(x, *params):
        return apply(op.bind(list(params)), x, tv)

    def backward(args, y, ybar):
        x, params = args[0], list(args[1:])
        check_backward_mode("expm_multiply", ybar, y)
        if _is_zero(ybar):
            return [None] * len(args)
        bop = op.bind(params)
        ybar = astype(ybar, y.dtype)
        xbar = apply(bop, ybar, tv, adjoint=True)
        if not params:
            return [xbar]
        grads = _expm_param_quadrature(op, bop, params, x, ybar, tv, apply, quadrature)
        return [xbar] + grads

    args = [vf] + list(op.params)
    if _carries(args):
        y = implicit("expm_multiply", forward, backward, args)
    else:
        y = forward(*args)
    return y.reshape(vshape) if len(vshape) != 1 else y


def _expm_param_quadrature(op, bop, params, x, ybar, t, apply, nodes):
    """int_0^1 pullback(t^* exp(t (1-s) A)^H ybar, exp(t s A) x) ds by Gauss-Legendre."""

    def rule(q):
        s, wts = np.polynomial.legendre.leggauss(q)
        s, wts = (s + 1) / 2, wts / 2
        Ws, Vs = [], []
        for si, wi in zip(s, wts):
            b = apply(bop, x, t * si)
            a = apply(bop, ybar, t * (1 - si), adjoint=True)
            Ws.append(a * (wi * np.conj(t) if np.iscomplexobj(t) else wi * t))
            Vs.append(b)

        return pullback(op, params, stack(Ws, axis=1), stack(Vs, axis=1))

    if nodes is not None:
        return rule(int(nodes))
    q = 4
    prev = rule(q)
    for _ in range(5):
        q *= 2
        cur = rule(q)
        diff = max(float(np.max(np.abs(it.value(a - b)))) for a, b in zip(cur, prev))
        size = max(float(np.max(np.abs(it.value(a)))) for a in cur)
        if diff <= 1e-10 * max(size, 1e-300):
            return cur
        prev = cur
    warnings.warn("expm_multiply: the quadrature of the operator derivative did not reach "
                  "1e-10; pass a larger quadrature=.", ConvergenceWarning, stacklevel=3)
    return cur


_SUBSTEPS = 64  # substeps per dimension before the Krylov dimension doubles
_MIN_STEP = 1e-10  # smallest substep (a fraction of t) the error estimate may ask for


def _krylov_expm(mv, v, t, tol, m, hermitian):
    """exp(t A) v with Arnoldi/Lanczos substeps (Saad 1992; Hochbruck-Lubich).

    The dimension m is where the search starts: when the a posteriori error estimate only
    accepts substeps that would need more than ``_SUBSTEPS`` of them to cover t, the
    dimension doubles (up to n, where the projection is exact, or max(4 m, 64)), so a too
    small ``krylov_dim`` costs a few restarts instead of 10^4 substeps. A tolerance that no
    dimension reaches (substeps below 1e-10 t at the largest) raises ``LinAlgError``."""
    import scipy.linalg as sla

    n = v.shape[0]
    m = max(2, min(int(m), n))
    m_max = min(n, max(4 * m, 64))
    beta0 = it.value(it.vnorm(v))
    if beta0 is None:
        raise ConcretizationError("expm_multiply needs concrete values (adaptive substeps); "
                                  "call it outside jit.")
    if float(beta0) == 0 or t == 0:
        return v
    if not math.isfinite(float(beta0)):
        raise LinAlgError("expm_multiply: the vector has NaN or inf entries.")
    dtype = np.result_type(np.dtype(v.dtype), np.complex64 if np.iscomplexobj(t) else
                           np.float32)
    v = astype(v, dtype)
    cplx = np.dtype(dtype).kind == "c"
    hdt = np.complex128 if cplx else np.float64
    remaining = 1.0  # fraction of t left
    tau = 1.0
    w = v
    steps = 0
    while True:
        beta = float(it.value(it.vnorm(w)))
        if beta == 0:
            return w
        Q, H, mm = _arnoldi(mv, w / beta, m, hdt)
        if not np.all(np.isfinite(H)):
            raise LinAlgError("expm_multiply: the operator's products are not finite (NaN or "
                              "inf); check the matrix or the LinearOperator's matvec.")
        Hm = H[:mm, :mm]
        if hermitian:
            Hm = (Hm + Hm.conj().T) / 2
        tau = min(tau * 2, remaining)
        while True:
            e1 = sla.expm(t * tau * Hm)[:, 0]
            err = beta * abs(H[mm, mm - 1]) * abs(e1[-1]) * abs(t) * tau if mm == m else 0.0
            if err <= tol * tau * max(beta, 1e-300) or tau < _MIN_STEP:
                break
            tau /= 2
        if mm == m and (tau < _MIN_STEP or remaining / tau > _SUBSTEPS) and m < m_max:
            m = min(2 * m, m_max)  # the dimension is too small for this tolerance: grow it
            tau = remaining
            continue
        if err > tol * tau * max(beta, 1e-300):
            raise LinAlgError(
                f"expm_multiply: the tolerance tol={tol:g} is not reached with Krylov "
                f"dimension {m} even with substeps of {tau:.1e} t (error estimate "
                f"{err / max(beta * tau, 1e-300):.1e}); raise tol (or krylov_dim).")
        w = matmul(it.basis(Q[:mm]), it.host((beta * e1).astype(hdt), dtype, Q[0]))
        remaining -= tau
        steps += 1
        if remaining <= 1e-15:
            return w


def _arnoldi(mv, q0, m, hdt):
    """An Arnoldi (Lanczos: the same with full reorthogonalisation) basis of dimension <= m
    from the unit vector q0: the vectors, the (m + 1, m) Hessenberg matrix and the dimension
    reached (less than m at an invariant subspace: the projection is then exact)."""
    Q = [q0]
    H = np.zeros((m + 1, m), dtype=hdt)
    for j in range(m):
        z = mv(Q[j])
        if not math.isfinite(float(it.value(it.vnorm(z)))):
            H[j + 1, j] = math.nan  # a non-finite product: the caller reports it (orthogonalising
            return Q, H, j + 1  # it would only subtract inf from inf)
        z, h = it.orthogonalize(it.basis(Q), z)
        hn = float(it.value(it.vnorm(z)))
        H[: j + 1, j] = it.value(h)
        H[j + 1, j] = hn
        if hn <= 1e-14 * max(np.abs(H).max(), 1e-300) or not math.isfinite(hn):
            return Q, H, j + 1
        Q.append(z / hn)
    return Q, H, m


_ = (zeros, LinearOperator)
