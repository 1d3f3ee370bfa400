"""The chi-squared distribution (``scipy.stats.chi2``) with ``df`` degrees of freedom: the
gamma distribution with shape df/2 and scale 2 (``tenferro.stats.gamma``; the same accuracy
and the same derivatives: the cdf family has none in ``df``)."""

from __future__ import annotations

from ..core.tensor import Tensor
from . import gamma as _gamma
from ._common import promote

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _args(op, df, scale):
    df, scale = promote(op, df, scale)
    return 0.5 * df, 2.0 * scale


def logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log of the density: gamma.logpdf(x, df/2, loc, 2 scale)."""
    a, s = _args("chi2.logpdf", df, scale)
    return _gamma.logpdf(x, a, loc, s)


def pdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """The density: gamma.pdf(x, df/2, loc, 2 scale)."""
    a, s = _args("chi2.pdf", df, scale)
    return _gamma.pdf(x, a, loc, s)


def cdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """P(X <= x) = gammainc(df/2, (x - loc)/(2 scale))."""
    a, s = _args("chi2.cdf", df, scale)
    return _gamma.cdf(x, a, loc, s)


def sf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """P(X > x) = gammaincc(df/2, (x - loc)/(2 scale))."""
    a, s = _args("chi2.sf", df, scale)
    return _gamma.sf(x, a, loc, s)


def logcdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log P(X <= x)."""
    a, s = _args("chi2.logcdf", df, scale)
    return _gamma.logcdf(x, a, loc, s)


def logsf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log P(X > x)."""
    a, s = _args("chi2.logsf", df, scale)
    return _gamma.logsf(x, a, loc, s)
