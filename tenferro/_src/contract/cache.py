"""Plan caches: a bounded in-memory LRU, and an optional directory of JSON files.

The in-memory cache maps (subscripts or interleaved sublists, shapes, options) to a
``ContractionPlan``; a hit costs a dictionary lookup, so repeated calls in a sweep or an
optimisation loop never plan again. The on-disk cache (``cache_dir=``) stores the result of
the path search (path, sliced indices, planner) keyed by a hash of the *reduced* equation in
opt_einsum symbols, its sizes and the options, so it survives the process and is shared by
networks that differ only in label names. Files are written atomically; an unreadable,
mismatching or invalid file is ignored (and replaced), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from collections import OrderedDict, namedtuple

CacheInfo = namedtuple("CacheInfo", "hits misses maxsize currsize")

DISK_FORMAT = 2
"""2: plans of the search that keeps greedy's path among its candidates (format-1 files may
hold paths worse than greedy's and are ignored)."""


class PlanCache:
    """A thread-safe LRU of plans."""

    def __init__(self, maxsize: int = 4096):
        self.maxsize = maxsize
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key):
        with self._lock:
            plan = self._d.get(key)
            if plan is None:
                self.misses += 1
            else:
                self.hits += 1
                self._d.move_to_end(key)
            return plan

    def put(self, key, plan):
        with self._lock:
            self._d[key] = plan
            if len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.maxsize, len(self._d))

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0


CACHE = PlanCache()


def disk_key(prob, opt_key, limit, max_time) -> list:
    """What identifies a search result on disk (JSON-serialisable)."""
    sizes = [int(prob.size_dict[s]) for s in sorted(prob.size_dict)]
    return [DISK_FORMAT, prob.eq, sizes, repr(opt_key), limit, max_time]


def _file(cache_dir, key) -> str:
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:32]
    return os.path.join(os.fspath(cache_dir), f"tenferro-plan-{digest}.json")


def load(cache_dir, key):
    """``(path, sliced, planner, trials, seconds)`` stored under ``key``, or ``None``."""
    try:
        with open(_file(cache_dir, key), encoding="utf-8") as fh:
            rec = json.load(fh)
        if rec.get("key") != key:
            return None
        path = [tuple(int(i) for i in step) for step in rec["path"]]
        sliced = tuple(str(s) for s in rec["sliced"])
        return path, sliced, str(rec["planner"]), int(rec["trials"]), float(rec["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def store(cache_dir, key, path, sliced, planner, trials, seconds) -> None:
    """Write atomically (a concurrent reader sees the old file or the new one)."""
    rec = {"key": key, "path": [list(s) for s in path], "sliced": list(sliced),
           "planner": planner, "trials": trials, "seconds": seconds}
    os.makedirs(cache_dir, exist_ok=True)
    target = _file(cache_dir, key)
    fd, tmp = tempfile.mkstemp(dir=os.fspath(cache_dir), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(rec, fh)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
