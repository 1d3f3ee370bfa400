"""``tenferro.stats``: probability distributions with SciPy's names and signatures
(``scipy.stats``; the set of ``jax.scipy.stats``).

Each distribution is a module with SciPy's functions where SciPy has them: ``logpdf``, ``pdf``,
``cdf``, ``logcdf``, ``sf``, ``logsf``, ``ppf``, ``isf`` (``logpmf``/``pmf`` for the discrete
ones), taking the shape parameters and ``loc``/``scale`` as SciPy does
(``norm.logpdf(x, loc=0, scale=1)``, ``gamma.cdf(x, a, loc=0, scale=1)``,
``poisson.logpmf(k, mu, loc=0)``). Arguments broadcast like NumPy.

Every function is a composition of tenferro operations, so gradients flow to the data and to
the parameters, in eager mode, under ``grad`` and under ``jit``. Tails are computed without
cancellation: ``norm.logcdf`` is accurate far below -38 where log(cdf) is -inf, ``sf`` is
never 1 - cdf, and log-probabilities of values near 1 use log1p.

Exceptions, written in each module: the cdf family of ``t``, ``gamma``, ``chi2``, ``beta`` and
``binom`` has no derivative in the shape parameters (``df``, ``a``, ``b``, ``n``: the
incomplete gamma/beta functions' derivatives in them are not implemented; a ``GradientError``
names the argument); counts (``k``) carry no derivative. Invalid parameters give nan, as in
SciPy; the data are not validated (``dirichlet`` does not check that x sums to 1), since
traced values cannot be.
"""

from tenferro._src.stats import __all__  # noqa: F401

from . import (  # noqa: E402  (the public facades, not the implementations)
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)
