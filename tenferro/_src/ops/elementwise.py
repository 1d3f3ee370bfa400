"""Elementwise functions with NumPy broadcasting and promotion."""

from __future__ import annotations

import math

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import is_complex

from ..caches import BoundedCache
from ..core.dispatch import bind
from ..core.eager import EagerTensor
from ..core.tensor import Tensor, mark_view
from ..errors import DTypeError, ShapeError
from ._base import (
    PY_SCALARS,
    as_int,
    astype,
    broadcast_shapes_of,
    broadcast_to,
    is_scalar,
    operands,
    scalar_constant,
    tensor_of,
    to_inexact,
)

_BROADCAST_PLANS = BoundedCache("eager broadcast plans", 4096)


def _broadcast_plan(name, sx, sy):
    """``(shape, x dims, y dims)`` broadcasting two static shapes (dims ``None`` for an operand
    already of that shape), cached per pair of shapes; ``None`` when they do not broadcast
    (the general path then raises the named error)."""
    key = (sx, sy)
    plan = _BROADCAST_PLANS.get(key)
    if plan is None:
        try:
            shape = broadcast_shapes_of(name, sx, sy)
        except ShapeError:
            return None
        nd = len(shape)
        plan = _BROADCAST_PLANS.put(key, (
            shape,
            None if sx == shape else tuple(range(nd - len(sx), nd)),
            None if sy == shape else tuple(range(nd - len(sy), nd)),
        ))
    return plan


def _broadcast(x, shape, dims):
    """``broadcast_to(x, shape)`` with the dimensions already worked out."""
    out = bind(P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims)
    out._view_of = "broadcast_to"  # mark_view: out is never x here
    return out


def _binary(prim, name):
    def f(x, y):
        tx, ty = type(x), type(y)
        if tx is EagerTensor:  # hot paths: nothing to promote
            if ty is EagerTensor and x._backend is y._backend:
                vx, vy = x._value, y._value
                if vx.dtype == vy.dtype:
                    sx, sy = vx.shape, vy.shape
                    if sx == sy:
                        return bind(prim, x, y)
                    plan = _broadcast_plan(name, sx, sy)
                    if plan is not None:  # one dtype, shapes that broadcast (x @ w + b)
                        shape, dx, dy = plan
                        if dx is not None:
                            x = _broadcast(x, shape, dx)
                        if dy is not None:
                            y = _broadcast(y, shape, dy)
                        return bind(prim, x, y)
            elif ty in PY_SCALARS and (c := scalar_constant(x, y)) is not None:
                return bind(prim, x, c)
        elif ty is EagerTensor and tx in PY_SCALARS and (c := scalar_constant(y, x)) is not None:
            return bind(prim, c, y)
        a, b = operands(name, x, y)
        return bind(prim, a, b)

    f.__name__ = name
    f.__doc__ = f"Elementwise ``{prim.name}`` with NumPy broadcasting and type promotion."
    if prim.convention:  # the derivative's convention at non-differentiable points
        f.__doc__ += f" Derivative: {prim.convention}."
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


_STATIC_POW = 16  # integer exponents up to this are parameters (exact integer powers)


