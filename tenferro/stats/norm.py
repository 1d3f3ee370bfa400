"""``tenferro.stats.norm``: ``scipy.stats.norm``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.norm import *  # noqa: F403
from tenferro._src.stats.norm import __all__  # noqa: F401
