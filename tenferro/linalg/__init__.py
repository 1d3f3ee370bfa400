"""``tenferro.linalg``: decompositions, solves, norms and matrix functions with correct
derivatives (``dense``: LAPACK-backed; ``krylov``, ``partial_svd``: iterative solvers on
``LinearOperator``s with implicit derivatives). See ``tenferro.linalg.dense`` for the
conventions (degenerate spectra, truncation, gauges), design/linalg.md and design/krylov.md
for the derivations."""

from . import dense, krylov, operator, partial_svd
from .dense import *  # noqa: F403
from .krylov import *  # noqa: F403
from .operator import *  # noqa: F403
from .partial_svd import *  # noqa: F403

__all__ = (list(dense.__all__) + list(krylov.__all__) + list(operator.__all__)
           + list(partial_svd.__all__))
