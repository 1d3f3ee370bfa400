"""Minimal pytrees: tuples, lists, dicts, namedtuples, None and registered classes nest;
everything else is a leaf.

``register_pytree_node(cls, flatten, unflatten)`` makes instances of ``cls`` (exactly that
class, as in JAX) containers: ``flatten(x) -> (children, aux)`` with ``aux`` hashable static
data, ``unflatten(aux, children) -> x``. The static data is part of the tree structure, so
``jit`` caches per ``aux`` and ``grad``/``vmap``/``tree_map`` rebuild the object. A registered
node is stored in the tree as a tuple-like node (kind ``"namedtuple"`` whose ``meta`` rebuilds
it), so a saved graph stores it as the tuple of its children.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class TreeDef:
    __slots__ = ("kind", "meta", "children")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other):
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self):
        return hash((self.kind, self.meta, tuple(self.children)))

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(map(repr, self.children))
        return f"{self.kind}({inner})"


LEAF = TreeDef("leaf", None, ())

_REGISTRY: dict = {}


class _Node:
    """The ``meta`` of a registered node's ``TreeDef``: the class, its ``unflatten`` and the
    static ``aux`` data; calling it with the children rebuilds the object. Equal (and equally
    hashed) when the class and ``aux`` are."""

    __slots__ = ("cls", "aux", "unflatten", "_hash")

    def __init__(self, cls, aux, unflatten):
        self.cls, self.aux, self.unflatten = cls, aux, unflatten
        self._hash = hash((cls, aux))

    def __call__(self, *children):
        return self.unflatten(self.aux, children)

    def __eq__(self, other):
        return (isinstance(other, _Node) and self.cls is other.cls
                and (self.aux is other.aux or self.aux == other.aux))

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"{self.cls.__name__}[{self.aux!r}]"


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Make instances of ``cls`` (exactly, not its subclasses) pytree nodes.

    ``flatten(x)`` returns ``(children, aux)``: an iterable of sub-trees and hashable static
    data; ``unflatten(aux, children)`` rebuilds the object from a tuple of children (which may
    be tracers, cotangents or batched values). Re-registering a class replaces its entry."""
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node: expected a class, got {cls!r}.")
    if not (callable(flatten) and callable(unflatten)):
        raise TypeError("register_pytree_node: flatten and unflatten must be callable.")
    _REGISTRY[cls] = (flatten, unflatten)


def is_registered(cls: type) -> bool:
    """Whether ``cls`` was registered with ``register_pytree_node``."""
    return cls in _REGISTRY


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(x, leaves: list) -> TreeDef:
    # module-level recursion (a nested recursive closure would be a reference cycle that
    # keeps every leaf, and everything a leaf references, alive until the next GC)
    if x is None:
        return TreeDef("none", None, ())
    reg = _REGISTRY.get(type(x))
    if reg is not None:
        children, aux = reg[0](x)
        return TreeDef("namedtuple", _Node(type(x), aux, reg[1]),
                       tuple(_flatten(c, leaves) for c in children))
    if _is_namedtuple(x):
        return TreeDef("namedtuple", type(x), tuple(_flatten(c, leaves) for c in x))
    if isinstance(x, tuple):
        return TreeDef("tuple", None, tuple(_flatten(c, leaves) for c in x))
    if isinstance(x, list):
        return TreeDef("list", None, tuple(_flatten(c, leaves) for c in x))
    if isinstance(x, dict):
        keys = tuple(sorted(x, key=repr))
        return TreeDef("dict", keys, tuple(_flatten(x[k], leaves) for k in keys))
    leaves.append(x)
    return LEAF


def tree_flatten(tree) -> tuple[list, TreeDef]:
    leaves: list = []
    td = _flatten(tree, leaves)
    return leaves, td


def _unflatten(td: TreeDef, it):
    k = td.kind
    if k == "leaf":
        return next(it)
    if k == "none":
        return None
    kids = [_unflatten(c, it) for c in td.children]
    if k == "tuple":
        return tuple(kids)
    if k == "list":
        return kids
    if k == "namedtuple":
        return td.meta(*kids)
    return dict(zip(td.meta, kids))


def tree_unflatten(treedef: TreeDef, leaves) -> Any:
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree) -> list:
    return tree_flatten(tree)[0]


def tree_map(f: Callable, tree, *rest) -> Any:
    leaves, td = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])
