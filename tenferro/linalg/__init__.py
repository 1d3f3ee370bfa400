"""``tenferro.linalg``: decompositions, solves, norms and matrix functions with correct
derivatives: LAPACK-backed dense decompositions (``svd``, ``eigh``, ``qr``, ``solve``, ...),
``eig``/``eigvals`` for non-Hermitian matrices, matrix functions (``expm``, ``funm``,
``matrix_power``, ...), SciPy's structured solves (``solve_triangular``, ``cho_factor``/
``cho_solve``, ``solve_sylvester``, ``solve_banded``; PyTorch's ``cholesky_solve``), and
iterative solvers on ``LinearOperator``s with implicit derivatives (``eigsh``, ``eigs``,
``svds``, ``linsolve``, ``expm_multiply``). Each function's docstring states its conventions
(degenerate spectra, truncation, gauges); design/linalg.md and design/krylov.md give the
derivations."""

from tenferro._src.linalg import *  # noqa: F403
from tenferro._src.linalg import __all__  # noqa: F401
