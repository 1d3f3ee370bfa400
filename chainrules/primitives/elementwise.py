"""Elementwise primitives: arithmetic, analytic functions, comparisons, select, casts, constants.

Elementwise primitives never broadcast and never promote: operands have equal shapes and dtypes
(the user-facing layer inserts ``broadcast_in_dim`` and ``convert_element_type``).

Complex convention: every JVP is the R-linear derivative; holomorphic functions multiply the
tangent by f'(z). Transposes are adjoints under <a, b> = Re sum conj(a) * b.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from ..core import Primitive, ShapedArray, Zero, is_undefined, no_flops
from ..dtypes import bool_, is_complex, is_inexact, real_dtype
from ..errors import DTypeError, NonLinearError, ShapeError
from ..params import DEVICE, DTYPE, INT, REAL, SCALAR, SHAPE, BadParam
from . import _batching
from ._checks import require_bool, require_inexact, require_real, same_shape_and_dtype
from ._rules import scaled_tangent_jvp


def _nonlinear(op: str, what: str):
    raise NonLinearError(
        f"{op}: cannot transpose: {what}. The function handed to linear_transpose (or to "
        f"reverse mode) is not linear in its input."
    )


# --------------------------------------------------------------------------- constants
def _full_value_fits(params):
    """The fill value can be stored in the dtype without overflow or loss of an imaginary
    part (``abstract_eval`` leaves that to the run)."""
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        try:
            np.asarray(params["value"], dtype=params["dtype"])
        except Exception:
            raise BadParam(
                f"value {params['value']!r} cannot be stored as {params['dtype'].name}"
            ) from None


full_p = Primitive("full", differentiable=False, cost=no_flops, check_params=_full_value_fits,
                   params={"shape": SHAPE, "value": SCALAR, "dtype": DTYPE, "device": DEVICE})
full_p.__doc__ = "A constant of the given shape filled with ``value`` (no inputs)."


@full_p.def_abstract_eval
def _full_aval(*, shape, value, dtype, device):
    return ShapedArray(shape, dtype)


@full_p.def_impl
def _full_impl(xp, *, shape, value, dtype, device):
    return xp.constant(shape, value, dtype)


def _iota_dtype(params):
    if params["dtype"].kind not in "iuf":
        raise BadParam(f"iota counts in an integer or real dtype, not {params['dtype'].name}")


iota_p = Primitive("iota", differentiable=False, cost=no_flops, check_params=_iota_dtype,
                   params={"shape": SHAPE, "dimension": INT, "dtype": DTYPE, "device": DEVICE})
iota_p.__doc__ = "Integers counting along ``dimension`` of ``shape`` (no inputs)."


@iota_p.def_abstract_eval
def _iota_aval(*, shape, dimension, dtype, device):
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"iota: dimension {dimension} out of range for shape {shape}.")
    return ShapedArray(shape, dtype)


@iota_p.def_impl
def _iota_impl(xp, *, shape, dimension, dtype, device):
    r = xp.arange(shape[dimension], dtype=dtype)
    r = xp.reshape(r, tuple(n if i == dimension else 1 for i, n in enumerate(shape)))
    return xp.broadcast_to(r, shape)


# ------------------------------------------------------------------ linear unary ops
neg_p = Primitive("neg", linear=True)
conj_p = Primitive("conj", linear=True)
real_p = Primitive("real", linear=True)
imag_p = Primitive("imag", linear=True)


@neg_p.def_abstract_eval
def _neg_aval(x):
    if x.dtype.kind == "b":
        raise DTypeError("neg: cannot negate a bool operand; use logical_not.")
    return x


neg_p.def_impl(lambda xp, x: -x)
neg_p.def_specialize(lambda xp, in_avals: operator.neg)
neg_p.def_jvp(lambda b, p, t: (b.neg(p[0]), b.neg(t[0])))
neg_p.def_transpose(lambda b, ct, x: (b.neg(ct),))


def _complex_only(op):
    def aval(x):
        if not is_complex(x.dtype):
            raise DTypeError(
                f"{op}: the primitive expects a complex operand, got {x}; the tenferro.{op} "
                f"function handles real operands."
            )
        return x if op == "conj" else ShapedArray(x.shape, real_dtype(x.dtype))

    return aval


conj_p.def_abstract_eval(_complex_only("conj"))
conj_p.def_impl(lambda xp, x: xp.conj(x))
conj_p.def_jvp(lambda b, p, t: (b.conj(p[0]), b.conj(t[0])))
conj_p.def_transpose(lambda b, ct, x: (b.conj(ct),))

real_p.def_abstract_eval(_complex_only("real"))
real_p.def_impl(lambda xp, x: xp.real(x))
real_p.def_jvp(lambda b, p, t: (b.real(p[0]), b.real(t[0])))
# <ct, Re t> = ct * Re t = Re(conj(ct) t) for real ct: the adjoint embeds ct as complex.
real_p.def_transpose(lambda b, ct, x: (b.convert(ct, x.dtype),))

imag_p.def_abstract_eval(_complex_only("imag"))
imag_p.def_impl(lambda xp, x: xp.imag(x))
imag_p.def_jvp(lambda b, p, t: (b.imag(p[0]), b.imag(t[0])))
# <ct, Im t> = Re(conj(i ct) t): the adjoint is i * ct.
imag_p.def_transpose(
    lambda b, ct, x: (b.mul(b.convert(ct, x.dtype), b.full(ct.shape, 1j, x.dtype)),)
)


# --------------------------------------------------------------- analytic unary ops
def _inexact_unary(op):
    def aval(x):
        require_inexact(op, x)
        return x

    return aval


_NAMESPACE_IMPL = frozenset(
    ("exp", "log", "log1p", "sin", "cos", "tan", "sinh", "cosh", "tanh", "expm1", "square"))
_REAL_ONLY = frozenset(("tanh", "expm1"))  # complex operands fix special values in impl


def _namespace_function(name, real_only):
    """A ``specialize`` rule calling the namespace's function directly (compiled graphs)."""

    def specialize(xp, in_avals):
        if real_only and is_complex(in_avals[0].dtype):
            return None
        return getattr(xp, name, None)

    return specialize


