"""``tenferro.stats.chi2``: ``scipy.stats.chi2``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.chi2 import *  # noqa: F403
from tenferro._src.stats.chi2 import __all__  # noqa: F401
