"""``tenferro.stats.logistic``: ``scipy.stats.logistic``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.logistic import *  # noqa: F403
from tenferro._src.stats.logistic import __all__  # noqa: F401
