"""``eig`` and ``eigvals``: eigendecomposition of general square matrices, with derivatives.

The primitive is ``chainrules.primitives.eig`` (its docstring has the JVP and the gauge).
Outputs are complex for real and complex input (NumPy returns real arrays when every
eigenvalue happens to be real; tenferro's dtype does not depend on the values), in LAPACK's
order, as NumPy. ``array_api_strict`` (and CuPy without ``cupy.linalg.eig``) computes the
decomposition on the host, explicitly (``tenferro.backends.eig``).
"""

from __future__ import annotations

from typing import NamedTuple

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from .dense import _eps, _matrix

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


def eig(a, eps: float | None = None) -> EigResult:
    """Eigenvalues ``w`` and right eigenvectors ``V`` (columns) of square ``a`` (..., n, n):
    ``a @ V = V * w[..., None, :]``; both complex.

    Gauge: each eigenvector has unit 2-norm and its largest-magnitude entry is real and
    positive, so V is a smooth function of ``a`` where the eigenvalues are distinct, and
    phase-dependent losses have the derivative finite differences see. Inside an exactly
    repeated eigenvalue the basis is a generic one (any basis of the eigenspace is valid).
    Derivative: dw = diag(V^-1 dA V), dV = V (F o (V^-1 dA V)) plus the gauge terms, with
    F_ij = 1/(w_j - w_i) exact off ties and 0 on ties (closer than ``eps`` relative, default
    as ``eigh``). The backward pass reports (``DegeneracyWarning``) what has no derivative
    there: a loss that uses individual values or the chosen basis of a repeated eigenvalue
    (the basis is free up to any invertible change), and any use of a defective (Jordan)
    eigenvalue, whose derivatives are infinite (a finite number comes back, with the
    warning). Symmetric functions of a repeated eigenvalue and its spectral projector are
    exact; det, trace and expm of the matrix itself are differentiable everywhere."""
    a = _matrix("eig", a, square=True)
    w, v = bind(P.eig_p, a, eps=_eps(eps, a.dtype))
    return EigResult(w, v)


def eigvals(a, eps: float | None = None) -> Tensor:
    """Eigenvalues of square ``a`` (complex, LAPACK's order): ``eig(a).eigenvalues``, so that
    their derivative dw = diag(V^-1 dA V) uses eigenvectors in the same order (LAPACK's
    eigenvalue-only path may order them differently). The eigenvectors are computed too."""
    return eig(a, eps).eigenvalues
