"""Implementation of ``tenferro.linalg`` (its docstring is the user documentation)."""

from . import dense, gauge, krylov, matfuncs, nonhermitian, operator, partial_svd
from .dense import *  # noqa: F403
from .gauge import *  # noqa: F403
from .krylov import *  # noqa: F403
from .matfuncs import *  # noqa: F403
from .nonhermitian import *  # noqa: F403
from .operator import *  # noqa: F403
from .partial_svd import *  # noqa: F403

__all__ = sorted(set(dense.__all__) | set(gauge.__all__) | set(krylov.__all__)
                 | set(matfuncs.__all__) | set(nonhermitian.__all__) | set(operator.__all__)
                 | set(partial_svd.__all__))
