"""The Laplace distribution (``scipy.stats.laplace``): density e^(-|y|) / (2 scale). At
x = loc the derivative of |y| is taken as 0 (``tenferro.abs``'s convention)."""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..ops import abs as _abs
from ..ops import exp, log, log1p, minimum, where
from ._common import invalid_to_nan, promote, safe, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_LOG2 = math.log(2.0)


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, -|y| - log(2 scale)."""
    y, s = standardize("laplace.logpdf", x, loc, scale)
    return invalid_to_nan(-_abs(y) - log(s) - _LOG2, s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(-|y|) / (2 scale)."""
    y, s = standardize("laplace.pdf", x, loc, scale)
    return invalid_to_nan(0.5 * exp(-_abs(y)) / s, s > 0)


def _lower(y):
    """P(Y <= y) for the standard Laplace: e^y / 2 below 0, 1 - e^(-y) / 2 above."""
    neg = y < 0
    return where(neg, 0.5 * exp(minimum(y, 0.0)), 1.0 - 0.5 * exp(-safe(neg, y, 0.0, taken=False)))


def _log_lower(y):
    neg = y < 0
    return where(neg, minimum(y, 0.0) - _LOG2,
                 log1p(-0.5 * exp(-safe(neg, y, 0.0, taken=False))))


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x)."""
    y, s = standardize("laplace.cdf", x, loc, scale)
    return invalid_to_nan(_lower(y), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) (the reflected cdf, accurate in the upper tail)."""
    y, s = standardize("laplace.sf", x, loc, scale)
    return invalid_to_nan(_lower(-y), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x): y - log 2 below loc, log1p(-e^(-y)/2) above."""
    y, s = standardize("laplace.logcdf", x, loc, scale)
    return invalid_to_nan(_log_lower(y), s > 0)


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x)."""
    y, s = standardize("laplace.logsf", x, loc, scale)
    return invalid_to_nan(_log_lower(-y), s > 0)


def _ppf(q):
    low = q <= 0.5
    return where(low, log(2.0 * safe(low, q, 0.25)),
                 -_LOG2 - log1p(-safe(low, q, 0.75, taken=False)))


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function: log(2q) below 1/2, -log(2(1-q)) above; nan outside [0, 1]."""
    q, loc, scale = promote("laplace.ppf", q, loc, scale)
    return invalid_to_nan(loc + scale * _ppf(q), scale > 0, q >= 0, q <= 1)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``: loc - scale ppf_standard(q)."""
    q, loc, scale = promote("laplace.isf", q, loc, scale)
    return invalid_to_nan(loc - scale * _ppf(q), scale > 0, q >= 0, q <= 1)
