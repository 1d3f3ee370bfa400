"""``tenferro.stats.dirichlet``: ``scipy.stats.dirichlet``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.dirichlet import *  # noqa: F403
from tenferro._src.stats.dirichlet import __all__  # noqa: F401
