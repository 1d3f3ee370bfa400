"""The planner's clock: what a search has spent, what it may spend, and whether a step fits.

Two clocks run side by side. *Effort* is the CPU time of the planning thread
(``time.thread_time``): it measures the work a search has done whatever else the machine is
running, so the default search (which stops on effort) finds the same plans on a busy machine
as on an idle one. *Wall* time is what an explicit ``max_time`` bounds: a step (a trial, a
chunk of reconfiguration, importing cotengra) is started only when its predicted duration,
scaled by the load measured so far (wall seconds per CPU second), still ends within the
budget. Steps cannot be interrupted, so predictions are conservative (the slowest step of its
kind so far, times ``SAFETY``); the bound holds to the error of one prediction.
"""

from __future__ import annotations

import math
import time

DEFAULT_MAX_TIME = 10.0
"""Effort budget of ``optimize="auto"`` without ``max_time``: CPU seconds of planning."""

DEFAULT_WALL_CAP = 60.0
"""Without ``max_time``, planning still stops after this many wall seconds (a machine so
loaded that 10 CPU seconds take longer than this gets the plan found so far)."""

SAFETY = 1.5
"""Margin on a step's predicted wall time under an explicit ``max_time``."""


class Effort:
    """Budget and clocks of one search (see the module docstring)."""

    def __init__(self, max_time: float | None):
        self.t0 = time.perf_counter()
        self.c0 = time.thread_time()
        self.hard = max_time is not None
        self.cpu_budget = DEFAULT_MAX_TIME if max_time is None else max_time
        self.wall_budget = DEFAULT_WALL_CAP if max_time is None else max_time
        self.reserve = 0.0  # CPU seconds kept for the work after the search (lowering)
        self.reserve_share = 0.0  # and a share of the budget (slicing, cotengra's overheads)
        self.unit = 0.01  # CPU seconds of one greedy search on this network, once measured
        self._slowest: dict = {}  # step kind -> slowest CPU seconds seen

    # ------------------------------------------------------------------ clocks
    def cpu(self) -> float:
        return time.thread_time() - self.c0

    def wall(self) -> float:
        return time.perf_counter() - self.t0

    def load(self) -> float:
        """Wall seconds per CPU second so far (>= 1; 1 until there is something to measure)."""
        c = self.cpu()
        return max(1.0, self.wall() / c) if c > 1e-3 else 1.0

    # ------------------------------------------------------------------ steps
    def seen(self, kind: str, cpu_seconds: float) -> None:
        """Record how long a step of ``kind`` took (CPU seconds)."""
        self._slowest[kind] = max(cpu_seconds, self._slowest.get(kind, 0.0))

    def guess(self, kind: str, default: float) -> float:
        """Predicted CPU seconds of the next step of ``kind``."""
        return self._slowest.get(kind, default)

    def cpu_left(self, allowance: float, share: float = 1.0, floor: bool = False) -> float:
        """CPU seconds the search may still spend: ``share`` of the least of ``allowance``
        (CPU seconds since the start) and the budget less the reserves (for the work after
        the search: ``reserve`` CPU seconds and ``reserve_share`` of the budget). ``floor``:
        the step belongs to the search's minimum of work (a fixed number of trials and
        reconfiguration steps, the same on a busy machine as on an idle one), which no CPU
        limit stops; only the wall-clock budget does."""
        if floor:
            return math.inf
        budget = self.cpu_budget * (1 - self.reserve_share) - self.reserve
        return share * min(allowance, budget) - self.cpu()

    def fits(self, cpu_seconds: float, allowance: float, share: float = 1.0,
             floor: bool = False) -> bool:
        """Whether a step predicted to take ``cpu_seconds`` of CPU may start: within
        ``cpu_left``, and ending, at the load measured so far, within ``share`` of the wall
        budget (less the reserves)."""
        if cpu_seconds > self.cpu_left(allowance, share, floor):
            return False
        load = self.load()
        margin = SAFETY if self.hard else 1.0
        wall_end = self.wall() + margin * cpu_seconds * load
        return wall_end <= share * self._wall_limit(load)

    def _wall_limit(self, load: float) -> float:
        return self.wall_budget * (1 - self.reserve_share) - self.reserve * load

    def wall_left(self, allowance: float, share: float = 1.0) -> float:
        """Wall seconds a step that watches a deadline itself may run: the least of the wall
        budget left and the CPU allowance left, at the measured load."""
        load = self.load()
        cpu_left = self.cpu_left(allowance, share)
        wall_left = share * self._wall_limit(load) - self.wall()
        return max(1e-3, min(wall_left, cpu_left * load))
