"""Implementation of ``tenferro.tn`` (its docstring is the user documentation)."""

# ruff: noqa: F405  (the names of __all__ come from the star imports below)

from . import exact, exact_dynamics, ipeps, mpo, mps, observables, peps, variational
from .correlation import *  # noqa: F403
from .ctmrg import *  # noqa: F403
from .ctmrg_directional import *  # noqa: F403
from .ctmrg_gauge import *  # noqa: F403
from .ctmrg_moves import *  # noqa: F403
from .dmrg import *  # noqa: F403
from .hotrg import *  # noqa: F403
from .ipeps import *  # noqa: F403
from .ising import *  # noqa: F403
from .mpo import *  # noqa: F403
from .mps import *  # noqa: F403
from .observables import *  # noqa: F403
from .peps import *  # noqa: F403
from .progress import *  # noqa: F403
from .tdvp import *  # noqa: F403
from .tebd import *  # noqa: F403
from .trg import *  # noqa: F403
from .variational import *  # noqa: F403
from .vumps import *  # noqa: F403

# a literal list, the form type checkers read (tests/core/test_public_api.py checks it is
# exactly the union of the modules' __all__ and the public submodules)
__all__ = [
    "exact", "exact_dynamics", "ipeps", "mpo", "mps", "observables", "peps", "variational",
    "channel_transfer_operator", "correlation_length", "CTMEnv", "corner_spectrum",
    "ctm_gauge_fix", "ctm_init", "ctm_lnz", "ctm_site_expectation", "ctmrg", "ctmrg_step",
    "multiplet_rank", "DMRGResult", "dmrg", "hotrg", "hotrg_step", "BETA_C", "ising_tensor",
    "heisenberg_bond", "heisenberg_mpo", "mpo_from_terms", "mpo_to_dense", "spin_operators",
    "tfim_bond", "tfim_mpo", "bond_dimensions", "expand_bond_dimension", "left_canonicalize",
    "max_bond_dimensions", "mixed_canonicalize", "mpo_expectation", "mpo_variance", "mps_norm",
    "mps_overlap", "mps_to_dense", "product_mps", "random_mps", "right_canonicalize",
    "two_site_update", "QMC_ENERGY", "D2_REFERENCE_ENERGY", "J1J2_D2_REFERENCE_ENERGY",
    "J1J2_D3_REFERENCE_ENERGY", "bond_energy", "diagonal_rdm", "double_layer",
    "heisenberg_energy", "j1j2_energy", "neel_peps", "one_site_rdm", "random_c4v_peps",
    "staggered_magnetization", "symmetrize_c4v", "two_site_rdm", "Progress", "set_progress",
    "trg", "trg_step", "VariationalResult", "mps_energy", "variational_ground_state",
    "correlation_matrix", "uniform_correlations", "uniform_structure_factor",
    "entanglement_entropy", "entanglement_spectrum", "expectation_values", "structure_factor",
    "TDVPResult", "tdvp", "TEBDResult", "heisenberg_bond_terms", "tebd", "tfim_bond_terms",
    "VUMPSResult", "uniform_canonical", "vumps", "ctm_directional_lnz", "ctmrg_directional",
    "ctm_directional_gauge_fix", "DirectionalEnv", "ctm_directional_init",
    "ctm_directional_step", "rotate_cell", "bond_rdms", "random_unitcell_peps",
    "tile_unitcell", "unitcell_double_layers", "unitcell_energy", "IPEPSResult", "optimize"
]
