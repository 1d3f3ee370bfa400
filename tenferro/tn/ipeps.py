"""Unit-cell iPEPS: an ``Ly x Lx`` pattern of site tensors, contracted by the directional
CTMRG (``tenferro.tn.ctmrg_directional``), with energies from the two-site reduced density
matrices of every bond of the cell.

Conventions (as ``tenferro.tn.peps``):

* site tensors ``A[s, u, l, d, r]`` (physical, up, left, down, right), real or complex, one per
  distinct tensor; ``pattern[y][x]`` says which one sits at unit-cell site (x, y) (x to the
  right, y downwards), e.g. ``[[0, 1], [1, 0]]`` (checkerboard, two tensors) or
  ``[[0, 1], [2, 3]]`` (four distinct tensors);
* double-layer tensors ``a[(u u'), (l l'), (d d'), (r r')]`` (ket index first), as
  ``tenferro.tn.double_layer``;
* bond operators ``h[s1, s2, s1', s2'] = <s1 s2|h|s1' s2'>``; for a horizontal bond s1 is the
  left site, for a vertical bond the upper one. ``heisenberg_bond(rotate=False)``
  is the plain S.S, which a 2x2 (or checkerboard) cell needs for the Neel order.

Reduced density matrices: the two-site network of sites (x, y), (x+1, y) is cut into a left
half (C1 T1 / T4 A / C4 T3 of the left site, physical and right legs open) and a right half,
the left half of the lattice turned by 180 degrees; a vertical pair is a horizontal pair of
the lattice turned by 90 degrees counterclockwise (the environment is only relabelled, not
recomputed). Each rho is normalised by its trace, so the scale of the
tensors and of the environment never matters. Cost per bond O(chi^3 D^4 + chi^2 D^8 p).

Optimisation: ``optimize`` (L-BFGS with a strong-Wolfe line search on AD gradients, for the
C4v single-site ansatz or any cell; chi schedules, noise restarts, progress lines, a
``callback``, and ``autosave``/``resume`` state files that continue a run bit for bit; see
design/ipeps-general.md).
"""

from tenferro._src.tn.ipeps import *  # noqa: F403
from tenferro._src.tn.ipeps import __all__  # noqa: F401
