"""Reductions: sum, mean, prod, max, min, arg-extrema, cumulative sums, norms, logsumexp."""

from __future__ import annotations

import builtins

import numpy as np

from chainrules import primitives as P

from ..caches import BoundedCache
from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor
from ..errors import DTypeError
from ._base import (
    astype,
    normalize_axes,
    normalize_axis,
    operands,
    reduction_axes,
    tensor_of,
    to_inexact,
)
from .elementwise import abs, abs2, divide, exp, isfinite, log, sign, sqrt, subtract, where
from .misc import stop_gradient
from .shape import diagonal, reshape


def _keep(x_out, axes, in_shape, keepdims):
    if not keepdims:
        return x_out
    shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return reshape(x_out, shape)


_SUM_AXES = BoundedCache("eager sum axes", 4096)


def sum(x, axis=None, keepdims=False, dtype=None) -> Tensor:
    """Sum over ``axis`` (default all). Bools and small integers sum as int64."""
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
    x = tensor_of(x)
    if dtype is not None:
        x = astype(x, dtype)
    else:
        dt = x.dtype
        if dt.kind == "b" or (dt.kind in "iu" and dt.itemsize < 8):
            x = astype(x, np.int64)
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


def mean(x, axis=None, keepdims=False) -> Tensor:
    """Arithmetic mean over ``axis`` (all axes by default); integers promote to float64."""
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


def prod(x, axis=None, keepdims=False) -> Tensor:
    """Product; its derivative is exact at zeros (no division by the entries)."""
    x = tensor_of(x)
    if x.dtype.kind == "b":
        x = astype(x, np.int64)
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
    def f(x, axis=None):
        x = tensor_of(x)
        _ordered(name, x)
        if axis is None:
            x, axis = reshape(x, (-1,)), 0
        return bind(prim, x, axis=normalize_axis(name, axis, x.ndim))

    f.__name__ = name
    f.__doc__ = (
        f"Index of the {name[3:]}imum along ``axis`` (of the flattened tensor by default; the "
        f"first one at ties), int64, no derivative. Complex input raises ``DTypeError``."
    )
    return f


argmax = _arg(P.argmax_p, "argmax")
argmin = _arg(P.argmin_p, "argmin")


def cumsum(x, axis=None, reverse=False) -> Tensor:
    """Cumulative sum along ``axis`` (of the flattened tensor by default)."""
    x = tensor_of(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    if x.dtype.kind == "b":
        x = astype(x, np.int64)
    return bind(P.cumsum_p, x, axis=normalize_axis("cumsum", axis, x.ndim), reverse=reverse)


def var(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    """Variance over ``axis`` with ``ddof`` delta degrees of freedom (NumPy's ``var``; complex:
    of |x - mean|)."""
    x = to_inexact(tensor_of(x))
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        raise DTypeError(f"var: ddof must be a number, got {type(ddof).__name__} {ddof!r:.30}.")
    axes = normalize_axes("var", axis, x.ndim)
    n = 1
    for a in axes:
        n *= x.shape[a]
    d = subtract(x, mean(x, axes, keepdims=True))
    # NumPy: no degrees of freedom left (ddof >= n) divides by 0 (inf, or nan for 0/0)
    dof = n - ddof
    if dof.__class__ is int or isinstance(dof, float):
        dof = builtins.max(dof, 0)
    return divide(sum(abs2(d), axes, keepdims), dof)


def std(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    """Standard deviation: the square root of ``var``. Convention: the derivative where the
    variance is 0 is taken as 0."""
    return safe_sqrt(var(x, axis, ddof, keepdims))


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


def softmax(x, axis=-1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``, computed stably (shifted by the maximum)."""
    x = to_inexact(tensor_of(x))
    return exp(x - logsumexp(x, axis, keepdims=True))


def log_softmax(x, axis=-1) -> Tensor:
    """x - logsumexp(x) along ``axis``, computed stably."""
    x = to_inexact(tensor_of(x))
    return x - logsumexp(x, axis, keepdims=True)


def matrix_trace(x, offset=0, axis1=0, axis2=1) -> Tensor:
    """Sum of the diagonal of the (axis1, axis2) planes (``tenferro.trace`` traces graphs)."""

    return sum(diagonal(x, offset, axis1, axis2), -1)

