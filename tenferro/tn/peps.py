"""Single-site, C4v-symmetric iPEPS and the 2D spin-1/2 Heisenberg antiferromagnet.

Conventions:

* the iPEPS tensor is ``A[s, u, l, d, r]`` (physical, then up, left, down, right), real,
  invariant under the eight permutations of (u, l, d, r) of the square's symmetry group C4v
  (``symmetrize_c4v`` projects onto that subspace);
* the double-layer tensor ``a[(u u'), (l l'), (d d'), (r r')] = sum_s A[s, u, l, d, r]
  conj(A)[s, u', l', d', r']`` (ket index first) is what ``tenferro.tn.ctmrg`` contracts;
* the Heisenberg model H = J sum_<ij> S_i . S_j is bipartite: rotating every spin of one
  sublattice by pi about the y axis (S^x -> -S^x, S^y -> S^y, S^z -> -S^z) turns the Neel
  state into a uniform one and the bond operator into h = J (-S^x S^x + S^y S^y - S^z S^z),
  a real matrix. A single tensor A then describes the antiferromagnet, with real amplitudes;
  the uniform magnetisation |<S>| of the rotated state is the staggered magnetisation.

Energies come from reduced density matrices built with the converged CTMRG environment and
normalised by their trace, so the scale of A, C and T never matters. C4v symmetry makes the
horizontal and vertical bonds equivalent (energy per site = 2 x bond energy) and the right
half of the two-site network the mirror image of the left half, which is reused.

Every function that relies on the symmetry (the energies, the reduced density matrices,
``staggered_magnetization``, and ``tenferro.tn.ctmrg`` for the site tensor) is a function of
the C4v-symmetric part of its argument: it symmetrises ``A`` (``symmetrize_c4v``) itself.
For a symmetric ``A`` the value is unchanged, and the gradient is the physical energy's
gradient (which is symmetric there, the energy being invariant under the group), so it can
be fed to an optimiser directly; without the projection the formula's derivative in
symmetry-breaking directions would be wrong (e.g. twice the physical one). For a
non-symmetric ``A`` the results are those of ``symmetrize_c4v(A)``.
"""

from tenferro._src.tn.peps import *  # noqa: F403
from tenferro._src.tn.peps import __all__  # noqa: F401
