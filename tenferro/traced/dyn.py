"""Sizes known only at run time (data-dependent shapes, e.g. SVD truncated by a cutoff)."""

from __future__ import annotations

import itertools

_ids = itertools.count()


class DynDim:
    """A symbolic dimension. Two shapes agree on it only if they hold the same object."""

    __slots__ = ("id",)

    def __init__(self):
        self.id = next(_ids)

    def __repr__(self):
        return f"k{self.id}"
