"""Choosing among the paths a search found: one score, and greedy's path as the bar to clear.

Every search offers its candidates here; opt_einsum's greedy path is offered first and stays
among them, so the path returned is never worse than greedy's: a candidate is *admissible*
only with at most greedy's FLOPs and at most greedy's largest intermediate (or, when a memory
target is set, one within the target), or, when greedy's path is wider than the target, with
a largest intermediate that fits it (slicing greedy's path down would cost more). Among
admissible candidates the lowest score wins (``rate``).
"""

from __future__ import annotations

import math

from .costs import Costs, costs_of, predicted_seconds

SIZE_WEIGHT = 0.2
"""Bits of FLOPs one bit of the largest intermediate is worth in the score: among paths within
~25% of each other's FLOPs, one with 16x smaller intermediates wins (memory footprint and
traffic). On the 6x6 PEPS norm, paths of ~3e11 FLOPs exist with 2^25 and with 2^29 elements."""


def log2(x) -> float:
    return math.log2(max(x, 1))


def rate(flops, log_size, log_target, size_weight=SIZE_WEIGHT) -> float:
    """log2 FLOPs, plus ``size_weight`` per bit of the largest intermediate, plus one bit per
    bit by which it exceeds the target (slicing it down later costs at least that much)."""
    score = log2(flops) + size_weight * log_size
    if log_target is not None:
        score += max(0.0, log_size - log_target)
    return score


def admissible(flops, log_size, g_flops, g_log_size, log_target) -> bool:
    """Whether a path of ``flops`` and largest intermediate ``2**log_size`` may replace
    greedy's (see the module docstring)."""
    eps = 1e-9
    wide_ok = g_log_size if log_target is None else max(g_log_size, log_target)
    if flops <= g_flops * (1 + eps) and log_size <= wide_ok + eps:
        return True
    return log_target is not None and g_log_size > log_target + eps and (
        log_size <= log_target + eps)


class Candidates:
    """The best admissible path offered so far (FLOPs and sizes in tenferro's convention,
    ``costs.costs_of``), starting with greedy's."""

    def __init__(self, prob, target, greedy_path, label="opt_einsum greedy"):
        self.prob = prob
        self.log_target = None if target is None else log2(target)
        self.greedy = self._costs(greedy_path)
        self.greedy_path = greedy_path
        self.path, self.costs, self.label = greedy_path, self.greedy, label
        self.score = self._rate(self.greedy)
        self.offers = 1
        self._hint = self.seconds()

    def _costs(self, path) -> Costs:
        p = self.prob
        return costs_of(p.op, p.terms, p.output, p.size_dict, path)

    def _rate(self, c: Costs) -> float:
        return rate(c.flops, log2(c.largest), self.log_target)

    def offer(self, path, label: str) -> bool:
        """Keep ``path`` if it is admissible and scores better than the best so far."""
        c = self._costs(path)
        self.offers += 1
        g = self.greedy
        if not admissible(c.flops, log2(c.largest), g.flops, log2(g.largest), self.log_target):
            return False
        score = self._rate(c)
        if score < self.score - 1e-12:
            self.path, self.costs, self.label, self.score = path, c, label, score
            self._hint = min(self._hint, self.seconds())
            return True
        return False

    def hint(self, flops, steps) -> None:
        """A search saw a path this cheap (not yet offered): the stopping rule may use it."""
        self._hint = min(self._hint, predicted_seconds(flops, steps))

    def seconds(self) -> float:
        """Predicted contraction time of the best path kept."""
        return predicted_seconds(self.costs.flops, self.costs.steps)

    def seen_seconds(self) -> float:
        """Predicted contraction time of the cheapest path seen (kept or hinted)."""
        return self._hint
