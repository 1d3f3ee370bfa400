"""Implementation of ``tenferro.caches`` (its docstring is the user documentation)."""

from __future__ import annotations

import threading

_REGISTRY: dict[str, BoundedCache] = {}


__all__ = [
    "BoundedCache",
    "clear",
    "sizes",
]


class BoundedCache(dict):
    """A dict holding at most ``maxsize`` entries (oldest inserted are dropped first).
    Lookups are plain (atomic) dict reads; ``put`` takes a lock, since threads (the parallel
    contraction executor, user threads) may evict at once."""

    __slots__ = ("name", "maxsize", "_lock")

    def __init__(self, name: str, maxsize: int):
        super().__init__()
        self.name, self.maxsize = name, int(maxsize)
        self._lock = threading.Lock()
        _REGISTRY[name] = self

    def put(self, key, value):
        with self._lock:
            while len(self) >= self.maxsize:
                del self[next(iter(self))]
            self[key] = value
        return value


def sizes() -> dict[str, tuple[int, int]]:
    """``{name: (entries, maxsize)}`` of every registered cache."""
    return {name: (len(c), c.maxsize) for name, c in _REGISTRY.items()}


def clear() -> None:
    """Empty every registered cache (e.g. to measure cold-start costs)."""
    for c in _REGISTRY.values():
        c.clear()
