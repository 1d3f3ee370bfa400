"""Structured solves with SciPy's (and PyTorch's) names: triangular, Cholesky, Sylvester and
banded systems, differentiable in every operand.

They lower to ``triangular_solve`` (which reads only one triangle, so only that triangle gets a
derivative), ``cholesky``, ``solve`` and ``sylvester`` (``chainrules.primitives.linalg``), whose
JVP and transpose rules give every derivative in eager and traced mode. Batch axes broadcast.
"""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import astype, diag_embed, diagonal, eye, reshape, take, tensor_of, where
from ..ops._base import to_inexact
from ..ops.products import broadcast_batch
from .dense import _matrix, cholesky, solve

__all__ = [
    "cho_factor",
    "cho_solve",
    "cholesky_solve",
    "solve_banded",
    "solve_sylvester",
    "solve_triangular",
]

_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def _promote(*xs) -> list:
    xs = [to_inexact(tensor_of(x)) for x in xs]
    dt = np.result_type(*[x.dtype for x in xs])
    return [astype(x, dt) for x in xs]


def _rhs(op: str, b: Tensor, n: int, left: bool = True):
    """b as a stack of matrices, and whether it was a vector (SciPy accepts (n,))."""
    if b.ndim == 1:
        if b.shape[0] != n:
            raise ShapeError(f"{op}: b of shape {b.shape} does not match a ({n} x {n}): b "
                             f"needs {n} entries.")
        return reshape(b, (n, 1)), True
    axis = -2 if left else -1
    if b.ndim < 2 or b.shape[axis] != n:
        need = f"{n} rows ((n,) or (..., n, k))" if left else f"{n} columns ((..., k, n))"
        raise ShapeError(f"{op}: b of shape {b.shape} does not match a of shape ({n}, {n}): b "
                         f"needs {need}.")
    return b, False


def _unit(a: Tensor) -> Tensor:
    """``a`` with its diagonal replaced by ones (so the diagonal gets no derivative)."""
    d = diagonal(a, 0, -2, -1)
    return a - diag_embed(d) + eye(a.shape[-1], dtype=a.dtype)


def _trisolve(a, b, *, lower, left=True, transpose=False, conjugate=False):
    a, b = broadcast_batch("solve_triangular", a, b)
    return bind(P.triangular_solve_p, a, b, left_side=bool(left), lower=bool(lower),
                transpose_a=bool(transpose), conjugate_a=bool(conjugate))


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False, *,
                     upper: bool | None = None, left: bool | None = None,
                     unitriangular: bool | None = None) -> Tensor:
    """Solve ``op(a) x = b`` for triangular ``a`` (SciPy's ``scipy.linalg.solve_triangular``).

    Only the ``lower`` (default upper) triangle of ``a`` is read, so only it gets a gradient;
    ``unit_diagonal=True`` takes the diagonal as ones (it gets none). ``trans``: 0/'N' (a),
    1/'T' (a^T), 2/'C' (a^H). ``b``: (n,) or (..., n, k); batch axes broadcast.

    PyTorch's spelling ``solve_triangular(A, B, *, upper, left=True, unitriangular=False)`` is
    selected by the keyword ``upper=`` (required there, as in torch): ``left=False`` solves
    ``X A = B``. Mixing the two spellings raises a ``TypeError`` naming both.
    """
    torch_kw = upper is not None
    if not torch_kw and (left is not None or unitriangular is not None):
        raise TypeError(
            "solve_triangular: left=/unitriangular= are PyTorch's keywords and need upper= "
            "(torch.linalg.solve_triangular(A, B, *, upper, left=True, unitriangular=False)); "
            "SciPy's spelling is solve_triangular(a, b, trans=0, lower=False, "
            "unit_diagonal=False).")
    if torch_kw and (trans not in (0, "N") or lower or unit_diagonal):
        raise TypeError(
            "solve_triangular: give PyTorch's keywords (upper=, left=, unitriangular=) or "
            "SciPy's (trans, lower, unit_diagonal), not both.")
    if trans not in _TRANS:
        raise ValueError(f"solve_triangular: trans must be 0/'N', 1/'T' or 2/'C', got {trans!r}.")
    a, b = _promote(a, b)
    a = _matrix("solve_triangular", a, square=True)
    if torch_kw:
        lower, unit_diagonal, side = not upper, bool(unitriangular), left is not False
        if b.ndim < 2:
            raise ShapeError(f"solve_triangular: PyTorch's spelling (upper=) needs a matrix B "
                             f"(..., n, k), got shape {b.shape}; use B[..., None].")
    else:
        side = True
    transpose, conjugate = _TRANS[trans]
    if unit_diagonal:
        a = _unit(a)
    b, vector = _rhs("solve_triangular", b, a.shape[-1], left=side)
    x = _trisolve(a, b, lower=lower, left=side, transpose=transpose, conjugate=conjugate)
    return reshape(x, x.shape[:-1]) if vector else x