def power(x, y) -> Tensor:
    """``x ** y``. A Python-number exponent uses the static-exponent primitive (exact
    integer powers, derivative p x^(p-1)); a tensor exponent uses ``pow``.

    Dtypes as NumPy: an integer to an integer power stays an integer (bools count as int8);
    a negative integer exponent of an integer base raises ``DTypeError`` (at once for a
    number, when the values are known for a tensor exponent: under ``jit`` when the graph
    runs), as NumPy's ``ValueError`` and PyTorch's error; a float exponent gives floats."""
    if (y.__class__ is int and y == 2 and type(x) is EagerTensor
            and x.dtype.kind in "fc"):  # x ** 2 (a loss): the branch below, directly
        return bind(P.square_p, x)
    if isinstance(x, Tensor) and is_scalar(y) and not isinstance(y, (complex, np.complexfloating)):
        y = y.item() if hasattr(y, "item") else y
        if not (float(y).is_integer() and -_STATIC_POW <= y <= _STATIC_POW) and y == y:
            # a data-like exponent (x ** p with p changing every step) is an operand, not a
            # parameter: a parameter would key a new derivative template per value
            if isinstance(y, (int, np.integer)) and x.dtype.kind in "biu":
                return power(x, tensor_of(int(y), like=x))  # integer ** large integer
            a, b = operands("power", x, float(y))
            a, b = to_inexact(a), to_inexact(b)
            return bind(P.pow_p, a, b)
        if float(y).is_integer() and not isinstance(y, (float, np.floating)):
            y = int(y)
            if x.dtype.kind == "b":
                x = astype(x, np.int8)
            if y < 0 and x.dtype.kind not in "fc":
                raise DTypeError(
                    f"power: integers to negative integer powers are not allowed ({x.dtype} "
                    f"** {y}), as in NumPy; convert the base to a float dtype first "
                    f"(x.astype(float)) or use a float exponent ({float(y)}).")
        elif float(y).is_integer():
            y = int(y)  # a float exponent: integer bases become float (NumPy)
            if x.dtype.kind not in "fc":
                x = to_inexact(x)
        elif x.dtype.kind not in "fc":
            x = to_inexact(x)
        if y == 2:
            return bind(P.square_p, x) if x.dtype.kind in "fc" else bind(P.mul_p, x, x)
        return bind(P.pow_scalar_p, x, exponent=y)
    a, b = operands("power", x, y)
    if a.dtype.kind == "b":
        a, b = astype(a, np.int8), astype(b, np.int8)
    if a.dtype.kind not in "iu":
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


arcsin = _unary(
    P.arcsin_p, "arcsin",
    "Inverse sine (integers promote to float64). Derivative 1/sqrt(1 - x^2), infinite at "
    "x = +-1; complex input uses the principal branch (cuts on the real axis beyond +-1).",
)
arccos = _unary(
    P.arccos_p, "arccos",
    "Inverse cosine. Derivative -1/sqrt(1 - x^2), infinite at x = +-1; complex: principal "
    "branch.",
)
arcsinh = _unary(
    P.arcsinh_p, "arcsinh",
    "Inverse hyperbolic sine. Derivative 1/sqrt(1 + x^2); complex: principal branch.",
)
arccosh = _unary(
    P.arccosh_p, "arccosh",
    "Inverse hyperbolic cosine (real input needs x >= 1, else nan as NumPy). Derivative "
    "1/(sqrt(x - 1) sqrt(x + 1)), infinite at x = 1; complex: principal branch.",
)
arctanh = _unary(
    P.arctanh_p, "arctanh",
    "Inverse hyperbolic tangent. Derivative 1/(1 - x^2), infinite at x = +-1; complex: "
    "principal branch.",
)
exp2 = _unary(P.exp2_p, "exp2", "2**x elementwise (exact at integers). Derivative ln(2) 2**x.")
log2 = _unary(
    P.log2_p, "log2", "Base-2 logarithm (exact at powers of two). Derivative 1/(x ln 2), "
    "infinite at 0; complex: principal branch.",
)
log10 = _unary(
    P.log10_p, "log10", "Base-10 logarithm. Derivative 1/(x ln 10), infinite at 0; complex: "
    "principal branch.",
)


def _rounding(prim, name, what):
    def f(x) -> Tensor:
        x = tensor_of(x)
        if is_complex(x.dtype):
            raise DTypeError(
                f"{name}: complex input is not supported (NumPy has no {name} for complex "
                f"numbers either); apply it to x.real and x.imag."
            )
        if x.dtype.kind not in "fc":
            return x  # integers and bools are already integral (NumPy keeps their dtype)
        return bind(prim, x)

    f.__name__ = name
    f.__doc__ = (
        f"{what}, elementwise; integers and bools are returned unchanged. Piecewise "
        f"constant: the derivative is 0 everywhere, also at the jumps."
    )
    return f


