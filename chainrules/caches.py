"""Bounded caches: a dict holding at most ``maxsize`` entries, registered by name so that one
place (``tenferro.caches``) reports and clears every cache of both packages. It lives here,
below tenferro, because chainrules keeps caches too (the symbolic-size prover's)."""

from __future__ import annotations

import threading

REGISTRY: dict[str, BoundedCache] = {}


class BoundedCache(dict):
    """A dict holding at most ``maxsize`` entries (oldest inserted are dropped first).
    Lookups are plain (atomic) dict reads; ``put`` takes a lock, since threads (the parallel
    contraction executor, user threads) may evict at once."""

    __slots__ = ("name", "maxsize", "_lock")

    def __init__(self, name: str, maxsize: int):
        super().__init__()
        self.name, self.maxsize = name, int(maxsize)
        self._lock = threading.Lock()
        REGISTRY[name] = self

    def put(self, key, value):
        with self._lock:
            while len(self) >= self.maxsize:
                del self[next(iter(self))]
            self[key] = value
        return value
