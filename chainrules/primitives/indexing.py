"""Integer-array indexing along one axis: ``gather`` (take) and its transpose ``scatter_add``.

This is the embedding-table pattern: repeated indices in ``gather`` accumulate their
cotangents in ``scatter_add``. Indices are integer arrays and are never differentiated; they
must lie in ``[0, n)`` (the user-facing layer wraps negative indices).
"""

from __future__ import annotations

from ..core import Primitive, ShapedArray, Zero, is_undefined, no_flops
from ..dtypes import is_integer
from ..errors import DTypeError, ShapeError, fmt_aval
from ._checks import check_axes


def _gather_shape(x, indices, axis):
    return tuple(x.shape[:axis]) + tuple(indices.shape) + tuple(x.shape[axis + 1 :])


gather_p = Primitive("gather", linear=True, cost=no_flops)


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


scatter_add_p = Primitive("scatter_add", linear=True, convention="repeated indices accumulate")


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
