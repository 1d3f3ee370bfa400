"""Observables of matrix product states: entanglement spectra and entropies, local
expectation values, two-point correlation matrices and static structure factors.

Finite MPS follow ``tenferro.tn.mps`` (``A[left, phys, right]``, open boundaries); a uniform
MPS is given by its bond matrix C (``AL C = C AR``, as ``tenferro.tn.vumps`` returns it) for
entanglement, and by (AC, AR) for correlations (``uniform_correlations``: the centre AC on
site 0, right isometries beyond, so no environment fixed point is needed). All
functions are tenferro operations, differentiable where the quantity is (the entropy's
derivative at a zero Schmidt value is taken as 0: ``p ln p`` is evaluated as
``p ln max(p, tiny)``).
"""

from tenferro._src.tn.observables import *  # noqa: F403
from tenferro._src.tn.observables import __all__  # noqa: F401
