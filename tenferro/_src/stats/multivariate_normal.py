"""The multivariate normal distribution (``scipy.stats.multivariate_normal``): ``x`` holds
points along its last axis (or, for one dimension, one point per entry), ``mean`` a vector
(or a scalar), ``cov`` a matrix, a vector (its diagonal) or a scalar (times the identity).
Computed from the Cholesky factor L of cov: log det = 2 sum log diag L and the Mahalanobis
term |L^-1 (x - mean)|^2, so derivatives in x, mean and cov are those of ``cholesky`` and
``solve`` (cov must be positive definite; SciPy's ``allow_singular`` is not supported)."""

from __future__ import annotations

import math

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..linalg import cholesky, solve
from ..ops import cast as astype
from ..ops import diag, diagonal, exp, eye, log, moveaxis, reshape, sum
from ._common import promote

__all__ = ["logpdf", "pdf"]

_LOG_2PI = math.log(2.0 * math.pi)


def _cov_matrix(cov: Tensor, d: int) -> Tensor:
    if cov.ndim == 0:
        return cov * eye(d, dtype=cov.dtype)
    if cov.ndim == 1:
        return diag(cov)
    return cov


def logpdf(x, mean=None, cov=1, allow_singular: bool = False) -> Tensor:
    """log of the density, -(d log(2 pi) + log det cov + (x-mean)^T cov^-1 (x-mean)) / 2, one
    value per point (a scalar for a single point), as SciPy."""
    if allow_singular:
        raise NotImplementedError(
            "multivariate_normal.logpdf: allow_singular=True (a pseudo-inverse and "
            "pseudo-determinant) is not supported; pass a positive definite cov.")
    mean = 0.0 if mean is None else mean
    (x,) = promote("multivariate_normal.logpdf", x)
    (mean_t,) = promote("multivariate_normal.logpdf", mean)
    (cov,) = promote("multivariate_normal.logpdf", cov)
    dtype = np.result_type(x.dtype, mean_t.dtype, cov.dtype)
    x, mean_t, cov = astype(x, dtype), astype(mean_t, dtype), astype(cov, dtype)
    cov_dims = 1 if cov.ndim == 0 else cov.shape[0]
    d = mean_t.shape[-1] if mean_t.ndim == 1 else cov_dims
    if cov.ndim > 2 or mean_t.ndim > 1 or (cov.ndim >= 1 and cov.shape[0] != d) or (
            cov.ndim == 2 and cov.shape[1] != d):
        raise ShapeError(
            f"multivariate_normal.logpdf: mean {tuple(mean_t.shape)} and cov "
            f"{tuple(cov.shape)} do not describe one dimension d (mean: a scalar or (d,); cov: "
            f"a scalar, (d,) or (d, d)).")
    if d == 1 and (x.ndim == 0 or x.shape[-1] != 1):
        x = reshape(x, (*x.shape, 1))  # a scalar or a vector of one-dimensional points
    elif x.ndim == 0 or x.shape[-1] != d:
        raise ShapeError(
            f"multivariate_normal.logpdf: x {tuple(x.shape)} does not hold points of dimension "
            f"{d} along its last axis.")
    cov = _cov_matrix(cov, d)
    lower = cholesky(cov)
    dev = x - mean_t
    points = reshape(dev, (-1, d))
    z = solve(lower, moveaxis(points, 0, 1))  # (d, N)
    maha = reshape(sum(z * z, axis=0), dev.shape[:-1])
    logdet = 2.0 * sum(log(diagonal(lower)))
    return -0.5 * (d * _LOG_2PI + logdet + maha)


def pdf(x, mean=None, cov=1, allow_singular: bool = False) -> Tensor:
    """The density, exp(logpdf)."""
    return exp(logpdf(x, mean, cov, allow_singular))
