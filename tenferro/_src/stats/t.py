"""Student's t distribution (``scipy.stats.t``) with ``df`` degrees of freedom. ``cdf`` and
``sf`` use the incomplete beta function on whichever of df/(df + y^2) and y^2/(df + y^2) is
small, so both tails keep relative accuracy. Derivatives: in x, loc, scale everywhere and in
``df`` for ``logpdf``/``pdf``; the cdf family has no derivative in ``df`` (the incomplete beta
function's derivative in its shape parameters is not implemented: a ``GradientError``)."""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..ops import exp, full_like, log, log1p, logical_and, logical_not, logical_or, minimum, where
from ..special import betainc, betaincc, gammaln
from ._common import invalid_to_nan, log_of_tail, safe, standardize

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]

_LOG_PI = math.log(math.pi)
_TINY = 1e-10


# log Gamma(z + 1/2) - log Gamma(z) = log(z)/2 + sum_k c_k z^-k (from the Bernoulli-polynomial
# expansion of log Gamma(z + a)); through z^-11 the remainder is below 1e-16 for z >= 12
_RATIO_SERIES = (-1 / 8, 1 / 192, -1 / 640, 17 / 14336, -31 / 18432, 691 / 180224)


def _log_gamma_ratio_half(z):
    """log Gamma(z + 1/2) - log Gamma(z): the asymptotic series for z >= 12, where the two
    gammaln values (6.5e6 at z = 5e5) would cancel away nine digits (so would SciPy's betaln,
    which is the same difference below 1e6); the difference itself below."""
    big = z >= 12.0
    zb, zs = safe(big, z, 12.0), safe(big, z, 1.0, taken=False)
    w = 1.0 / (zb * zb)
    acc = full_like(zb, _RATIO_SERIES[-1])
    for c in _RATIO_SERIES[-2::-1]:
        acc = acc * w + c
    return where(big, 0.5 * log(zb) + acc / zb, gammaln(zs + 0.5) - gammaln(zs))


def _log_density_at_0(df):
    """log of the standard density at 0, log Gamma((df+1)/2) - log Gamma(df/2)
    - log(df pi)/2."""
    return _log_gamma_ratio_half(0.5 * df) - 0.5 * (log(df) + _LOG_PI)


def logpdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """log of the density gammaln((df+1)/2) - gammaln(df/2) - log(df pi)/2
    - (df+1)/2 log1p(y^2/df) - log(scale) (the gammaln difference from an asymptotic series
    for large df)."""
    y, s, df = standardize("t.logpdf", x, loc, scale, df)
    out = _log_density_at_0(df) - 0.5 * (df + 1.0) * log1p(y * y / df) - log(s)
    return invalid_to_nan(out, s > 0, df > 0)


def pdf(x, df, loc=0.0, scale=1.0) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, df, loc, scale))


def _tails(op, x, df, loc, scale):
    """(P(T <= y), P(T > y), valid). Beyond |y| the probability comes from the small one of
    df/(df + y^2) (betainc) and y^2/(df + y^2) (betaincc); for y^2 < 1e-10 min(df, 1) from the
    Taylor series 1/2 + c y (1 - (df + 1) y^2 / (6 df)), c the density at 0: SciPy's incomplete
    beta
    loses digits at such tiny arguments (2e-12 at x = 1e-16), and at y = 0 its derivative
    would be 0 * inf."""
    y, s, df = standardize(op, x, loc, scale, df)
    y2 = y * y
    far = y2 > df  # there df/(df + y^2) < 1/2
    tiny = y2 < _TINY * minimum(df, 1.0)  # both y^2 and y^2/df below 1e-10
    near = logical_not(logical_or(far, tiny))
    df_f, y2_f = safe(far, df, 1.0), safe(far, y2, 4.0)
    df_n, y2_n = safe(near, df, 1.0), safe(near, y2, 0.25)
    beyond = where(far, 0.5 * betainc(0.5 * df_f, 0.5, df_f / (df_f + y2_f)),
                   0.5 * betaincc(0.5, 0.5 * df_n, y2_n / (df_n + y2_n)))  # P(T > |y|)
    negative = y < 0
    lower = where(negative, beyond, 1.0 - beyond)
    upper = where(negative, 1.0 - beyond, beyond)
    c = exp(_log_density_at_0(df))
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
