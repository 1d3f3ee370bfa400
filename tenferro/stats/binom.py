"""``tenferro.stats.binom``: ``scipy.stats.binom``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.binom import *  # noqa: F403
from tenferro._src.stats.binom import __all__  # noqa: F401
