"""The logistic distribution (``scipy.stats.logistic``): cdf expit(y). Every function is
written with ``softplus``/``expit`` so no tail overflows or cancels."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, log, softplus
from ..special import logit
from ._common import invalid_to_nan, promote, standardize

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log of the density, -y - 2 softplus(-y) - log(scale)."""
    y, s = standardize("logistic.logpdf", x, loc, scale)
    return invalid_to_nan(-y - 2.0 * softplus(-y) - log(s), s > 0)


def pdf(x, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, loc, scale))


def cdf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = expit(y), as exp(-softplus(-y)) (relative accuracy in the lower tail)."""
    y, s = standardize("logistic.cdf", x, loc, scale)
    return invalid_to_nan(exp(-softplus(-y)), s > 0)


def sf(x, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = expit(-y), as exp(-softplus(y))."""
    y, s = standardize("logistic.sf", x, loc, scale)
    return invalid_to_nan(exp(-softplus(y)), s > 0)


def logcdf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x) = -softplus(-y)."""
    y, s = standardize("logistic.logcdf", x, loc, scale)
    return invalid_to_nan(-softplus(-y), s > 0)


def logsf(x, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x) = -softplus(y)."""
    y, s = standardize("logistic.logsf", x, loc, scale)
    return invalid_to_nan(-softplus(y), s > 0)


def ppf(q, loc=0.0, scale=1.0) -> Tensor:
    """The quantile function, loc + scale logit(q)."""
    q, loc, scale = promote("logistic.ppf", q, loc, scale)
    return invalid_to_nan(loc + scale * logit(q), scale > 0)


def isf(q, loc=0.0, scale=1.0) -> Tensor:
    """The inverse of ``sf``, loc - scale logit(q)."""
    q, loc, scale = promote("logistic.isf", q, loc, scale)
    return invalid_to_nan(loc - scale * logit(q), scale > 0)
