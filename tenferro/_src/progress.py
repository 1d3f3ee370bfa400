"""Progress output for long tensor-network loops, written for the physicist watching them.

Every step builds one *record* (a dict): the algorithm, the step number, wall time, the time
of this step, and whatever the algorithm reports -- by convention ``energy`` (printed at full
precision, 17 significant digits: the digits that change late are the interesting ones),
``dE`` (the change since the last step), ``grad`` (a gradient or residual norm),
``trunc_err`` (discarded weight). A ``callback=`` receives every record (whether or not
anything is printed). Lines go to stderr (or ``stream``) and name the loop's unit (``sweep``
for DMRG, ``iteration``, ``step``):

* on a terminal, at most about one line per ``every`` seconds (the screen shows the latest);
* to a file or pipe (a log), every step's line, throttled by time only when lines come
  faster than a log can use: a burst of ``LOG_BURST`` lines, then about ``LOG_RATE`` lines
  per ``every`` seconds;
* the last step's line always (at the latest when the loop's ``with`` block ends).

The denominator is an estimate, not the iteration budget. A loop of known length (TRG steps,
time steps; ``fixed=True``) prints ``step/total`` and the time left at the mean time per
step. A loop that runs *until converged* names the quantity it drives below a tolerance
(``monitor="grad"``, ``tol=1e-10``): the estimate of the steps left is
``log(value/tol) / rate`` with ``rate`` the mean decrease of ``log(value)`` per step over the
last few steps (linear convergence, what VUMPS, CTMRG and DMRG show), printed as
``~N left``; until the value decreases it prints ``?``. With ``tol=0`` (no convergence test:
the loop runs its whole budget) the steps left are the budget's. The iteration budget is
printed only as ``max N``. (A caller that says neither gets the old ``step/total`` line, no
ETA.)

A loop that stops at its budget without reaching its tolerance says so with a
``tenferro.errors.ConvergenceWarning`` (``warn_unconverged``) naming what it reached and the
tolerance: ``result.converged`` is not the only place to learn it.

Silence it per call (``progress=False``), globally (``tenferro.tn.set_progress(False)``), or
with the environment variable ``TENFERRO_PROGRESS=0``; a ``callback`` still runs.
"""

from __future__ import annotations

import math
import os
import sys
import time
import warnings
from collections.abc import Callable

from .core.tensor import Tensor
from .errors import ConcretizationError, ConvergenceWarning
from .ops.misc import stop_gradient

_enabled = os.environ.get("TENFERRO_PROGRESS", "1") not in ("0", "", "false", "False")

__all__ = ["Progress", "set_progress"]

#: lines written at once to a file or pipe before the time throttle starts
LOG_BURST = 100
#: lines per ``every`` seconds to a file or pipe once the burst is spent
LOG_RATE = 10


def scalar(x) -> float | None:
    """``float(x)`` for a record, or None where ``x`` has no value yet (a traced graph); the
    value is read through ``stop_gradient``, so reporting never touches a derivative."""
    if x is None or isinstance(x, (int, float)):
        return x
    try:
        if isinstance(x, Tensor):
            x = stop_gradient(x)
        return float(x)
    except (TypeError, ValueError, ConcretizationError):
        return None


def set_progress(enabled: bool) -> None:
    """Turn progress lines of every ``tenferro.tn`` algorithm on or off (default: on unless
    ``TENFERRO_PROGRESS=0``)."""
    global _enabled
    _enabled = bool(enabled)


