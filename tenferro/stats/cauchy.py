"""``tenferro.stats.cauchy``: ``scipy.stats.cauchy``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.cauchy import *  # noqa: F403
from tenferro._src.stats.cauchy import __all__  # noqa: F401
