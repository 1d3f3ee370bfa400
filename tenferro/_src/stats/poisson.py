"""The Poisson distribution (``scipy.stats.poisson``) with mean ``mu``; ``k`` counts (-inf
log-probability off the non-negative integers). Derivatives in ``mu`` everywhere (the cdf's
through gammaincc's derivative in x); ``k`` is a count and carries none."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, full_like, logical_and, stop_gradient, where
from ..special import gammainc, gammaincc, gammaln, xlogy
from ._common import INF, integer_part, invalid_to_nan, log_of_tail, promote, safe

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def logpmf(k, mu, loc=0.0) -> Tensor:
    """log P(K = k) = k log(mu) - mu - gammaln(k + 1); -inf off the support."""
    k, mu, loc = promote("poisson.logpmf", k, mu, loc)
    k = stop_gradient(k - loc)
    ok = logical_and(k >= 0, integer_part(k) == k)
    ks = safe(ok, k, 0.0)
    out = where(ok, xlogy(ks, mu) - mu - gammaln(ks + 1.0), full_like(k, -INF))
    return invalid_to_nan(out, mu >= 0)


def pmf(k, mu, loc=0.0) -> Tensor:
    """P(K = k) = exp(logpmf)."""
    return exp(logpmf(k, mu, loc))


def _p(op, k, mu, loc, upper: bool):
    k, mu, loc = promote(op, k, mu, loc)
    n = integer_part(k - loc)
    ok = n >= 0
    a = safe(ok, n, 0.0) + 1.0
    out = where(ok, (gammainc if upper else gammaincc)(a, mu),
                full_like(mu, 1.0 if upper else 0.0))
    return invalid_to_nan(out, mu >= 0)


def cdf(k, mu, loc=0.0) -> Tensor:
    """P(K <= k) = gammaincc(floor(k) + 1, mu)."""
    return _p("poisson.cdf", k, mu, loc, upper=False)


def sf(k, mu, loc=0.0) -> Tensor:
    """P(K > k) = gammainc(floor(k) + 1, mu), accurate in the upper tail."""
    return _p("poisson.sf", k, mu, loc, upper=True)


def logcdf(k, mu, loc=0.0) -> Tensor:
    """log P(K <= k), accurate in both tails."""
    return log_of_tail(_p("poisson.logcdf", k, mu, loc, upper=False),
                       _p("poisson.logcdf", k, mu, loc, upper=True))


def logsf(k, mu, loc=0.0) -> Tensor:
    """log P(K > k), accurate in both tails."""
    return log_of_tail(_p("poisson.logsf", k, mu, loc, upper=True),
                       _p("poisson.logsf", k, mu, loc, upper=False))
