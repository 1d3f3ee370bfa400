"""NumPy's elementwise conveniences, written as compositions of primitives (so their
derivatives come from the primitives' rules): angle conversions, ``logaddexp``, ``hypot``,
``sinc``, ``fabs``, NaN-ignoring ``fmax``/``fmin``, ``nan_to_num``, and the two small
structured functions ``cross`` and ``select``."""

from __future__ import annotations

import math

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError, named_argument_errors
from ._base import (
    broadcast_shapes_of,
    broadcast_to,
    normalize_axis,
    operands,
    tensor_of,
    to_inexact,
)
from .elementwise import (
    abs,
    divide,
    equal,
    imag,
    isfinite,
    isnan,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    real,
    sin,
    sqrt,
    where,
)
from .misc import stop_gradient
from .reductions import all as all_
from .shape import moveaxis, stack

__all__ = [
    "allclose",
    "cross",
    "deg2rad",
    "degrees",
    "fabs",
    "fmax",
    "fmin",
    "hypot",
    "isclose",
    "logaddexp",
    "logaddexp2",
    "nan_to_num",
    "rad2deg",
    "radians",
    "select",
    "sinc",
]


def _real_inexact(op: str, *xs):
    out = operands(op, *xs)
    out = [to_inexact(x) for x in out]
    if out[0].dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input is not supported ({out[0].dtype}), as in NumPy; apply it to "
            f"the real and imaginary parts or to abs(x)."
        )
    return out


# ----------------------------------------------------------------- angle conversions
def deg2rad(x) -> Tensor:
    """Degrees to radians: x * pi / 180 (linear)."""
    return multiply(to_inexact(tensor_of(x)), math.pi / 180)


def rad2deg(x) -> Tensor:
    """Radians to degrees: x * 180 / pi (linear)."""
    return multiply(to_inexact(tensor_of(x)), 180 / math.pi)


radians = deg2rad
degrees = rad2deg


# ---------------------------------------------------------------- log-sum of two terms
def logaddexp(x1, x2) -> Tensor:
    """log(exp(x1) + exp(x2)) without overflow (one primitive, the backend's ``logaddexp``).

    Derivative: the softmax weights exp(x_i - out); at x1 == x2 each gets 1/2. Smooth to every
    order, also on the diagonal x1 == x2 (second derivative 1/4 there). Where both are
    infinite with the same sign the value is that infinity and the derivative 0 (the function
    is constant around such a point); a NaN operand gives NaN."""
    a, b = _real_inexact("logaddexp", x1, x2)
    return bind(P.logaddexp_p, a, b)


def logaddexp2(x1, x2) -> Tensor:
    """log2(2**x1 + 2**x2) without overflow (``logaddexp`` in base 2, same conventions:
    smooth to every order)."""
    a, b = _real_inexact("logaddexp2", x1, x2)
    return divide(logaddexp(multiply(a, math.log(2)), multiply(b, math.log(2))), math.log(2))


# ------------------------------------------------------------------------------ hypot
def hypot(x1, x2) -> Tensor:
    """sqrt(x1^2 + x2^2) without overflow or underflow (both are scaled by the larger
    magnitude, a constant for differentiation, so every derivative is exact).

    Derivative (x1, x2)/hypot, taken as 0 at the origin (a subgradient, as for norms)."""
    a, b = _real_inexact("hypot", x1, x2)
    m = stop_gradient(maximum(abs(a), abs(b)))
    zero = logical_or(m == 0, logical_not(m < np.inf))
    s = where(zero, 1.0, m)
    u, v = divide(a, s), divide(b, s)
    r2 = u * u + v * v
    origin = r2 == 0
    r = where(origin, 0.0, sqrt(where(origin, 1.0, r2)))
    inf = logical_or(abs(a) == np.inf, abs(b) == np.inf)  # hypot(inf, nan) = inf, as NumPy
    return where(inf, np.inf, multiply(r, s))


# ------------------------------------------------------------------------------- sinc
_SINC_SMALL = 0.25  # |x| below which the Taylor series is used


def _sinc_taylor(x):
    """sinc(x) = sum_k (-1)^k (pi x)^(2k) / (2k + 1)! to degree 22 (error < 1e-24 for
    |x| < 0.25): a polynomial, so every derivative at and near 0 is exact."""
    z = multiply(x * x, math.pi**2)
    out = 0.0
    for k in range(11, -1, -1):
        out = out * z + ((-1) ** k) / math.factorial(2 * k + 1)
    return out


def sinc(x) -> Tensor:
    """sin(pi x) / (pi x), and 1 at 0 (NumPy's normalised sinc). Near 0 it is evaluated by
    its Taylor series, so derivatives of every order are right there too (sinc'(0) = 0,
    sinc''(0) = -pi^2/3). Complex input is supported (holomorphic)."""
    x = to_inexact(tensor_of(x))
    small = abs(x) < _SINC_SMALL
    safe = where(small, 1.0, x)
    px = multiply(safe, math.pi)
    far = divide(sin(px), px)
    near = _sinc_taylor(where(small, x, 0.0))
    return where(small, near, far)


# ------------------------------------------------------------------------------- fabs
def fabs(x) -> Tensor:
    """|x| for real input (NumPy's ``fabs`` has no complex version). Derivative sign(x),
    0 at x = 0."""
    x = to_inexact(tensor_of(x))
    if x.dtype.kind == "c":
        raise DTypeError(
            f"fabs: complex input ({x.dtype}) is not supported, as in NumPy; use abs."
        )
    return abs(x)


