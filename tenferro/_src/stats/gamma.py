"""The gamma distribution (``scipy.stats.gamma``) with shape ``a``: density
y^(a-1) e^(-y) / Gamma(a) / scale on y = (x - loc)/scale >= 0. ``cdf``/``sf`` are the
regularized incomplete gamma functions (``sf`` computed directly, accurate in the upper
tail). Derivatives: everything in x, loc, scale; ``logpdf``/``pdf`` also in ``a``; the cdf
family has no derivative in ``a`` (a ``GradientError`` says so)."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, full_like, log, where
from ..special import gammainc, gammaincc, gammaln, xlogy
from ._common import INF, invalid_to_nan, log_of_tail, safe, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _logpdf(op, x, a, loc, scale):
    y, s, a = standardize(op, x, loc, scale, a)
    inside = y >= 0
    ys = safe(inside, y, 1.0)
    out = where(inside, xlogy(a - 1.0, ys) - ys - gammaln(a) - log(s), full_like(y, -INF))
    return invalid_to_nan(out, s > 0, a > 0)


def logpdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, (a-1) log y - y - gammaln(a) - log(scale); -inf below loc."""
    return _logpdf("gamma.logpdf", x, a, loc, scale)


def pdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(_logpdf("gamma.pdf", x, a, loc, scale))


def _p(op, x, a, loc, scale, upper: bool):
    y, s, a = standardize(op, x, loc, scale, a)
    inside = y > 0
    ys = safe(inside, y, 1.0)
    f = gammaincc if upper else gammainc
    out = where(inside, f(a, ys), full_like(y, 1.0 if upper else 0.0))
    return invalid_to_nan(out, s > 0, a > 0)


def cdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = gammainc(a, y)."""
    return _p("gamma.cdf", x, a, loc, scale, upper=False)


def sf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = gammaincc(a, y), accurate in the upper tail."""
    return _p("gamma.sf", x, a, loc, scale, upper=True)


def logcdf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x): log(gammainc) where it is small, log1p(-gammaincc) where it is near 1."""
    return log_of_tail(_p("gamma.logcdf", x, a, loc, scale, upper=False),
                       _p("gamma.logcdf", x, a, loc, scale, upper=True))


def logsf(x, a, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x), accurate in both tails."""
    return log_of_tail(_p("gamma.logsf", x, a, loc, scale, upper=True),
                       _p("gamma.logsf", x, a, loc, scale, upper=False))
