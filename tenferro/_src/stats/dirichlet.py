"""The Dirichlet distribution (``scipy.stats.dirichlet``) with concentrations ``alpha`` (K
entries): ``x`` holds the K components along its *first* axis (SciPy's layout), or K - 1 of
them (the last is 1 minus their sum). Derivatives in x and alpha. SciPy checks that the
components are positive and sum to 1 and raises; a traced value cannot be checked, so here
no check is made (the density formula is evaluated as given)."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import cast as astype
from ..ops import concatenate, exp, reshape, sum
from ..special import gammaln, xlogy
from ._common import promote

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha) -> Tensor:
    """log of the density, sum_i (alpha_i - 1) log x_i - sum_i gammaln(alpha_i)
    + gammaln(sum_i alpha_i)."""
    (alpha,) = promote("dirichlet.logpdf", alpha)
    (x,) = promote("dirichlet.logpdf", x)
    dtype = np.result_type(x.dtype, alpha.dtype)
    x, alpha = astype(x, dtype), astype(alpha, dtype)
    if alpha.ndim != 1:
        raise ShapeError(f"dirichlet.logpdf: alpha must be a vector of K concentrations, got "
                         f"the shape {tuple(alpha.shape)}.")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ShapeError(
            f"dirichlet.logpdf: x {tuple(x.shape)} must hold K = {k} (or K - 1) components "
            f"along its first axis, as SciPy's dirichlet.")
    if x.shape[0] == k - 1:
        x = concatenate([x, 1.0 - sum(x, axis=0, keepdims=True)], axis=0)
    a = reshape(alpha, (k,) + (1,) * (x.ndim - 1))
    norm = sum(gammaln(alpha)) - gammaln(sum(alpha))
    return sum(xlogy(a - 1.0, x), axis=0) - norm


def pdf(x, alpha) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, alpha))
