"""Reductions over static axes: sum, max, min, prod, logical and/or; argmax/argmin;
cumulative sum. (The softmax family is in ``softmax.py``.)"""

from __future__ import annotations

from ..core import Primitive, ShapedArray, Zero
from ..dtypes import bool_, int64, is_inexact
from ..errors import DTypeError, ShapeError
from ..params import BOOL, INT, INTS
from . import _batching
from ._checks import check_axes, require_bool, require_real


def _reduced_shape(op, x, axes):
    check_axes(op, axes, x.ndim)
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _kept(x_ndim, axes):
    return tuple(i for i in range(x_ndim) if i not in axes)


reduce_sum_p = Primitive("reduce_sum", linear=True, validate_eager=False, params={"axes": INTS})


@reduce_sum_p.def_abstract_eval
def _sum_aval(x, *, axes):
    if x.dtype.kind == "b":
        raise DTypeError("reduce_sum: bool operand; convert to an integer dtype first.")
    return ShapedArray(_reduced_shape("reduce_sum", x, axes), x.dtype)


reduce_sum_p.def_impl(lambda xp, x, *, axes: xp.sum(x, axis=axes, dtype=x.dtype))
reduce_sum_p.def_jvp(
    lambda b, p, t, *, axes: (b.reduce_sum(p[0], axes), b.reduce_sum(t[0], axes))
)
reduce_sum_p.def_transpose(
    lambda b, ct, x, *, axes: (b.broadcast_in_dim(ct, x.shape, _kept(x.ndim, axes)),)
)


