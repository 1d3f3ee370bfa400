"""The beta distribution (``scipy.stats.beta``) with shapes ``a``, ``b`` on
y = (x - loc)/scale in [0, 1]. ``cdf``/``sf`` are ``betainc``/``betaincc`` (each accurate in
its own tail). Derivatives: everything in x, loc, scale; ``logpdf``/``pdf`` also in a and b;
the cdf family has no derivative in a or b (a ``GradientError`` says so)."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, full_like, log, logical_and, where
from ..special import betainc, betaincc, betaln, xlog1py, xlogy
from ._common import INF, invalid_to_nan, log_of_tail, safe, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _logpdf(op, x, a, b, loc, scale):
    y, s, a, b = standardize(op, x, loc, scale, a, b)
    inside = logical_and(y >= 0, y <= 1)
    ys = safe(inside, y, 0.5)
    out = xlogy(a - 1.0, ys) + xlog1py(b - 1.0, -ys) - betaln(a, b) - log(s)
    return invalid_to_nan(where(inside, out, full_like(y, -INF)), s > 0, a > 0, b > 0)


def logpdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, (a-1) log y + (b-1) log(1-y) - betaln(a, b) - log(scale); -inf
    outside [0, 1]."""
    return _logpdf("beta.logpdf", x, a, b, loc, scale)


def pdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(_logpdf("beta.pdf", x, a, b, loc, scale))


def _p(op, x, a, b, loc, scale, upper: bool):
    y, s, a, b = standardize(op, x, loc, scale, a, b)
    inside = logical_and(y > 0, y < 1)
    ys = safe(inside, y, 0.5)
    below, above = (1.0, 0.0) if upper else (0.0, 1.0)
    outside = where(y <= 0, full_like(y, below), full_like(y, above))
    out = where(inside, (betaincc if upper else betainc)(a, b, ys), outside)
    return invalid_to_nan(out, s > 0, a > 0, b > 0)


def cdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = betainc(a, b, y)."""
    return _p("beta.cdf", x, a, b, loc, scale, upper=False)


def sf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = betaincc(a, b, y), accurate in the upper tail."""
    return _p("beta.sf", x, a, b, loc, scale, upper=True)


def logcdf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x), accurate in both tails (log1p(-sf) where the cdf is near 1)."""
    return log_of_tail(_p("beta.logcdf", x, a, b, loc, scale, upper=False),
                       _p("beta.logcdf", x, a, b, loc, scale, upper=True))


def logsf(x, a, b, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x), accurate in both tails."""
    return log_of_tail(_p("beta.logsf", x, a, b, loc, scale, upper=True),
                       _p("beta.logsf", x, a, b, loc, scale, upper=False))
