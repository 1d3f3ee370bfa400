"""Implementation of ``tenferro.pytree`` (its docstring is the user documentation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "TreeDef",
    "is_registered",
    "register_pytree_node",
    "register_pytree_serialization",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_unflatten",
]


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


# ------------------------------------------------------------- saved graphs
_SERIAL_BY_NAME: dict[str, tuple] = {}
_SERIAL_BY_CLASS: dict[type, str] = {}


def register_pytree_serialization(cls: type, name: str, to_value: Callable,
                                  from_value: Callable) -> None:
    """Let saved graphs keep registered nodes of ``cls`` (and of its subclasses) as objects
    rather than plain tuples of their children.

    ``to_value(aux)`` turns the node's static data into a *value*: ints, floats, complex
    numbers, strings, ``None``, NumPy dtypes, run-time sizes and tuples of these (what
    graph files store for primitive parameters). ``from_value(value)`` returns
    ``(node_class, aux)``, ``node_class`` registered with ``register_pytree_node``; it reads
    untrusted data, so it must validate it (any exception becomes a ``GraphFormatError``).
    ``name`` is stored in the file; a module under ``tenferro.`` named by its prefix is
    imported at load time, other registrations must run before ``tenferro.load``."""
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_serialization: expected a class, got {cls!r}.")
    if type(name) is not str or not name:
        raise TypeError(f"register_pytree_serialization: name must be a non-empty string, "
                        f"got {name!r}.")
    if not (callable(to_value) and callable(from_value)):
        raise TypeError("register_pytree_serialization: to_value and from_value must be "
                        "callable.")
    _SERIAL_BY_NAME[name] = (to_value, from_value)
    _SERIAL_BY_CLASS[cls] = name


def node_serialization(meta) -> tuple[str, Any] | None:
    """``(name, value)`` for a registered node's ``TreeDef.meta`` whose class (or a base) has a
    serialization, else ``None`` (the node is then saved as a tuple)."""
    if not isinstance(meta, _Node):
        return None
    for c in meta.cls.__mro__:
        name = _SERIAL_BY_CLASS.get(c)
        if name is not None:
            return name, _SERIAL_BY_NAME[name][0](meta.aux)
    return None


def node_from_value(name: str, value):
    """The ``TreeDef.meta`` of a saved node: ``None`` when ``name`` is not registered."""
    entry = _SERIAL_BY_NAME.get(name)
    if entry is None and name.startswith("tenferro."):
        import importlib

        try:
            importlib.import_module(name.rsplit(".", 1)[0])
        except ImportError:
            return None
        entry = _SERIAL_BY_NAME.get(name)
    if entry is None:
        return None
    cls, aux = entry[1](value)
    reg = _REGISTRY.get(cls)
    if reg is None:
        raise TypeError(f"{name}: from_value returned {cls!r}, which is not a registered "
                        f"pytree node class")
    return _Node(cls, aux, reg[1])


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
