"""Reductions: sum, mean, prod, max, min, arg-extrema, cumulative sums, norms, logsumexp."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ._base import astype, normalize_axes, normalize_axis, reduction_axes, tensor_of, to_inexact
from .elementwise import abs, abs2, divide, exp, log, sqrt, subtract, where
from .shape import reshape


def _keep(x_out, axes, in_shape, keepdims):
    if not keepdims:
        return x_out
    shape = tuple(1 if i in axes else d for i, d in enumerate(in_shape))
    return reshape(x_out, shape)


def sum(x, axis=None, keepdims=False, dtype=None) -> Tensor:
    """Sum over ``axis`` (default all). Bools and small integers sum as int64."""
    x = tensor_of(x)
    if dtype is not None:
        x = astype(x, dtype)
    elif x.dtype.kind == "b" or (x.dtype.kind in "iu" and x.dtype.itemsize < 8):
        x = astype(x, np.int64)
    axes = reduction_axes("sum", axis, x.ndim)
    out = bind(P.reduce_sum_p, x, axes=axes) if axes else x
    return _keep(out, axes, x.shape, keepdims)


def mean(x, axis=None, keepdims=False) -> Tensor:
    """Arithmetic mean over ``axis`` (all axes by default); integers promote to float64."""
    x = to_inexact(tensor_of(x))
    axes = reduction_axes("mean", axis, x.ndim)
    n = 1
    for a in axes:
        n *= x.shape[a]
    return divide(sum(x, axes, keepdims), n)


def prod(x, axis=None, keepdims=False) -> Tensor:
    """Product; its derivative is exact at zeros (no division by the entries)."""
    x = tensor_of(x)
    if x.dtype.kind == "b":
        x = astype(x, np.int64)
    axes = reduction_axes("prod", axis, x.ndim)
    out = bind(P.reduce_prod_p, x, axes=axes) if axes else x
    return _keep(out, axes, x.shape, keepdims)


def _extremum(prim, name):
    def f(x, axis=None, keepdims=False):
        x = tensor_of(x)
        axes = reduction_axes(name, axis, x.ndim)
        out = bind(prim, x, axes=axes) if axes else x
        return _keep(out, axes, x.shape, keepdims)

    f.__name__ = name
    f.__doc__ = f"``{name}`` over ``axis``; ties share the gradient equally."
    return f


max = _extremum(P.reduce_max_p, "max")
min = _extremum(P.reduce_min_p, "min")
amax, amin = max, min


def _arg(prim, name):
    def f(x, axis=None):
        x = tensor_of(x)
        if axis is None:
            x, axis = reshape(x, (-1,)), 0
        return bind(prim, x, axis=normalize_axis(name, axis, x.ndim))

    f.__name__ = name
    f.__doc__ = (f"Index of the {name[3:]}imum along ``axis`` (of the flattened tensor by "
                 f"default); real input. Integer result: no gradient.")
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
    axes = normalize_axes("var", axis, x.ndim)
    n = 1
    for a in axes:
        n *= x.shape[a]
    d = subtract(x, mean(x, axes, keepdims=True))
    return divide(sum(abs2(d), axes, keepdims), n - ddof)


def std(x, axis=None, ddof=0, keepdims=False) -> Tensor:
    """Standard deviation: the square root of ``var``. Convention: the derivative where the
    variance is 0 is taken as 0."""
    return safe_sqrt(var(x, axis, ddof, keepdims))


def safe_sqrt(s) -> Tensor:
    """sqrt whose derivative at 0 is taken as 0 (not inf): the subgradient norms need."""
    zero = s == 0
    return where(zero, 0.0, sqrt(where(zero, 1.0, s)))


def logsumexp(x, axis=None, keepdims=False) -> Tensor:
    """log(sum(exp(x))) computed stably."""
    from .misc import stop_gradient

    x = to_inexact(tensor_of(x))
    axes = normalize_axes("logsumexp", axis, x.ndim)
    if x.dtype.kind == "c":
        raise DTypeError("logsumexp: complex input is not supported; use real values.")
    m = stop_gradient(max(x, axes, keepdims=True))
    m = where(m > -np.inf, m, 0.0)
    s = sum(exp(x - m), axes, keepdims=True)
    out = log(s) + m
    if not keepdims:
        out = reshape(out, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return out


def softmax(x, axis=-1) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis``, computed stably (shifted by the maximum)."""
    x = to_inexact(tensor_of(x))
    return exp(x - logsumexp(x, axis, keepdims=True))


def log_softmax(x, axis=-1) -> Tensor:
    """x - logsumexp(x) along ``axis``, computed stably."""
    x = to_inexact(tensor_of(x))
    return x - logsumexp(x, axis, keepdims=True)


def norm(x, ord=None, axis=None, keepdims=False) -> Tensor:
    """Vector norms (and the Frobenius norm). ``ord``: None/2, 1, inf, -inf, 0, or p > 0.

    With ``axis`` a pair and ``ord`` in ('nuc', 2, -2) use ``tenferro.linalg.norm``.
    The 2-norm's derivative at the zero vector is taken as 0.
    """
    x = tensor_of(x)
    matrix = (isinstance(axis, (tuple, list)) and len(axis) == 2) or (
        axis is None and ord is not None and x.ndim == 2)
    if isinstance(ord, str) or (matrix and ord not in (None, "fro", "f")):
        from ..linalg import norm as lnorm

        return lnorm(x, ord, axis, keepdims)
    if ord in ("fro", "f") or ord is None or ord == 2:
        return safe_sqrt(sum(abs2(to_inexact(x)), axis, keepdims))
    a = abs(to_inexact(x))
    if ord == np.inf:
        return max(a, axis, keepdims)
    if ord == -np.inf:
        return min(a, axis, keepdims)
    if ord == 1:
        return sum(a, axis, keepdims)
    if ord == 0:
        return sum(astype(a != 0, a.dtype), axis, keepdims)
    if ord > 0:
        return sum(a**ord, axis, keepdims) ** (1.0 / ord)
    raise ShapeError(f"norm: unsupported ord={ord!r} for vector norms.")


def matrix_trace(x, offset=0, axis1=0, axis2=1) -> Tensor:
    """Sum of the diagonal of the (axis1, axis2) planes (``tenferro.trace`` traces graphs)."""
    from .shape import diagonal

    return sum(diagonal(x, offset, axis1, axis2), -1)