def _analytic(name, impl, deriv, convention=""):
    """A holomorphic unary primitive: tangent_out = f'(x) * tangent."""
    p = Primitive(name, convention=convention)
    p.def_abstract_eval(_inexact_unary(name))
    p.def_impl(impl)
    if name in _NAMESPACE_IMPL:  # impl is ``xp.<name>`` (for real operands at least)
        p.def_specialize(_namespace_function(name, real_only=name in _REAL_ONLY))

    p.def_jvp(scaled_tangent_jvp(p, deriv))
    return p


exp_p = _analytic("exp", lambda xp, x: xp.exp(x), lambda b, x, y: y)
log_p = _analytic(
    "log", lambda xp, x: xp.log(x), lambda b, x, y: b.reciprocal(x),
    "derivative 1/x (inf at 0); complex: principal branch",
)
log1p_p = _analytic("log1p", lambda xp, x: xp.log1p(x), lambda b, x, y: b.reciprocal(b.add(x, 1)))
def _expm1_impl(xp, x):
    y = xp.expm1(x)
    if not xp.isdtype(x.dtype, "complex floating"):
        return y
    # the C99/array API special values NumPy's complex expm1 misses (it returns NaN there)
    a, b = xp.real(x), xp.imag(x)
    neg_b = xp.signbit(b)
    zero_b = b == 0
    for mask, value in (
        (xp.logical_and(a == 0, zero_b), 0j),  # exactly 0 (NumPy keeps a -0 real part)
        (xp.logical_and(a == xp.inf, zero_b), complex(xp.inf, 0.0)),
        (xp.logical_and(xp.isnan(a), zero_b), complex(xp.nan, 0.0)),
        (xp.logical_and(a == -xp.inf, xp.logical_not(xp.isfinite(b))), complex(-1.0, 0.0)),
        (xp.logical_and(a == xp.inf, xp.logical_not(xp.isfinite(b))), complex(xp.inf, xp.nan)),
    ):
        c = xp.full_like(y, value)  # on y's device
        if value.imag == 0:  # conj(expm1(z)) == expm1(conj(z)): the sign of a zero b
            c = xp.where(neg_b, xp.conj(c), c)
        y = xp.where(mask, c, y)
    return y


expm1_p = _analytic("expm1", _expm1_impl, lambda b, x, y: b.add(y, 1))
sin_p = _analytic("sin", lambda xp, x: xp.sin(x), lambda b, x, y: b.cos(x))
cos_p = _analytic("cos", lambda xp, x: xp.cos(x), lambda b, x, y: b.neg(b.sin(x)))
tan_p = _analytic("tan", lambda xp, x: xp.tan(x), lambda b, x, y: b.add(b.mul(y, y), 1))
def _tanh_impl(xp, x):
    y = xp.tanh(x)
    if not xp.isdtype(x.dtype, "complex floating"):
        return y
    # the array API's tanh(+-inf + bj) = +-1 + 0j for finite b (the zero with b's sign, by
    # conjugate symmetry); C99 and NumPy give the zero the sign of sin(2b)
    a, b = xp.real(x), xp.imag(x)
    edge = xp.logical_and(xp.isinf(a), xp.isfinite(b))
    for sign_a in (1.0, -1.0):
        for sign_b, value in ((False, complex(sign_a, 0.0)), (True, complex(sign_a, -0.0))):
            mask = xp.logical_and(xp.logical_and(edge, a == sign_a * xp.inf),
                                  xp.signbit(b) if sign_b else xp.logical_not(xp.signbit(b)))
            y = xp.where(mask, xp.full_like(y, value), y)
    return y


