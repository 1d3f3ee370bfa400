"""``tenferro.stats.poisson``: ``scipy.stats.poisson``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.poisson import *  # noqa: F403
from tenferro._src.stats.poisson import __all__  # noqa: F401
