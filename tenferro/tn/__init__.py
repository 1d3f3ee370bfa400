"""Differentiable tensor-network algorithms, written only with tenferro's public operations
(so they run eagerly or jitted, real or complex, and differentiate to any order).

* classical models: ``ising_tensor`` (2D Ising partition-function tensor of beta and h);
* coarse graining: ``trg`` (Levin-Nave) and ``hotrg`` (higher-order TRG), ln Z per site;
* exact references: ``exact`` (Onsager, free-fermion TFIM, exact diagonalisation).
"""

from . import exact
from .hotrg import hotrg, hotrg_step
from .ising import BETA_C, ising_tensor
from .progress import Progress, set_progress
from .trg import trg, trg_step

__all__ = [
    "BETA_C",
    "Progress",
    "exact",
    "hotrg",
    "hotrg_step",
    "ising_tensor",
    "set_progress",
    "trg",
    "trg_step",
]
