"""Bounded caches, all registered by name so their sizes can be inspected (``sizes()``).

Every cache tenferro keeps per signature (validated shapes, derivative templates, compiled
programs, einsum plans...) is one of these: a dict that drops its oldest entry when full, so a
long program whose signatures keep changing cannot grow memory without bound. Hits cost a
plain dict lookup (no bookkeeping); eviction is oldest-inserted first.
"""

from tenferro._src.caches import *  # noqa: F403
from tenferro._src.caches import __all__  # noqa: F401
