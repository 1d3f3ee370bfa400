"""Student's t distribution (``scipy.stats.t``) with ``df`` degrees of freedom. ``cdf`` and
``sf`` use the incomplete beta function on whichever of df/(df + y^2) and y^2/(df + y^2) is
small, so both tails keep relative accuracy. Derivatives: in x, loc, scale everywhere and in
``df`` for ``logpdf``/``pdf``; the cdf family has no derivative in ``df`` (the incomplete beta
function's derivative in its shape parameters is not implemented: a ``GradientError``)."""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..ops import exp, log, log1p, logical_and, logical_not, logical_or, where
from ..special import betainc, betaincc, gammaln
from ._common import invalid_to_nan, log_of_tail, safe, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_PI = math.log(math.pi)
_TINY = 1e-10


def logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log of the density gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2
    - (df+1)/2 log1p(y^2/df) - log(scale)."""
    y, s, df = standardize("t.logpdf", x, loc, scale, df)
    out = (gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * (log(df) + _LOG_PI)
           - 0.5 * (df + 1.0) * log1p(y * y / df) - log(s))
    return invalid_to_nan(out, s > 0, df > 0)


def pdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, df, loc, scale))


def _tails(op, x, df, loc, scale):
    """(P(T <= y), P(T > y), valid). Beyond |y| the probability comes from the small one of
    df/(df + y^2) (betainc) and y^2/(df + y^2) (betaincc); for y^2 < 1e-10 df from the Taylor
    series 1/2 + c y (1 - (df + 1) y^2 / (6 df)), c the density at 0: SciPy's incomplete beta
    loses digits at such tiny arguments (2e-12 at x = 1e-16), and at y = 0 its derivative
    would be 0 * inf."""
    y, s, df = standardize(op, x, loc, scale, df)
    y2 = y * y
    far = y2 > df  # there df/(df + y^2) < 1/2
    tiny = y2 < _TINY * df
    near = logical_not(logical_or(far, tiny))
    df_f, y2_f = safe(far, df, 1.0), safe(far, y2, 4.0)
    df_n, y2_n = safe(near, df, 1.0), safe(near, y2, 0.25)
    beyond = where(far, 0.5 * betainc(0.5 * df_f, 0.5, df_f / (df_f + y2_f)),
                   0.5 * betaincc(0.5, 0.5 * df_n, y2_n / (df_n + y2_n)))  # P(T > |y|)
    negative = y < 0
    lower = where(negative, beyond, 1.0 - beyond)
    upper = where(negative, 1.0 - beyond, beyond)
    c = exp(gammaln(0.5 * (df + 1.0)) - gammaln(0.5 * df) - 0.5 * (log(df) + _LOG_PI))
    yt = safe(tiny, y, 0.0)
    rise = c * yt * (1.0 - (df + 1.0) * yt * yt / (6.0 * df))
    lower = where(tiny, 0.5 + rise, lower)
    upper = where(tiny, 0.5 - rise, upper)
    return lower, upper, logical_and(s > 0, df > 0)


def cdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """P(T <= x), relative accuracy in the lower tail."""
    lower, _, ok = _tails("t.cdf", x, df, loc, scale)
    return invalid_to_nan(lower, ok)


def sf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """P(T > x), relative accuracy in the upper tail."""
    _, upper, ok = _tails("t.sf", x, df, loc, scale)
    return invalid_to_nan(upper, ok)


def logcdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log P(T <= x): log of the small tail, or log1p of minus the other one."""
    lower, upper, ok = _tails("t.logcdf", x, df, loc, scale)
    return invalid_to_nan(log_of_tail(lower, upper), ok)


def logsf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log P(T > x), accurate in both tails."""
    lower, upper, ok = _tails("t.logsf", x, df, loc, scale)
    return invalid_to_nan(log_of_tail(upper, lower), ok)