floor = _rounding(P.floor_p, "floor", "The largest integer <= x")
ceil = _rounding(P.ceil_p, "ceil", "The smallest integer >= x")
trunc = _rounding(P.trunc_p, "trunc", "x rounded toward zero")


def round(a, decimals: int = 0) -> Tensor:  # noqa: A001  (NumPy's name)
    """Round to ``decimals`` decimal places, halves to even, as NumPy (which scales by
    10**decimals, rounds to the nearest integer and scales back). Complex input rounds the
    real and imaginary parts. Integers are unchanged for ``decimals >= 0``. Piecewise
    constant: the derivative is 0 everywhere, also at the jumps."""
    x = tensor_of(a)
    decimals = as_int("round", "decimals", decimals)
    if is_complex(x.dtype):
        re, im = round(real(x), decimals), round(imag(x), decimals)
        return add(astype(re, x.dtype), multiply(astype(im, x.dtype), 1j))
    kind = x.dtype.kind
    if kind not in "fc":
        if decimals >= 0:
            return x
        return astype(round(astype(x, np.float64), decimals), x.dtype)
    if decimals == 0:
        return bind(P.round_p, x)
    if decimals > 0:
        scale = 10.0**decimals
        return divide(bind(P.round_p, multiply(x, scale)), scale)
    scale = 10.0**-decimals
    return multiply(bind(P.round_p, divide(x, scale)), scale)


def _real_binary(prim, name, doc):
    def f(x1, x2) -> Tensor:
        if type(x1) is EagerTensor and type(x2) is EagerTensor and x1._backend is x2._backend:
            v1, v2 = x1._value, x2._value  # hot path: nothing to broadcast or promote
            if v1.dtype == v2.dtype and v1.shape == v2.shape and x1.dtype.kind in "fiu":
                return bind(prim, x1, x2)
        a, b = operands(name, x1, x2)
        if is_complex(a.dtype):
            raise DTypeError(
                f"{name}: complex operands are not supported ({a.dtype}), as in NumPy; use "
                f"the real parts."
            )
        return bind(prim, a, b)

    f.__name__ = name
    f.__doc__ = doc
    return f


remainder = _real_binary(
    P.remainder_p, "remainder",
    "Python's ``x1 % x2``: x1 - floor_divide(x1, x2) * x2, with the sign of the divisor "
    "(NumPy's ``mod``/``remainder``). Derivative: 1 in x1 and -floor_divide(x1, x2) in x2, "
    "the derivative of the piece containing the point (also at the jumps, where x1/x2 is an "
    "integer).",
)
mod = remainder
floor_divide = _real_binary(
    P.floor_divide_p, "floor_divide",
    "``x1 // x2``: floor(x1 / x2) as NumPy computes it (consistent with ``remainder``: "
    "x1 == floor_divide(x1, x2) * x2 + remainder(x1, x2)). Piecewise constant: derivative 0.",
)
fmod = _real_binary(
    P.fmod_p, "fmod",
    "C's fmod: x1 - trunc(x1 / x2) * x2, with the sign of the dividend (exact, as NumPy). "
    "Derivative: 1 in x1 and -trunc(x1 / x2) in x2, the derivative of the piece containing "
    "the point (also at the jumps).",
)


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
    # 0 * sign(x): a zero derivative, NaN kept, and no 0 * inf = NaN at x = +-inf
    return where(less(x, 0), math.pi, 0.0) + 0 * sign(x)


def abs2(x) -> Tensor:
    """|x|^2, real; smooth everywhere (unlike abs(x)**2 at 0 for complex)."""
    x = tensor_of(x)
    if is_complex(x.dtype):
        return square(real(x)) + square(imag(x))
    return square(x)


