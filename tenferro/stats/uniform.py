"""``tenferro.stats.uniform``: ``scipy.stats.uniform``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.uniform import *  # noqa: F403
from tenferro._src.stats.uniform import __all__  # noqa: F401
