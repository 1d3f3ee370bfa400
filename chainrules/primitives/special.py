"""Special functions (SciPy's ``scipy.special`` names): ``erf``, ``erfc``, ``erfinv``,
``gammaln``, ``polygamma`` (``digamma`` is order 0) and ``xlogy``.

``impl`` calls ``xp.special``, the backend's special-function namespace: SciPy on the NumPy
backend, ``cupyx.scipy.special`` on CuPy, and on ``array_api_strict`` (which has none) an
explicit, documented round trip through host NumPy/SciPy (``tenferro.backends.special``).
``xlogy`` needs only array-API operations.

Derivatives: erf' = 2/sqrt(pi) exp(-x^2), erfinv' = sqrt(pi)/2 exp(erfinv(x)^2),
gammaln' = digamma, polygamma(n)' = polygamma(n + 1). ``erf``/``erfc`` accept complex input
(holomorphic); the others are real functions, as in SciPy.
"""

from __future__ import annotations

import math

from ..core import Primitive, ShapedArray, Zero
from ..errors import ShapeError
from ..params import INDEX
from . import _batching
from ._checks import require_inexact, require_real, same_shape_and_dtype
from ._rules import scaled_tangent_jvp

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _unary_aval(name, *, real):
    def aval(x):
        require_inexact(name, x)
        if real:
            require_real(name, x)
        return x

    return aval


def _special(name, deriv, *, real, convention="", impl=None):
    """A unary special function with tangent_out = deriv(b, x, y) * tangent."""
    p = Primitive(name, convention=convention)
    p.def_abstract_eval(_unary_aval(name, real=real))
    p.def_impl(impl or (lambda xp, x: getattr(xp.special, name)(x)))

    p.def_jvp(scaled_tangent_jvp(p, deriv))
    return p


def _gauss(b, x):
    """2/sqrt(pi) exp(-x^2)."""
    return b.mul(b.exp(b.neg(b.mul(x, x))), _TWO_OVER_SQRT_PI)


erf_p = _special("erf", lambda b, x, y: _gauss(b, x), real=False)
erfc_p = _special("erfc", lambda b, x, y: b.neg(_gauss(b, x)), real=False)
erfinv_p = _special(
    "erfinv", lambda b, x, y: b.mul(b.exp(b.mul(y, y)), _SQRT_PI_OVER_TWO), real=True,
    convention="real; derivative sqrt(pi)/2 exp(erfinv(x)^2): inf at x = +-1",
)

# --------------------------------------------------------------- polygamma and gammaln
polygamma_p = Primitive(
    "polygamma", params={"n": INDEX},
    convention="real; the order-n derivative of digamma (n = 0: digamma itself); poles at "
    "0, -1, -2, ... (inf/nan as SciPy)",
)


@polygamma_p.def_abstract_eval
def _polygamma_aval(x, *, n):
    require_inexact("polygamma", x)
    require_real("polygamma", x)
    if not (isinstance(n, int) and n >= 0):
        raise ShapeError(f"polygamma: the order n must be a non-negative int, got {n!r}.")
    return x


@polygamma_p.def_impl
def _polygamma_impl(xp, x, *, n):
    if n == 0:
        return xp.special.psi(x)
    return xp.special.polygamma(n, x)


@polygamma_p.def_jvp
def _polygamma_jvp(b, primals, tangents, *, n):
    (x,), (t,) = primals, tangents
    y = b.bind(polygamma_p, x, n=n)
    if type(t) is Zero:
        return y, t
    return y, b.mul(t, b.bind(polygamma_p, x, n=n + 1))


gammaln_p = _special(
    "gammaln", lambda b, x, y: b.bind(polygamma_p, x, n=0), real=True,
    convention="real; log|Gamma(x)|, derivative digamma(x); poles at 0, -1, -2, ...",
)

# -------------------------------------------------------------------------------- xlogy
xlogy_p = Primitive(
    "xlogy",
    convention="x * log(y), and 0 where x == 0 (also for y == 0); derivative log(y) in x "
    "(-inf at y = 0) and x / y in y, taken as 0 where x == 0 (the function is 0 along x = 0)",
)


@xlogy_p.def_abstract_eval
def _xlogy_aval(x, y):
    a = same_shape_and_dtype("xlogy", x, y)
    require_inexact("xlogy", a)
    return a


@xlogy_p.def_impl
def _xlogy_impl(xp, x, y):
    zero = x == 0
    out = x * xp.log(xp.where(zero, xp.ones_like(y), y))
    return xp.where(zero, xp.zeros_like(out), out)


@xlogy_p.def_jvp
def _xlogy_jvp(b, primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = b.bind(xlogy_p, x, y)
    t = Zero(ShapedArray(x.shape, x.dtype))
    if type(tx) is not Zero:
        t = b.add(t, b.mul(tx, b.log(y)))
    if type(ty) is not Zero:
        zero = b.eq(x, 0)
        safe_y = b.select(zero, b.ones_like(y), y)
        t = b.add(t, b.mul(ty, b.select(zero, b.zeros_like(x), b.div(x, safe_y))))
    return out, t


for _p in (erf_p, erfc_p, erfinv_p, polygamma_p, gammaln_p, xlogy_p):
    _batching.elementwise(_p)
del _p
