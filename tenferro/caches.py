"""Bounded caches, all registered by name so their sizes can be inspected (``sizes()``).

Every cache tenferro keeps per signature (validated shapes, derivative templates, compiled
programs, einsum plans...) is one of these: a dict that drops its oldest entry when full, so a
long program whose signatures keep changing cannot grow memory without bound. Hits cost a
plain dict lookup (no bookkeeping); eviction is oldest-inserted first.
"""

from __future__ import annotations

import threading

_REGISTRY: dict[str, BoundedCache] = {}


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