class Progress:
    """``with Progress("VUMPS", maxiter, progress, monitor="grad", tol=1e-10) as p:
    ... p.update(step, energy=e, grad=g)``.

    ``total``: the number of steps of a fixed-length loop (pass ``fixed=True``), or the
    iteration budget of a loop that stops at convergence (then pass ``monitor`` and ``tol``).
    ``enabled``: None (global setting), True or False. ``callback(record)`` gets every
    step's record. ``unit``: what the loop calls one step in its lines ("sweep",
    "iteration"); records always say ``step``."""

    def __init__(self, name: str, total: int | None = None, enabled=None, every: float = 1.0,
                 stream=None, *, fixed: bool = False, monitor: str | None = None,
                 tol: float | None = None, callback: Callable[[dict], object] | None = None,
                 window: int = 5, unit: str = "step"):
        self.name, self.total = name, total
        self.enabled = _enabled if enabled is None else bool(enabled)
        self.every, self.stream = every, stream or sys.stderr
        self.monitor, self.tol, self.callback, self.window = monitor, tol, callback, window
        self.fixed, self.unit = fixed, unit
        self._terminal = _is_terminal(self.stream)
        self._tokens = float(LOG_BURST)
        # a converging loop may know it has at least this many steps to go (DMRG's remaining
        # bond-dimension schedule); callers may update tol and min_left between steps
        self.min_left = 0
        self.records: list[dict] = []
        self._t0 = self._last = self._tstep = self._refill = 0.0
        self._history: list[float] = []
        self._shown = None

    def __enter__(self):
        self._t0 = self._last = self._tstep = self._refill = time.perf_counter()
        return self

    def __exit__(self, *exc):
        # the last record is always shown (a converging loop knows its end only here)
        if exc[0] is None and self.enabled and self.records and self.records[-1] is not self._shown:
            self._write(self.records[-1])
        return False

    # ------------------------------------------------------------------ estimates
    def steps_left(self, step: int) -> float | None:
        """Estimated steps to go: exact for a fixed-length loop, from the convergence rate of
        the monitored value for a converging one; None when there is no estimate yet."""
        if self.monitor is None:
            if not self.fixed or self.total is None:
                return None
            return max(self.total - step, 0)
        if self.tol is not None and self.tol <= 0:  # no convergence test: the whole budget
            return None if self.total is None else max(self.total - step, 0)
        h = [v for v in self._history[-(self.window + 1):] if v > 0 and math.isfinite(v)]
        if not h or self.tol is None:
            return None
        if h[-1] <= self.tol:
            return self.min_left
        if len(h) < 2:
            return None
        rate = (math.log(h[0]) - math.log(h[-1])) / (len(h) - 1)
        if rate <= 0:
            return None
        left = max(math.ceil(math.log(h[-1] / self.tol) / rate - 1e-9), self.min_left)
        return left if self.total is None else min(left, max(self.total - step, 0))

    # ------------------------------------------------------------------ reporting
    def update(self, step: int, **info) -> dict:
        """Record step ``step`` (1-based) with the algorithm's numbers; returns the record."""
        now = time.perf_counter()
        record = {"algorithm": self.name, "step": step, "time": now - self._t0,
                  "step_time": now - self._tstep, **info}
        self._tstep = now
        if self.monitor is not None and self.monitor in info:
            try:
                self._history.append(abs(float(info[self.monitor])))
            except (TypeError, ValueError):
                pass
        left = self.steps_left(step)
        record["steps_left"] = left
        self.records.append(record)
        if self.callback is not None:
            self.callback(record)
        if not self.enabled:
            return record
        last = self.total is not None and step >= self.total
        if not (last or self._due(now)):
            return record
        self._last = now
        self._write(record)
        return record

    def _due(self, now: float) -> bool:
        """Whether a line is due now: on a terminal once per ``every`` seconds; to a log
        while its token bucket (``LOG_BURST`` lines, refilled at ``LOG_RATE`` per ``every``
        seconds) holds a line."""
        if self.every <= 0:
            return True
        if self._terminal:
            return now - self._last >= self.every
        self._tokens = min(float(LOG_BURST),
                           self._tokens + (now - self._refill) * LOG_RATE / self.every)
        self._refill = now
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def _write(self, record: dict) -> None:
        self._shown = record
        self.stream.write(self.format(record) + "\n")
        self.stream.flush()

    def format(self, record: dict) -> str:
        step, left = record["step"], record["steps_left"]
        if self.monitor is None and self.total is not None:
            head = f"{step}/{self.total}"
        else:
            est = "?" if left is None else f"~{left}"
            head = f"{self.unit} {step} ({est} left"
            head += f", max {self.total})" if self.total is not None else ")"
        per = record["time"] / max(step, 1)
        tail = f"{record['time']:7.1f}s  {per:.3g}s/{self.unit}"
        if left:
            tail += f"  ETA {left * per:.0f}s"
        extra = "  ".join(f"{k}={_fmt(k, v)}" for k, v in record.items()
                          if k not in _FIXED)
        return f"[{self.name}] {head}  {tail}  {extra}"


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def warn_unconverged(message: str) -> None:
    """Warn (``ConvergenceWarning``) that a loop stopped at its budget before reaching its
    tolerance. ``message`` names the function, what it reached and the tolerance. The
    warning is attributed to the caller's code (the first frame outside tenferro), so the
    warnings filter and the printed location point at the user's call."""
    warnings.warn(message, ConvergenceWarning, stacklevel=_user_stacklevel())


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../tenferro


def _user_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` (called from ``warn_unconverged``) that
    points at the first frame outside the tenferro package."""
    frame, level = sys._getframe(2), 2  # 1: warn_unconverged, 2: its caller
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    return level


_FIXED = {"algorithm", "step", "time", "step_time", "steps_left"}
_FULL = {"energy", "E", "lnZ", "e"}


def _fmt(key, v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if key in _FULL or not math.isfinite(v):
        return repr(v)  # all the digits: the late ones are the ones that change
    return f"{v:.3e}" if v != int(v) or abs(v) >= 1e6 else f"{int(v)}"