tanh_p = _analytic("tanh", _tanh_impl, lambda b, x, y: b.sub(1, b.mul(y, y)))
sinh_p = _analytic("sinh", lambda xp, x: xp.sinh(x), lambda b, x, y: b.cosh(x))
cosh_p = _analytic("cosh", lambda xp, x: xp.cosh(x), lambda b, x, y: b.sinh(x))
arctan_p = _analytic(
    "arctan", lambda xp, x: xp.atan(x), lambda b, x, y: b.reciprocal(b.add(b.mul(x, x), 1))
)
sqrt_p = _analytic(
    "sqrt", lambda xp, x: xp.sqrt(x), lambda b, x, y: b.div(0.5, y),
    "derivative 1/(2 sqrt x): inf at 0",
)
rsqrt_p = _analytic(
    "rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda b, x, y: b.mul(b.mul(b.mul(y, y), y), -0.5),
    "derivative -x^(-3/2)/2: inf at 0",
)
square_p = _analytic("square", lambda xp, x: xp.square(x), lambda b, x, y: b.mul(x, 2))

# inverse trigonometric and hyperbolic functions (complex: principal branches, whose derivatives
# are the formulas below with the principal square root)
arcsin_p = _analytic(
    "arcsin", lambda xp, x: xp.asin(x), lambda b, x, y: b.rsqrt(b.sub(1, b.mul(x, x))),
    "derivative 1/sqrt(1 - x^2): inf at x = +-1; complex: principal branch",
)
arccos_p = _analytic(
    "arccos", lambda xp, x: xp.acos(x),
    lambda b, x, y: b.neg(b.rsqrt(b.sub(1, b.mul(x, x)))),
    "derivative -1/sqrt(1 - x^2): inf at x = +-1; complex: principal branch",
)
arcsinh_p = _analytic(
    "arcsinh", lambda xp, x: xp.asinh(x), lambda b, x, y: b.rsqrt(b.add(b.mul(x, x), 1)),
    "complex: principal branch (derivative 1/sqrt(1 + z^2))",
)
arccosh_p = _analytic(
    "arccosh", lambda xp, x: xp.acosh(x),
    lambda b, x, y: b.mul(b.rsqrt(b.sub(x, 1)), b.rsqrt(b.add(x, 1))),
    "derivative 1/(sqrt(x - 1) sqrt(x + 1)): inf at x = 1; complex: principal branch",
)
arctanh_p = _analytic(
    "arctanh", lambda xp, x: xp.atanh(x), lambda b, x, y: b.reciprocal(b.sub(1, b.mul(x, x))),
    "derivative 1/(1 - x^2): inf at x = +-1; complex: principal branch",
)

_LN2, _LN10 = 0.6931471805599453, 2.302585092994046


def _exp2_impl(xp, x):
    f = getattr(xp, "exp2", None)  # NumPy/CuPy have it; the array API standard does not
    return f(x) if f is not None else xp.pow(2.0, x)


exp2_p = _analytic("exp2", _exp2_impl, lambda b, x, y: b.mul(y, _LN2))
log2_p = _analytic(
    "log2", lambda xp, x: xp.log2(x), lambda b, x, y: b.div(1 / _LN2, x),
    "derivative 1/(x ln 2) (inf at 0); complex: principal branch",
)
log10_p = _analytic(
    "log10", lambda xp, x: xp.log10(x), lambda b, x, y: b.div(1 / _LN10, x),
    "derivative 1/(x ln 10) (inf at 0); complex: principal branch",
)


# ------------------------------------------------------------- rounding (piecewise constant)
def _rounding(name, impl, what):
    p = Primitive(
        name, differentiable=False,
        convention=f"{what}: piecewise constant, derivative 0 everywhere (also at the jumps)",
    )

    @p.def_abstract_eval
    def aval(x):
        require_real(name, x)
        require_inexact(name, x)
        return x

    p.def_impl(impl)
    return p


floor_p = _rounding("floor", lambda xp, x: xp.floor(x), "largest integer <= x")
ceil_p = _rounding("ceil", lambda xp, x: xp.ceil(x), "smallest integer >= x")
trunc_p = _rounding("trunc", lambda xp, x: xp.trunc(x), "integer part, rounded toward 0")
round_p = _rounding("round", lambda xp, x: xp.round(x), "nearest integer, halves to even")


# ------------------------------------------------------------------ abs and sign
abs_p = Primitive("abs", convention="d abs(x)/dx = sign(x), which is 0 at x = 0 (also for complex)")


@abs_p.def_abstract_eval
def _abs_aval(x):
    if x.dtype.kind == "b":
        raise DTypeError("abs: bool operands have no absolute value.")
    return ShapedArray(x.shape, real_dtype(x.dtype))


abs_p.def_impl(lambda xp, x: xp.abs(x))