def clip(x, /, min=None, max=None, *, a_min=None, a_max=None) -> Tensor:
    """Clamp into [min, max] (the array API standard's and NumPy 2's signature; NumPy's
    ``a_min``/``a_max`` keywords are accepted too). Either bound may be None (unbounded) and
    may be a tensor broadcasting against ``x``; the result has ``x``'s dtype.

    Convention at the bounds: x gets the gradient strictly inside the interval, a bound gets it
    where x is at or beyond it (max everywhere if min >= max, as the value is max)."""
    if a_min is not None:
        if min is not None:
            raise TypeError("clip: give the lower bound once (min or a_min), not both.")
        min = a_min
    if a_max is not None:
        if max is not None:
            raise TypeError("clip: give the upper bound once (max or a_max), not both.")
        max = a_max
    x = tensor_of(x)
    if min is None and max is None:
        return x
    if is_complex(x.dtype):
        raise DTypeError(
            f"clip: complex values are not ordered (got {x.dtype}); clip x.real or abs(x)."
        )
    if x.dtype.kind in "fc" or isinstance(min, float) or isinstance(max, float):
        lo = -np.inf if min is None else min
        hi = np.inf if max is None else max
    else:
        info = np.iinfo(x.dtype) if x.dtype.kind in "iu" else None
        lo = (info.min if info else 0) if min is None else min
        hi = (info.max if info else 1) if max is None else max
        if info is not None:  # Python-int bounds beyond the dtype's range clip nothing
            lo = info.min if type(lo) is int and lo < info.min else lo
            hi = info.max if type(hi) is int and hi > info.max else hi
            lo = info.max if type(lo) is int and lo > info.max else lo
            hi = info.min if type(hi) is int and hi < info.min else hi
    a, b, c = operands("clip", x, lo, hi)
    out = bind(P.clamp_p, a, b, c)
    if out.dtype != x.dtype:  # tensor bounds of a wider dtype: the result keeps x's dtype
        out = astype(out, x.dtype)
    return out


clamp = clip


def where(condition, x, y) -> Tensor:
    """Elementwise select: ``x`` where ``condition`` else ``y`` (broadcasting). The gradient
    flows to the chosen branch only (zero cotangent to the other, none to ``condition``)."""
    cond = tensor_of(condition)
    if cond.dtype.kind != "b":
        cond = not_equal(cond, 0)
    a, b = operands("where", x, y)
    c, a, b = _broadcast3(cond, a, b)
    return bind(P.select_p, c, a, b)


def _broadcast3(c, a, b):
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
    """Truth values: nonzero is True (NumPy's); numbers and arrays too (``logical_xor(2, 3)``
    is False, not the bits of 2 ^ 3)."""
    if not isinstance(x, Tensor):
        if isinstance(x, (bool, np.bool_)):
            return x
        x = tensor_of(x)
    return not_equal(x, 0) if x.dtype.kind != "b" else x


logical_and = _logical(P.logical_and_p, "logical_and")
logical_or = _logical(P.logical_or_p, "logical_or")


def _bitwise(prim, name, doc, *, shift=False):
    def f(x1, x2) -> Tensor:
        a, b = operands(name, x1, x2)
        if shift and a.dtype.kind == "b":  # NumPy shifts bools as int8
            a, b = astype(a, np.int8), astype(b, np.int8)
        _integer_operand(name, a, shift)
        return bind(prim, a, b)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + " Integer result: no gradient."
    return f


_LOGICAL = {"bitwise_and": "logical_and", "bitwise_or": "logical_or",
            "bitwise_xor": "not_equal", "bitwise_invert": "logical_not"}


def _integer_operand(name, a, shift=False) -> None:
    if a.dtype.kind not in ("iu" if shift else "biu"):
        hint = (f"; for truth values use {_LOGICAL[name]} (nonzero is True)" if name in _LOGICAL
                else "; cast with .astype(int) first")
        raise DTypeError(
            f"{name}: operands must be integers{'' if shift else ' or bools'}, got {a.dtype} "
            f"(NumPy refuses it too){hint}.")


bitwise_and = _bitwise(P.bitwise_and_p, "bitwise_and",
                       "Bitwise AND of integers (logical AND of bools), NumPy's ``&``.")
bitwise_or = _bitwise(P.bitwise_or_p, "bitwise_or",
                      "Bitwise OR of integers (logical OR of bools), NumPy's ``|``.")
