"""tenferro's exception hierarchy (defined in ``chainrules.errors``, re-exported here)."""

from tenferro._src.errors import *  # noqa: F403
from tenferro._src.errors import __all__  # noqa: F401
