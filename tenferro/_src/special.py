"""Implementation of ``tenferro.special`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from .core.dispatch import bind
from .core.tensor import Tensor
from .errors import DTypeError, ShapeError
from .ops import (
    copysign,
    floor,
    full_like,
    log,
    log1p,
    logsumexp,
    remainder,
    sigmoid,
    tensor_of,
    where,
)
from .ops._base import operands, to_inexact

__all__ = [
    "beta",
    "betainc",
    "betaincc",
    "betaln",
    "digamma",
    "erf",
    "erfc",
    "erfcinv",
    "erfinv",
    "expit",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "i0",
    "i1",
    "iv",
    "ive",
    "j0",
    "j1",
    "jn",
    "logit",
    "logsumexp",  # tenferro.logsumexp: SciPy's (a, axis, b, keepdims, return_sign)
    "multigammaln",
    "polygamma",
    "psi",
    "rgamma",
    "xlog1py",
    "xlogy",
    "y0",
    "y1",
    "yn",
]


def _inexact(op: str, x, *, real: bool) -> Tensor:
    x = to_inexact(tensor_of(x))
    if real and x.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input ({x.dtype}) is not supported; {op} is a real function here, "
            f"as in SciPy."
        )
    return x


def erf(z) -> Tensor:
    """The error function 2/sqrt(pi) int_0^z exp(-t^2) dt; derivative 2/sqrt(pi) exp(-z^2).
    Complex input supported (holomorphic)."""
    return bind(P.erf_p, _inexact("erf", z, real=False))


def erfc(x) -> Tensor:
    """1 - erf(x), accurate for large x; derivative -2/sqrt(pi) exp(-x^2). Complex input
    supported."""
    return bind(P.erfc_p, _inexact("erfc", x, real=False))


def erfinv(y) -> Tensor:
    """Inverse of ``erf`` on (-1, 1) (+-inf at +-1, nan outside); derivative
    sqrt(pi)/2 exp(erfinv(y)^2), infinite at +-1. Real input only."""
    return bind(P.erfinv_p, _inexact("erfinv", y, real=True))


def gammaln(x) -> Tensor:
    """log|Gamma(x)| (inf at the poles 0, -1, -2, ...); derivative digamma(x). Real input
    only."""
    return bind(P.gammaln_p, _inexact("gammaln", x, real=True))


def polygamma(n: int, x) -> Tensor:
    """The n-th derivative of digamma (n = 0: digamma itself), for a static non-negative int
    ``n``; derivative polygamma(n + 1, x). Real input only."""
    if isinstance(n, Tensor) or int(n) != n or n < 0:
        raise ShapeError(f"polygamma: the order n must be a non-negative Python int, got {n!r}.")
    return bind(P.polygamma_p, _inexact("polygamma", x, real=True), n=int(n))


def digamma(x) -> Tensor:
    """d/dx log Gamma(x) (poles at 0, -1, -2, ...); derivative polygamma(1, x). Real input
    only."""
    return polygamma(0, x)


def xlogy(x, y) -> Tensor:
    """x * log(y), defined as 0 where x == 0 (also where y == 0). Derivative: log(y) in x
    (-inf at y = 0) and x / y in y, which is 0 where x == 0 (the function is 0 along that
    line)."""
    a, b = (to_inexact(t) for t in operands("xlogy", x, y))
    return bind(P.xlogy_p, a, b)


def expit(x) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x)) (computed as (1 + tanh(x/2)) / 2, stable for
    large |x|)."""
    return sigmoid(x)


def logit(p) -> Tensor:
    """log(p / (1 - p)), the inverse of ``expit`` (-inf at 0, inf at 1, nan outside [0, 1]);
    derivative 1 / (p (1 - p))."""
    p = to_inexact(tensor_of(p))
    return log(p) - log1p(-p)



def _real_operands(op: str, *xs) -> list[Tensor]:
    """Broadcast and promote like NumPy, then require real floating input (these are real
    functions in SciPy)."""
    out = [to_inexact(t) for t in operands(op, *xs)]
    if out[0].dtype.kind == "c":
        raise DTypeError(f"{op}: complex input ({out[0].dtype}) is not supported; {op} is a "
                         f"real function here, as in SciPy.")
    return out


