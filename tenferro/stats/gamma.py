"""``tenferro.stats.gamma``: ``scipy.stats.gamma``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.gamma import *  # noqa: F403
from tenferro._src.stats.gamma import __all__  # noqa: F401
