"""The uniform distribution on [loc, loc + scale] (``scipy.stats.uniform``). The cdf is
clip(y, 0, 1): its derivative is 1/scale inside and 0 outside (``clip``'s convention at the
ends)."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import clip, exp, full_like, log, log1p, logical_and, where
from ._common import INF, invalid_to_nan, promote, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density: -log(scale) on [loc, loc + scale], -inf outside."""
    y, s = standardize("uniform.logpdf", x, loc, scale)
    inside = logical_and(y >= 0, y <= 1)
    return invalid_to_nan(where(inside, -log(s), full_like(y, -INF)), s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, 1/scale inside, 0 outside."""
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = clip((x - loc)/scale, 0, 1)."""
    y, s = standardize("uniform.cdf", x, loc, scale)
    return invalid_to_nan(clip(y, 0.0, 1.0), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = clip(1 - y, 0, 1)."""
    y, s = standardize("uniform.sf", x, loc, scale)
    return invalid_to_nan(clip(1.0 - y, 0.0, 1.0), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x)."""
    return log(cdf(x, loc, scale))


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x) = log1p(-cdf) (the exact complement of a clipped value)."""
    y, s = standardize("uniform.logsf", x, loc, scale)
    return invalid_to_nan(log1p(-clip(y, 0.0, 1.0)), s > 0)


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function loc + scale q; nan outside [0, 1]."""
    q, loc, scale = promote("uniform.ppf", q, loc, scale)
    return invalid_to_nan(loc + scale * q, scale > 0, q >= 0, q <= 1)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, loc + scale (1 - q); nan outside [0, 1]."""
    q, loc, scale = promote("uniform.isf", q, loc, scale)
    return invalid_to_nan(loc + scale * (1.0 - q), scale > 0, q >= 0, q <= 1)