def cho_factor(a, lower: bool = False) -> tuple:
    """SciPy's ``cho_factor``: ``(c, lower)`` with ``c`` the Cholesky factor of the Hermitian
    positive-definite ``a`` in its ``lower`` (default upper) triangle and zeros in the other
    (SciPy leaves arbitrary values there). Like ``cholesky`` it factors the Hermitian part
    ``(a + a^H)/2`` (SciPy reads one triangle: the same for Hermitian ``a``), so the gradient
    is Hermitian. Pass the pair to ``cho_solve``."""
    a = _matrix("cho_factor", a, square=True)
    return cholesky(a, upper=not lower), bool(lower)


def cho_solve(c_and_lower: tuple, b) -> Tensor:
    """SciPy's ``cho_solve((c, lower), b)``: solve ``A x = b`` from ``cho_factor``'s factor
    (``A = L L^H`` or ``U^H U``) by two triangular solves, differentiable in ``c`` and ``b``.
    ``b``: (n,) or (..., n, k)."""
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: the first argument is the pair (c, lower) that cho_factor "
                        "returns.") from None
    c, b = _promote(c, b)
    c = _matrix("cho_solve", c, square=True)
    b, vector = _rhs("cho_solve", b, c.shape[-1])
    x = _cho(c, b, bool(lower))
    return reshape(x, x.shape[:-1]) if vector else x


def _cho(c, b, lower):
    if lower:  # L L^H x = b: L z = b, L^H x = z
        z = _trisolve(c, b, lower=True)
        return _trisolve(c, z, lower=True, transpose=True, conjugate=True)
    z = _trisolve(c, b, lower=False, transpose=True, conjugate=True)  # U^H z = b, U x = z
    return _trisolve(c, z, lower=False)


def cholesky_solve(B, L, upper: bool = False) -> Tensor:
    """PyTorch's ``torch.cholesky_solve(B, L, upper=False)``: solve ``A X = B`` with
    ``A = L L^H`` (or ``U^H U`` with ``upper=True``) given the Cholesky factor ``L``; note
    PyTorch's order (right-hand side first). ``B``: (..., n, k)."""
    L, B = _promote(L, B)
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise ShapeError(f"cholesky_solve: the factor L of shape {L.shape} must be square "
                         f"(..., n, n) (note the order: cholesky_solve(B, L)).")
    L = _matrix("cholesky_solve", L, square=True)
    if B.ndim < 2 or B.shape[-2] != L.shape[-1]:
        raise ShapeError(f"cholesky_solve: B of shape {B.shape} must be (..., n, k) with n = "
                         f"{L.shape[-1]} rows to match L of shape {L.shape} (note the order: "
                         f"cholesky_solve(B, L)).")
    return _cho(L, B, not upper)


def solve_sylvester(a, b, q) -> Tensor:
    """SciPy's ``solve_sylvester``: X with ``a X + X b = q`` (a: m x m, b: n x n, q: m x n;
    batch axes broadcast). Bartels-Stewart on the NumPy backend. The derivative is another
    Sylvester solve: dX solves ``a dX + dX b = dq - da X - X db``, and reverse mode solves the
    adjoint equation ``a^H Y + Y b^H = G`` (primitive ``sylvester``)."""
    a, b, q = _promote(a, b, q)
    a = _matrix("solve_sylvester", a, square=True)
    b = _matrix("solve_sylvester", b, square=True)
    q = _matrix("solve_sylvester", q)
    if q.shape[-2:] != (a.shape[-1], b.shape[-1]):
        raise ShapeError(f"solve_sylvester: q of shape {q.shape} must be (..., m, n) for a of "
                         f"shape {a.shape} and b of shape {b.shape}.")
    a, q = broadcast_batch("solve_sylvester", a, q)
    b, q = broadcast_batch("solve_sylvester", b, q)
    a, _ = broadcast_batch("solve_sylvester", a, q)
    return bind(P.sylvester_p, a, b, q)


def solve_banded(l_and_u: tuple, ab, b) -> Tensor:
    """SciPy's ``solve_banded((l, u), ab, b)``: solve ``a x = b`` for the banded matrix stored
    in ``ab`` (shape (l + u + 1, n), ``ab[u + i - j, j] = a[i, j]``). The band is expanded into
    the dense (n, n) matrix and solved with ``solve``: O(n^3), not LAPACK's O(n (l + u)^2), fine
    for the moderate n where a gradient is wanted; entries of ``ab`` outside the band (its
    unused corners) get zero gradient. ``b``: (n,) or (n, k)."""
    try:
        lo, up = (int(v) for v in l_and_u)
    except (TypeError, ValueError):
        raise TypeError(f"solve_banded: the first argument is the pair (l, u) of band widths, "
                        f"got {l_and_u!r}.") from None
    ab, b = _promote(ab, b)
    if lo < 0 or up < 0 or ab.ndim != 2 or ab.shape[0] != lo + up + 1:
        raise ShapeError(f"solve_banded: ab of shape {ab.shape} must be (l + u + 1, n) = "
                         f"({lo + up + 1}, n) for (l, u) = ({lo}, {up}).")
    n = ab.shape[1]
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    row = up + i - j
    inside = (row >= 0) & (row <= lo + up)
    flat = np.where(inside, row * n + j, 0).reshape(-1)
    dense = take(reshape(ab, (-1,)), tensor_of(flat.astype(np.int64)))
    dense = where(tensor_of(inside.reshape(-1)), dense, 0)
    return solve(reshape(dense, (n, n)), b)