def _extremum(name, xp_name):
    p = Primitive(
        name, convention="ties share the gradient equally among all maximal (minimal) entries",
        params={"axes": INTS},
    )

    @p.def_abstract_eval
    def aval(x, *, axes):
        require_real(name, x)
        if x.dtype.kind == "b":
            raise DTypeError(f"{name}: bool operand; use any/all or cast first.")
        for a in axes:
            if 0 <= a < x.ndim and x.shape[a] == 0:
                raise ShapeError(f"{name}: cannot reduce over axis {a} of size 0 ({x}).")
        return ShapedArray(_reduced_shape(name, x, axes), x.dtype)

    p.def_impl(lambda xp, x, *, axes: getattr(xp, xp_name)(x, axis=axes))

    @p.def_jvp
    def jvp(b, primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        y = b.bind(p, x, axes=axes)
        if type(t) is Zero or not is_inexact(x.dtype):
            return y, Zero(ShapedArray(y.shape, y.dtype))
        kept = _kept(x.ndim, axes)
        hit = b.convert(b.eq(x, b.broadcast_in_dim(y, x.shape, kept)), x.dtype)
        count = b.broadcast_in_dim(b.reduce_sum(hit, axes), x.shape, kept)
        return y, b.reduce_sum(b.mul(t, b.div(hit, count)), axes)

    return p


reduce_max_p = _extremum("reduce_max", "max")
reduce_min_p = _extremum("reduce_min", "min")


reduce_prod_p = Primitive(
    "reduce_prod", validate_eager=False, params={"axes": INTS},
    convention="exact at zeros to every order: d prod / d x_i is the product of the others, "
    "computed by prefix/suffix scans rather than prod/x_i",
)


@reduce_prod_p.def_abstract_eval
def _prod_aval(x, *, axes):
    if x.dtype.kind == "b":
        raise DTypeError("reduce_prod: bool operand; convert to an integer dtype first.")
    return ShapedArray(_reduced_shape("reduce_prod", x, axes), x.dtype)


reduce_prod_p.def_impl(lambda xp, x, *, axes: xp.prod(x, axis=axes, dtype=x.dtype))


def _inclusive_cumprod_last(b, v):
    """Inclusive product scan along the last axis in log2(n) doubling steps."""
    n = v.shape[-1]
    nd = v.ndim
    shift = 1
    while shift < n:
        head = b.slice(v, (0,) * nd, tuple(v.shape[:-1]) + (n - shift,))
        shifted = b.pad(head, 1, tuple((0, 0, 0) for _ in range(nd - 1)) + ((shift, 0, 0),))
        v = b.mul(v, shifted)
        shift *= 2
    return v


def _exclusive_cumprod_last(b, v):
    n, nd = v.shape[-1], v.ndim
    inc = _inclusive_cumprod_last(b, v)
    head = b.slice(inc, (0,) * nd, tuple(v.shape[:-1]) + (n - 1,))
    return b.pad(head, 1, tuple((0, 0, 0) for _ in range(nd - 1)) + ((1, 0, 0),))


def product_of_others(b, x, axes):
    """For each entry, the product of all other entries along ``axes`` (no division)."""
    kept = _kept(x.ndim, axes)
    perm = kept + tuple(axes)
    xt = b.permute(x, perm)
    kshape = tuple(x.shape[i] for i in kept)
    ashape = tuple(x.shape[i] for i in axes)
    n = 1
    for d in ashape:
        n *= d
    v = b.reshape(xt, kshape + (n,))
    before = _exclusive_cumprod_last(b, v)
    after = b.flip(_exclusive_cumprod_last(b, b.flip(v, (v.ndim - 1,))), (v.ndim - 1,))
    others = b.reshape(b.mul(before, after), kshape + ashape)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return b.permute(others, tuple(inv))


@reduce_prod_p.def_jvp
def _prod_jvp(b, primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    y = b.reduce_prod(x, axes)
    if not axes:
        return y, t
    if type(t) is Zero or not is_inexact(x.dtype):
        return y, Zero(ShapedArray(y.shape, y.dtype))
    return y, b.reduce_sum(b.mul(t, product_of_others(b, x, axes)), axes)


def _logical(name, xp_name, empty):
    p = Primitive(name, differentiable=False, convention="boolean output: no gradient",
                  params={"axes": INTS})
    p.__doc__ = f"Logical reduction of a bool operand over ``axes`` ({empty} when empty)."

    @p.def_abstract_eval
    def aval(x, *, axes):
        require_bool(name, x)
        return ShapedArray(_reduced_shape(name, x, axes), bool_)

    p.def_impl(lambda xp, x, *, axes: getattr(xp, xp_name)(x, axis=axes))
    return p


reduce_and_p = _logical("reduce_and", "all", True)
reduce_or_p = _logical("reduce_or", "any", False)


def _arg(name, xp_name):
    p = Primitive(name, differentiable=False, convention="integer output: no gradient",
                  params={"axis": INT})

    @p.def_abstract_eval
    def aval(x, *, axis):
        require_real(name, x)
        check_axes(name, (axis,), x.ndim)
        if x.shape[axis] == 0:
            raise ShapeError(f"{name}: axis {axis} has size 0 ({x}).")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), int64)

    p.def_impl(lambda xp, x, *, axis: xp.astype(getattr(xp, xp_name)(x, axis=axis), int64))
    return p


argmax_p = _arg("argmax", "argmax")
argmin_p = _arg("argmin", "argmin")


cumsum_p = Primitive("cumsum", linear=True, params={"axis": INT, "reverse": BOOL})


@cumsum_p.def_abstract_eval
def _cumsum_aval(x, *, axis, reverse):
    check_axes("cumsum", (axis,), x.ndim)
    if x.dtype.kind == "b":
        raise DTypeError("cumsum: bool operand; convert to an integer dtype first.")
    return x


@cumsum_p.def_impl
def _cumsum_impl(xp, x, *, axis, reverse):
    if reverse:
        x = xp.flip(x, axis=axis)
    out = xp.cumulative_sum(x, axis=axis, dtype=x.dtype)
    return xp.flip(out, axis=axis) if reverse else out


cumsum_p.def_jvp(
    lambda b, p, t, *, axis, reverse: (
        b.cumsum(p[0], axis, reverse),
        b.cumsum(t[0], axis, reverse),
    )
)
cumsum_p.def_transpose(lambda b, ct, x, *, axis, reverse: (b.cumsum(ct, axis, not reverse),))

for _p in (reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p, reduce_and_p,
           reduce_or_p):
    _batching.axis_shift(_p, "axes")
for _p in (argmax_p, argmin_p, cumsum_p):
    _batching.axis_shift(_p, "axis")
del _p
