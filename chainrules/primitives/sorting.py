"""Sorting: ``argsort`` (a stable permutation, no derivative) and ``sort`` (the sorted
values, computed by the backend's fastest sort).

The derivative of ``sort`` follows the permutation: its JVP gathers the tangent with
``argsort(x)`` (only computed when differentiating), whose transpose scatters the cotangent
back. The permutation is *stable*: equal values keep their order, so ties are broken by index
and the derivative at a tie is well defined (each tied entry keeps its own derivative). Sorting
``x`` and permuting it by ``argsort(x)`` give the same values (ties are equal values), so the
fast unstable value sort and the stable permutation agree.
"""

from __future__ import annotations

import math

from ..core import Primitive, ShapedArray, Zero
from ..dtypes import int64
from ..errors import DTypeError, ShapeError
from ..params import INT, one_of
from . import _batching
from ._checks import check_axes, require_real


def _sort_cost(in_avals, out_avals, *, axis):
    """n log2(n) comparisons per sorted line."""

    x = in_avals[0]
    if not x.is_static:
        return None
    n = x.shape[axis]
    return int(x.size * max(math.log2(n), 1)) if n else 0


argsort_p = Primitive(
    "argsort", differentiable=False, cost=_sort_cost, params={"axis": INT},
    convention="integer output (a stable permutation: ties keep their order): no gradient",
)


@argsort_p.def_abstract_eval
def _argsort_aval(x, *, axis):
    require_real("argsort", x)
    if x.dtype.kind == "b":
        raise DTypeError("argsort: bool operand; convert it to an integer dtype first.")
    check_axes("argsort", (axis,), x.ndim)
    return ShapedArray(x.shape, int64)


@argsort_p.def_impl
def _argsort_impl(xp, x, *, axis):
    return xp.astype(xp.argsort(x, axis=axis, stable=True), int64)


def take_along(b, x, indices, axis):
    """``x`` gathered along ``axis`` at non-negative int64 ``indices`` (the shape of ``x``
    except, possibly, along ``axis``; NumPy's ``take_along_axis``), as one ``gather`` from the
    flattened ``x`` at positions sum_i coordinate_i * stride_i: linear in ``x``, its transpose
    scatters back through the indices."""
    shape, out_shape = tuple(x.shape), tuple(indices.shape)
    device = getattr(indices, "device", None)
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    flat = b.mul(indices, strides[axis]) if strides[axis] != 1 else indices
    for i, n in enumerate(out_shape):
        if i != axis and n != 1:
            coord = b.iota(out_shape, i, int64, device)
            flat = b.add(flat, b.mul(coord, strides[i]) if strides[i] != 1 else coord)
    size = 1
    for n in shape:
        size *= n
    return b.gather(b.reshape(x, (size,)), flat, 0)


sort_p = Primitive(
    "sort", cost=_sort_cost, params={"axis": INT},
    convention="the derivative follows the permutation: each sorted value carries the "
    "derivative of the entry it came from, ties broken by index (a stable sort), so tied "
    "entries keep their own derivatives",
)


@sort_p.def_abstract_eval
def _sort_aval(x, *, axis):
    _argsort_aval(x, axis=axis)
    return x


sort_p.def_impl(lambda xp, x, *, axis: xp.sort(x, axis=axis))


@sort_p.def_jvp
def _sort_jvp(b, primals, tangents, *, axis):
    (x,), (t,) = primals, tangents
    out = b.bind(sort_p, x, axis=axis)
    if type(t) is Zero:
        return out, t
    perm = b.bind(argsort_p, x, axis=axis)  # x[perm] == out: tied values are equal
    return out, take_along(b, t, perm, axis)

_batching.axis_shift(argsort_p, "axis")
_batching.axis_shift(sort_p, "axis")


searchsorted_p = Primitive(
    "searchsorted", differentiable=False, params={"side": one_of(("left", "right"))},
    convention="integer output (insertion positions): no gradient",
)
searchsorted_p.__doc__ = (
    "Insertion positions of ``values`` into the ascending 1-D ``sorted`` that keep it sorted "
    "(``side``: 'left', before equal entries, or 'right', after them); NaN sorts last. The "
    "output has the shape of ``values``."
)


@searchsorted_p.def_abstract_eval
def _searchsorted_aval(sorted_, values, *, side):
    require_real("searchsorted", sorted_)
    if sorted_.ndim != 1:
        raise ShapeError(f"searchsorted: the sorted operand must be 1-D, got {sorted_}.")
    if sorted_.dtype != values.dtype:
        raise DTypeError(f"searchsorted: operand dtypes differ ({sorted_}, {values}); the "
                         f"tenferro.searchsorted function promotes them.")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r}.")
    return ShapedArray(values.shape, int64)


@searchsorted_p.def_impl
def _searchsorted_impl(xp, sorted_, values, *, side):
    return xp.astype(xp.searchsorted(sorted_, values, side=side), int64)


@searchsorted_p.def_batch
def _searchsorted_batch(b, args, dims, *, side):
    (s, v), (ds, dv) = args, dims
    if ds is None:  # one sorted sequence for every member: search the batched values
        return [b.bind(searchsorted_p, s, v, side=side)], [dv]
    # a sorted sequence per member: count the entries before each value (NaN last)
    n = _batching.batch_size(args, dims)
    s = _batching.with_batch(b, s, ds, n)  # (n, k)
    v = _batching.with_batch(b, v, dv, n)  # (n, *m)
    k, nd = s.shape[1], v.ndim
    s_b = b.broadcast_in_dim(s, (n,) + tuple(v.shape[1:]) + (k,), (0, nd))
    v_b = b.broadcast_in_dim(v, tuple(v.shape) + (k,), tuple(range(nd)))
    before = b.lt(s_b, v_b) if side == "left" else b.le(s_b, v_b)
    nan_v = b.ne(v_b, v_b)  # NaN values go after every number (and, 'right', every NaN)
    nan_s = b.ne(s_b, s_b)
    if side == "left":
        before = b.logical_or(before, b.logical_and(nan_v, b.logical_not(nan_s)))
    else:
        before = b.logical_or(before, nan_v)
    return [b.reduce_sum(b.convert(before, int64), (nd,))], [0]
