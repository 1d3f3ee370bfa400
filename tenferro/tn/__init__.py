"""Differentiable tensor-network algorithms, written only with tenferro's public operations
(so they run eagerly or jitted, real or complex, and differentiate to any order).

* classical models: ``ising_tensor`` (2D Ising partition-function tensor of beta and h);
* coarse graining: ``trg`` (Levin-Nave) and ``hotrg`` (higher-order TRG), ln Z per site;
* iPEPS: ``ctmrg`` (single-site C4v corner transfer matrices) and ``peps`` (C4v-symmetric
  iPEPS, Heisenberg energy per site);
* chains: ``mps`` (random/product MPS, canonical forms by QR, overlaps, MPO expectation
  values, two-site SVD truncation), ``mpo`` (Heisenberg and transverse-field Ising MPOs, a
  generic nearest-neighbour builder) and ``variational`` (MPS ground states by L-BFGS on
  tenferro gradients);
* exact references: ``exact`` (Onsager, free-fermion TFIM, exact diagonalisation).
"""

from . import exact, mpo, mps, peps, variational
from .ctmrg import (
    CTMEnv,
    corner_spectrum,
    ctm_init,
    ctm_lnz,
    ctm_site_expectation,
    ctmrg,
    ctmrg_step,
    multiplet_rank,
)
from .hotrg import hotrg, hotrg_step
from .ising import BETA_C, ising_tensor
from .mpo import heisenberg_mpo, mpo_from_terms, mpo_to_dense, tfim_mpo
from .mps import (
    bond_dimensions,
    expand_bond_dimension,
    left_canonicalize,
    max_bond_dimensions,
    mixed_canonicalize,
    mpo_expectation,
    mpo_variance,
    mps_norm,
    mps_overlap,
    mps_to_dense,
    product_mps,
    random_mps,
    right_canonicalize,
    two_site_update,
)
from .peps import (
    D2_REFERENCE_ENERGY,
    QMC_ENERGY,
    bond_energy,
    double_layer,
    heisenberg_bond,
    heisenberg_energy,
    neel_peps,
    one_site_rdm,
    random_c4v_peps,
    spin_operators,
    staggered_magnetization,
    symmetrize_c4v,
    two_site_rdm,
)
from .progress import Progress, set_progress
from .trg import trg, trg_step
from .variational import VariationalResult, mps_energy, variational_ground_state

__all__ = [
    "bond_dimensions",
    "expand_bond_dimension",
    "left_canonicalize",
    "max_bond_dimensions",
    "mixed_canonicalize",
    "mpo_expectation",
    "mpo_variance",
    "mps_norm",
    "mps_overlap",
    "mps_to_dense",
    "product_mps",
    "random_mps",
    "right_canonicalize",
    "two_site_update",
    "heisenberg_mpo",
    "mpo_from_terms",
    "mpo_to_dense",
    "tfim_mpo",
    "VariationalResult",
    "mps_energy",
    "variational_ground_state",
    "mpo",
    "mps",
    "variational",

    "BETA_C",
    "CTMEnv",
    "D2_REFERENCE_ENERGY",
    "QMC_ENERGY",
    "bond_energy",
    "corner_spectrum",
    "ctm_init",
    "ctm_lnz",
    "ctm_site_expectation",
    "ctmrg",
    "ctmrg_step",
    "double_layer",
    "heisenberg_bond",
    "heisenberg_energy",
    "multiplet_rank",
    "neel_peps",
    "one_site_rdm",
    "peps",
    "random_c4v_peps",
    "spin_operators",
    "staggered_magnetization",
    "symmetrize_c4v",
    "two_site_rdm",
    "Progress",
    "exact",
    "hotrg",
    "hotrg_step",
    "ising_tensor",
    "set_progress",
    "trg",
    "trg_step",
]
