"""The array API standard's ``linalg`` extension functions that are not decompositions:
``vector_norm``, ``matrix_norm``, ``trace``, ``diagonal`` (over the last two axes, unlike
NumPy's top-level ``trace``/``diagonal``), ``cross`` (3-vectors along ``axis``), and the
extension's copies of top-level functions (``matmul``, ``matrix_transpose``, ``outer``,
``tensordot``, ``vecdot``). All are compositions of primitives: differentiable like them.
"""

from __future__ import annotations

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import cross as _cross
from ..ops import diagonal as _diagonal
from ..ops import (  # the extension's copies of top-level functions
    matmul,
    matrix_transpose,
    moveaxis,
    outer,
    reshape,
    sum,
    tensordot,
    vecdot,
)
from ..ops._base import normalize_axes, tensor_of, to_inexact
from .dense import _matrix_norm, _vector_norm

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_transpose", "outer",
           "tensordot", "trace", "vecdot", "vector_norm"]


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2) -> Tensor:
    """The vector ``ord``-norm over ``axis`` (an int, a tuple of axes taken together as one
    vector, or None: all entries). ``ord``: any real p, ``inf``, ``-inf``, 0 (the count of
    nonzeros). The derivative at the zero vector is 0 (a subgradient), as ``norm``."""
    x = to_inexact(tensor_of(x))
    nd = x.ndim
    axes = normalize_axes("vector_norm", axis, nd)
    if nd == 0:  # a 0-d tensor is a vector of one entry
        return _vector_norm(reshape(x, (1,)), ord, 0, False)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    # several axes: one vector made of them, moved to the end and flattened
    kept = [i for i in range(nd) if i not in axes]
    moved = moveaxis(x, axes, tuple(range(len(kept), nd)))
    flat = reshape(moved, tuple(x.shape[i] for i in kept) + (-1,))
    out = _vector_norm(flat, ord, -1, False)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro") -> Tensor:
    """The matrix norm of the last two axes: ``ord`` 'fro', 'nuc', 1, -1, 2, -2, inf, -inf
    (NumPy's meanings)."""
    x = to_inexact(tensor_of(x))
    if x.ndim < 2:
        raise ShapeError(f"matrix_norm: expected a stack of matrices (..., m, n), got shape "
                         f"{tuple(x.shape)}.")
    return _matrix_norm(x, ord, (x.ndim - 2, x.ndim - 1), keepdims)


def trace(x, /, *, offset: int = 0, dtype=None) -> Tensor:
    """The sum of diagonal ``offset`` of the last two axes, for every matrix of the stack
    (the array API's ``linalg.trace``; ``tenferro.trace`` is NumPy's, over axes 0 and 1).
    Accumulates like ``sum``. Linear."""
    x = tensor_of(x)
    if x.ndim < 2:
        raise ShapeError(f"trace: expected a stack of matrices (..., m, n), got shape "
                         f"{tuple(x.shape)}.")
    return sum(_diagonal(x, offset, -2, -1), -1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0) -> Tensor:
    """Diagonal ``offset`` of the last two axes, for every matrix of the stack (the array
    API's ``linalg.diagonal``; ``tenferro.diagonal`` is NumPy's, over axes 0 and 1)."""
    x = tensor_of(x)
    if x.ndim < 2:
        raise ShapeError(f"diagonal: expected a stack of matrices (..., m, n), got shape "
                         f"{tuple(x.shape)}.")
    return _diagonal(x, offset, -2, -1)


def cross(x1, x2, /, *, axis: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``axis`` (broadcasting the other axes; the array
    API's ``linalg.cross``). Bilinear."""
    a, b = tensor_of(x1), tensor_of(x2)
    for t in (a, b):
        if t.ndim == 0 or not -t.ndim <= axis < t.ndim or t.shape[axis] != 3:
            raise ShapeError(f"cross: axis {axis} of both operands must have length 3; got "
                             f"shapes {tuple(a.shape)} and {tuple(b.shape)}.")
    return _cross(a, b, axis=axis)

