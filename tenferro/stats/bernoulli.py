"""``tenferro.stats.bernoulli``: ``scipy.stats.bernoulli``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.bernoulli import *  # noqa: F403
from tenferro._src.stats.bernoulli import __all__  # noqa: F401
