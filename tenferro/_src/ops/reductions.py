"""Reductions: sum, mean, prod, max, min, arg-extrema, cumulative sums, norms, logsumexp."""

from __future__ import annotations

import builtins

import numpy as np

from chainrules import primitives as P
from chainrules.primitives.reductions import _inclusive_cumprod_last

from ..caches import BoundedCache
from ..core.dispatch import bind, dispatch
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor, _reduction_args
from ..errors import DTypeError, ShapeError
from ._base import (
    astype,
    normalize_axes,
    normalize_axis,
    operands,
    reduction_axes,
    tensor_of,
    to_inexact,
)
from .elementwise import (
    abs,
    abs2,
    divide,
    exp,
    isfinite,
    log,
    not_equal,
    sign,
    sqrt,
    subtract,
    where,
)
from .misc import stop_gradient
from .shape import concatenate, diagonal, moveaxis, reshape


def _keep(x_out, axes, in_shape, keepdims):
    if not keepdims:
        return x_out
    shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return reshape(x_out, shape)


_SUM_AXES = BoundedCache("eager sum axes", 4096)


def _accumulator(x, dtype):
    """``x`` cast to the dtype its sum or product accumulates in: ``dtype`` when given, else
    int64 for bools and signed integers, uint64 for unsigned ones (the array API standard's and
    NumPy's rule), ``x``'s own for floating point."""
    if dtype is not None:
        return astype(x, dtype)
    dt = x.dtype
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 8):
        return astype(x, np.int64)
    if dt.kind == "u" and dt.itemsize < 8:
        return astype(x, np.uint64)
    return x


def sum(x, axis=None, keepdims=False, dtype=None, *, dim=None, keepdim=None) -> Tensor:
    """Sum over ``axis`` (PyTorch's ``dim``; default all). Bools and signed integers sum as
    int64, unsigned ones as uint64, unless ``dtype`` says otherwise."""
    if dim is not None or keepdim is not None:
        axis, keepdims = _reduction_args("sum", axis, keepdims, dim, keepdim)
    if (type(x) is EagerTensor and dtype is None and not keepdims
            and (axis is None or axis.__class__ is int)):  # x.sum(), x.sum(0): one bind
        v = x._value
        key = (axis, v.shape, x._backend, v.dtype)  # the device first: dtypes of two
        # backends must not be compared (array_api_strict warns)
        axes = _SUM_AXES.get(key)
        if axes is None:
            dt = x.dtype
            if dt.kind in "fc" or (dt.kind in "iu" and dt.itemsize == 8):  # no promotion
                axes = _SUM_AXES.put(key, reduction_axes("sum", axis, v.ndim))
        if axes is not None:
            return bind(P.reduce_sum_p, x, axes=axes) if axes else x
    x = _accumulator(tensor_of(x), dtype)
    shape = x.shape
    axes = reduction_axes("sum", axis, len(shape))
    out = bind(P.reduce_sum_p, x, axes=axes) if axes else x
    return _keep(out, axes, shape, keepdims)


_MEAN_PLANS = BoundedCache("eager mean plans", 4096)


def _mean_plan(x, axis):
    """``(axes, divisor)`` of an eager float/complex mean over ``axis`` (None or an int),
    cached per (axis, shape, dtype, device): the divisor is a constant holding the count, of
    the sum's shape and ``x``'s dtype (what ``divide(total, n)`` would build). ``None`` for
    other dtypes (they promote first)."""
    v = x._value
    key = (axis, v.shape, x._backend, v.dtype)  # device before dtype (see sum)
    plan = _MEAN_PLANS.get(key)
    if plan is None:
        dt = x.dtype
        if dt.kind not in "fc":
            return None
        shape = v.shape
        axes = reduction_axes("mean", axis, len(shape))  # raises the named error
        n = 1
        for a in axes:
            n *= shape[a]
        kept = tuple(d for i, d in enumerate(shape) if i not in axes)
        b = x._backend
        plan = _MEAN_PLANS.put(key, (axes, _wrap(b.xp.constant(kept, n, dt), b)))
    return plan


