"""The normal distribution (``scipy.stats.norm``): ``loc`` is the mean, ``scale`` the standard
deviation. ``cdf``/``sf`` use ``erfc`` (no 1 - erf cancellation), ``logcdf``/``logsf`` stay
finite and accurate far in the tails (an asymptotic series below -20, ``log1p`` above 0) and
``ppf``/``isf`` use ``erfcinv`` (accurate for tiny probabilities)."""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..ops import exp, full_like, log, log1p, logical_not, logical_or, where
from ..special import erfc, erfcinv
from ._common import LOG_2PI_HALF, SQRT1_2, SQRT2, invalid_to_nan, promote, safe, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]

_ASYMPTOTIC_BELOW = -20.0
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_TERMS = 12  # the series' 13th term is below 1e-20 at -20


def ndtr(y: Tensor) -> Tensor:
    """The standard normal cdf, 0.5 erfc(-y / sqrt(2))."""
    return 0.5 * erfc(-y * SQRT1_2)


def log_ndtr(y: Tensor) -> Tensor:
    """log of the standard normal cdf, accurate everywhere: log1p(-ndtr(-y)) above 0,
    log(ndtr(y)) down to -20, and below that the asymptotic expansion
    -y^2/2 - log(-y) - log(2 pi)/2 + log(1 - 1/y^2 + 3/y^4 - 15/y^6 + ...)."""
    upper, lower = y > 0, y <= _ASYMPTOTIC_BELOW
    yu = safe(upper, y, 1.0)
    ym = safe(logical_not(logical_or(upper, lower)), y, -1.0)
    yl = safe(lower, y, _ASYMPTOTIC_BELOW)
    z = 1.0 / (yl * yl)
    s = full_like(z, 1.0)
    for k in range(_TERMS, 0, -1):
        s = 1.0 - (2 * k - 1) * z * s
    tail = -0.5 * yl * yl - log(-yl) - LOG_2PI_HALF + log(s)
    return where(upper, log1p(-ndtr(-yu)), where(lower, tail, log(ndtr(ym))))


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, -((x - loc)/scale)^2 / 2 - log(scale) - log(2 pi)/2."""
    y, s = standardize("norm.logpdf", x, loc, scale)
    return invalid_to_nan(-0.5 * y * y - log(s) - LOG_2PI_HALF, s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(-y^2/2) / (scale sqrt(2 pi)) with y = (x - loc)/scale (not
    exp(logpdf): adding log(scale) to a large exponent would cost digits)."""
    y, s = standardize("norm.pdf", x, loc, scale)
    return invalid_to_nan(exp(-0.5 * y * y) * _INV_SQRT_2PI / s, s > 0)


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = erfc(-(x - loc) / (scale sqrt 2)) / 2 (relative accuracy in the lower
    tail)."""
    y, s = standardize("norm.cdf", x, loc, scale)
    return invalid_to_nan(ndtr(y), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = cdf of the reflected point (accurate in the upper tail, unlike 1 - cdf)."""
    y, s = standardize("norm.sf", x, loc, scale)
    return invalid_to_nan(ndtr(-y), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x), finite and accurate in both tails (not log(cdf), which is -inf below
    about -38)."""
    y, s = standardize("norm.logcdf", x, loc, scale)
    return invalid_to_nan(log_ndtr(y), s > 0)


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x), accurate in both tails."""
    y, s = standardize("norm.logsf", x, loc, scale)
    return invalid_to_nan(log_ndtr(-y), s > 0)


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function (inverse of ``cdf``): loc - scale sqrt(2) erfcinv(2 q); nan
    outside [0, 1]."""
    q, loc, scale = promote("norm.ppf", q, loc, scale)
    return invalid_to_nan(loc - scale * SQRT2 * erfcinv(2.0 * q), scale > 0)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``: loc + scale sqrt(2) erfcinv(2 q)."""
    q, loc, scale = promote("norm.isf", q, loc, scale)
    return invalid_to_nan(loc + scale * SQRT2 * erfcinv(2.0 * q), scale > 0)
