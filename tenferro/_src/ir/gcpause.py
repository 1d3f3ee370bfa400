"""Pausing Python's cyclic garbage collector while building large acyclic structures.

Each collection rescans every object still alive, and collections are triggered by how many
objects are made: building a 200,000-equation program (loading it from a file, preparing it
to run) made the collector rescan hundreds of thousands of live objects again and again, a
third of the time and growing faster than the program. The structures built here hold no
reference cycles, so nothing is lost by pausing it.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    """Disable the cyclic collector for the block, then restore its previous state (other
    threads' collections are merely postponed)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
