"""The classical 2D Ising model as a tensor network.

Z = sum over spins of prod_<ij> exp(beta J s_i s_j) prod_i exp(beta h s_i). Each bond's
Boltzmann matrix B = exp(beta J s s') factors as W W^T with
W = [[sqrt(cosh bJ), sqrt(sinh bJ)], [sqrt(cosh bJ), -sqrt(sinh bJ)]] (rows: spin up/down), so
putting one W on each half-bond gives the site tensor
T[l, u, r, d] = sum_s exp(beta h s) W[s, l] W[s, u] W[s, r] W[s, d].
Everything is built from tenferro operations on ``beta``, so lnZ differentiates to any order.
Ferromagnetic J > 0 assumed (sinh(beta J) >= 0).
"""

from __future__ import annotations

import numpy as np

from chainrules.dtypes import float64

from .. import linalg, ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from . import arguments as arg

__all__ = ["BETA_C", "ising_tensor"]

BETA_C = float(np.log(1 + np.sqrt(2)) / 2)  # critical inverse temperature for J = 1


@arg.checked(beta=arg.scalar, h=arg.NUMBER, J=arg.NUMBER)
def ising_tensor(beta, h=0.0, J: float = 1.0):
    """The 2D Ising site tensor ``T[left, up, right, down]`` (bond dimension 2), on the device
    of ``beta`` (a Python number or NumPy value: the default device)."""
    beta = ops.asarray(beta) if not isinstance(beta, Tensor) else beta
    if beta.dtype.kind not in "fc":
        beta = beta.astype(float64)
    c = ops.sqrt(ops.cosh(beta * J))
    s = ops.sqrt(ops.sinh(beta * J))
    W = ops.stack([ops.stack([c, s]), ops.stack([c, -s])])  # W[spin, bond]
    # constants on beta's device (a beta on a GPU builds the tensor there)
    spins = ops.asarray(np.array([1.0, -1.0], dtype=beta.dtype), device=beta.device)
    field = ops.exp(beta * h * spins)
    return einsum("s,sl,su,sr,sd->lurd", field, W, W, W, W)


def normalize(t):
    """``(t / n, ln n)`` with n the Frobenius norm: RG steps carry their scale in log space."""
    n = linalg.norm(t)
    return t / n, ops.log(n)


def trace_torus(t):
    """Z of a single tensor on a 1x1 torus: sum_{l,u} T[l, u, l, u]."""
    return einsum("abab->", t)
