"""``tenferro.linalg.dense``: decompositions, solves and norms with correct derivatives.

Every function works on the last two axes and is batched over the leading ones, for real and
complex inputs (integers are converted to float64, as NumPy does). They lower to the
primitives of ``chainrules.primitives.linalg``, whose JVP rules give every derivative: reverse
mode, forward mode, Hessian-vector products, in eager and traced mode.

What makes these derivatives usable for tensor networks (details in ``design/linalg.md``):

* **Degenerate spectra.** In ``svd`` and ``eigh`` derivatives, ``1/(s_j - s_i)``,
  ``1/(s_i + s_j)`` and ``1/s`` are exact except on *ties*, values closer than ``eps`` times
  the largest (default 1e-10 in double precision, 1e-4 in single), where they are cut to 0.
  Gradients of gauge-invariant losses (symmetric functions of whole multiplets, projectors
  onto them, ``U_k Vh_k``) are then exact on exactly degenerate spectra; near (resolved)
  degeneracies every loss is exact. A loss that depends on the basis inside a degenerate
  subspace, or on individual values of a multiplet, has no derivative there that the factors
  can express: the backward pass says so with a ``DegeneracyWarning``
  (``TENFERRO_DEGENERACY=raise|warn|ignore``). Functions of Hermitian matrices (``funm``,
  ``sqrtm``, ``logm``, ``powm`` in ``matfuncs``; ``expm(hermitian=True)``) are exact at every
  degeneracy.
* **Truncation is slicing.** ``svd(a, max_rank=..., cutoff=..., relative_cutoff=...)`` computes
  the thin SVD and slices it, so the gradient contains the coupling between kept and discarded
  singular vectors (the textbook truncated-only adjoint misses it and is wrong whenever the
  discarded singular values are non-zero). The rank is decided from the data by
  ``truncation_rank``.
* **Gauge conventions.** ``svd``: the largest-magnitude entry of each right singular vector
  (column of ``V``, row of ``Vh`` conjugated) is real and positive; ``eigh``: the same for each
  eigenvector; ``qr``: ``diag(R)`` real, and non-negative with ``positive=True``. Outputs are
  therefore continuous functions of the input, and even phase-dependent losses have
  derivatives that match finite differences (degenerate subspaces excepted: their basis is not
  determined by the matrix).
* ``eigh``, ``eigvalsh`` and ``cholesky`` use the Hermitian part ``(A + A^H)/2`` (NumPy reads
  one triangle); their gradients are therefore Hermitian.

Complex convention (as everywhere in tenferro): the gradient of a real loss L with respect to a
complex z is dL/dRe z + i dL/dIm z.
"""

from __future__ import annotations

import builtins
from typing import NamedTuple

import numpy as np

from chainrules import primitives as P
from chainrules.primitives.degeneracy import (
    check_truncation_ties,
    checks_on,
    default_tie_eps,
    tie_eps,
)
from chainrules.primitives.linalg import check_truncation
from chainrules.primitives.linalg import truncation_rank as _truncation_rule
from chainrules.primitives.tie_gauge import eps_scale as tie_eps_scale
from chainrules.symbolic import Sym, bound_of

from ..core.dispatch import bind
from ..core.tensor import Tensor, _reduction_args
from ..errors import (
    ConcretizationError,
    DTypeError,
    ShapeError,
    SingularMatrixError,
    named_argument_errors,
)
from ..ops import (
    abs,
    abs2,
    astype,
    conj,
    expand_dims,
    matmul,
    max,
    min,
    moveaxis,
    reshape,
    stop_gradient,
    sum,
    swapaxes,
    tensor_of,
    where,
)
from ..ops._base import normalize_axes, to_inexact
from ..ops.products import broadcast_batch
from ..ops.reductions import _safe_pow, safe_sqrt
from ..traced.staging import TracedTensor

__all__ = [
    "EighResult",
    "LQResult",
    "QRResult",
    "SVDResult",
    "SingularMatrixError",
    "SlogdetResult",
    "cholesky",
    "default_eps",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "lq",
    "matrix_rank",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "truncation_rank",
]


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class LQResult(NamedTuple):
    L: Tensor
    Q: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


