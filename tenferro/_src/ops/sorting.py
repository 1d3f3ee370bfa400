"""Sorting: ``sort``, ``argsort``, ``partition`` and ``take_along_axis``.

Primitives ``sort`` and ``argsort`` (a stable permutation, no gradient); the derivative of a
sorted value is the derivative of the entry it came from (the JVP gathers with ``argsort``, the
transpose scatters the cotangent back through the permutation). Ties are broken by index
(stable sort), so at a tie each entry keeps its own derivative. Complex input raises: NumPy
orders complex numbers lexicographically, tenferro does not order them at all (sort
``x.real`` or ``abs(x)`` and gather with ``take_along_axis``).
"""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import int64
from chainrules.primitives.sorting import take_along

from ..core.dispatch import bind, dispatch
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ._base import broadcast_shapes_of, broadcast_to, normalize_axis, tensor_of
from .indexing import checked_index
from .shape import flip, reshape

__all__ = ["argsort", "partition", "sort", "take_along_axis"]


def _unordered(op: str, x) -> None:
    if x.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input ({x.dtype}) has no order in tenferro (NumPy sorts complex "
            f"numbers lexicographically); sort x.real or abs(x) and gather x with "
            f"take_along_axis(x, argsort(key), axis)."
        )
    if x.dtype.kind == "b":
        raise DTypeError(f"{op}: bool input; convert it with .astype(tenferro.int64) first.")


def _check_order(op: str, order) -> None:
    if order is not None:
        raise ShapeError(f"{op}: order= (structured arrays) is not supported.")


def _axis(op, x, axis):
    if axis is None:
        return reshape(x, (-1,)), 0
    return x, normalize_axis(op, axis, x.ndim)


def argsort(a, axis: int | None = -1, kind=None, order=None, *, descending: bool = False,
            stable=None) -> Tensor:
    """Indices that sort ``a`` along ``axis`` (flattened for ``axis=None``), int64; ascending,
    or ``descending`` (the array API's keyword; NaN then comes first).

    Always a stable sort: ties keep their order, in both directions (as NumPy's
    ``kind="stable"``); ``kind`` and ``stable`` are accepted for compatibility. Integer
    output: no derivative."""
    del kind, stable
    _check_order("argsort", order)
    x = tensor_of(a)
    _unordered("argsort", x)
    x, ax = _axis("argsort", x, axis)
    if not descending:
        return bind(P.argsort_p, x, axis=ax)
    # stable descending: sort the reversed axis, reverse back, and map the positions (ties
    # then keep their original order)
    p = bind(P.argsort_p, flip(x, ax), axis=ax)
    return (x.shape[ax] - 1) - flip(p, ax)


def sort(a, axis: int | None = -1, kind=None, order=None, *, descending: bool = False,
         stable=None) -> Tensor:
    """``a`` sorted along ``axis`` (flattened for ``axis=None``), ascending with NaN last, or
    ``descending`` (NaN first).

    Derivative: each sorted value carries the derivative of the entry it came from (the
    permutation is a constant); ties are broken by index (a stable sort, in both directions),
    so tied entries keep their own derivatives rather than sharing them."""
    del kind, stable
    _check_order("sort", order)
    x = tensor_of(a)
    _unordered("sort", x)
    x, ax = _axis("sort", x, axis)
    if descending:
        return take_along_axis(x, argsort(x, ax, descending=True), ax)
    return bind(P.sort_p, x, axis=ax)


def partition(a, kth, axis: int | None = -1, kind="introselect", order=None) -> Tensor:
    """A partition of ``a`` around position(s) ``kth``: the entry at ``kth`` is the one a full
    sort puts there, no entry before it is larger and none after it is smaller.

    tenferro returns the fully sorted array, one valid partition (NumPy's order inside the two
    parts is unspecified and differs). Derivative: as ``sort``."""
    del kind
    _check_order("partition", order)
    x = tensor_of(a)
    x, ax = _axis("partition", x, axis)
    n = x.shape[ax]
    for k in np.atleast_1d(np.asarray(kth)).ravel():
        if not -n <= int(k) < n:
            raise ShapeError(f"partition: kth={int(k)} is out of bounds for an axis of size {n}.")
    return sort(x, ax)


def take_along_axis(arr, indices, axis: int | None = -1) -> Tensor:
    """``arr`` gathered at ``indices`` along ``axis`` (NumPy semantics: ``indices`` has the
    rank of ``arr`` and broadcasts against it on the other axes; ``axis=None`` works on the
    flattened array). Linear in ``arr``: repeated indices accumulate their cotangents.

    Indices follow NumPy: ``-n <= i < n`` along ``axis`` (size ``n``), negative ones counting
    from the end; any other value raises ``IndexOutOfBoundsError`` (eager at once, under
    ``jit`` when the graph runs)."""
    return take_along_axis_named("take_along_axis", arr, indices, axis)


def take_along_axis_named(op: str, arr, indices, axis) -> Tensor:
    """``take_along_axis`` whose errors name ``op`` (PyTorch's ``gather`` spells it so)."""
    x = tensor_of(arr)
    idx = tensor_of(indices)
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"{op}: indices must be integers, got {idx.dtype}.")
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        ax = normalize_axis(op, axis, x.ndim)
    if idx.ndim != x.ndim:
        raise ShapeError(
            f"{op}: indices of shape {idx.shape} need the rank of arr "
            f"{x.shape} ({x.ndim}); add axes of length 1 with expand_dims."
        )
    bshape = list(x.shape)
    bshape[ax] = 1
    bshape = list(broadcast_shapes_of(op, tuple(bshape), idx.shape))
    bshape[ax] = idx.shape[ax]
    out_shape = tuple(bshape)
    # checked before the gather: it reads from the flattened array, where an index past
    # the axis would land in the next row
    idx = checked_index(f"{op} (axis {ax})", broadcast_to(idx, out_shape), x.shape[ax])
    if idx.dtype != int64:
        idx = idx.astype(int64)
    return _take_along(x, idx, ax)


def _take_along(x, idx, ax):
    """``take_along_axis`` for non-negative int64 ``idx`` of the output shape: ``x`` is
    broadcast to it on the other axes, then gathered (``chainrules``' ``take_along``)."""
    xs = broadcast_to(x, tuple(d if i == ax else idx.shape[i] for i, d in enumerate(x.shape)))
    return take_along(dispatch, xs, idx, ax)
