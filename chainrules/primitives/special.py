"""Special functions (SciPy's ``scipy.special`` names): ``erf``, ``erfc``, ``erfinv``,
``erfcinv``, ``gammaln``, ``gamma``, ``rgamma``, ``polygamma`` (``digamma`` is order 0),
``xlogy``, ``beta``, ``betaln``, the regularized incomplete functions ``gammainc``,
``gammaincc``, ``betainc`` and ``betaincc``, and the Bessel functions ``jn``, ``yn`` (integer
order) and ``iv``, ``ive`` (real order), each with a static order parameter.

``impl`` calls ``xp.special``, the backend's special-function namespace: SciPy on the NumPy
backend, ``cupyx.scipy.special`` on CuPy, and on ``array_api_strict`` (which has none) an
explicit, documented round trip through host NumPy/SciPy (``tenferro.backends.special``).
``xlogy`` needs only array-API operations.

Derivatives: erf' = 2/sqrt(pi) exp(-x^2), erfinv' = sqrt(pi)/2 exp(erfinv(x)^2),
gammaln' = digamma, polygamma(n)' = polygamma(n + 1), gamma' = gamma digamma, the incomplete
functions' derivatives in x are their integrands (their derivatives in the shape parameters
are not implemented: a ``GradientError`` names the argument), and the Bessel functions follow
their recurrences (J_n' = (J_{n-1} - J_{n+1}) / 2, I_v' = (I_{v-1} + I_{v+1}) / 2).
``erf``/``erfc`` accept complex input (holomorphic); the others are real functions, as in
SciPy.
"""

from __future__ import annotations

import math

from ..core import Primitive, ShapedArray, Zero
from ..errors import GradientError, ShapeError
from ..params import INDEX, REAL
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


# ------------------------------------------------------------ gamma, rgamma, erfcinv
def _digamma(b, x):
    return b.bind(polygamma_p, x, n=0)


gamma_p = _special(
    "gamma", lambda b, x, y: b.mul(y, _digamma(b, x)), real=True,
    convention="real; Gamma(x), derivative Gamma(x) digamma(x); poles at 0, -1, -2, ... "
    "(inf/nan as SciPy)",
)
rgamma_p = _special(
    "rgamma", lambda b, x, y: b.neg(b.mul(y, _digamma(b, x))), real=True,
    convention="real; 1/Gamma(x) (0 at the poles), derivative -digamma(x)/Gamma(x): nan at the "
    "poles 0, -1, -2, ... where digamma is",
)
erfcinv_p = _special(
    "erfcinv", lambda b, x, y: b.mul(b.exp(b.mul(y, y)), -_SQRT_PI_OVER_TWO), real=True,
    convention="real; inverse of erfc on (0, 2), derivative -sqrt(pi)/2 exp(erfcinv(x)^2): "
    "inf at x = 0 and 2",
)


# -------------------------------------------------------------------- beta and betaln
def _special_n(name, argnames, convention, derivs, impl=None):
    """An ``nargs``-operand real special function; ``derivs[i](b, args, y)`` is its partial
    derivative in operand i, or ``None`` where it is not implemented (a tangent there raises
    a ``GradientError`` naming the argument)."""
    p = Primitive(name, convention=convention)

    @p.def_abstract_eval
    def aval(*args):
        a = same_shape_and_dtype(name, *args)
        require_inexact(name, a)
        require_real(name, a)
        return a

    p.def_impl(impl or (lambda xp, *args: getattr(xp.special, name)(*args)))

    @p.def_jvp
    def jvp(b, primals, tangents):
        y = b.bind(p, *primals)
        out = Zero(ShapedArray(y.shape, y.dtype))
        for i, (t, d) in enumerate(zip(tangents, derivs)):
            if type(t) is Zero:
                continue
            if d is None:
                raise GradientError(
                    f"{name}: the derivative in its argument {argnames[i]!r} (position {i}) "
                    f"is not implemented, only in "
                    f"{', '.join(repr(n) for n, f in zip(argnames, derivs) if f)}; pass "
                    f"{argnames[i]!r} as a constant (or through tenferro.stop_gradient)."
                )
            out = b.add(out, b.mul(t, d(b, primals, y)))
        return y, out

    return p


def _betaln_derivs():
    def d(i):
        def f(b, args, y):
            a, c = args
            return b.sub(_digamma(b, args[i]), _digamma(b, b.add(a, c)))
        return f
    return d(0), d(1)


betaln_p = _special_n(
    "betaln", ("a", "b"), "real; log|B(a, b)|, derivatives digamma(a) - digamma(a + b) and "
    "digamma(b) - digamma(a + b)", _betaln_derivs())
beta_p = _special_n(
    "beta", ("a", "b"), "real; B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), derivatives "
    "B(a, b) (digamma(a) - digamma(a + b)) and the same in b",
    tuple((lambda f: lambda b, args, y: b.mul(y, f(b, args, y)))(f) for f in _betaln_derivs()))


# ------------------------------------------------- regularized incomplete gamma and beta
def _gamma_density(b, args, y):
    """x^(a-1) e^(-x) / Gamma(a), the integrand of gammainc (0 at x = 0 for a > 1)."""
    a, x = args
    return b.exp(b.sub(b.sub(b.bind(xlogy_p, b.sub(a, b.ones_like(a)), x), x),
                       b.bind(gammaln_p, a)))


