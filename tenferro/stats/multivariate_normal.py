"""``tenferro.stats.multivariate_normal``: ``scipy.stats.multivariate_normal``'s functions on
tenferro tensors, with derivatives (see ``tenferro.stats`` and each function's docstring)."""

from tenferro._src.stats.multivariate_normal import *  # noqa: F403
from tenferro._src.stats.multivariate_normal import __all__  # noqa: F401