def psi(x) -> Tensor:
    """SciPy's name for ``digamma`` (d/dx log Gamma(x)); derivative polygamma(1, x)."""
    return polygamma(0, x)


def erfcinv(y) -> Tensor:
    """Inverse of ``erfc`` on (0, 2) (inf at 0, -inf at 2, nan outside), accurate for tiny y
    where ``erfinv(1 - y)`` is not; derivative -sqrt(pi)/2 exp(erfcinv(y)^2). Real input
    only."""
    return bind(P.erfcinv_p, _inexact("erfcinv", y, real=True))


def gamma(x) -> Tensor:
    """Gamma(x) (inf/nan at the poles 0, -1, -2, ... as SciPy); a primitive rather than
    sign * exp(gammaln) so large arguments keep full precision. Derivative
    Gamma(x) digamma(x). Real input only."""
    return bind(P.gamma_p, _inexact("gamma", x, real=True))


def rgamma(x) -> Tensor:
    """1 / Gamma(x): 0 at the poles, finite where Gamma overflows; derivative
    -digamma(x) / Gamma(x) (nan at the poles, where digamma is). Real input only."""
    return bind(P.rgamma_p, _inexact("rgamma", x, real=True))


def gammasgn(x) -> Tensor:
    """The sign of Gamma(x) (SciPy's values: 1 for x > 0 and +0, -1 for -0, nan at the
    negative integers, (-1)^floor(x) between them). Piecewise constant: derivative 0."""
    x = _inexact("gammasgn", x, real=True)
    one = full_like(x, 1.0)
    between = 1.0 - 2.0 * remainder(floor(x), 2.0)
    neg = where(floor(x) == x, full_like(x, float("nan")), between)
    return where(x > 0, one, where(x == 0, copysign(one, x), neg))


def betaln(a, b) -> Tensor:
    """log|B(a, b)| (SciPy's: an asymptotic form once an argument exceeds 1e6, where
    gammaln(a) + gammaln(b) - gammaln(a + b) would cancel); derivatives
    digamma(a) - digamma(a + b) and digamma(b) - digamma(a + b). Broadcasts; real input
    only."""
    return bind(P.betaln_p, *_real_operands("betaln", a, b))


def beta(a, b) -> Tensor:
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b); derivative
    B(a, b) (digamma(a) - digamma(a + b)) in a (and the same in b). Broadcasts; real input
    only."""
    return bind(P.beta_p, *_real_operands("beta", a, b))


def gammainc(a, x) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x) (SciPy's argument order).
    Differentiable in x (derivative x^(a-1) e^(-x) / Gamma(a)); a derivative in ``a`` raises
    a ``GradientError`` (not implemented: pass ``a`` as a constant)."""
    return bind(P.gammainc_p, *_real_operands("gammainc", a, x))


