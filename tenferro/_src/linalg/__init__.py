"""Implementation of ``tenferro.linalg`` (its docstring is the user documentation)."""

# ruff: noqa: F405  (the names of __all__ come from the star imports below)

from . import (
    array_api,
    dense,
    gauge,
    krylov,
    matfuncs,
    nonhermitian,
    operator,
    partial_svd,
    solvers,
)
from .array_api import *  # noqa: F403
from .dense import *  # noqa: F403
from .gauge import *  # noqa: F403
from .krylov import *  # noqa: F403
from .matfuncs import *  # noqa: F403
from .nonhermitian import *  # noqa: F403
from .operator import *  # noqa: F403
from .partial_svd import *  # noqa: F403
from .solvers import *  # noqa: F403

# a literal list, the form type checkers read (tests/core/test_public_api.py checks it is
# exactly the union of the modules' __all__ above)
__all__ = [
    "EigResult", "EighResult", "LQResult", "LinearOperator", "QRResult", "SVDResult",
    "SingularMatrixError", "SlogdetResult", "check_gauge_invariance", "cho_factor",
    "cho_solve", "cholesky", "cholesky_solve", "cross", "default_eps", "det", "diagonal",
    "eig", "eigh", "eigs", "eigsh", "eigvals", "eigvalsh", "expm", "expm_multiply", "funm",
    "inv", "linsolve", "logm", "lq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
    "matrix_transpose", "norm", "outer", "pinv", "powm", "qr", "randomized_svd", "slogdet",
    "solve", "solve_banded", "solve_sylvester", "solve_triangular", "sqrtm", "svd", "svds",
    "svdvals", "tensordot", "tie_gauge", "trace", "truncation_rank", "vecdot", "vector_norm"
]
