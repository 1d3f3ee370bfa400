"""The binomial distribution (``scipy.stats.binom``): ``n`` trials, success probability
``p``. log C(n, k) is -log(n + 1) - betaln(n - k + 1, k + 1) (no cancellation of three large
gammaln values); the cdf is betaincc(k + 1, n - k, p) and the sf betainc(k + 1, n - k, p), each
accurate in its tail. Derivatives in ``p``; ``k`` and ``n`` are counts and carry none."""

from __future__ import annotations

from ..core.tensor import Tensor
from ..ops import exp, full_like, log1p, logical_and, stop_gradient, where
from ..special import betainc, betaincc, betaln, xlog1py, xlogy
from ._common import INF, integer_part, invalid_to_nan, log_of_tail, promote, safe

__all__ = ["cdf", "logcdf", "logpmf", "logsf", "pmf", "sf"]


def _valid(n, p):
    return (n >= 0, integer_part(n) == n, p >= 0, p <= 1)


def logpmf(k, n, p, loc=0.0) -> Tensor:
    """log P(K = k) = log C(n, k) + k log p + (n - k) log(1 - p); -inf off 0..n."""
    k, n, p, loc = promote("binom.logpmf", k, n, p, loc)
    k, n = stop_gradient(k - loc), stop_gradient(n)
    ok = logical_and(logical_and(k >= 0, k <= n), integer_part(k) == k)
    ks = safe(ok, k, 0.0)
    nk = safe(ok, n - ks, 1.0)
    out = (-log1p(n) - betaln(nk + 1.0, ks + 1.0) + xlogy(ks, p) + xlog1py(nk, -p))
    return invalid_to_nan(where(ok, out, full_like(out, -INF)), *_valid(n, p))


def pmf(k, n, p, loc=0.0) -> Tensor:
    """P(K = k) = exp(logpmf)."""
    return exp(logpmf(k, n, p, loc))


def _p(op, k, n, p, loc, upper: bool):
    k, n, p, loc = promote(op, k, n, p, loc)
    j, n = integer_part(k - loc), stop_gradient(n)
    inside = logical_and(j >= 0, j < n)
    js = safe(inside, j, 0.0)
    ns = safe(inside, n, 1.0)
    f = betainc if upper else betaincc
    edge = where(j < 0, full_like(p, 1.0 if upper else 0.0), full_like(p, 0.0 if upper else 1.0))
    out = where(inside, f(js + 1.0, ns - js, p), edge)
    return invalid_to_nan(out, *_valid(n, p))


def cdf(k, n, p, loc=0.0) -> Tensor:
    """P(K <= k) = betaincc(floor(k) + 1, n - floor(k), p)."""
    return _p("binom.cdf", k, n, p, loc, upper=False)


def sf(k, n, p, loc=0.0) -> Tensor:
    """P(K > k) = betainc(floor(k) + 1, n - floor(k), p)."""
    return _p("binom.sf", k, n, p, loc, upper=True)


def logcdf(k, n, p, loc=0.0) -> Tensor:
    """log P(K <= k), accurate in both tails."""
    return log_of_tail(_p("binom.logcdf", k, n, p, loc, upper=False),
                       _p("binom.logcdf", k, n, p, loc, upper=True))


def logsf(k, n, p, loc=0.0) -> Tensor:
    """log P(K > k), accurate in both tails."""
    return log_of_tail(_p("binom.logsf", k, n, p, loc, upper=True),
                       _p("binom.logsf", k, n, p, loc, upper=False))