def gammaincc(a, x) -> Tensor:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), accurate in
    the upper tail. Differentiable in x (derivative -x^(a-1) e^(-x) / Gamma(a)); a derivative
    in ``a`` raises a ``GradientError``."""
    return bind(P.gammaincc_p, *_real_operands("gammaincc", a, x))


def betainc(a, b, x) -> Tensor:
    """The regularized incomplete beta function I_x(a, b) (SciPy's argument order).
    Differentiable in x (derivative x^(a-1) (1-x)^(b-1) / B(a, b)); a derivative in ``a`` or
    ``b`` raises a ``GradientError`` (not implemented: pass them as constants)."""
    return bind(P.betainc_p, *_real_operands("betainc", a, b, x))


def betaincc(a, b, x) -> Tensor:
    """1 - betainc(a, b, x), computed directly (accurate where betainc is near 1).
    Differentiable in x (derivative -x^(a-1) (1-x)^(b-1) / B(a, b)); a derivative in ``a``
    or ``b`` raises a ``GradientError``."""
    return bind(P.betaincc_p, *_real_operands("betaincc", a, b, x))


def xlog1py(x, y) -> Tensor:
    """x * log1p(y), defined as 0 where x == 0 (also where y == -1); derivatives log1p(y)
    in x and x / (1 + y) in y, 0 where x == 0 (a composition of ``where`` and ``log1p``)."""
    x, y = _real_operands("xlog1py", x, y)
    zero = x == 0
    out = x * log1p(where(zero, full_like(y, 0.0), y))
    return where(zero, full_like(out, 0.0), out)


def multigammaln(a, d: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``d`` (a Python int >= 1):
    d(d-1)/4 log(pi) + sum_j gammaln(a - j/2), j = 0..d-1 (a composition, so differentiable
    in a). Where a <= (d-1)/2 SciPy raises; here the result is nan (a traced value cannot be
    checked)."""
    if isinstance(d, Tensor) or int(d) != d or d < 1:
        raise ShapeError(f"multigammaln: the dimension d must be a Python int >= 1, got {d!r}.")
    d = int(d)
    a = _inexact("multigammaln", a, real=True)
    out = gammaln(a)
    for j in range(1, d):
        out = out + gammaln(a - 0.5 * j)
    out = out + d * (d - 1) / 4.0 * 1.1447298858494002  # log(pi)
    return where(a > 0.5 * (d - 1), out, full_like(out, float("nan")))


def _order(op: str, n, *, integer: bool):
    """The static order of a Bessel function, checked: an int (``integer``) or a real."""
    number = isinstance(n, (int, float, np.integer, np.floating)) and not isinstance(n, bool)
    if not number or n != n or (integer and int(n) != n):
        kind = "a Python int" if integer else "a Python real number"
        raise ShapeError(f"{op}: the order must be {kind} (a static parameter), got {n!r}; "
                         f"for several orders call {op} once per order.")
    return int(n) if integer else float(n)


def jn(n: int, x) -> Tensor:
    """The Bessel function of the first kind J_n(x) of integer order ``n`` (a Python int);
    derivative (J_{n-1}(x) - J_{n+1}(x)) / 2. Real input only."""
    return bind(P.jn_p, _inexact("jn", x, real=True), n=_order("jn", n, integer=True))


def j0(x) -> Tensor:
    """The Bessel function J_0(x); derivative -J_1(x)."""
    return jn(0, x)


def j1(x) -> Tensor:
    """The Bessel function J_1(x); derivative (J_0(x) - J_2(x)) / 2."""
    return jn(1, x)


def yn(n: int, x) -> Tensor:
    """The Bessel function of the second kind Y_n(x) of integer order ``n`` (-inf at 0, nan
    for x < 0); derivative (Y_{n-1}(x) - Y_{n+1}(x)) / 2. Real input only."""
    return bind(P.yn_p, _inexact("yn", x, real=True), n=_order("yn", n, integer=True))


def y0(x) -> Tensor:
    """The Bessel function Y_0(x); derivative -Y_1(x)."""
    return yn(0, x)


def y1(x) -> Tensor:
    """The Bessel function Y_1(x); derivative (Y_0(x) - Y_2(x)) / 2."""
    return yn(1, x)


def iv(v: float, x) -> Tensor:
    """The modified Bessel function of the first kind I_v(x) of real order ``v`` (a Python
    number; nan for x < 0 and non-integer v, as SciPy); derivative
    (I_{v-1}(x) + I_{v+1}(x)) / 2. Real input only."""
    return bind(P.iv_p, _inexact("iv", x, real=True), v=_order("iv", v, integer=False))


def ive(v: float, x) -> Tensor:
    """The exponentially scaled I_v(x) exp(-|x|), finite where I_v overflows; derivative
    (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive_v(x). Real input only."""
    return bind(P.ive_p, _inexact("ive", x, real=True), v=_order("ive", v, integer=False))


def i0(x) -> Tensor:
    """The modified Bessel function I_0(x); derivative I_1(x)."""
    return iv(0, x)


def i1(x) -> Tensor:
    """The modified Bessel function I_1(x); derivative (I_0(x) + I_2(x)) / 2."""
    return iv(1, x)
