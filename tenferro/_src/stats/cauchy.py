"""The Cauchy distribution (``scipy.stats.cauchy``): density 1 / (pi scale (1 + y^2)). The cdf
is arctan2(1, -y) / pi, which keeps relative accuracy in the lower tail (0.5 + arctan(y)/pi
cancels there)."""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..ops import arctan2, exp, full_like, log, log1p, logical_not, logical_or, tan, where
from ._common import invalid_to_nan, log_of_tail, promote, safe, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_LOG_PI = math.log(math.pi)


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, -log(pi scale) - log1p(y^2)."""
    y, s = standardize("cauchy.logpdf", x, loc, scale)
    return invalid_to_nan(-_LOG_PI - log(s) - log1p(y * y), s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, loc, scale))


def _lower(y):
    return arctan2(full_like(y, 1.0), -y) / math.pi


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = arctan2(1, -y) / pi."""
    y, s = standardize("cauchy.cdf", x, loc, scale)
    return invalid_to_nan(_lower(y), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = arctan2(1, y) / pi."""
    y, s = standardize("cauchy.sf", x, loc, scale)
    return invalid_to_nan(_lower(-y), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x), accurate in both tails."""
    y, s = standardize("cauchy.logcdf", x, loc, scale)
    return invalid_to_nan(log_of_tail(_lower(y), _lower(-y)), s > 0)


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x), accurate in both tails."""
    y, s = standardize("cauchy.logsf", x, loc, scale)
    return invalid_to_nan(log_of_tail(_lower(-y), _lower(y)), s > 0)


def _ppf(q):
    """tan(pi (q - 1/2)), written as -1 / tan(pi q) below 1/4 and 1 / tan(pi (1 - q)) above
    3/4, so tiny tail probabilities keep their digits (pi (q - 1/2) rounds to -pi/2 there)."""
    low, high = q < 0.25, q > 0.75
    mid = logical_not(logical_or(low, high))
    return where(low, -1.0 / tan(math.pi * safe(low, q, 0.1)),
                 where(high, 1.0 / tan(math.pi * (1.0 - safe(high, q, 0.9))),
                       tan(math.pi * (safe(mid, q, 0.5) - 0.5))))


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function, loc + scale tan(pi (q - 1/2)); nan outside [0, 1]."""
    q, loc, scale = promote("cauchy.ppf", q, loc, scale)
    return invalid_to_nan(loc + scale * _ppf(q), scale > 0, q >= 0, q <= 1)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, loc - scale tan(pi (q - 1/2)); nan outside [0, 1]."""
    q, loc, scale = promote("cauchy.isf", q, loc, scale)
    return invalid_to_nan(loc - scale * _ppf(q), scale > 0, q >= 0, q <= 1)
