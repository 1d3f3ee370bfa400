"""Background CPU load for the planner's tests and benchmarks."""

from __future__ import annotations

import contextlib
import subprocess
import sys

_BUSY = ("import os\nif hasattr(os, 'sched_setaffinity'):\n"
         "    os.sched_setaffinity(0, range(os.cpu_count()))\nwhile True: pass")


@contextlib.contextmanager
def busy_loops(n: int = 2):
    """``n`` busy-loop processes free to run on every core for the duration: a ``stress``-like
    background load."""
    procs = [subprocess.Popen([sys.executable, "-c", _BUSY]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()
