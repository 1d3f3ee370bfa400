"""Indexing: integer-array indexing along one axis (``gather``/``scatter_add``) and NumPy
basic indexing in one step (``basic_index``/``basic_index_transpose``, and assignment to a
basic index, ``basic_index_update``).

``gather`` (take) and its transpose ``scatter_add`` are the embedding-table pattern: repeated
indices in ``gather`` accumulate their cotangents in ``scatter_add``. Indices are integer
arrays and are never differentiated; they must lie in ``[0, n)``: the user-facing layer passes
index data through ``check_index`` first, which rejects out-of-range values (when the values
are known: eager at once, traced when the graph runs) and wraps negative ones.
"""

from __future__ import annotations

import functools

from ..core import Primitive, ShapedArray, Zero, is_undefined, no_flops
from ..dtypes import is_integer
from ..errors import DTypeError, IndexOutOfBoundsError, ShapeError, fmt_aval
from ..params import BASIC_SPEC, BOOL, INT, SHAPE, SIZE, TEXT
from . import _batching
from ._checks import check_axes


def _gather_shape(x, indices, axis):
    return tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :])


# ------------------------------------------------------------------ index data checks
check_index_p = Primitive(
    "check_index", differentiable=False,
    convention="integer indices, checked and normalised: no derivative",
    params={"size": SIZE, "wrap": BOOL, "op": TEXT, "what": TEXT, "hint": TEXT},
)
check_index_p.__doc__ = """Index data made safe to gather with: every value must lie in
``[-size, size)`` (``wrap=True``: negative values count from the end, NumPy's rule, and are
returned wrapped) or in ``[0, size)`` (``wrap=False``: class indices, PyTorch's rule);
anything else raises ``IndexOutOfBoundsError`` naming ``op`` and ``what`` (and ``hint``).
The check is two reductions over the indices, run where the values are: at once in eager
mode, when the graph runs in traced mode (indices are data). Without it a flattened gather
would silently read a neighbouring row."""


@check_index_p.def_abstract_eval
def _check_index_aval(indices, *, size, wrap, op, what, hint):
    if not is_integer(indices.dtype):
        raise DTypeError(f"{op}: {what} must be integers, got {fmt_aval(indices)}.")
    return indices


def checked_indices(xp, indices, size: int, wrap: bool, op: str, what: str, hint: str = ""):
    """``indices`` with every value in ``[0, size)`` (see ``check_index_p``): the array itself
    when it already is, negative values wrapped when ``wrap``; else raises."""
    n = 1
    for d in indices.shape:
        n *= d
    if n == 0:
        return indices
    lo, hi = int(xp.min(indices)), int(xp.max(indices))
    if lo >= 0 and hi < size:
        return indices
    low = -size if wrap else 0
    if lo < low or hi >= size:
        bad = hi if hi >= size else lo
        valid = f"{low}..{size - 1}" if size else "none, the axis is empty"
        neg = "; negative values count from the end" if wrap and size else ""
        raise IndexOutOfBoundsError(f"{op}: {what} {bad} is out of bounds (valid: {valid}{neg})."
                                    + (f" {hint}" if hint else ""))
    return xp.where(indices < 0, indices + size, indices)


check_index_p.def_impl(
    lambda xp, indices, *, size, wrap, op, what, hint:
    checked_indices(xp, indices, size, wrap, op, what, hint)
)
_batching.elementwise(check_index_p)


gather_p = Primitive("gather", linear=True, cost=no_flops, params={"axis": INT})


@gather_p.def_abstract_eval
def _gather_aval(x, indices, *, axis):
    check_axes("gather", (axis,), x.ndim)
    if not is_integer(indices.dtype):
        raise DTypeError(f"gather: indices must be integers, got {fmt_aval(indices)}.")
    return ShapedArray(_gather_shape(x, indices, axis), x.dtype)


@gather_p.def_impl
def _gather_impl(xp, x, indices, *, axis):
    flat = xp.reshape(indices, (-1,))
    out = xp.take(x, flat, axis=axis)
    return xp.reshape(out, _gather_shape(x, indices, axis))


@gather_p.def_jvp
def _gather_jvp(b, primals, tangents, *, axis):
    (x, idx), (t, _) = primals, tangents
    return b.gather(x, idx, axis), b.gather(t, idx, axis)


