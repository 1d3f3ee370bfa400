"""Implementation of ``tenferro.tn`` (its docstring is the user documentation)."""

from . import correlation as _correlation
from . import ctmrg as _ctmrg
from . import ctmrg_directional as _ctmrg_directional
from . import ctmrg_gauge as _ctmrg_gauge
from . import ctmrg_moves as _ctmrg_moves
from . import dmrg as _dmrg
from . import exact, exact_dynamics, ipeps, mpo, mps, observables, peps, variational
from . import hotrg as _hotrg
from . import ising as _ising
from . import progress as _progress
from . import tdvp as _tdvp
from . import tebd as _tebd
from . import trg as _trg
from . import vumps as _vumps
from .correlation import *  # noqa: F403
from .ctmrg import *  # noqa: F403
from .ctmrg_directional import *  # noqa: F403
from .ctmrg_gauge import *  # noqa: F403
from .ctmrg_moves import *  # noqa: F403
from .dmrg import *  # noqa: F403
from .hotrg import *  # noqa: F403
from .ipeps import *  # noqa: F403
from .ising import *  # noqa: F403
from .mpo import *  # noqa: F403
from .mps import *  # noqa: F403
from .observables import *  # noqa: F403
from .peps import *  # noqa: F403
from .progress import *  # noqa: F403
from .tdvp import *  # noqa: F403
from .tebd import *  # noqa: F403
from .trg import *  # noqa: F403
from .variational import *  # noqa: F403
from .vumps import *  # noqa: F403

# the names each module exports, listed once (in that module's __all__)
__all__ = ["exact", "exact_dynamics", "ipeps", "mpo", "mps", "observables", "peps", "variational"]
for _m in (_correlation, _ctmrg, _dmrg, _hotrg, _ising, mpo, mps, peps, _progress, _trg,
           variational):
    __all__ += _m.__all__
for _m in (observables, _tdvp, _tebd, _vumps, _ctmrg_directional, _ctmrg_gauge, _ctmrg_moves,
           ipeps):
    __all__ += _m.__all__
del _m
