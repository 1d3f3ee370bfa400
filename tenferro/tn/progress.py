"""Progress reporting for long tensor-network loops: a periodic log line on stderr.

Silence it per call (``progress=False``), globally (``tenferro.tn.set_progress(False)``), or
with the environment variable ``TENFERRO_PROGRESS=0``.
"""

from __future__ import annotations

import os
import sys
import time

_enabled = os.environ.get("TENFERRO_PROGRESS", "1") not in ("0", "", "false", "False")

__all__ = ["Progress", "set_progress"]


def set_progress(enabled: bool) -> None:
    global _enabled
    _enabled = bool(enabled)


class Progress:
    """``with Progress("TRG", total) as p: ... p.update(step, **info)``; prints at most about
    once per ``every`` seconds, and always on the last step."""

    def __init__(self, name: str, total: int, enabled=None, every: float = 1.0, stream=None):
        self.name, self.total = name, total
        self.enabled = _enabled if enabled is None else bool(enabled)
        self.every, self.stream = every, stream or sys.stderr
        self._last = 0.0
        self._t0 = 0.0

    def __enter__(self):
        self._t0 = self._last = time.perf_counter()
        return self

    def __exit__(self, *exc):
        return False

    def update(self, step: int, **info):
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last < self.every and step < self.total:
            return
        self._last = now
        extra = "  ".join(f"{k}={_fmt(v)}" for k, v in info.items())
        self.stream.write(
            f"[{self.name}] {step}/{self.total}  {now - self._t0:6.1f}s  {extra}\n"
        )
        self.stream.flush()


def _fmt(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f"{v:.6g}"
