"""Implementation of ``tenferro.caches`` (its docstring is the user documentation)."""

from __future__ import annotations

from chainrules.caches import REGISTRY as _REGISTRY
from chainrules.caches import BoundedCache

__all__ = [
    "BoundedCache",
    "clear",
    "sizes",
]


def sizes() -> dict[str, tuple[int, int]]:
    """``{name: (entries, maxsize)}`` of every registered cache."""
    return {name: (len(c), c.maxsize) for name, c in _REGISTRY.items()}


def clear() -> None:
    """Empty every registered cache (e.g. to measure cold-start costs)."""
    for c in _REGISTRY.values():
        c.clear()
