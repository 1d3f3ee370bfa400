"""``tenferro.stats.expon``: ``scipy.stats.expon``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.expon import *  # noqa: F403
from tenferro._src.stats.expon import __all__  # noqa: F401
