"""Differentiable tensor-network algorithms, written only with tenferro's public operations
(so they run eagerly or jitted, real or complex, and differentiate to any order).

* classical models: ``ising_tensor`` (2D Ising partition-function tensor of beta and h);
* coarse graining: ``trg`` (Levin-Nave) and ``hotrg`` (higher-order TRG), ln Z per site;
* iPEPS: ``ctmrg`` (single-site C4v corner transfer matrices) and ``peps`` (C4v-symmetric
  iPEPS, Heisenberg and J1-J2 energies per site, ``diagonal_rdm``); ``ctmrg_directional``
  (unit cells, non-C4v, real or complex) and ``ipeps`` (unit-cell iPEPS, energies from the
  rho of every bond);
* correlation lengths: ``correlation_length`` (channel transfer matrix of a CTMRG
  environment, ``eigsh`` with implicit derivatives);
* DMRG: ``dmrg`` (two-site, any MPO, Lanczos local solver);
* chains: ``mps`` (random/product MPS, canonical forms by QR, overlaps, MPO expectation
  values, two-site SVD truncation), ``mpo`` (Heisenberg and transverse-field Ising MPOs, a
  generic nearest-neighbour builder) and ``variational`` (MPS ground states by L-BFGS on
  tenferro gradients);
* exact references: ``exact`` (Onsager, free-fermion TFIM, exact diagonalisation);
* infinite chains: ``vumps`` (uniform MPS ground states, one- or multi-site unit cells,
  ``heisenberg_bond``, ``tfim_bond``);
* time evolution: ``tebd`` (Trotter-Suzuki gates), ``tdvp`` (one- and two-site, any MPO),
  real and imaginary time; ``tenferro.tn.exact_dynamics`` (free-fermion TFIM quenches);
* observables: ``observables`` (entanglement entropy and spectrum, structure factors).
"""

from . import correlation as _correlation
from . import ctmrg as _ctmrg
from . import ctmrg_directional as _ctmrg_directional
from . import ctmrg_gauge as _ctmrg_gauge
from . import dmrg as _dmrg
from . import exact, ipeps, mpo, mps, peps, variational
from . import hotrg as _hotrg
from . import ising as _ising
from . import observables as _observables
from . import progress as _progress
from . import tdvp as _tdvp
from . import tebd as _tebd
from . import trg as _trg
from . import vumps as _vumps
from .correlation import *  # noqa: F403
from .ctmrg import *  # noqa: F403
from .ctmrg_directional import *  # noqa: F403
from .ctmrg_gauge import *  # noqa: F403
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

# the names each module exports, listed once (in that module's __all__)
__all__ = ["exact", "ipeps", "mpo", "mps", "peps", "variational"]
for _m in (_correlation, _ctmrg, _dmrg, _hotrg, _ising, mpo, mps, peps, _progress, _trg,
           variational):
    __all__ += _m.__all__
for _m in (_observables, _tdvp, _tebd, _vumps, _ctmrg_directional, _ctmrg_gauge, ipeps):
    __all__ += _m.__all__
del _m
