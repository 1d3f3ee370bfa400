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

from tenferro._src.tn import *  # noqa: F403
from tenferro._src.tn import __all__  # noqa: F401

from . import exact, exact_dynamics, ipeps, mpo, mps, observables, peps, variational  # noqa: E402  (public facades)