@gather_p.def_transpose
def _gather_transpose(b, ct, x, indices, *, axis):
    if is_undefined(indices):
        raise DTypeError("gather: indices are not differentiable.")
    if type(ct) is Zero:
        return Zero(x.aval), None
    return b.scatter_add(b.zeros_like(x), indices, ct, axis), None


scatter_add_p = Primitive("scatter_add", linear=True, convention="repeated indices accumulate",
                          params={"axis": INT})


@scatter_add_p.def_abstract_eval
def _scatter_aval(operand, indices, updates, *, axis):
    check_axes("scatter_add", (axis,), operand.ndim)
    if not is_integer(indices.dtype):
        raise DTypeError(f"scatter_add: indices must be integers, got {fmt_aval(indices)}.")
    want = _gather_shape(operand, indices, axis)
    if tuple(updates.shape) != want or updates.dtype != operand.dtype:
        raise ShapeError(
            f"scatter_add: updates {fmt_aval(updates)} must have shape {want} and dtype of the "
            f"operand {fmt_aval(operand)} for indices {fmt_aval(indices)} on axis {axis}."
        )
    return operand


scatter_add_p.def_impl(
    lambda xp, operand, indices, updates, *, axis: xp.scatter_add(operand, indices, updates, axis)
)


@scatter_add_p.def_jvp
def _scatter_jvp(b, primals, tangents, *, axis):
    (op, idx, up), (top, _, tup) = primals, tangents
    return b.scatter_add(op, idx, up, axis), b.scatter_add(top, idx, tup, axis)


@scatter_add_p.def_transpose
def _scatter_transpose(b, ct, operand, indices, updates, *, axis):
    ct_op = ct if is_undefined(operand) else None
    ct_up = b.gather(ct, indices, axis) if is_undefined(updates) else None
    return ct_op, None, ct_up


# ------------------------------------------------------------------------ basic indexing
# NumPy basic indexing in one primitive: ``spec`` has one entry per output-producing index
# element, in order: an int (a dropped axis), ``(start, stop, step)`` (a slice with resolved
# bounds; ``stop`` is None for a reversed slice running to the front) or None (a new axis),
# after ``...`` is expanded and missing trailing axes are filled with full slices. One
# dispatch, and a view in NumPy: what ``x[0]`` costs in eager code. (The slice/reshape
# lowering in ``tenferro.ops.indexing`` serves run-time sizes.)
@functools.lru_cache(maxsize=4096)
def basic_index_key(spec: tuple) -> tuple:
    """The Python index object for ``spec`` (cached: specs repeat)."""
    return tuple(slice(*e) if type(e) is tuple else e for e in spec)


def _basic_index_shape(shape, spec):
    out, axis = [], 0
    for e in spec:
        if e is None:
            out.append(1)
            continue
        if type(e) is tuple:
            out.append(len(range(*basic_index_key((e,))[0].indices(shape[axis]))))
        axis += 1
    return tuple(out)


def _check_spec(op, x, spec):
    consumed = sum(e is not None for e in spec)
    if consumed != x.ndim:
        raise ShapeError(f"{op}: the index addresses {consumed} axes of a rank-{x.ndim} operand.")
    axis = 0
    for e in spec:
        if e is None:
            continue
        d = x.shape[axis]
        if type(e) is int and not 0 <= e < d:
            raise ShapeError(f"{op}: index {e} is out of range for axis {axis} of size {d}.")
        axis += 1


basic_index_p = Primitive("basic_index", linear=True, cost=no_flops, validate_eager=False,
                          convention="NumPy basic indexing (ints, slices, new axes)",
                          params={"spec": BASIC_SPEC})


@basic_index_p.def_abstract_eval
def _basic_index_aval(x, *, spec):
    _check_spec("basic_index", x, spec)
    return ShapedArray(_basic_index_shape(x.shape, spec), x.dtype)


basic_index_p.def_impl(lambda xp, x, *, spec: x[basic_index_key(spec)])
basic_index_p.def_jvp(
    lambda b, p, t, *, spec: (b.bind(basic_index_p, p[0], spec=spec),
                              t[0] if type(t[0]) is Zero
                              else b.bind(basic_index_p, t[0], spec=spec))
)


