"""Minimal pytrees: tuples, lists, dicts, namedtuples, None and registered classes nest;
everything else is a leaf.

``register_pytree_node(cls, flatten, unflatten)`` makes instances of ``cls`` (exactly that
class, as in JAX) containers: ``flatten(x) -> (children, aux)`` with ``aux`` hashable static
data, ``unflatten(aux, children) -> x``. The static data is part of the tree structure, so
``jit`` caches per ``aux`` and ``grad``/``vmap``/``tree_map`` rebuild the object. A registered
node is stored in the tree as a tuple-like node (kind ``"namedtuple"`` whose ``meta`` rebuilds
it). A saved graph stores it as the tuple of its children, unless
``register_pytree_serialization`` says how to write its static data.
"""

from tenferro._src.pytree import *  # noqa: F403
from tenferro._src.pytree import __all__  # noqa: F401
