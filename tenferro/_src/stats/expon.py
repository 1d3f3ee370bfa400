"""The exponential distribution (``scipy.stats.expon``): density e^(-y) / scale on
y = (x - loc)/scale >= 0. ``cdf`` is -expm1(-y) (accurate near loc), ``logcdf``
log(-expm1(-y)), ``logsf`` exactly -y."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, expm1, full_like, log, log1p, where
from ._common import INF, invalid_to_nan, log_of_tail, promote, safe, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _y(op, x, loc, scale):
    y, s = standardize(op, x, loc, scale)
    inside = y >= 0
    return y, s, inside, safe(inside, y, 1.0)


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, -y - log(scale); -inf below loc."""
    y, s, inside, ys = _y("expon.logpdf", x, loc, scale)
    return invalid_to_nan(where(inside, -ys - log(s), full_like(y, -INF)), s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(-y) / scale; 0 below loc."""
    y, s, inside, ys = _y("expon.pdf", x, loc, scale)
    return invalid_to_nan(where(inside, exp(-ys) / s, full_like(y, 0.0)), s > 0)


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = -expm1(-y)."""
    y, s, inside, ys = _y("expon.cdf", x, loc, scale)
    return invalid_to_nan(where(inside, -expm1(-ys), full_like(y, 0.0)), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x) = log(-expm1(-y)) (log1p(-exp(-y)) where the cdf is near 1); -inf at
    and below loc."""
    y, s, inside, ys = _y("expon.logcdf", x, loc, scale)
    pos = y > 0
    yp = safe(pos, y, 1.0)
    out = log_of_tail(-expm1(-yp), exp(-yp))
    return invalid_to_nan(where(pos, out, full_like(y, -INF)), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = exp(-y) (1 below loc)."""
    y, s, inside, ys = _y("expon.sf", x, loc, scale)
    return invalid_to_nan(where(inside, exp(-ys), full_like(y, 1.0)), s > 0)


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x) = -y (0 below loc)."""
    y, s, inside, ys = _y("expon.logsf", x, loc, scale)
    return invalid_to_nan(where(inside, -ys, full_like(y, 0.0)), s > 0)


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function, loc - scale log1p(-q); nan outside [0, 1]."""
    q, loc, scale = promote("expon.ppf", q, loc, scale)
    return invalid_to_nan(loc - scale * log1p(-q), scale > 0, q >= 0, q <= 1)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, loc - scale log(q); nan outside [0, 1]."""
    q, loc, scale = promote("expon.isf", q, loc, scale)
    return invalid_to_nan(loc - scale * log(q), scale > 0, q >= 0, q <= 1)
