"""Elementwise functions with NumPy broadcasting and promotion."""

from __future__ import annotations

import math

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import is_complex

from ..core.dispatch import bind
from ..core.eager import EagerTensor
from ..core.tensor import Tensor, mark_view
from ..errors import DTypeError
from ._base import PY_SCALARS, is_scalar, operands, scalar_constant, tensor_of, to_inexact


def _binary(prim, name):
    def f(x, y):
        tx, ty = type(x), type(y)
        if tx is EagerTensor:  # hot paths: nothing to broadcast or promote
            if ty is EagerTensor and x._backend is y._backend:
                vx, vy = x._value, y._value
                if vx.dtype == vy.dtype and vx.shape == vy.shape:
                    return bind(prim, x, y)
            elif ty in PY_SCALARS and (c := scalar_constant(x, y)) is not None:
                return bind(prim, x, c)
        elif ty is EagerTensor and tx in PY_SCALARS and (c := scalar_constant(y, x)) is not None:
            return bind(prim, c, y)
        a, b = operands(name, x, y)
        return bind(prim, a, b)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{prim.name}`` with NumPy broadcasting and type promotion."
    return f


add = _binary(P.add_p, "add")
subtract = _binary(P.sub_p, "subtract")
multiply = _binary(P.mul_p, "multiply")
maximum = _binary(P.maximum_p, "maximum")
minimum = _binary(P.minimum_p, "minimum")


def divide(x, y) -> Tensor:
    """True division (integers promote to float64)."""
    if type(x) is EagerTensor and type(y) in PY_SCALARS and x.dtype.kind in "fc":
        c = scalar_constant(x, y)
        if c is not None:
            return bind(P.div_p, x, c)
    a, b = operands("divide", x, y)
    if a.dtype.kind not in "fc":
        a, b = to_inexact(a), to_inexact(b)
    return bind(P.div_p, a, b)


def arctan2(y, x) -> Tensor:
    """Elementwise arctan(y / x) in the correct quadrant (NumPy's ``arctan2``); real inputs.
    Convention: the gradient is 0 at the origin."""
    a, b = operands("arctan2", y, x)
    a, b = to_inexact(a), to_inexact(b)
    return bind(P.atan2_p, a, b)


def power(x, y) -> Tensor:
    """``x ** y``. A Python-number exponent uses the static-exponent primitive (exact
    integer powers, derivative p x^(p-1)); a tensor exponent uses ``pow``."""
    if isinstance(x, Tensor) and is_scalar(y) and not isinstance(y, (complex, np.complexfloating)):
        y = y.item() if hasattr(y, "item") else y
        if float(y).is_integer():
            y = int(y)
            if y < 0 and x.dtype.kind not in "fc":
                x = to_inexact(x)
        elif x.dtype.kind not in "fc":
            x = to_inexact(x)
        if y == 2:
            return bind(P.square_p, x) if x.dtype.kind in "fc" else bind(P.mul_p, x, x)
        return bind(P.pow_scalar_p, x, exponent=y)
    a, b = operands("power", x, y)
    a, b = to_inexact(a), to_inexact(b)
    return bind(P.pow_p, a, b)


def negative(x) -> Tensor:
    """Elementwise ``-x``."""
    return bind(P.neg_p, tensor_of(x))


def _unary(prim, name, doc=""):
    def f(x):
        if type(x) is not EagerTensor or x.dtype.kind not in "fc":
            x = to_inexact(tensor_of(x))
        return bind(prim, x)

    f.__name__ = name
    f.__doc__ = doc or f"Elementwise ``{name}`` (integers promote to float64)."
    return f


exp = _unary(P.exp_p, "exp")
log = _unary(P.log_p, "log")
log1p = _unary(P.log1p_p, "log1p")
expm1 = _unary(P.expm1_p, "expm1")
sin = _unary(P.sin_p, "sin")
cos = _unary(P.cos_p, "cos")
tan = _unary(P.tan_p, "tan")
tanh = _unary(P.tanh_p, "tanh")
sinh = _unary(P.sinh_p, "sinh")
cosh = _unary(P.cosh_p, "cosh")
arctan = _unary(P.arctan_p, "arctan")
sqrt = _unary(P.sqrt_p, "sqrt")
rsqrt = _unary(P.rsqrt_p, "rsqrt", "1/sqrt(x)")


def square(x) -> Tensor:
    """Elementwise ``x * x``."""
    x = tensor_of(x)
    return bind(P.square_p, x) if x.dtype.kind in "fc" else bind(P.mul_p, x, x)


def reciprocal(x) -> Tensor:
    """Elementwise ``1 / x`` (integers promote to float64)."""
    return divide(1, x)


def abs(x) -> Tensor:
    """|x| (real dtype for complex input). Derivative convention: sign(x), 0 at 0."""
    x = tensor_of(x)
    if x.dtype.kind == "b":
        return x
    return bind(P.abs_p, x)


def sign(x) -> Tensor:
    """Elementwise sign (``z / |z|`` for complex, 0 at 0). Convention: derivative 0 for real
    input; for complex, only the tangential part, and 0 at 0."""
    return bind(P.sign_p, tensor_of(x))