# ----------------------------------------------------------------------- helpers
_result = tuple.__new__  # a result tuple without the NamedTuple's Python-level __new__
_SUPPORTED = frozenset(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _matrix(op: str, a, *, square: bool = False) -> Tensor:
    """Coerce to an inexact tensor of shape (..., m, n), with clear errors."""
    a = to_inexact(tensor_of(a))
    if a.dtype not in _SUPPORTED:
        raise DTypeError(
            f"{op}: dtype {a.dtype} is not supported by LAPACK; use float32, float64, complex64 "
            f"or complex128 (e.g. .astype(tenferro.float64))."
        )
    if a.ndim < 2:
        raise ShapeError(
            f"{op}: expected a matrix or a batch of matrices (..., m, n), got shape {a.shape}."
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"{op}: expected square matrices (..., n, n), got shape {a.shape}."
        )
    return a


def default_eps(dtype) -> float:
    """Default tie tolerance of ``svd``/``eigh`` derivatives, relative to the largest value:
    1e-10 in double precision, 1e-4 in single.

    Values closer than ``eps * max`` are treated as exactly degenerate. LAPACK splits exact
    degeneracies by rounding (1e-16..1e-13 relative, growing with the matrix size); resolved
    splits get the exact ``1/d``, whose rounding noise in a gauge-invariant gradient is
    ~1e-16/d, at most ~1e-6 just above the tolerance. Splits below it are ties: exact for
    gauge-invariant losses, reported (``DegeneracyWarning``) for the others.
    """
    return default_tie_eps(dtype)


_DEFAULT_EPS = {d: default_tie_eps(d) for d in _SUPPORTED}  # per call: a dict lookup


def _eps(eps, dtype) -> float:
    if eps is None:
        e = _DEFAULT_EPS.get(dtype)
        e = default_eps(dtype) if e is None else e
        scale = tie_eps_scale()  # 1 outside tenferro.linalg.tie_gauge(eps_scale=...)
        return e if scale == 1.0 else e * scale
    return tie_eps(eps)  # the primitives' shape rules apply the same check


def _mH(x: Tensor) -> Tensor:
    return conj(swapaxes(x, -1, -2))


# --------------------------------------------------------------------------- SVD
def truncation_rank(s, max_rank=None, cutoff=None, relative_cutoff=None) -> int:
    """How many singular values to keep, decided from concrete (descending) values ``s``.

    Keeps at most ``max_rank`` values, drops values below ``cutoff`` and below
    ``relative_cutoff * s_max``, but keeps at least one. For a batch (``s`` of shape
    (..., k)) the rank is the largest over the batch, so no matrix loses a value its own
    criterion keeps. This is the one place where a truncated SVD looks at data (traced mode
    resolves it at run time with the same rule: ``chainrules.primitives.linalg.truncation_rank``).
    ``max_rank`` is an int >= 1 (not a bool), ``cutoff`` a number >= 0 and ``relative_cutoff``
    one in [0, 1]; other values raise (``DTypeError``/``ShapeError``).
    """
    max_rank, cutoff, relative_cutoff = _check_truncation(
        "truncation_rank", max_rank, cutoff, relative_cutoff)
    values = np.asarray(stop_gradient(s) if isinstance(s, Tensor) else s)
    return _truncation_rule(np, values, max_rank, cutoff, relative_cutoff)


def _check_truncation(op, max_rank, cutoff, relative_cutoff) -> tuple:
    # the one rule, shared with truncation_indices's shape rule (graph files apply it too)
    return check_truncation(max_rank, cutoff, relative_cutoff, op)


def _decide_rank(s: Tensor, max_rank, cutoff, relative_cutoff, eps: float):
    """The rank of a truncated SVD: an int, or, when the singular values are only known at
    run time (traced mode), the indices ``arange(r)`` of a ``truncation_indices`` node whose
    length is a symbolic size. Only cutoffs need the values of ``s``; when they are concrete
    a cut through a degenerate multiplet is reported (``DegeneracyWarning``)."""
    k = s.shape[-1]
    if not _is_concrete(s):
        if cutoff is None and relative_cutoff is None and isinstance(k, int):
            return builtins.min(k, int(max_rank))
        return _dynamic_rank(s, max_rank, cutoff, relative_cutoff)
    by_rank_alone = cutoff is None and relative_cutoff is None
    if by_rank_alone:
        if not checks_on(str(s.device) == "cpu"):
            # on an accelerator a rank-only truncation reads nothing back (explicit transfers)
            return builtins.min(k, int(max_rank))
        try:  # only for the tie check: under vmap there is one spectrum per batch member
            values = np.asarray(stop_gradient(s))
        except ConcretizationError:
            return builtins.min(k, int(max_rank))  # (the backward check still runs)
    else:
        values = np.asarray(stop_gradient(s))
    r = truncation_rank(values, max_rank, cutoff, relative_cutoff)
    if checks_on(True):  # the values are on the host now
        check_truncation_ties(values, r, eps)
    return r


def _is_concrete(x) -> bool:
    while True:
        if isinstance(x, TracedTensor):
            return False
        p = getattr(x, "primal", None)
        if p is None:
            return True
        x = p


def _dynamic_rank(s, max_rank, cutoff, relative_cutoff):
    bound = bound_of(s.shape[-1])
    if max_rank is not None:
        bound = builtins.min(bound, int(max_rank))
    return bind(P.truncation_indices_p, stop_gradient(s), max_rank=max_rank, cutoff=cutoff,
                relative_cutoff=relative_cutoff, size=Sym.new(bound))


def _truncate(x, rank, axis):
    """Keep the first ``rank`` entries along ``axis`` (``rank``: int or run-time indices)."""
    if isinstance(rank, int):
        if rank >= x.shape[axis]:
            return x
        idx = [slice(None)] * x.ndim
        idx[axis] = slice(0, rank)
        return x[tuple(idx)]
    return bind(P.gather_p, x, rank, axis=axis % x.ndim)


def svd(a, full_matrices: bool = False, max_rank: int | None = None, cutoff: float | None = None,
        relative_cutoff: float | None = None, eps: float | None = None,
        compute_uv: bool = True):
    """Singular value decomposition ``a = U @ diag(S) @ Vh``, optionally truncated.

    LAPACK's SVD with derivatives that stay correct where tensor-network codes need them:
    (near-)degenerate and zero singular values, truncation, complex phases, second order.
    Batched over leading axes.

    Parameters
    ----------
    a : Tensor, shape (..., m, n)
        Real or complex matrix (or stack); integer input is converted to float64. float32,
        float64, complex64 and complex128 are supported.
    full_matrices : bool, optional
        Return square ``U`` (m x m) and ``Vh`` (n x n) instead of the thin factors; their extra
        columns/rows span the orthogonal complements (their derivative keeps them orthogonal
        and rotates nothing within the complement). Not with truncation.
    max_rank : int, optional
        Keep at most this many singular values (>= 1).
    cutoff : float, optional
        Drop singular values below this absolute value.
    relative_cutoff : float, optional
        Drop singular values below ``relative_cutoff * S[0]``. The rank rule keeps at least
        one value, and over a batch takes the largest rank (see ``truncation_rank``).
    eps : float, optional
        The relative tie tolerance of the derivative: values closer than ``eps * S[0]`` are
        treated as degenerate (default ``default_eps(dtype)``: 1e-10 in double precision).
    compute_uv : bool, optional
        Return the singular values only (then only they are computed).

    Returns
    -------
    SVDResult
        A named tuple ``(U, S, Vh)``: ``U`` (..., m, k), ``S`` (..., k) real, descending,
        ``Vh`` (..., k, n), with k = min(m, n) or the truncated rank. Only ``S`` with
        ``compute_uv=False``.

    Raises
    ------
    tenferro.errors.ShapeError
        ``a`` has fewer than two axes; a truncation argument is invalid (``max_rank < 1``,
        negative cutoffs) or combined with ``full_matrices=True``.
    tenferro.errors.DTypeError
        A dtype LAPACK does not support (e.g. float16).

    Warns
    -----
    tenferro.errors.DegeneracyWarning
        A truncation cuts through a degenerate multiplet (it keeps exactly the requested
        number of values: an arbitrary part of the multiplet), or a backward pass uses the
        gauge-dependent part of a degenerate block (see Notes).

    Notes
    -----
    Derivatives (design/linalg.md, "svd"): the rotation of U and V couples pairs through
    ``1/(s_j - s_i)`` and ``1/(s_i + s_j)``, each computed exactly off ties and set to 0 on
    ties (``|s_i - s_j| <= eps * S[0]``). Inside a degenerate block the joint rotation is pure
    gauge, so the gradient of every loss that does not depend on the basis chosen within the
    block (low-rank errors, projectors ``U_k U_k^H``, symmetric functions of the values) is
    exact at degeneracies; a loss that does depend on it has no derivative there and the
    backward pass reports it (``DegeneracyWarning``; ``TENFERRO_DEGENERACY=raise`` makes it an
    error). At zero singular values ``1/s`` is cut like the ties.

    Truncation is the thin SVD followed by slicing, so its gradient keeps the coupling of
    the kept vectors to the discarded ones (the exact derivative of the truncated function,
    not the textbook truncated-only adjoint). Under ``jit`` a cutoff gives a data-dependent
    rank (a symbolic size resolved at run time); ``max_rank`` alone is static.

    Gauge and complex inputs: the largest-magnitude entry of each column of ``V = Vh^H`` is
    real and positive (a common phase of each pair ``(u_j, v_j)``), and the derivatives
    differentiate that gauge-fixed function, so phase-dependent losses match finite
    differences. Exactly degenerate blocks are rotated by a fixed generic unitary, so the
    returned basis there differs from NumPy's. Gradients with respect to complex ``a`` follow
    ``grad``'s convention (``dL/dRe a + i dL/dIm a``).

    Examples
    --------
    >>> import tenferro as tf
    >>> a = tf.tensor([[3.0, 0.0], [0.0, 1.0]])
    >>> U, S, Vh = tf.linalg.svd(a)
    >>> S
    tensor([3., 1.])
    >>> tf.linalg.svd(a, max_rank=1).S
    tensor([3.])
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> U, S, Vh = tf.linalg.svd(x)
    >>> U.shape, S.shape, Vh.shape
    ((3, 2), (2,), (2, 2))
    >>> bool(tf.allclose((U * S) @ Vh, x))
    True

    The gradient of the nuclear norm is ``U @ Vh``:

    >>> g = tf.grad(lambda x: tf.sum(tf.linalg.svd(x, compute_uv=False)))(x)
    >>> bool(tf.allclose(g, U @ Vh))
    True
    """
    a = _matrix("svd", a)
    eps = _eps(eps, a.dtype)
    truncating = not (max_rank is None and cutoff is None and relative_cutoff is None)
    if truncating:
        max_rank, cutoff, relative_cutoff = _check_truncation("svd", max_rank, cutoff,
                                                              relative_cutoff)
        if full_matrices:
            raise ShapeError(
                "svd: truncation (max_rank/cutoff/relative_cutoff) needs full_matrices=False."
            )
    if not compute_uv:
        s = svdvals(a, eps=eps)
        if truncating:
            s = _truncate(s, _decide_rank(s, max_rank, cutoff, relative_cutoff, eps), -1)
        return s
    u, s, vh = bind(P.svd_p, a, full_matrices=bool(full_matrices), eps=eps)
    if truncating:
        r = _decide_rank(s, max_rank, cutoff, relative_cutoff, eps)
        u, s, vh = _truncate(u, r, -1), _truncate(s, r, -1), _truncate(vh, r, -2)
    return _result(SVDResult, (u, s, vh))


def svdvals(a, eps: float | None = None) -> Tensor:
    """Singular values (descending). Without gradients only the values are computed."""
    a = _matrix("svdvals", a)
    return bind(P.svdvals_p, a, eps=_eps(eps, a.dtype))


def matrix_rank(a, rtol=None) -> Tensor:
    """Number of singular values above ``rtol * S_max`` (default max(m, n) * machine eps;
    ``rtol`` a number or a tensor broadcasting against the stack of matrices). A matrix with
    NaN or inf entries has no rank: ``LinAlgError``, as NumPy (under ``jit`` when the graph
    runs), never a count of 0."""
    a = _matrix("matrix_rank", a)
    s = stop_gradient(svdvals(a))
    tol = _rtol(rtol, a) * max(s, -1, keepdims=True) if s.shape[-1] else s
    return sum(astype(s > tol, np.int64), -1)


def _rtol(rtol, a):
    """The relative tolerance: a number, or (a tensor ``rtol`` broadcasting against the
    stack ``a[..., 0, 0]``, as the array API standard allows) a tensor of shape (..., 1)."""
    if rtol is None:
        return builtins.max(a.shape[-2:]) * float(np.finfo(a.dtype).eps)
    if isinstance(rtol, Tensor) or np.ndim(rtol) > 0:
        return expand_dims(stop_gradient(tensor_of(rtol)), -1)
    return float(rtol)


# ---------------------------------------------------------------------------- QR
def qr(a, mode: str = "reduced", positive: bool = False):
    """QR decomposition ``a = Q @ R`` (Householder, LAPACK geqrf), differentiable.

    The orthonormalisation step of tensor-network algorithms (canonical forms of MPS,
    CTMRG projectors); batched over leading axes.

    Parameters
    ----------
    a : Tensor, shape (..., m, n)
        Real or complex matrix (or stack); integer input is converted to float64.
    mode : {"reduced", "complete", "r"}, optional
        "reduced" (default): ``Q`` (m, k), ``R`` (k, n) with k = min(m, n); "complete":
        ``Q`` (m, m), ``R`` (m, n); "r": ``R`` only.
    positive : bool, optional
        Make ``diag(R)`` non-negative: the unique QR of a full-rank matrix (a fixed gauge,
        what a derivative needs to be well defined). Otherwise ``diag(R)`` has LAPACK's
        signs (real also for complex input).

    Returns
    -------
    QRResult or Tensor
        The named tuple ``(Q, R)``, or ``R`` with ``mode="r"``.

    Raises
    ------
    tenferro.errors.ShapeError
        ``a`` has fewer than two axes, or ``mode`` is not one of the three.
    tenferro.errors.DTypeError
        A dtype LAPACK does not support.

    Notes
    -----
    The derivative is that of the factorisation with the returned gauge (the signs of
    ``diag(R)``), exact for full-rank ``a``; at a rank-deficient ``a`` (a zero on the
    diagonal of ``R``) the factors are not unique and have no derivative. For wide matrices
    (m < n), ``Q`` comes from the leading m x m block and the rest of ``R`` is ``Q^H`` times
    the remaining columns, so derivatives need that block to be full rank. Complex inputs:
    gradients follow ``grad``'s convention.

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> Q, R = tf.linalg.qr(x, positive=True)
    >>> Q.shape, R.shape
    ((3, 2), (2, 2))
    >>> bool(tf.allclose(Q @ R, x)), bool(tf.allclose(Q.T @ Q, tf.eye(2)))
    (True, True)
    >>> bool(tf.all(tf.diagonal(R) > 0))
    True
    """
    a = _matrix("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ShapeError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}.")
    q, r = bind(P.qr_p, a, complete=mode == "complete", positive=bool(positive))
    return r if mode == "r" else _result(QRResult, (q, r))


def lq(a, mode: str = "reduced", positive: bool = False):
    """LQ decomposition ``a = L @ Q`` (L lower triangular, Q with orthonormal rows), from the
    QR decomposition of ``a^H``. Returns ``LQResult(L, Q)``."""
    a = _matrix("lq", a)
    if mode not in ("reduced", "complete"):
        raise ShapeError(f"lq: mode must be 'reduced' or 'complete', got {mode!r}.")
    q, r = qr(_mH(a), mode=mode, positive=positive)
    return LQResult(_mH(r), _mH(q))


# ------------------------------------------------------------------- eigh & co.
def eigh(a, UPLO: str | None = None, *, eps: float | None = None) -> EighResult:  # noqa: N803
    """Eigen-decomposition of a Hermitian matrix: ``a = V diag(w) V^H`` (ascending ``w``).

    LAPACK's Hermitian eigensolver with derivatives that are exact at degenerate spectra for
    every loss that has a derivative there. Batched over leading axes.

    Parameters
    ----------
    a : Tensor, shape (..., n, n)
        Real symmetric or complex Hermitian matrix (or stack); integer input is converted to
        float64.
    UPLO : {None, "L", "U"}, optional
        NumPy's second argument. ``"L"`` or ``"U"`` reads only the lower or upper triangle of
        ``a`` (the other is taken as its conjugate transpose, the diagonal's imaginary part is
        ignored), exactly NumPy's meaning, and the derivative reaches only that triangle.
        ``None`` (the default) uses the Hermitian part ``(a + a^H) / 2``: the same values for
        a Hermitian ``a``, and a derivative that stays Hermitian.
    eps : float, optional, keyword-only
        The relative tie tolerance of the derivative: eigenvalues closer than
        ``eps * max|w|`` are treated as degenerate (default ``default_eps(dtype)``). It used
        to be the second positional argument: a number there raises a ``TypeError`` naming
        ``eps=``.

    Returns
    -------
    EighResult
        A named tuple ``(eigenvalues, eigenvectors)``: ``w`` (..., n) real, ascending, and
        ``V`` (..., n, n) with the eigenvectors as columns.

    Raises
    ------
    tenferro.errors.ShapeError
        ``a`` is not a (stack of) square matrix.
    tenferro.errors.DTypeError
        A dtype LAPACK does not support.

    Warns
    -----
    tenferro.errors.DegeneracyWarning
        A backward pass uses individual eigenvalues or the basis of a degenerate multiplet
        (no derivative exists there; see Notes).

    Notes
    -----
    Derivatives (design/linalg.md, "eigh"): ``dw = diag(V^H dA V)`` and the eigenvectors
    rotate with ``1/(w_j - w_i)``, exact off ties and 0 on ties. So gradients of losses that
    use whole eigenspaces (projectors, the trace of a function, any symmetric function of a
    multiplet's eigenvalues) are exact at degeneracies; a loss that uses one eigenvalue of a
    multiplet or its basis is reported (``DegeneracyWarning``).

    Gauge: the largest-magnitude entry of each eigenvector is real and positive; exactly
    degenerate blocks are rotated by a fixed generic unitary (so they differ from NumPy's
    basis). Complex inputs: gradients follow ``grad``'s convention.

    To apply a function to a Hermitian matrix, call ``funm`` (or ``expm(a,
    hermitian=True)``, ``sqrtm``, ``logm``, ``powm``) instead of composing ``eigh`` with an
    elementwise function: ``V diag(f(w)) V^H`` is smooth, but at a degenerate spectrum its
    derivative needs the divided differences of ``f`` that only ``funm`` computes.

    Examples
    --------
    >>> import tenferro as tf
    >>> h = tf.tensor([[2.0, 1.0], [1.0, 2.0]])
    >>> w, V = tf.linalg.eigh(h)
    >>> w
    tensor([1., 3.])
    >>> bool(tf.allclose(V @ tf.diag(w) @ V.T, h))
    True

    The gradient of the lowest eigenvalue is the projector on its eigenvector:

    >>> tf.grad(lambda h: tf.linalg.eigh(h).eigenvalues[0])(h)
    tensor([[ 0.5, -0.5],
            [-0.5,  0.5]])

    At a degenerate spectrum, a symmetric function of the multiplet is exact:

    >>> g = tf.grad(lambda h: tf.sum(tf.linalg.eigh(h).eigenvalues ** 2))(tf.eye(2))
    >>> bool(tf.allclose(g, 2 * tf.eye(2)))
    True
    """
    a = _triangle("eigh", _matrix("eigh", a, square=True), UPLO)
    w, v = bind(P.eigh_p, a, eps=_eps(eps, a.dtype))
    return _result(EighResult, (w, v))


def eigvalsh(a, UPLO: str | None = None, *, eps: float | None = None) -> Tensor:  # noqa: N803
    """Eigenvalues (ascending) of a Hermitian matrix; ``UPLO`` and ``eps`` as in ``eigh``."""
    a = _triangle("eigvalsh", _matrix("eigvalsh", a, square=True), UPLO)
    return bind(P.eigvalsh_p, a, eps=_eps(eps, a.dtype))


def _triangle(op: str, a: Tensor, uplo) -> Tensor:
    """The Hermitian matrix NumPy's ``UPLO`` reads from ``a`` (``None``: ``a`` itself, whose
    Hermitian part the primitive takes)."""
    if uplo is None:
        return a
    if not isinstance(uplo, str):
        raise DTypeError(
            f"{op}: the second argument is NumPy's UPLO ('L' or 'U'), got "
            f"{type(uplo).__name__} {uplo!r:.30}; the derivative's tie tolerance is the "
            f"keyword eps= (linalg.{op}(a, eps={uplo!r:.30}))."
        )
    if uplo.upper() not in ("L", "U"):
        raise DTypeError(f"{op}: UPLO must be 'L' or 'U', got {uplo!r:.20}.")
    n = a.shape[-1]
    keep = np.tril(np.ones((n, n), dtype=bool)) if uplo.upper() == "L" else np.triu(
        np.ones((n, n), dtype=bool))
    strict = keep & ~np.eye(n, dtype=bool)
    tri = where(keep, a, 0)
    # the strict triangle mirrored (conjugated) into the other one; the diagonal counted once
    return tri + _mH(where(strict, a, 0))


def cholesky(a, upper: bool = False) -> Tensor:
    """Cholesky factor of the Hermitian positive-definite part of ``a``: lower L with
    ``a = L @ L^H`` (or upper ``U = L^H`` with ``upper=True``)."""
    a = _matrix("cholesky", a, square=True)
    lo = bind(P.cholesky_p, a)
    return _mH(lo) if upper else lo


# ------------------------------------------------------------------------ solves
def _promote_pair(a, b):
    """Both operands as tensors of one inexact dtype (NumPy promotion)."""
    a = to_inexact(tensor_of(a))
    b = to_inexact(tensor_of(b, like=a))
    dt = np.result_type(a.dtype, b.dtype)
    return astype(a, dt), astype(b, dt)


def solve(a, b) -> Tensor:
    """Solve ``a @ x = b`` for square ``a`` (..., n, n). ``b`` is a vector (n,) or a batch of
    matrices (..., n, k) (NumPy 2 / array API semantics); batch axes broadcast."""
    a, b = _promote_pair(a, b)
    a = _matrix("solve", a, square=True)
    n = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        b = reshape(b, (b.shape[0], 1))
    if b.ndim < 2 or b.shape[-2] != n:
        raise ShapeError(
            f"solve: b of shape {b.shape if not vector else (b.shape[0],)} does not match a of "
            f"shape {a.shape}: b needs {n} rows ((n,) or (..., n, k))."
        )
    a, b = broadcast_batch("solve", a, b)
    x = bind(P.solve_p, a, b)
    return reshape(x, x.shape[:-1]) if vector else x


def inv(a) -> Tensor:
    """Matrix inverse. A singular matrix raises ``SingularMatrixError`` (use ``pinv``)."""
    a = _matrix("inv", a, square=True)
    return bind(P.inv_p, a)


def det(a) -> Tensor:
    """Determinant. Its derivative is the adjugate (``tr(adj(A) dA)``), exact and finite at
    every rank: at rank n - 1 it is the rank-one adjugate, at rank <= n - 2 it is 0. Second
    derivatives need an invertible matrix (``SingularMatrixError`` otherwise)."""
    a = _matrix("det", a, square=True)
    return bind(P.det_p, a)


def slogdet(a) -> SlogdetResult:
    """``(sign, log|det|)``; ``sign`` is a unit-modulus complex number for complex input.
    At a singular matrix the values are ``(0, -inf)``; the derivative there is infinite and
    raises ``SingularMatrixError`` (``det`` itself is differentiable everywhere)."""
    a = _matrix("slogdet", a, square=True)
    sign, logabs = bind(P.slogdet_p, a)
    return SlogdetResult(sign, logabs)


def pinv(a, rtol=None, hermitian: bool = False) -> Tensor:
    """Moore-Penrose pseudo-inverse through the SVD (or ``eigh`` with ``hermitian=True``).

    Singular values at or below ``rtol * S_max`` (default max(m, n) * machine eps) are treated
    as zero. The derivative is that of the pseudo-inverse at fixed rank (including the terms
    that couple to the null spaces)."""
    a = _matrix("pinv", a, square=hermitian)
    rt = _rtol(rtol, a)
    if hermitian:
        w, v = eigh(a)
        if w.shape[-1] == 0:
            return swapaxes(a, -1, -2)
        aw = abs(w)
        keep = aw > stop_gradient(rt * max(aw, -1, keepdims=True))
        winv = where(keep, 1.0 / where(keep, w, 1.0), 0.0)
        return matmul(v * expand_dims(astype(winv, a.dtype), -2), _mH(v))
    u, s, vh = svd(a)
    if s.shape[-1] == 0:
        return swapaxes(a, -1, -2)
    keep = s > stop_gradient(rt * max(s, -1, keepdims=True))
    sinv = where(keep, 1.0 / where(keep, s, 1.0), 0.0)
    return matmul(_mH(vh) * expand_dims(astype(sinv, a.dtype), -2), _mH(u))


# ------------------------------------------------------------------------- norms
_MATRIX_ORDS = (None, "fro", "f", "nuc", 1, -1, 2, -2, np.inf, -np.inf)


@named_argument_errors("norm")
def norm(x, ord=None, axis=None, keepdims: bool = False, *, p=None, dim=None,
         keepdim=None) -> Tensor:
    """Vector and matrix norms with NumPy's ``numpy.linalg.norm`` semantics; PyTorch's
    keywords ``p``/``dim``/``keepdim`` select PyTorch's ``torch.norm`` (``p`` a vector norm;
    over several axes only p = 2/'fro', where both agree, is accepted).

    ``axis`` an int: vector norm (``ord`` None/2, 1, inf, -inf, 0, or any real p). ``axis`` a
    pair: matrix norm (``ord`` None/'fro', 'nuc', 2, -2 (largest/smallest singular value),
    1, -1, inf, -inf). ``axis=None``: a vector norm for 1-D input, a matrix norm for 2-D input,
    and the Frobenius norm of the flattened input when ``ord`` is None.
    The 2-norm of the zero vector has derivative 0 (a subgradient).
    """
    if p is not None or dim is not None or keepdim is not None:
        axis, keepdims = _reduction_args("norm", axis, keepdims, dim, keepdim)
        if p is not None:
            if ord is not None:
                raise TypeError("norm: give ord or p, not both.")
            if p != "nuc":
                return _torch_vector_norm(x, 2 if p == "fro" else p, axis, keepdims)
            ord = p
    x = to_inexact(tensor_of(x))
    nd = x.ndim
    if axis is None:
        if ord is None or (ord in ("fro", "f") and nd == 2):
            out = safe_sqrt(sum(abs2(x), None, keepdims))
            return out
        if nd == 1:
            axis = (0,)
        elif nd == 2:
            axis = (0, 1)
        else:
            raise ShapeError(
                f"norm: ord={ord!r} needs a 1-D or 2-D input or an explicit axis; got shape "
                f"{x.shape}."
            )
    if isinstance(axis, (int, np.integer)):
        axis = (int(axis),)
    axis = tuple(int(ax) for ax in axis)
    if len(axis) == 1:
        return _vector_norm(x, ord, axis[0], keepdims)
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ShapeError(f"norm: axis must be an int or a pair of ints, got {axis!r}.")


def _torch_vector_norm(x, p, axis, keepdims):
    """PyTorch's ``norm(x, p, dim)``: the vector p-norm of the entries over ``dim`` (all axes
    by default) taken together, whatever their number."""
    x = to_inexact(tensor_of(x))
    axes = tuple(range(x.ndim)) if axis is None else normalize_axes("norm", axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, p, axes[0], keepdims)
    k = len(axes)
    m = moveaxis(x, axes, tuple(range(x.ndim - k, x.ndim)))
    out = _vector_norm(reshape(m, tuple(m.shape[:x.ndim - k]) + (-1,)), p, -1, False)
    return expand_dims(out, tuple(sorted(axes))) if keepdims else out


def _vector_norm(x, ord, axis, keepdims):
    if not -x.ndim <= axis < builtins.max(x.ndim, 1):
        raise ShapeError(f"norm: axis {axis} is out of range for shape {x.shape}.")
    if isinstance(ord, str):
        raise ShapeError(f"norm: ord={ord!r} is a matrix norm; pass a pair of axes.")
    if ord is None or ord == 2:
        return safe_sqrt(sum(abs2(x), axis, keepdims))
    a = abs(x)
    if ord == np.inf:
        return max(a, axis, keepdims)
    if ord == -np.inf:
        return min(a, axis, keepdims)
    if ord == 0:
        return sum(astype(a != 0, a.dtype), axis, keepdims)
    if ord == 1:
        return sum(a, axis, keepdims)
    ord = float(ord)
    if ord > 0:  # derivative 0 at the zero vector (and at zero entries for p < 1), as PyTorch
        powered = a**ord if ord >= 1 else _safe_pow(a, ord)
        return _safe_pow(sum(powered, axis, keepdims), 1.0 / ord)
    return sum(a**ord, axis, keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axis, keepdims):
    if ord not in _MATRIX_ORDS:
        raise ShapeError(
            f"norm: unsupported matrix norm ord={ord!r}; use None/'fro', 'nuc', 1, -1, 2, -2, "
            f"inf or -inf."
        )
    nd = x.ndim
    r, c = (ax % nd if -nd <= ax < nd else None for ax in axis)
    if r is None or c is None or r == c:
        raise ShapeError(f"norm: invalid matrix axes {axis} for shape {x.shape}.")
    m = moveaxis(x, (r, c), (-2, -1))
    if ord in (None, "fro", "f"):
        out = safe_sqrt(sum(abs2(m), (-2, -1)))
    elif ord == "nuc":
        out = sum(svdvals(m), -1)
    elif ord in (2, -2):
        s = svdvals(m)
        if s.shape[-1] == 0:
            raise ShapeError(f"norm: the {ord}-norm of an empty matrix is undefined.")
        out = max(s, -1) if ord == 2 else min(s, -1)
    elif ord in (1, -1):
        col = sum(abs(m), -2)
        out = max(col, -1) if ord == 1 else min(col, -1)
    else:
        row = sum(abs(m), -1)
        out = max(row, -1) if ord == np.inf else min(row, -1)
    if keepdims:
        out = expand_dims(out, tuple(sorted((r, c))))
    return out


# the Tensor surface's norm method, attached here as tenferro's ops attach the operators
Tensor.norm = norm
