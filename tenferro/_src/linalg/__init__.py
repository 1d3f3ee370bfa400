"""Implementation of ``tenferro.linalg`` (its docstring is the user documentation)."""

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

__all__ = sorted(set().union(*(m.__all__ for m in (array_api, dense, gauge, krylov, matfuncs,
                                                    nonhermitian, operator, partial_svd,
                                                    solvers))))