def conj(x) -> Tensor:
    """Complex conjugate (a real tensor is returned as is)."""
    x = tensor_of(x)
    return bind(P.conj_p, x) if is_complex(x.dtype) else x


def real(x) -> Tensor:
    """Real part (a real tensor is its own real part)."""
    x = tensor_of(x)
    return mark_view(bind(P.real_p, x), x, "real") if is_complex(x.dtype) else x


def imag(x) -> Tensor:
    """Imaginary part (zeros for a real tensor)."""
    x = tensor_of(x)
    if is_complex(x.dtype):
        return mark_view(bind(P.imag_p, x), x, "imag")
    return bind(P.full_p, shape=x.shape, value=0, dtype=x.dtype, device=x.device)


def angle(x) -> Tensor:
    """Phase of complex numbers (0 or pi for reals)."""
    x = to_inexact(tensor_of(x))
    if is_complex(x.dtype):
        return arctan2(imag(x), real(x))
    return where(less(x, 0), math.pi, 0.0) + 0 * x


def abs2(x) -> Tensor:
    """|x|^2, real; smooth everywhere (unlike abs(x)**2 at 0 for complex)."""
    x = tensor_of(x)
    if is_complex(x.dtype):
        return square(real(x)) + square(imag(x))
    return square(x)


def clip(x, min=None, max=None) -> Tensor:
    """Clamp into [min, max]. Gradient flows to x strictly inside the interval."""
    x = tensor_of(x)
    if min is None and max is None:
        return x
    if is_complex(x.dtype):
        raise DTypeError(f"clip: complex values are not ordered (got {x.dtype}).")
    if x.dtype.kind in "fc" or isinstance(min, float) or isinstance(max, float):
        lo = -np.inf if min is None else min
        hi = np.inf if max is None else max
    else:
        info = np.iinfo(x.dtype) if x.dtype.kind in "iu" else None
        lo = (info.min if info else 0) if min is None else min
        hi = (info.max if info else 1) if max is None else max
    a, b, c = operands("clip", x, lo, hi)
    return bind(P.clamp_p, a, b, c)


clamp = clip


def where(condition, x, y) -> Tensor:
    """Elementwise select: ``x`` where ``condition`` else ``y`` (broadcasting)."""
    cond = tensor_of(condition)
    if cond.dtype.kind != "b":
        cond = not_equal(cond, 0)
    a, b = operands("where", x, y)
    c, a, b = _broadcast3(cond, a, b)
    return bind(P.select_p, c, a, b)


def _broadcast3(c, a, b):
    from ._base import broadcast_shapes_of, broadcast_to

    shape = broadcast_shapes_of("where", c.shape, a.shape)
    return broadcast_to(c, shape), broadcast_to(a, shape), broadcast_to(b, shape)


def _compare(prim, name):
    def f(x, y):
        a, b = operands(name, x, y)
        return bind(prim, a, b)

    f.__name__ = name
    f.__doc__ = (f"Elementwise ``{name}`` comparison with NumPy broadcasting and promotion. "
                 f"Boolean result: no gradient.")
    return f


equal = _compare(P.eq_p, "equal")
not_equal = _compare(P.ne_p, "not_equal")
less = _compare(P.lt_p, "less")
less_equal = _compare(P.le_p, "less_equal")
greater = _compare(P.gt_p, "greater")
greater_equal = _compare(P.ge_p, "greater_equal")


def _logical(prim, name):
    def f(x, y):
        a, b = operands(name, _as_bool(x), _as_bool(y))
        return bind(prim, a, b)

    f.__name__ = name
    f.__doc__ = (f"Elementwise ``{name}`` of truth values (nonzero is True), with NumPy "
                 f"broadcasting. Boolean result: no gradient.")
    return f


def _as_bool(x):
    if isinstance(x, Tensor) and x.dtype.kind != "b":
        return not_equal(x, 0)
    return x


logical_and = _logical(P.logical_and_p, "logical_and")
logical_or = _logical(P.logical_or_p, "logical_or")


def logical_not(x) -> Tensor:
    """Elementwise NOT of a boolean tensor (other dtypes: nonzero is True). Boolean result: no
    gradient."""
    return bind(P.logical_not_p, _as_bool(tensor_of(x)))


def isfinite(x) -> Tensor:
    """Elementwise finiteness test. Boolean result: no gradient."""
    return bind(P.isfinite_p, tensor_of(x))


def isnan(x) -> Tensor:
    """Elementwise NaN test. Boolean result: no gradient."""
    return bind(P.isnan_p, tensor_of(x))


def sigmoid(x) -> Tensor:
    """The logistic function 1 / (1 + exp(-x)), computed as (tanh(x/2) + 1) / 2 (no overflow)."""
    x = to_inexact(tensor_of(x))
    return 0.5 * (tanh(0.5 * x) + 1)


def softplus(x) -> Tensor:
    """log(1 + exp(x)), computed stably as max(x, 0) + log1p(exp(-|x|)). Convention: the
    derivative at 0 is 1/2 (the max splits its tie 50/50)."""
    x = to_inexact(tensor_of(x))
    return maximum(x, 0) + log1p(exp(-abs(x)))
