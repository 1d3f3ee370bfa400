"""``tenferro.stats.beta``: ``scipy.stats.beta``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.beta import *  # noqa: F403
from tenferro._src.stats.beta import __all__  # noqa: F401