@abs_p.def_jvp
def _abs_jvp(b, primals, tangents):
    (x,), (t,) = primals, tangents
    y = b.abs(x)
    if type(t) is Zero or not is_inexact(x.dtype):
        return y, Zero(ShapedArray(x.shape, y.dtype))
    s = b.sign(x)
    if is_complex(x.dtype):
        return y, b.real(b.mul(t, b.conj(s)))  # d|z| = Re(conj(z/|z|) dz)
    return y, b.mul(t, s)


sign_p = Primitive(
    "sign",
    convention="real: derivative 0 everywhere (also at 0); complex z/|z|: tangential part "
    "i*s*Im(conj(s) dz)/|z|, and 0 at z = 0",
)


@sign_p.def_abstract_eval
def _sign_aval(x):
    if x.dtype.kind == "b":
        raise DTypeError("sign: bool operands have no sign.")
    return x


sign_p.def_impl(lambda xp, x: xp.sign(x))


@sign_p.def_jvp
def _sign_jvp(b, primals, tangents):
    (x,), (t,) = primals, tangents
    s = b.sign(x)
    if type(t) is Zero or not is_complex(x.dtype):
        return s, Zero(ShapedArray(x.shape, x.dtype))
    a = b.abs(x)
    safe = b.select(b.eq(a, 0), b.ones_like(a), a)
    coef = b.mul(b.div(s, b.convert(safe, x.dtype)), b.full(x.shape, 1j, x.dtype))
    return s, b.mul(b.convert(b.imag(b.mul(t, b.conj(s))), x.dtype), coef)


# ------------------------------------------------------------ binary arithmetic ops
def _binary_aval(op, *, inexact=False, real=False):
    def aval(x, y):
        a = same_shape_and_dtype(op, x, y)
        if inexact:
            require_inexact(op, a)
        if real:
            require_real(op, a)
        if a.dtype.kind == "b" and op in ("add", "sub", "mul", "div", "remainder",
                                          "floor_divide", "fmod"):
            raise DTypeError(f"{op}: bool operands; use logical_and/logical_or or cast first.")
        return a

    return aval


add_p = Primitive("add", linear=True)
add_p.def_abstract_eval(_binary_aval("add"))
add_p.def_impl(lambda xp, x, y: x + y)
add_p.def_specialize(lambda xp, in_avals: operator.add)
add_p.def_jvp(lambda b, p, t: (b.add(*p), b.add(*t)))
add_p.def_transpose(
    lambda b, ct, x, y: (ct if is_undefined(x) else None,
                         ct if is_undefined(y) else None)
)

sub_p = Primitive("sub", linear=True)
sub_p.def_abstract_eval(_binary_aval("sub"))
sub_p.def_impl(lambda xp, x, y: x - y)
sub_p.def_specialize(lambda xp, in_avals: operator.sub)
sub_p.def_jvp(lambda b, p, t: (b.sub(*p), b.sub(*t)))
sub_p.def_transpose(
    lambda b, ct, x, y: (ct if is_undefined(x) else None,
                         b.neg(ct) if is_undefined(y) else None)
)

mul_p = Primitive("mul")
mul_p.def_abstract_eval(_binary_aval("mul"))
mul_p.def_impl(lambda xp, x, y: x * y)
mul_p.def_specialize(lambda xp, in_avals: operator.mul)


@mul_p.def_jvp
def _mul_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return b.mul(x, y), b.add(b.mul(tx, y), b.mul(x, ty))


@mul_p.def_transpose
def _mul_transpose(b, ct, x, y):
    ux, uy = is_undefined(x), is_undefined(y)
    if ux and uy:
        _nonlinear("mul", "both factors depend on the input")
    if ux:
        return b.mul(ct, b.conj(y)), None
    return None, b.mul(b.conj(x), ct)


div_p = Primitive("div", convention="x/0 follows IEEE (inf/nan), derivatives likewise")
div_p.def_abstract_eval(_binary_aval("div", inexact=True))
div_p.def_impl(lambda xp, x, y: x / y)
div_p.def_specialize(lambda xp, in_avals: operator.truediv)


@div_p.def_jvp
def _div_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.div(x, y)
    return out, b.div(b.sub(tx, b.mul(ty, out)), y)


@div_p.def_transpose
def _div_transpose(b, ct, x, y):
    if is_undefined(y):
        _nonlinear("div", "the denominator depends on the input")
    return b.div(ct, b.conj(y)), None


pow_p = Primitive(
    "pow",
    convention="d/dx x^y = y x^(y-1), taken as 0 where y == 0; d/dy x^y = log(x) x^y, "
    "taken as 0 where x == 0; integer operands (an integer result, negative exponents "
    "refused as in NumPy): no gradient",
)


@pow_p.def_abstract_eval
def _pow_aval(x, y):
    a = same_shape_and_dtype("pow", x, y)
    if a.dtype.kind == "b":
        raise DTypeError("pow: bool operands; cast them to an integer or float dtype first.")
    return a


