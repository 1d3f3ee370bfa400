"""``tenferro.linalg``: decompositions, solves, norms and matrix functions with correct
derivatives (``dense``: LAPACK-backed; ``nonhermitian``: ``eig``/``eigvals``; ``matfuncs``:
``matrix_power``). See ``tenferro.linalg.dense`` for the conventions (degenerate spectra,
truncation, gauges) and design/linalg.md for the derivations."""

from . import dense, matfuncs, nonhermitian
from .dense import *  # noqa: F403
from .matfuncs import *  # noqa: F403
from .nonhermitian import *  # noqa: F403

__all__ = list(dense.__all__) + list(nonhermitian.__all__) + list(matfuncs.__all__)
