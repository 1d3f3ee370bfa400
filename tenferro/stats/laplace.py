"""``tenferro.stats.laplace``: ``scipy.stats.laplace``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.laplace import *  # noqa: F403
from tenferro._src.stats.laplace import __all__  # noqa: F401
