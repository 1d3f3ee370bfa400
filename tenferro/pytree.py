"""Minimal pytrees: tuples, lists, dicts, namedtuples and None nest; everything else is a leaf."""

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


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _flatten(x, leaves: list) -> TreeDef:
    # module-level recursion (a nested recursive closure would be a reference cycle that
    # keeps every leaf, and everything a leaf references, alive until the next GC)
    if x is None:
        return TreeDef("none", None, ())
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