@pow_p.def_impl
def _pow_impl(xp, x, y):
    if not xp.isdtype(x.dtype, ("real floating", "complex floating")):
        # integer powers stay integers (NumPy); a negative exponent has no integer result
        if bool(xp.any(y < 0)):
            raise DTypeError(
                f"pow: integers to negative integer powers are not allowed (exponent "
                f"{int(xp.min(y))}, dtype {x.dtype}), as in NumPy; convert the base to a float "
                f"dtype first (x.astype(float))."
            )
    return xp.pow(x, y)


@pow_p.def_jvp
def _pow_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.pow(x, y)
    t = Zero(ShapedArray(x.shape, x.dtype))
    if not is_inexact(x.dtype):
        return out, t
    if type(tx) is not Zero:
        cx = b.mul(y, b.pow(x, b.sub(y, 1)))
        t = b.add(t, b.mul(tx, b.select(b.eq(y, 0), b.zeros_like(cx), cx)))
    if type(ty) is not Zero:
        is0 = b.eq(x, 0)
        logx = b.log(b.select(is0, b.ones_like(x), x))
        t = b.add(t, b.mul(ty, b.mul(logx, out)))
    return out, t


pow_scalar_p = Primitive("pow_scalar", convention="x^p with a static exponent p; x^0 = 1",
                         params={"exponent": REAL})


@pow_scalar_p.def_abstract_eval
def _pow_scalar_aval(x, *, exponent):
    if x.dtype.kind == "b":
        raise DTypeError("pow_scalar: bool operand.")
    if not is_inexact(x.dtype) and not (float(exponent).is_integer() and exponent >= 0):
        raise DTypeError(
            f"pow_scalar: integer operand {x} with exponent {exponent}; only non-negative integer "
            f"powers keep integer dtype. Convert with .astype(tenferro.float64)."
        )
    return x


pow_scalar_p.def_impl(lambda xp, x, *, exponent: x**exponent)


@pow_scalar_p.def_jvp
def _pow_scalar_jvp(b, primals, tangents, *, exponent):
    (x,), (t,) = primals, tangents
    out = b.pow_scalar(x, exponent)
    if exponent == 0 or type(t) is Zero:
        return out, Zero(ShapedArray(x.shape, x.dtype))
    if exponent == 1:
        return out, t
    e1 = exponent - 1
    e1 = int(e1) if float(e1).is_integer() else e1
    return out, b.mul(t, b.mul(b.pow_scalar(x, e1), exponent))


atan2_p = Primitive("atan2", convention="gradient 0 at the origin")
atan2_p.def_abstract_eval(_binary_aval("atan2", inexact=True, real=True))
atan2_p.def_impl(lambda xp, y, x: xp.atan2(y, x))


@atan2_p.def_jvp
def _atan2_jvp(b, primals, tangents):
    (y, x), (ty, tx) = primals, tangents
    out = b.atan2(y, x)
    r2 = b.add(b.mul(x, x), b.mul(y, y))
    is0 = b.eq(r2, 0)
    inv = b.select(is0, b.zeros_like(r2), b.reciprocal(b.select(is0, b.ones_like(r2), r2)))
    t = b.add(b.mul(ty, b.mul(x, inv)), b.mul(tx, b.neg(b.mul(y, inv))))
    return out, t


logaddexp_p = Primitive(
    "logaddexp",
    convention="derivative: the softmax weights sigmoid(x1 - x2), sigmoid(x2 - x1) (1/2 each "
    "at x1 == x2), smooth to every order; where both operands are infinite with the same sign "
    "the value is that infinity and the derivative 0 (the function is constant around it)",
)
logaddexp_p.__doc__ = """log(exp(x1) + exp(x2)), as the backend computes it (no overflow).

A primitive rather than max + log1p(exp(-|x1 - x2|)): that composition's kinks at x1 == x2
cancel in the value but not in the derivatives, whose second and higher orders then come out
0 on the diagonal. Its JVP weighs the tangents by sigmoid(+-(x1 - x2)), itself written with
``logaddexp``, so every derivative is smooth."""
logaddexp_p.def_abstract_eval(_binary_aval("logaddexp", inexact=True, real=True))
logaddexp_p.def_impl(lambda xp, x, y: xp.logaddexp(x, y))


@logaddexp_p.def_jvp
def _logaddexp_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.bind(logaddexp_p, x, y)
    flat = b.logical_and(b.eq(x, y), b.logical_not(b.isfinite(x)))  # inf, inf or -inf, -inf
    zero = b.zeros_like(x)
    # d = x - y, with 0 where both are the same infinity (no inf - inf: the weights there are
    # replaced, and a nan in the unused branch would reach higher derivatives as 0 * nan)
    d = b.sub(b.select(flat, zero, x), b.select(flat, zero, y))

    def weight(e):  # sigmoid(e) = exp(-logaddexp(0, -e)): accurate also where it is tiny
        return b.select(flat, zero, b.exp(b.neg(b.bind(logaddexp_p, zero, b.neg(e)))))

    t = Zero(ShapedArray(x.shape, x.dtype))
    if type(tx) is not Zero:
        t = b.add(t, b.mul(tx, weight(d)))
    if type(ty) is not Zero:
        t = b.add(t, b.mul(ty, weight(b.neg(d))))
    return out, t