def mean(x, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """Arithmetic mean over ``axis`` (PyTorch's ``dim``; all axes by default); integers
    promote to float64."""
    if dim is not None or keepdim is not None:
        axis, keepdims = _reduction_args("mean", axis, keepdims, dim, keepdim)
    if (type(x) is EagerTensor and not keepdims
            and (axis is None or axis.__class__ is int)):  # x.mean(), x.mean(0): two binds
        plan = _mean_plan(x, axis)
        if plan is not None:
            axes, divisor = plan
            return bind(P.div_p, bind(P.reduce_sum_p, x, axes=axes) if axes else x, divisor)
    x = to_inexact(tensor_of(x))
    shape = x.shape
    axes = reduction_axes("mean", axis, len(shape))
    n = 1
    for a in axes:
        n *= shape[a]
    # sum's body without its second coercion and axis lookup (x is already inexact)
    total = _keep(bind(P.reduce_sum_p, x, axes=axes) if axes else x, axes, shape, keepdims)
    return divide(total, n)


def prod(x, axis=None, keepdims=False, dtype=None, *, dim=None, keepdim=None) -> Tensor:
    """Product over ``axis`` (PyTorch's ``dim``; default all), accumulated like ``sum``
    (``dtype``, else int64 / uint64 for integers); its derivative is exact at zeros (no
    division by the entries)."""
    if dim is not None or keepdim is not None:
        axis, keepdims = _reduction_args("prod", axis, keepdims, dim, keepdim)
    x = _accumulator(tensor_of(x), dtype)
    axes = reduction_axes("prod", axis, x.ndim)
    out = bind(P.reduce_prod_p, x, axes=axes) if axes else x
    return _keep(out, axes, x.shape, keepdims)


def _ordered(name, x):
    """Extrema and sorting need an order: complex input raises (NumPy orders complex numbers
    lexicographically; tenferro does not order them)."""
    if x.dtype.kind == "c":
        raise DTypeError(
            f"{name}: complex input ({x.dtype}) has no order in tenferro (NumPy compares complex "
            f"numbers lexicographically); apply {name} to abs(x), x.real or x.imag."
        )


def _extremum(prim, name):
    def f(x, axis=None, keepdims=False):
        x = tensor_of(x)
        _ordered(name, x)
        axes = reduction_axes(name, axis, x.ndim)
        out = bind(prim, x, axes=axes) if axes else x
        return _keep(out, axes, x.shape, keepdims)

    f.__name__ = name
    f.__doc__ = (
        f"``{name}`` over ``axis`` (default all). Ties share the gradient equally among all "
        f"extremal entries. Complex input raises ``DTypeError`` (no order; NumPy's is "
        f"lexicographic)."
    )
    return f


max = _extremum(P.reduce_max_p, "max")
min = _extremum(P.reduce_min_p, "min")
amax, amin = max, min


def _arg(prim, name):
    def f(x, axis=None, keepdims=False):
        x = tensor_of(x)
        _ordered(name, x)
        nd = x.ndim
        if axis is None:
            out = bind(prim, reshape(x, (-1,)), axis=0)
            return reshape(out, (1,) * nd) if keepdims else out
        ax = normalize_axis(name, axis, nd)
        out = bind(prim, x, axis=ax)
        return _keep(out, (ax,), x.shape, keepdims)

    f.__name__ = name
    f.__doc__ = (
        f"Index of the {name[3:]}imum along ``axis`` (of the flattened tensor by default; the "
        f"first one at ties; NaN counts as the {name[3:]}imum, as NumPy), int64, no "
        f"derivative. ``keepdims`` keeps the reduced axis (all axes for ``axis=None``) with "
        f"length 1. Complex input raises ``DTypeError``."
    )
    return f


argmax = _arg(P.argmax_p, "argmax")
argmin = _arg(P.argmin_p, "argmin")


def _logical(prim, name, what):
    def f(x, axis=None, keepdims=False):
        x = tensor_of(x)
        if x.dtype.kind != "b":
            x = not_equal(x, 0)  # nonzero (and NaN) is True, as NumPy
        axes = reduction_axes(name, axis, x.ndim)
        out = bind(prim, x, axes=axes) if axes else x
        return _keep(out, axes, x.shape, keepdims)

    f.__name__ = name
    f.__doc__ = (f"Whether {what} entry along ``axis`` (default all) is true (nonzero, NaN "
                 f"included); an empty reduction gives {name == 'all'}. Boolean result: no "
                 f"gradient.")
    return f


all = _logical(P.reduce_and_p, "all", "every")
any = _logical(P.reduce_or_p, "any", "some")


def cumsum(x, axis=None, dtype=None, *, reverse=False, dim=None) -> Tensor:
    """Cumulative sum along ``axis`` (PyTorch's ``dim``; of the flattened tensor by default:
    NumPy's ``cumsum``), accumulated like ``sum``; ``reverse`` sums from the end."""
    if dim is not None:
        axis = _reduction_args("cumsum", axis, False, dim, None)[0]
    x = _accumulator(tensor_of(x), dtype)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    return bind(P.cumsum_p, x, axis=normalize_axis("cumsum", axis, x.ndim), reverse=reverse)


def _scan_axis(op, x, axis):
    """``(x, axis)`` for a cumulative function: ``axis=None`` is allowed for 1-D (and 0-d,
    treated as 1-D) input only, as the array API standard asks."""
    if axis is None:
        if x.ndim > 1:
            raise ShapeError(f"{op}: axis=None needs a 1-D tensor, got shape "
                             f"{tuple(x.shape)}; give the axis.")
        return reshape(x, (-1,)), 0
    return x, normalize_axis(op, axis, x.ndim)


def _with_initial(x, axis, value):
    """``value`` prepended along ``axis`` (``include_initial=True``)."""
    shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    first = bind(P.full_p, shape=shape, value=value, dtype=x.dtype, device=x.device)
    return concatenate([first, x], axis)


def cumulative_sum(x, /, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    """Cumulative sum along ``axis`` (the array API's; ``axis=None`` only for 1-D input),
    accumulated like ``sum`` (``dtype``, else int64/uint64 for integers); with
    ``include_initial`` the result starts with 0 (one entry longer). Linear."""
    x, ax = _scan_axis("cumulative_sum", _accumulator(tensor_of(x), dtype), axis)
    out = bind(P.cumsum_p, x, axis=ax, reverse=False) if x.shape[ax] else x
    return _with_initial(out, ax, 0) if include_initial else out


def cumulative_prod(x, /, axis=None, dtype=None, include_initial: bool = False) -> Tensor:
    """Cumulative product along ``axis`` (``axis=None`` only for 1-D input), accumulated like
    ``prod``; with ``include_initial`` the result starts with 1. Computed as a doubling scan
    (log2(n) elementwise products of shifted copies), so its derivative is exact at zeros
    and every mode differentiates it."""
    x, ax = _scan_axis("cumulative_prod", _accumulator(tensor_of(x), dtype), axis)
    last = x.ndim - 1
    out = moveaxis(_inclusive_cumprod_last(dispatch, moveaxis(x, ax, last)), last, ax)
    return _with_initial(out, ax, 1) if include_initial else out


def var(x, axis=None, ddof=0, keepdims=False, *, correction=None) -> Tensor:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom (NumPy's ``var``; the
    array API's keyword is ``correction``, the same number; complex: of |x - mean|). The
    default 0 is the population variance; 1 is the unbiased estimate (PyTorch's default)."""
    return _moment("var", x, axis, ddof, keepdims, correction, False)


def _moment(op, x, axis, ddof, keepdims, correction, root):
    """``var`` (``root``: ``std``): one ``var`` primitive for real floating input with
    degrees of freedom left, the composition otherwise (complex: of |x - mean|)."""
    ddof = _correction(op, ddof, correction)
    x = to_inexact(tensor_of(x))
    axes = normalize_axes(op, axis, x.ndim)
    if x.dtype.kind == "f" and builtins.all(d.__class__ is int for d in x.shape):
        n = 1
        for a in axes:
            n *= x.shape[a]
        if n - ddof > 0:
            return bind(P.var_p, x, axes=tuple(sorted(axes)), correction=float(ddof),
                        keepdims=bool(keepdims), std=root)
    v = _var_composed(x, axes, ddof, keepdims)
    return safe_sqrt(v) if root else v


def _var_composed(x, axes, ddof, keepdims):
    n = 1
    for a in axes:
        n *= x.shape[a]
    d = subtract(x, mean(x, axes, keepdims=True))
    # NumPy: no degrees of freedom left (ddof >= n) divides by 0 (inf, or nan for 0/0)
    dof = n - ddof
    if dof.__class__ is int or isinstance(dof, float):
        dof = builtins.max(dof, 0)
    return divide(sum(abs2(d), axes, keepdims), dof)


def std(x, axis=None, ddof=0, keepdims=False, *, correction=None) -> Tensor:
    """Standard deviation: the square root of ``var`` (``ddof``, or the array API's
    ``correction``). Convention: the derivative where the variance is 0 is taken as 0."""
    return _moment("std", x, axis, ddof, keepdims, correction, True)


def _correction(op, ddof, correction):
    """NumPy's ``ddof`` or the array API's ``correction`` (the same number), not both."""
    if correction is not None:
        if ddof != 0:
            raise TypeError(f"{op}: give ddof or correction, not both.")
        ddof = correction
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        raise DTypeError(f"{op}: ddof must be a number, got {type(ddof).__name__} {ddof!r:.30}.")
    return ddof


def _safe_pow(s, p) -> Tensor:
    """s**p for s >= 0 whose derivative at 0 is taken as 0 (not inf or nan)."""
    zero = s == 0
    return where(zero, 0.0, where(zero, 1.0, s) ** p)


def safe_sqrt(s) -> Tensor:
    """sqrt whose derivative at 0 is taken as 0 (not inf): the subgradient norms need."""
    zero = s == 0
    return where(zero, 0.0, sqrt(where(zero, 1.0, s)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over ``axis``, computed stably (SciPy's signature; ``b`` defaults
    to 1 and broadcasts against ``a``).

    With ``return_sign=True`` returns ``(log|s|, sign(s))`` for s = sum(b exp(a)), so negative
    weights are allowed; without it a negative sum gives nan, as SciPy. Derivative: the
    weights b exp(a - out) (the softmax for b = 1); entries with b = 0 get none, also where
    a = inf. Where every reduced entry is -inf the value is -inf, silently, and the
    derivative 0 (the function is -inf on a neighbourhood of such a point; the softmax
    there, 0/0, is not defined). Finite entries whose weights sum to 0 also give -inf, with
    NumPy's divide-by-zero warning: the derivative in ``b`` is infinite there. Complex input
    is not supported (``DTypeError``)."""

    if b is None and not return_sign:  # the common case: one primitive
        x, axes = _softmax_operand("logsumexp", a, axis)
        return bind(P.logsumexp_p, x, axes=axes, keepdims=bool(keepdims))
    x = to_inexact(tensor_of(a))
    if x.dtype.kind == "c":
        raise DTypeError("logsumexp: complex input is not supported; use real values.")
    if b is not None:
        w = tensor_of(b, like=x)
        if w.dtype.kind == "c":
            raise DTypeError("logsumexp: complex weights b are not supported.")
        x, w = operands("logsumexp", x, to_inexact(w))
    axes = normalize_axes("logsumexp", axis, x.ndim)
    m = stop_gradient(max(x, axes, keepdims=True))
    empty = m == -np.inf  # every entry -inf: the value is -inf (no log(0) warning)
    m = where(isfinite(m), m, 0.0)  # +inf: let exp(inf) = inf give the value inf
    e = exp(x - m)
    if b is not None:
        e = where(w == 0, 0.0, w * e)  # b = 0 drops the term even where exp(a) = inf
    s = sum(e, axes, keepdims=True)
    if return_sign:
        sgn = sign(s)
        s = abs(s)
    # where every entry is -inf the function is -inf on a neighbourhood: derivative 0
    out = where(empty, -np.inf, log(where(empty, 1.0, s))) + m
    if not keepdims:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        out = reshape(out, shape)
        if return_sign:
            sgn = reshape(sgn, shape)
    return (out, sgn) if return_sign else out


_SOFTMAX_AXES = BoundedCache("eager softmax-family axes", 4096)


def _softmax_operand(op, x, axis):
    """``(x, axes)`` for a softmax-family primitive: ``x`` as a real floating tensor, the axes
    normalised and sorted. Cached for eager float tensors with an int, tuple or None axis
    (per op, axis, shape, device and dtype): a softmax in a loop pays one dict lookup."""
    if type(x) is EagerTensor and (axis is None or axis.__class__ is int
                                   or axis.__class__ is tuple):
        v = x._value
        key = (op, axis, v.shape, x._backend, v.dtype)  # device before dtype (see sum)
        axes = _SOFTMAX_AXES.get(key)
        if axes is not None:
            return x, axes
        if x.dtype.kind == "f":
            return x, _SOFTMAX_AXES.put(key, tuple(sorted(normalize_axes(op, axis, v.ndim))))
    x = to_inexact(tensor_of(x))
    if x.dtype.kind == "c":
        raise DTypeError(f"{op}: complex input is not supported; use real values.")
    return x, tuple(sorted(normalize_axes(op, axis, x.ndim)))


def softmax(x, axis=-1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``, computed stably (shifted by the maximum): one
    primitive. A row of -inf only gives nan (0/0), as PyTorch."""
    x, axes = _softmax_operand("softmax", x, axis)
    return bind(P.softmax_p, x, axes=axes)


def log_softmax(x, axis=-1) -> Tensor:
    """x - logsumexp(x) along ``axis``, computed stably: one primitive."""
    x, axes = _softmax_operand("log_softmax", x, axis)
    return bind(P.log_softmax_p, x, axes=axes)


def matrix_trace(a, offset=0, axis1=0, axis2=1, dtype=None) -> Tensor:
    """Sum of the diagonal ``offset`` of the (axis1, axis2) planes: NumPy's ``trace``, which
    ``tenferro.trace`` is (the array API's is ``tenferro.linalg.trace``, over the last two
    axes). Accumulates like ``sum`` (``dtype``, else int64 for integers). Linear."""
    return sum(diagonal(a, offset, axis1, axis2), -1, dtype=dtype)