bitwise_xor = _bitwise(P.bitwise_xor_p, "bitwise_xor",
                       "Bitwise XOR of integers (logical XOR of bools), NumPy's ``^``.")
bitwise_left_shift = _bitwise(
    P.bitwise_left_shift_p, "bitwise_left_shift",
    "``x1 << x2`` for integers (bools shift as int8), as NumPy: shifting by the bit width or "
    "more gives 0.", shift=True)
bitwise_right_shift = _bitwise(
    P.bitwise_right_shift_p, "bitwise_right_shift",
    "``x1 >> x2`` for integers (bools shift as int8), as NumPy: an arithmetic shift for "
    "signed integers.", shift=True)
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift  # NumPy's other names


def bitwise_invert(x) -> Tensor:
    """``~x``: bitwise NOT of integers (two's complement: ~x = -x - 1), logical NOT of bools,
    as NumPy. Integer result: no gradient."""
    x = tensor_of(x)
    _integer_operand("bitwise_invert", x)
    return bind(P.bitwise_invert_p, x)


invert = bitwise_not = bitwise_invert  # NumPy's and PyTorch's names


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


def isinf(x) -> Tensor:
    """Elementwise test for +-infinity (complex: either part infinite). Boolean result: no
    gradient."""
    return bind(P.isinf_p, tensor_of(x))


def signbit(x) -> Tensor:
    """Whether the sign bit is set, elementwise: true for negative numbers, -0.0 and NaNs with
    the sign bit (real input). Boolean result: no gradient."""
    x = tensor_of(x)
    if x.dtype.kind == "b":
        raise DTypeError("signbit: bool input has no sign; compare the values instead.")
    return bind(P.signbit_p, x)


def copysign(x1, x2) -> Tensor:
    """|x1| with the sign bit of x2 (real input; integers promote to float64), also for zeros
    and NaNs. Derivative: sign(x1) times x2's sign in x1 (0 at x1 = 0, as ``abs``), 0 in x2
    (the sign is piecewise constant)."""
    a, b = operands("copysign", x1, x2)
    if is_complex(a.dtype):
        raise DTypeError(f"copysign: complex operands are not supported ({a.dtype}).")
    a, b = to_inexact(a), to_inexact(b)
    m = abs(a)
    return where(signbit(b), negative(m), m)


def nextafter(x1, x2) -> Tensor:
    """The next representable floating-point value after x1 toward x2, elementwise (real
    input). A step function on the floating-point grid: derivative 0 (as the rounding
    functions)."""
    a, b = operands("nextafter", x1, x2)
    if is_complex(a.dtype):
        raise DTypeError(f"nextafter: complex operands are not supported ({a.dtype}).")
    a, b = to_inexact(a), to_inexact(b)
    return bind(P.nextafter_p, a, b)


def logical_xor(x1, x2) -> Tensor:
    """Elementwise exclusive OR of truth values (nonzero is True), with NumPy broadcasting.
    Boolean result: no gradient."""
    a, b = operands("logical_xor", _as_bool(x1), _as_bool(x2))
    return bind(P.ne_p, a, b)


def positive(x) -> Tensor:
    """``+x``: the tensor itself (the array API's ``positive``); bools are refused, as NumPy."""
    x = tensor_of(x)
    if x.dtype.kind == "b":
        raise DTypeError("positive: bool input; cast it to a numeric dtype first.")
    return x


def sigmoid(x) -> Tensor:
    """The logistic function 1 / (1 + exp(-x)), computed as (tanh(x/2) + 1) / 2 (no overflow)."""
    x = to_inexact(tensor_of(x))
    return 0.5 * (tanh(0.5 * x) + 1)


def softplus(x) -> Tensor:
    """log(1 + exp(x)) = logaddexp(x, 0), computed stably; the derivative is sigmoid(x) (1/2
    at 0), smooth to every order."""
    x = to_inexact(tensor_of(x))
    return bind(P.logaddexp_p, x, bind(P.full_p, shape=x.shape, value=0, dtype=x.dtype,
                                       device=x.device))
