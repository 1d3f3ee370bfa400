"""``tenferro.stats.t``: ``scipy.stats.t``'s functions on tenferro
tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.t import *  # noqa: F403
from tenferro._src.stats.t import __all__  # noqa: F401
