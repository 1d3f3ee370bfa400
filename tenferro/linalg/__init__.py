"""``tenferro.linalg``: decompositions, solves, norms and matrix functions with correct
derivatives (``dense``: LAPACK-backed; ``nonhermitian``: ``eig``/``eigvals``; ``matfuncs``:
``matrix_power``; ``krylov``, ``partial_svd``: iterative solvers on ``LinearOperator``s with
implicit derivatives). See ``tenferro.linalg.dense`` for the conventions (degenerate spectra,
truncation, gauges), design/linalg.md and design/krylov.md for the derivations."""

from tenferro._src.linalg import *  # noqa: F403
from tenferro._src.linalg import __all__  # noqa: F401