# ---------------------------------------------------------------- NaN-aware extrema
def fmax(x1, x2) -> Tensor:
    """Elementwise maximum ignoring NaN (NaN only where both are NaN). Ties split the
    gradient 50/50 (as ``maximum``); where one operand is NaN the other gets all of it."""
    a, b = operands("fmax", x1, x2)
    if a.dtype.kind == "c":
        raise DTypeError(f"fmax: complex values are not ordered ({a.dtype}).")
    if a.dtype.kind != "f":
        return maximum(a, b)
    return where(isnan(b), a, where(isnan(a), b, maximum(a, b)))


def fmin(x1, x2) -> Tensor:
    """Elementwise minimum ignoring NaN (NaN only where both are NaN). Ties split the
    gradient 50/50 (as ``minimum``); where one operand is NaN the other gets all of it."""
    a, b = operands("fmin", x1, x2)
    if a.dtype.kind == "c":
        raise DTypeError(f"fmin: complex values are not ordered ({a.dtype}).")
    if a.dtype.kind != "f":
        return minimum(a, b)
    return where(isnan(b), a, where(isnan(a), b, minimum(a, b)))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """Replace NaN by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (default: the
    largest/smallest finite value of the dtype), as NumPy; complex input is treated part by
    part. ``copy`` is accepted for NumPy compatibility (tensors are never modified in place).
    Derivative: 1 where the value is kept, 0 where it was replaced."""
    del copy
    x = tensor_of(x)
    if x.dtype.kind not in "fc":
        return x
    if x.dtype.kind == "c":
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return re + multiply(im.astype(x.dtype, copy=False), 1j)
    info = np.finfo(x.dtype)
    hi = info.max if posinf is None else posinf
    lo = info.min if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(x == np.inf, hi, out)
    return where(x == -np.inf, lo, out)


# ------------------------------------------------------------------------------ cross
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """Cross product of 3-vectors (or the z component for 2-vectors, as NumPy) along the
    given axes, broadcasting the rest. Bilinear, so its derivative is exact everywhere."""
    a, b = tensor_of(a), tensor_of(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, normalize_axis("cross", axisa, a.ndim), -1)
    b = moveaxis(b, normalize_axis("cross", axisb, b.ndim), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ShapeError(
            f"cross: the vector axes need length 2 or 3, got {na} and {nb} (shapes {a.shape}, "
            f"{b.shape})."
        )
    dt = np.result_type(a.dtype, b.dtype)
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    shape = broadcast_shapes_of("cross", a.shape[:-1], b.shape[:-1])
    ac = [broadcast_to(a[..., i], shape) for i in range(na)]
    bc = [broadcast_to(b[..., i], shape) for i in range(nb)]
    if na == 2 and nb == 2:
        return ac[0] * bc[1] - ac[1] * bc[0]
    if na == 2:
        ac.append(None)
    if nb == 2:
        bc.append(None)

    def m(u, v):
        return 0 if u is None or v is None else u * v

    c = [m(ac[1], bc[2]) - m(ac[2], bc[1]), m(ac[2], bc[0]) - m(ac[0], bc[2]),
         m(ac[0], bc[1]) - m(ac[1], bc[0])]
    c = [ci if isinstance(ci, Tensor) else broadcast_to(tensor_of(ci, like=ac[0]), shape)
         for ci in c]
    out = stack(c, -1)
    return moveaxis(out, -1, normalize_axis("cross", axisc, out.ndim))


# ------------------------------------------------------------------------------ select
@named_argument_errors("select")
def select(condlist, choicelist, default=0) -> Tensor:
    """NumPy's ``select``: the element of the first choice whose condition holds, else
    ``default`` (all broadcast together). The derivative goes to the chosen operand."""
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ShapeError(
            f"select: {len(condlist)} conditions but {len(choicelist)} choices; give one "
            f"choice per condition."
        )
    if not condlist:
        raise ShapeError("select: condlist is empty; give at least one condition.")
    conds = [tensor_of(c) for c in condlist]
    for c in conds:
        if c.dtype.kind != "b":
            raise DTypeError(f"select: conditions must be bool tensors, got {c.dtype}.")
    out = default
    for c, v in zip(reversed(conds), reversed(choicelist)):
        out = where(c, v, out)
    return tensor_of(out) if not isinstance(out, Tensor) else out



def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Tensor:
    """NumPy's ``isclose``: ``|a - b| <= atol + rtol |b|`` elementwise (not symmetric in a and
    b, as NumPy); infinities are close only to the same infinity, NaN to nothing unless
    ``equal_nan``. A boolean result: no gradient."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not v >= 0:
            raise ShapeError(f"isclose: {name} must be a number >= 0, got {v!r:.40}.")
    a, b = operands("isclose", a, b)
    a, b = stop_gradient(a), stop_gradient(b)
    finite = logical_and(isfinite(a), isfinite(b))
    fa, fb = where(finite, a, 0), where(finite, b, 0)  # no inf - inf where they are not finite
    out = where(finite, less_equal(abs(fa - fb), atol + rtol * abs(fb)), equal(a, b))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def allclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """NumPy's ``allclose``: whether ``isclose`` holds everywhere (a Python bool, as NumPy's;
    under ``jit`` the values are not known, so it raises ``ConcretizationError``)."""
    return bool(all_(isclose(a, b, rtol, atol, equal_nan)))
