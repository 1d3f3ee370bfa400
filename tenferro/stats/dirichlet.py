"""``tenferro.stats.dirichlet``: ``scipy.stats.dirichlet``'s functions on tenferro tensors, with
derivatives (see ``tenferro.stats`` and the implementation's notes on accuracy)."""

from tenferro._src.stats.dirichlet import *  # noqa: F403
from tenferro._src.stats.dirichlet import __all__  # noqa: F401