floor_divide_p = Primitive(
    "floor_divide", differentiable=False,
    convention="floor(x / y) as NumPy computes it (consistent with remainder): piecewise "
    "constant, derivative 0",
)
floor_divide_p.def_abstract_eval(_binary_aval("floor_divide", real=True))


@floor_divide_p.def_impl
def _floor_divide_impl(xp, x, y):
    q = xp.floor_divide(x, y)
    if xp.isdtype(x.dtype, "real floating"):
        # IEEE 754 (the array API's special cases): with an infinite operand x / y is +-inf or
        # +-0, which floor keeps; NumPy's fmod-based floor_divide gives NaN or -1 there
        inf = xp.logical_or(xp.isinf(x), xp.isinf(y))
        q = xp.where(inf, xp.floor(x / y), q)
    return q

remainder_p = Primitive(
    "remainder",
    convention="x - floor_divide(x, y) * y, the sign of the divisor (Python's %); derivative "
    "1 in x and -floor_divide(x, y) in y: the derivative of the piece containing the point "
    "(also at the jumps, where x / y is an integer)",
)
remainder_p.def_abstract_eval(_binary_aval("remainder", real=True))
remainder_p.def_impl(lambda xp, x, y: xp.remainder(x, y))


@remainder_p.def_jvp
def _remainder_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.bind(remainder_p, x, y)
    if not is_inexact(x.dtype):
        return out, Zero(ShapedArray(x.shape, x.dtype))
    return out, b.sub(tx, b.mul(ty, b.bind(floor_divide_p, x, y)))


def _fmod_impl(xp, x, y):
    f = getattr(xp, "fmod", None)  # NumPy/CuPy; the array API standard has no fmod
    if f is not None:
        return f(x, y)
    # fmod of non-negative operands is the remainder; it is exact, and takes x's sign
    r = xp.remainder(xp.abs(x), xp.abs(y))
    if xp.isdtype(x.dtype, "real floating"):
        return xp.copysign(r, x)
    return xp.where(x < 0, -r, r)


fmod_p = Primitive(
    "fmod",
    convention="C's fmod: x - trunc(x / y) * y, the sign of the dividend; derivative 1 in x and "
    "-trunc(x / y) in y: the derivative of the piece containing the point (also at the jumps)",
)
fmod_p.def_abstract_eval(_binary_aval("fmod", real=True))
fmod_p.def_impl(_fmod_impl)


@fmod_p.def_jvp
def _fmod_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.bind(fmod_p, x, y)
    if not is_inexact(x.dtype):
        return out, Zero(ShapedArray(x.shape, x.dtype))
    if type(ty) is Zero:
        return out, tx
    q = b.bind(floor_divide_p, b.abs(x), b.abs(y))  # |trunc(x / y)|
    q = b.mul(q, b.mul(b.sign(x), b.sign(y)))
    return out, b.sub(tx, b.mul(ty, q))


def _tie_weight(b, x, y, win):
    """Weight of ``x`` in max/min: 1 where it strictly wins, 1/2 at ties, else 0."""
    half = b.full_like(x, 0.5)
    return b.select(win, b.ones_like(x), b.select(b.eq(x, y), half, b.zeros_like(x)))


def _minmax(name, xp_name, cmp):
    p = Primitive(name, convention="at ties the gradient is split 50/50 between the operands")
    p.def_abstract_eval(_binary_aval(name, real=True))
    p.def_impl(lambda xp, x, y: getattr(xp, xp_name)(x, y))

    def jvp(b, primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = b.bind(p, x, y)
        if not is_inexact(x.dtype):
            return out, Zero(ShapedArray(x.shape, x.dtype))
        wx = _tie_weight(b, x, y, getattr(b, cmp)(x, y))
        wy = b.sub(1, wx)
        return out, b.add(b.mul(tx, wx), b.mul(ty, wy))

    p.def_jvp(jvp)
    return p


maximum_p = _minmax("maximum", "maximum", "gt")
minimum_p = _minmax("minimum", "minimum", "lt")

clamp_p = Primitive(
    "clamp",
    convention="min(max(x, lo), hi): x gets the gradient strictly inside (lo, hi); hi where "
    "x >= hi (and everywhere if lo >= hi, as the value is hi there); lo where x <= lo < hi",
)


@clamp_p.def_abstract_eval
def _clamp_aval(x, lo, hi):
    a = same_shape_and_dtype("clamp", x, lo, hi)
    require_real("clamp", a)
    return a


clamp_p.def_impl(lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi))


