"""The Bernoulli distribution (``scipy.stats.bernoulli``): P(K = 1) = p. Derivatives in ``p``;
``k`` is an outcome and carries none."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, full_like, log, logical_and, logical_or, stop_gradient, where
from ..special import xlog1py, xlogy
from ._common import INF, NAN, invalid_to_nan, promote, safe

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "ppf", "sf"]


def logpmf(k, p, loc=0.0) -> Tensor:
    """log P(K = k) = k log p + (1 - k) log(1 - p) for k in {0, 1}; -inf elsewhere."""
    k, p, loc = promote("bernoulli.logpmf", k, p, loc)
    k = stop_gradient(k - loc)
    ok = logical_or(k == 0, k == 1)
    ks = safe(ok, k, 0.0)
    out = where(ok, xlogy(ks, p) + xlog1py(1.0 - ks, -p), full_like(p, -INF))
    return invalid_to_nan(out, p >= 0, p <= 1)


def pmf(k, p, loc=0.0) -> Tensor:
    """P(K = k) = exp(logpmf)."""
    return exp(logpmf(k, p, loc))


def cdf(k, p, loc=0.0) -> Tensor:
    """P(K <= k): 0 below 0, 1 - p on [0, 1), 1 from 1 on."""
    k, p, loc = promote("bernoulli.cdf", k, p, loc)
    k = stop_gradient(k - loc)
    out = where(k < 0, full_like(p, 0.0), where(k < 1, 1.0 - p, full_like(p, 1.0)))
    return invalid_to_nan(out, p >= 0, p <= 1)


def sf(k, p, loc=0.0) -> Tensor:
    """P(K > k): 1 below 0, p on [0, 1), 0 from 1 on."""
    k, p, loc = promote("bernoulli.sf", k, p, loc)
    k = stop_gradient(k - loc)
    out = where(k < 0, full_like(p, 1.0), where(k < 1, p, full_like(p, 0.0)))
    return invalid_to_nan(out, p >= 0, p <= 1)


def logcdf(k, p, loc=0.0) -> Tensor:
    """log P(K <= k)."""
    return log(cdf(k, p, loc))


def logsf(k, p, loc=0.0) -> Tensor:
    """log P(K > k)."""
    return log(sf(k, p, loc))


def ppf(q, p, loc=0.0) -> Tensor:
    """The smallest k with cdf(k) >= q, with SciPy's ends (-1 at q = 0, 1 at q = 1);
    piecewise constant, no derivative; nan outside [0, 1]."""
    q, p, loc = promote("bernoulli.ppf", q, p, loc)
    q, p = stop_gradient(q), stop_gradient(p)
    one = logical_or(q == 1, q > 1.0 - p)
    out = where(q == 0, full_like(q, -1.0), where(one, full_like(q, 1.0), full_like(q, 0.0)))
    ok = logical_and(logical_and(q >= 0, q <= 1), logical_and(p >= 0, p <= 1))
    return where(ok, out + loc, full_like(out, NAN))