@basic_index_p.def_transpose
def _basic_index_transpose(b, ct, x, *, spec):
    if type(ct) is Zero:
        return (Zero(x.aval),)
    return (b.bind(basic_index_transpose_p, ct, spec=spec, shape=tuple(x.shape)),)


basic_index_transpose_p = Primitive(
    "basic_index_transpose", linear=True, params={"spec": BASIC_SPEC, "shape": SHAPE},
    convention="zeros of ``shape`` with the operand placed at the basic index ``spec`` "
    "(the transpose of basic_index)",
)


@basic_index_transpose_p.def_abstract_eval
def _basic_index_t_aval(ct, *, spec, shape):
    _check_spec("basic_index_transpose", ShapedArray(shape, ct.dtype), spec)
    want = _basic_index_shape(shape, spec)
    if tuple(ct.shape) != want:
        raise ShapeError(f"basic_index_transpose: operand {fmt_aval(ct)} does not fit the index "
                         f"(expected shape {want}).")
    return ShapedArray(shape, ct.dtype)


@basic_index_transpose_p.def_impl
def _basic_index_t_impl(xp, ct, *, spec, shape):
    out = xp.zeros(shape, dtype=ct.dtype)
    if None in spec:  # new axes have size 1: drop them (array API setitem takes no None)
        spec = tuple(e for e in spec if e is not None)
        ct = xp.reshape(ct, _basic_index_shape(shape, spec))
    out[basic_index_key(spec)] = ct
    return out


basic_index_transpose_p.def_jvp(
    lambda b, p, t, *, spec, shape: (
        b.bind(basic_index_transpose_p, p[0], spec=spec, shape=shape),
        t[0] if type(t[0]) is Zero
        else b.bind(basic_index_transpose_p, t[0], spec=spec, shape=shape))
)
basic_index_transpose_p.def_transpose(
    lambda b, ct, x, *, spec, shape: (
        Zero(x.aval) if type(ct) is Zero else b.bind(basic_index_p, ct, spec=spec),)
)


basic_index_update_p = Primitive(
    "basic_index_update", linear=True, params={"spec": BASIC_SPEC},
    convention="a copy of x with the basic index ``spec`` replaced by v: linear in (x, v) "
    "jointly; the replaced entries of x get no gradient",
)
basic_index_update_p.__doc__ = """``x`` with ``x[spec] = v`` (functional), for a NumPy basic
index ``spec`` (see ``basic_index``); ``v`` has exactly the shape ``x[spec]`` has. One call
where the general scatter path takes a dozen: what element assignment in an eager loop costs.
Transpose: the cotangent with the region zeroed for ``x``, ``ct[spec]`` for ``v``."""


@basic_index_update_p.def_abstract_eval
def _basic_index_update_aval(x, v, *, spec):
    _check_spec("basic_index_update", x, spec)
    want = _basic_index_shape(x.shape, spec)
    if tuple(v.shape) != want or v.dtype != x.dtype:
        raise ShapeError(f"basic_index_update: value {fmt_aval(v)} must have the shape {want} "
                         f"of the indexed region and the dtype of the operand {fmt_aval(x)}; "
                         f"broadcast and cast it first (tenferro's x[idx] = v does).")
    return x


@basic_index_update_p.def_impl
def _basic_index_update_impl(xp, x, v, *, spec):
    out = xp.asarray(x, copy=True)
    if None in spec:  # new axes have size 1: drop them (array API setitem takes no None)
        spec = tuple(e for e in spec if e is not None)
        v = xp.reshape(v, _basic_index_shape(x.shape, spec))
    out[basic_index_key(spec)] = v
    return out


@basic_index_update_p.def_jvp
def _basic_index_update_jvp(b, primals, tangents, *, spec):
    (x, v), (tx, tv) = primals, tangents
    out = b.bind(basic_index_update_p, x, v, spec=spec)
    if type(tx) is Zero and type(tv) is Zero:
        return out, tx
    return out, b.bind(basic_index_update_p, b.instantiate(tx), b.instantiate(tv), spec=spec)


