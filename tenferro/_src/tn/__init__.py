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
    "ctmrg", "dmrg", "hotrg", "trg", "tdvp", "tebd", "vumps", "ctmrg_directional", "BETA_C",
    "CTMEnv", "D2_REFERENCE_ENERGY", "DMRGResult", "DirectionalEnv", "IPEPSResult",
    "J1J2_D2_REFERENCE_ENERGY", "J1J2_D3_REFERENCE_ENERGY", "Progress", "QMC_ENERGY",
    "TDVPResult", "TEBDResult", "VUMPSResult", "VariationalResult", "bond_dimensions",
    "bond_energy", "bond_rdms", "channel_transfer_operator", "corner_spectrum",
    "correlation_length", "correlation_matrix", "ctm_directional_gauge_fix",
    "ctm_directional_init", "ctm_directional_lnz", "ctm_directional_step", "ctm_gauge_fix",
    "ctm_init", "ctm_lnz", "ctm_site_expectation", "ctmrg_step", "diagonal_rdm",
    "double_layer", "entanglement_entropy", "entanglement_spectrum", "expand_bond_dimension",
    "expectation_values", "heisenberg_bond", "heisenberg_bond_terms", "heisenberg_energy",
    "heisenberg_mpo", "hotrg_step", "ising_tensor", "j1j2_energy", "left_canonicalize",
    "max_bond_dimensions", "mixed_canonicalize", "mpo_expectation", "mpo_from_terms",
    "mpo_to_dense", "mpo_variance", "mps_energy", "mps_norm", "mps_overlap", "mps_to_dense",
    "multiplet_rank", "neel_peps", "one_site_rdm", "optimize", "product_mps",
    "random_c4v_peps", "random_mps", "random_unitcell_peps", "right_canonicalize",
    "rotate_cell", "set_progress", "spin_operators", "staggered_magnetization",
    "structure_factor", "symmetrize_c4v", "tfim_bond", "tfim_bond_terms", "tfim_mpo",
    "tile_unitcell", "trg_step", "two_site_rdm", "two_site_update", "uniform_canonical",
    "uniform_correlations", "uniform_structure_factor", "unitcell_double_layers",
    "unitcell_energy", "variational_ground_state"
]