gammainc_p = _special_n(
    "gammainc", ("a", "x"), "real; the regularized lower incomplete gamma P(a, x), derivative in x "
    "x^(a-1) e^(-x) / Gamma(a); no derivative in a", (None, _gamma_density))
gammaincc_p = _special_n(
    "gammaincc", ("a", "x"), "real; the regularized upper incomplete gamma Q(a, x) = 1 - P(a, x), "
    "derivative in x -x^(a-1) e^(-x) / Gamma(a); no derivative in a",
    (None, lambda b, args, y: b.neg(_gamma_density(b, args, y))))


def _beta_density(b, args, y):
    """x^(a-1) (1-x)^(b-1) / B(a, b), the integrand of betainc."""
    a, c, x = args
    one = b.ones_like(x)
    return b.exp(b.sub(b.add(b.bind(xlogy_p, b.sub(a, one), x),
                             b.bind(xlogy_p, b.sub(c, one), b.sub(one, x))),
                       b.bind(betaln_p, a, c)))


betainc_p = _special_n(
    "betainc", ("a", "b", "x"), "real; the regularized incomplete beta I_x(a, b), derivative in x "
    "x^(a-1) (1-x)^(b-1) / B(a, b); no derivative in a or b", (None, None, _beta_density))

betaincc_p = _special_n(
    "betaincc", ("a", "b", "x"), "real; the complement 1 - I_x(a, b), accurate where I_x is "
    "near 1; derivative in x -x^(a-1) (1-x)^(b-1) / B(a, b); no derivative in a or b",
    (None, None, lambda b, args, y: b.neg(_beta_density(b, args, y))))


# ---------------------------------------------------------------------------- Bessel
def _bessel(name, param, kind, impl, deriv, convention):
    """A Bessel function of the static order ``param``: ``deriv(b, x, y, order)``."""
    p = Primitive(name, params={param: kind}, convention=convention)

    def check(x):
        require_inexact(name, x)
        require_real(name, x)
        return x

    if param == "n":
        p.def_abstract_eval(lambda x, *, n: check(x))
    else:
        p.def_abstract_eval(lambda x, *, v: check(x))
    p.def_impl(lambda xp, x, **params: impl(xp, x, params[param]))

    @p.def_jvp
    def jvp(b, primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = b.bind(p, x, **params)
        if type(t) is Zero:
            return y, t
        return y, b.mul(t, deriv(b, x, y, params[param]))

    return p


def _jn_impl(xp, x, n):
    sp = xp.special
    return sp.j0(x) if n == 0 else sp.j1(x) if n == 1 else sp.jv(n, x)


def _yn_impl(xp, x, n):
    sp = xp.special
    return sp.y0(x) if n == 0 else sp.y1(x) if n == 1 else sp.yn(n, x)


def _iv_impl(xp, x, v):
    sp = xp.special
    return sp.i0(x) if v == 0 else sp.i1(x) if v == 1 else sp.iv(v, x)


def _half_difference(p, param, sign):
    """(f_{k-1} + sign f_{k+1}) / 2, the recurrence for the derivative of order k."""
    def deriv(b, x, y, k):
        lo = b.bind(p(), x, **{param: k - 1})
        hi = b.bind(p(), x, **{param: k + 1})
        return b.mul(b.add(lo, hi) if sign > 0 else b.sub(lo, hi), 0.5)
    return deriv


jn_p = _bessel(
    "jn", "n", INDEX, _jn_impl, _half_difference(lambda: jn_p, "n", -1),
    "real; the Bessel function J_n(x) of integer order n, derivative (J_{n-1} - J_{n+1}) / 2")
yn_p = _bessel(
    "yn", "n", INDEX, _yn_impl, _half_difference(lambda: yn_p, "n", -1),
    "real; the Bessel function Y_n(x) of integer order n, derivative (Y_{n-1} - Y_{n+1}) / 2; "
    "-inf at 0, nan for x < 0 (as SciPy)")
iv_p = _bessel(
    "iv", "v", REAL, _iv_impl, _half_difference(lambda: iv_p, "v", 1),
    "real; the modified Bessel function I_v(x) of real order v, derivative "
    "(I_{v-1} + I_{v+1}) / 2; nan for x < 0 and non-integer v (as SciPy)")


def _ive_deriv(b, x, y, v):
    rec = _half_difference(lambda: ive_p, "v", 1)(b, x, y, v)
    return b.sub(rec, b.mul(b.sign(x), y))


ive_p = _bessel(
    "ive", "v", REAL, lambda xp, x, v: xp.special.ive(v, x), _ive_deriv,
    "real; I_v(x) exp(-|x|) (no overflow for large x), derivative "
    "(ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v (sign(0) = 0: the one-sided derivatives "
    "at x = 0 differ by 2 ive_v(0))")


for _p in (erf_p, erfc_p, erfinv_p, polygamma_p, gammaln_p, xlogy_p, gamma_p, rgamma_p,
           erfcinv_p, betaln_p, beta_p, gammainc_p, gammaincc_p, betainc_p, betaincc_p, jn_p,
           yn_p, iv_p, ive_p):
    _batching.elementwise(_p)
del _p