@basic_index_update_p.def_transpose
def _basic_index_update_transpose(b, ct, x, v, *, spec):
    if type(ct) is Zero:
        return (Zero(x.aval) if is_undefined(x) else None,
                Zero(v.aval) if is_undefined(v) else None)
    ct_x = (b.bind(basic_index_update_p, ct, b.zeros_like(v), spec=spec)
            if is_undefined(x) else None)
    ct_v = b.bind(basic_index_p, ct, spec=spec) if is_undefined(v) else None
    return ct_x, ct_v


# ----------------------------------------------------------------------- batching
def _flat_batched(b, x, indices, axis):
    """Per-member indices into a per-member operand as one gather/scatter on a flattened
    operand: the operand's axis ``axis + 1`` (after the batch axis 0) is moved next to the
    batch and merged with it, and member ``i``'s indices are offset by ``i * n``. Returns the
    flattened operand, the offset indices and the permutation used."""
    n = x.shape[axis + 1]
    perm = [0, axis + 1] + [i for i in range(1, x.ndim) if i != axis + 1]
    xt = b.permute(x, perm)
    flat = b.reshape(xt, (xt.shape[0] * n,) + tuple(xt.shape[2:]))
    offs = b.mul(b.iota(indices.shape, 0, indices.dtype), b.full(indices.shape, n, indices.dtype))
    return flat, b.add(indices, offs), perm


@gather_p.def_batch
def _gather_batch(b, args, dims, *, axis):
    (x, idx), (dx, di) = args, dims
    if di is None:
        x = _batching.move_axis(b, x, dx, 0)
        return [b.gather(x, idx, axis + 1)], [0]
    if dx is None:  # shared operand: the index axes land at ``axis``
        return [b.gather(x, idx, axis)], [axis + di]
    x, idx = _batching.move_axis(b, x, dx, 0), _batching.move_axis(b, idx, di, 0)
    flat, fidx, _ = _flat_batched(b, x, idx, axis)
    out = b.gather(flat, fidx, 0)  # (B, *idx, pre..., post...)
    k = idx.ndim - 1  # index axes per member
    pre = axis  # operand axes before ``axis``, per member
    perm = ([0] + list(range(1 + k, 1 + k + pre)) + list(range(1, 1 + k))
            + list(range(1 + k + pre, out.ndim)))
    return [b.permute(out, perm)], [0]


@scatter_add_p.def_batch
def _scatter_batch(b, args, dims, *, axis):
    (op, idx, up), (dop, di, dup) = args, dims
    n = _batching.batch_size(args, dims)
    op, up = _batching.with_batch(b, op, dop, n), _batching.with_batch(b, up, dup, n)
    if di is None:
        return [b.scatter_add(op, idx, up, axis + 1)], [0]
    idx = _batching.move_axis(b, idx, di, 0)
    flat, fidx, perm = _flat_batched(b, op, idx, axis)
    k = idx.ndim - 1
    # updates (B, pre..., *idx, post...) -> (B, *idx, pre..., post...) to match the flat gather
    uperm = ([0] + list(range(1 + axis, 1 + axis + k)) + list(range(1, 1 + axis))
             + list(range(1 + axis + k, up.ndim)))
    out = b.scatter_add(flat, fidx, b.permute(up, uperm), 0)
    xt_shape = tuple(op.shape[i] for i in perm)
    out = b.reshape(out, xt_shape)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return [b.permute(out, inv)], [0]


_FULL = (None, None, None)  # the whole batch axis as a basic-index slice


@basic_index_p.def_batch
def _basic_index_batch(b, args, dims, *, spec):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    return [b.bind(basic_index_p, x, spec=(_FULL,) + tuple(spec))], [0]


@basic_index_update_p.def_batch
def _basic_index_update_batch(b, args, dims, *, spec):
    x, v = _batching.all_at_front(b, args, dims)
    return [b.bind(basic_index_update_p, x, v, spec=(_FULL,) + tuple(spec))], [0]


@basic_index_transpose_p.def_batch
def _basic_index_t_batch(b, args, dims, *, spec, shape):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    return [b.bind(basic_index_transpose_p, x, spec=(_FULL,) + tuple(spec),
                   shape=(x.shape[0],) + tuple(shape))], [0]