@clamp_p.def_jvp
def _clamp_jvp(b, primals, tangents):
    (x, lo, hi), (tx, tlo, thi) = primals, tangents
    out = b.clamp(x, lo, hi)
    if not is_inexact(x.dtype):
        return out, Zero(ShapedArray(x.shape, x.dtype))
    above = b.logical_or(b.ge(x, hi), b.ge(lo, hi))
    below = b.logical_and(b.le(x, lo), b.logical_not(above))
    inside = b.logical_not(b.logical_or(below, above))
    t = b.add(b.where_or_zero(inside, tx), b.where_or_zero(below, tlo))
    return out, b.add(t, b.where_or_zero(above, thi))


# ------------------------------------------------------------------------ select
select_p = Primitive("select", linear=True)


@select_p.def_abstract_eval
def _select_aval(pred, x, y):
    require_bool("select", pred)
    if pred.shape != x.shape:
        raise ShapeError(
            f"select: predicate shape {pred.shape} differs from operand shape {x.shape}; "
            f"use tenferro.where, which broadcasts."
        )
    return same_shape_and_dtype("select", x, y)


select_p.def_impl(lambda xp, pred, x, y: xp.where(pred, x, y))


@select_p.def_jvp
def _select_jvp(b, primals, tangents):
    (pred, x, y), (_, tx, ty) = primals, tangents
    return b.select(pred, x, y), b.select(pred, tx, ty)


@select_p.def_transpose
def _select_transpose(b, ct, pred, x, y):
    if is_undefined(pred):
        _nonlinear("select", "the predicate depends on the input")
    z = b.zeros_like(ct)
    cx = b.select(pred, ct, z) if is_undefined(x) else None
    cy = b.select(pred, z, ct) if is_undefined(y) else None
    return None, cx, cy


# --------------------------------------------------------- comparisons and logic
def _bool_out(op, n_in, *, ordered=False, logical=False):
    def aval(*xs):
        a = same_shape_and_dtype(op, *xs) if n_in > 1 else xs[0]
        if logical:
            require_bool(op, a)
        elif ordered:
            require_real(op, a)
        return ShapedArray(a.shape, bool_)

    return aval


def _boolean(name, n_in, impl, **kw):
    p = Primitive(name, differentiable=False, convention="boolean output: no gradient")
    p.def_abstract_eval(_bool_out(name, n_in, **kw))
    p.def_impl(impl)
    return p


eq_p = _boolean("eq", 2, lambda xp, x, y: x == y)
ne_p = _boolean("ne", 2, lambda xp, x, y: x != y)
lt_p = _boolean("lt", 2, lambda xp, x, y: x < y, ordered=True)
le_p = _boolean("le", 2, lambda xp, x, y: x <= y, ordered=True)
gt_p = _boolean("gt", 2, lambda xp, x, y: x > y, ordered=True)
ge_p = _boolean("ge", 2, lambda xp, x, y: x >= y, ordered=True)
logical_and_p = _boolean("logical_and", 2, lambda xp, x, y: xp.logical_and(x, y), logical=True)
logical_or_p = _boolean("logical_or", 2, lambda xp, x, y: xp.logical_or(x, y), logical=True)
logical_not_p = _boolean("logical_not", 1, lambda xp, x: xp.logical_not(x), logical=True)
isfinite_p = _boolean("isfinite", 1, lambda xp, x: xp.isfinite(x))
isnan_p = _boolean("isnan", 1, lambda xp, x: xp.isnan(x))
isinf_p = _boolean("isinf", 1, lambda xp, x: xp.isinf(x))
signbit_p = _boolean("signbit", 1, lambda xp, x: xp.signbit(x), ordered=True)
signbit_p.__doc__ = "Whether the sign bit is set: true for -0.0 and negative NaNs too."

nextafter_p = Primitive(
    "nextafter", differentiable=False,
    convention="the next representable value after x toward y: a step function on the "
    "floating-point grid, derivative 0 everywhere (as for the rounding functions)",
)
nextafter_p.def_abstract_eval(_binary_aval("nextafter", inexact=True, real=True))
nextafter_p.def_impl(lambda xp, x, y: xp.nextafter(x, y))


# ------------------------------------------------------------------ bitwise operations
def _bitwise(name, n_in, impl, *, shift=False):
    """A bitwise primitive (NumPy's and the array API's semantics): integer operands, and bool
    ones where it is the logical operation (not for shifts); integer output, no gradient."""
    kinds = "iu" if shift else "biu"
    p = Primitive(name, differentiable=False, convention="integer or boolean output: no gradient")

    @p.def_abstract_eval
    def aval(*xs):
        a = same_shape_and_dtype(name, *xs) if n_in > 1 else xs[0]
        if a.dtype.kind not in kinds:
            raise DTypeError(
                f"{name}: operands must be integers{'' if shift else ' or bools'}, got {a}."
            )
        return a

    p.def_impl(impl)
    return p


