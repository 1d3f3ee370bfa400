"""Variational MPS ground states: scipy's L-BFGS fed energies and gradients from tenferro.

The energy E(A) = <psi|H|psi> / <psi|psi> of an MPS is minimised over all its tensors at once,
with the gradient from ``tenferro.value_and_grad`` (compiled once per bond dimension with
``tenferro.jit``). Three things make this converge to the variational optimum instead of
creeping towards it (measurements in ``design/mps.md``):

1. **Preconditioning by a change of variables.** The MPS parametrisation is badly conditioned:
   in a canonical form, a site's tensor A_i moves the state by ||dA_i rho_i^{1/2}||, with rho_i
   the reduced density matrix on one of its bonds, whose eigenvalues (squared Schmidt values)
   span many decades. Gradient methods then crawl along the small-Schmidt-value directions
   (plain L-BFGS on the Heisenberg chain L=12, D=16 stalls near 1e-6 above the optimum after
   3000 evaluations). So each round brings the state into mixed-canonical form around the
   centre c and writes

       psi = X_0 P_1 X_1 P_2 ... P_{L-1} X_{L-1},   P_k = (rho_k + eps)^{-1/2}  (fixed),

   optimising the X's: at the start of the round the metric <dpsi|dpsi> is then the identity
   on every site's block (the local picture of DMRG, where each site is in turn the
   orthogonality centre). ``metric_eps`` (relative to the largest eigenvalue) regularises the
   inverse square root.
2. **Restarts.** The metric drifts as the state changes, so every ``restart_every`` L-BFGS
   iterations the state is re-canonicalised, renormalised and re-preconditioned (and L-BFGS's
   curvature memory is reset with it).
3. **Growing bond dimension.** The optimisation starts at a small D and doubles it up to the
   target (``expand_bond_dimension`` pads with noise, to leave the saddle point that zero
   padding would be): the small problems are cheap and give the large one a good start.

A stage stops when two successive rounds each lower the energy by less than
``tol * max(1, |E|)``, or when its iteration budget is spent (the intermediate, smaller-D stages
get ``stage_iterations``: they only have to give the next stage a good start).
"""

from tenferro._src.tn.variational import *  # noqa: F403
from tenferro._src.tn.variational import __all__  # noqa: F401
