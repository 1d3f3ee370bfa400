"""Implementation of ``tenferro.stats`` (its docstring is the user documentation)."""

from . import (
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

__all__ = [
    "bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "laplace",
    "logistic", "multivariate_normal", "norm", "poisson", "t", "uniform",
]