bitwise_and_p = _bitwise("bitwise_and", 2, lambda xp, x, y: x & y)
bitwise_or_p = _bitwise("bitwise_or", 2, lambda xp, x, y: x | y)
bitwise_xor_p = _bitwise("bitwise_xor", 2, lambda xp, x, y: x ^ y)
bitwise_invert_p = _bitwise("bitwise_invert", 1, lambda xp, x: ~x)
bitwise_left_shift_p = _bitwise("bitwise_left_shift", 2, lambda xp, x, y: x << y, shift=True)
bitwise_right_shift_p = _bitwise("bitwise_right_shift", 2, lambda xp, x, y: x >> y, shift=True)


# ------------------------------------------------------------ convert_element_type
convert_element_type_p = Primitive(
    "convert_element_type", linear=True, cost=no_flops, params={"new_dtype": DTYPE},
    convention="complex -> real keeps the real part (complex -> bool: nonzero, as NumPy); "
    "integer/bool targets carry no gradient",
)


@convert_element_type_p.def_abstract_eval
def _convert_aval(x, *, new_dtype):
    return ShapedArray(x.shape, new_dtype)


@convert_element_type_p.def_impl
def _convert_impl(xp, x, *, new_dtype):
    if new_dtype.kind != "c" and xp.isdtype(x.dtype, "complex floating"):
        if new_dtype.kind == "b":
            return x != 0  # both parts count (NumPy): bool(2j) is True
        x = xp.real(x)
    return xp.astype(x, new_dtype)


@convert_element_type_p.def_jvp
def _convert_jvp(b, primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = b.convert(x, new_dtype)
    if type(t) is Zero or not (is_inexact(x.dtype) and is_inexact(new_dtype)):
        return out, Zero(ShapedArray(x.shape, new_dtype))
    return out, b.convert(t, new_dtype)


@convert_element_type_p.def_transpose
def _convert_transpose(b, ct, x, *, new_dtype):
    if not (is_inexact(x.dtype) and is_inexact(new_dtype)):
        return (Zero(x.aval),)
    return (b.convert(ct, x.dtype),)



# ---------------------------------------------------------- identity-like operations
copy_p = Primitive("copy", linear=True, cost=no_flops)
copy_p.__doc__ = "A fresh copy of the operand (identity as a function)."
copy_p.def_abstract_eval(lambda x: x)
copy_p.def_impl(lambda xp, x: xp.asarray(x, copy=True))
copy_p.def_jvp(lambda b, p, t: (b.bind(copy_p, p[0]), t[0]))
copy_p.def_transpose(lambda b, ct, x: (ct,))

stop_gradient_p = Primitive(
    "stop_gradient", differentiable=False, cost=no_flops,
    convention="identity whose derivative is zero",
)
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_impl(lambda xp, x: x)

optimization_barrier_p = Primitive(
    "optimization_barrier", linear=True, cse=False, cost=no_flops,
    convention="identity; graph optimisations never merge across it (checkpointing uses it "
    "so recomputation is not folded back into the forward pass)",
)
optimization_barrier_p.def_abstract_eval(lambda x: x)
optimization_barrier_p.def_impl(lambda xp, x: x)
optimization_barrier_p.def_jvp(
    lambda b, p, t: (b.bind(optimization_barrier_p, p[0]),
                     t[0] if type(t[0]) is Zero else b.bind(optimization_barrier_p, t[0]))
)
optimization_barrier_p.def_transpose(lambda b, ct, x: (b.bind(optimization_barrier_p, ct),))

device_put_p = Primitive(
    "device_put", linear=True, cost=no_flops, out_device=lambda params: params["device"],
    params={"device": DEVICE, "src": DEVICE},
    convention="a transfer between devices; its transpose transfers the cotangent back",
)
device_put_p.def_abstract_eval(lambda x, *, device, src: x)
device_put_p.def_impl(lambda xp, x, *, device, src: xp.transfer(x, device))
device_put_p.def_jvp(
    lambda b, p, t, *, device, src: (
        b.bind(device_put_p, p[0], device=device, src=src),
        t[0] if type(t[0]) is Zero else b.bind(device_put_p, t[0], device=device, src=src),
    )
)
device_put_p.def_transpose(
    lambda b, ct, x, *, device, src: (b.bind(device_put_p, ct, device=src, src=device),)
)


# Elementwise primitives trust the user-facing layer, which has already broadcast and
# promoted their operands; eager mode skips their abstract_eval (TENFERRO_CHECK=1 does not).
for _p in [v for v in list(globals().values()) if isinstance(v, Primitive)]:
    if _p is not device_put_p:
        _p.validate_eager = False
del _p

# Batching: every primitive here with operands is elementwise (``full``/``iota`` have none).
for _p in [v for v in list(globals().values()) if isinstance(v, Primitive)]:
    if _p not in (full_p, iota_p):
        _batching.elementwise(_p)
del _p
