"""Finding a contraction path (and, under a memory limit, the indices to slice).

``optimize="auto"`` scales the effort with the network (``auto_search``):

* up to ``EXACT_MAX`` operands: opt_einsum's exhaustive ``optimal``;
* up to ``DP_MAX``: opt_einsum's dynamic programming (exact in FLOPs, milliseconds here);
* larger: an *anytime* search that starts from the greedy path and improves it until the time
  budget ``max_time`` is spent or the predicted contraction time of the best path so far
  (``costs.predicted_seconds``) is small compared with the search time already spent, but not
  before a floor of ``FLOOR_PER_OPERAND`` seconds per operand and ``MIN_TRIALS`` trials
  (planning is cached, and a few seconds of search routinely save hours). From
  ``COTENGRA_MIN`` operands it uses cotengra's hyper-optimizer when cotengra is installed
  (``pip install 'tenferro[cotengra]'``): trials without subtree reconfiguration (many cheap
  trials train its sampler better than a few refined ones), scored by FLOPs with a preference
  for narrow intermediates (``SIZE_WEIGHT``, the memory ``target``), then the best kept trees
  reconfigured. Otherwise, and for medium networks, opt_einsum's random-greedy in chunks,
  followed by our own subtree reconfiguration (``reconf.py``).

``target`` (the largest intermediate aimed at, in elements) only steers the search; slicing
to a memory limit happens afterwards (``slice_found``): cotengra's ``SliceFinder``
(``ContractionTree.slice_and_reconfigure``) when installed, otherwise
``slicing.greedy_slices``.
"""

from __future__ import annotations

import importlib.util
import math
import random
import time
import warnings

import opt_einsum as oe

from .costs import Costs, costs_of, predicted_seconds
from .reconf import reconfigure
from .slicing import greedy_slices

EXACT_MAX = 4
DP_MAX = 12
COTENGRA_MIN = 20
DEFAULT_MAX_TIME = 10.0
FLOOR_PER_OPERAND = 0.002
MIN_TRIALS = 8
RG_CHUNK = 16
COTENGRA_BATCH = 4


class PlanningWarning(UserWarning):
    """The planner's news: a predicted cost that is huge, or a better planner to install."""


class Found:
    """A search result: the path (opt_einsum format), the sliced symbols, the planner's
    description and how many trials it ran."""

    __slots__ = ("path", "sliced", "planner", "trials")

    def __init__(self, path, sliced=(), planner="", trials=1):
        self.path = tuple(tuple(int(i) for i in s) for s in path)
        self.sliced = tuple(sliced)
        self.planner = planner
        self.trials = trials


_COTENGRA: list = []  # [bool] once looked up
_HINTED: list = []


def have_cotengra() -> bool:
    if not _COTENGRA:
        _COTENGRA.append(importlib.util.find_spec("cotengra") is not None)
    return _COTENGRA[0]


def _hint_cotengra(op, n):
    if _HINTED:
        return
    _HINTED.append(True)
    warnings.warn(
        f"{op}: planning a {n}-tensor network with opt_einsum's random-greedy search; for "
        f"networks this large cotengra's hyper-optimizer usually finds paths that are many "
        f"times cheaper. Install it with `pip install 'tenferro[cotengra]'` (said once).",
        PlanningWarning,
        stacklevel=5,
    )


def trivial_path(n: int):
    if n == 1:
        return ((0,),)
    return ((0, 1),) + tuple((0, m - 1) for m in range(n - 1, 1, -1))


def _sets(prob):
    return [set(t) for t in prob.terms], set(prob.output)


def named_search(prob, name) -> Found:
    """An opt_einsum optimizer by name (``"greedy"``, ``"dp"``, ``"random-greedy-128"``...)."""
    ins, out = _sets(prob)
    path = oe.paths.get_path_fn(name)(ins, out, prob.size_dict)
    return Found(path, planner=f"opt_einsum '{name}'")


def optimizer_search(prob, opt) -> Found:
    """A ``PathOptimizer`` instance (opt_einsum's or cotengra's)."""
    ins, out = _sets(prob)
    path = opt(ins, out, prob.size_dict)
    return Found(path, planner=type(opt).__name__)


# --------------------------------------------------------------------------- auto


class _Best:
    """The best path found so far, by FLOPs (ties: smaller largest intermediate)."""

    def __init__(self, prob):
        self.prob = prob
        self.path = None
        self.costs: Costs | None = None
        self.sliced = ()

    def offer(self, path, sliced=()) -> bool:
        c = costs_of(self.prob.op, self.prob.terms, self.prob.output, self.prob.size_dict,
                     path, sliced)
        if self.costs is None or (c.flops, c.largest) < (self.costs.flops, self.costs.largest):
            self.path, self.costs, self.sliced = path, c, tuple(sliced)
            return True
        return False

    def seconds(self) -> float:
        return predicted_seconds(self.costs.flops, self.costs.steps)


def auto_search(prob, max_time, target) -> Found:
    """tenferro's default planner (see the module docstring)."""
    n = prob.n
    if n <= 2:
        return Found(trivial_path(n), planner="trivial")
    ins, out = _sets(prob)
    if n <= EXACT_MAX:
        return Found(oe.paths.optimal(ins, out, prob.size_dict), planner="optimal")
    if n <= DP_MAX:
        dp = oe.DynamicProgramming(minimize="flops")
        return Found(dp(ins, out, prob.size_dict), planner="dp")
    budget = DEFAULT_MAX_TIME if max_time is None else max_time
    t0 = time.perf_counter()
    deadline = t0 + budget
    floor = t0 + min(budget, FLOOR_PER_OPERAND * n)
    best = _Best(prob)
    best.offer(oe.paths.greedy(ins, out, prob.size_dict))

    def done(trials: int = 0) -> bool:
        now = time.perf_counter()
        return now >= deadline or (
            now >= floor and trials >= MIN_TRIALS and best.seconds() <= now - t0
        )

    if n >= COTENGRA_MIN and have_cotengra():
        found = _cotengra_search(prob, best, done, deadline, target)
        if found is not None:
            return found
    trials = 1
    rg = oe.RandomGreedy(max_repeats=RG_CHUNK)  # trial r is seeded with r: reproducible
    state = random.getstate()  # opt_einsum reseeds the global generator
    trial_deadline = t0 + (1 - RECONF_SHARE) * budget
    try:
        while not done(trials) and time.perf_counter() < trial_deadline:
            rg.max_time = max(trial_deadline - time.perf_counter(), 1e-3)
            best.offer(rg(ins, out, prob.size_dict))
            trials = 1 + len(rg.costs)
    finally:
        random.setstate(state)
    now = time.perf_counter()
    until = min(deadline, now + RECONF_SHARE / (1 - RECONF_SHARE) * (now - t0))
    best.offer(reconfigure(prob, best.path, until))
    if n >= COTENGRA_MIN and best.seconds() > time.perf_counter() - t0:
        _hint_cotengra(prob.op, n)
    return Found(best.path, planner=f"random-greedy ({trials} trials, reconfigured)",
                 trials=trials)


SIZE_WEIGHT = 0.2
"""Bits of FLOPs one bit of the largest intermediate is worth in the score: among paths within
~25% of each other's FLOPs, one with 16x smaller intermediates wins (memory footprint and
traffic). On the 6x6 PEPS norm, paths of ~3e11 FLOPs exist with 2^25 and with 2^29 elements."""

TOP_K = 16
"""How many of the best trial trees are kept for the final subtree reconfiguration."""

RECONF_SHARE = 0.3
"""Share of the budget kept for reconfiguring the kept trees, best first. The trial ranking
before reconfiguration predicts the result poorly (on the 6x6 PEPS the 2^25-wide optimum came
from the 2nd-best trial tree, at 4x the best one's FLOPs before reconfiguring)."""


class _Score:
    """cotengra trial score: log2 FLOPs, plus ``SIZE_WEIGHT`` per bit of the largest
    intermediate, plus one bit per bit by which it exceeds ``target`` (slicing it down later
    costs at least that much). Remembers the ``TOP_K`` best trees it has scored."""

    def __init__(self, target, size_weight=None):
        self.log_target = None if target is None else _log2(target)
        self.size_weight = SIZE_WEIGHT if size_weight is None else size_weight
        self.top: list = []  # (score, n, tree), best first

    def rate(self, flops, log_size) -> float:
        score = _log2(flops) + self.size_weight * log_size
        if self.log_target is not None:
            score += max(0.0, log_size - self.log_target)
        return score

    def __call__(self, trial):
        if not all(k in trial for k in ("flops", "write", "size")):
            stats = trial["tree"].contract_stats()
            for k in ("flops", "write", "size"):
                trial.setdefault(k, stats[k])
        score = self.rate(trial["flops"], _log2(trial["size"]))
        if all(abs(score - s) > 1e-9 for s, _, _ in self.top):  # skip duplicates
            self.top.append((score, len(self.top) + 1e-3 * score, trial["tree"]))
            self.top.sort(key=lambda t: t[:2])
            del self.top[TOP_K:]
        return score

    def final(self, tree) -> float:
        return self.rate(tree.contraction_cost(), tree.contraction_width())


NARROW_AFTER = 0.5
"""Share of the trial time after which, if every kept tree is still wider than the memory
target, every other batch of trials uses a score weighing width as much as FLOPs."""


def _hyper(ctg, methods, score):
    return ctg.HyperOptimizer(
        methods=methods, max_repeats=COTENGRA_BATCH, parallel=False, reconf_opts=None,
        minimize=score, on_trial_error="ignore",
    )


def _cotengra_search(prob, best, done, deadline, target):
    """Hyper-optimize with cotengra until ``done()`` (leaving ``RECONF_SHARE`` of the time
    left for the end), then reconfigure the best trees; ``None`` if cotengra fails."""
    try:
        import cotengra as ctg
    except ImportError:  # pragma: no cover - find_spec said it was there
        return None
    inputs = list(prob.terms)
    output = prob.output
    methods = ["greedy"]
    methods.append("kahypar" if importlib.util.find_spec("kahypar") else "labels")
    score = _Score(target)
    scores = [score]
    start = time.perf_counter()
    trial_deadline = start + (1 - RECONF_SHARE) * (deadline - start)
    try:
        opts = [_hyper(ctg, methods, score)]
        turn = 0
        while True:
            now = time.perf_counter()
            if (len(scores) == 1 and target is not None and score.top
                    and now >= start + NARROW_AFTER * (trial_deadline - start)
                    and min(t.contraction_width() for _, _, t in score.top) > _log2(target)):
                # every tree so far is wider than the target: from now on, every other batch
                # of trials weighs width as much as FLOPs
                scores.append(_Score(target, size_weight=1.0))
                opts.append(_hyper(ctg, methods, scores[-1]))
            opt = opts[turn % len(opts)]
            turn += 1
            opt.max_time = max(trial_deadline - time.perf_counter(), 1e-3)
            opt.search(inputs, output, prob.size_dict)
            if opt.best.get("tree") is not None:
                best.offer(opt.tree.get_path())  # for the stopping rule
            trials = sum(len(o.scores) for o in opts)
            if done(trials) or time.perf_counter() >= trial_deadline:
                break
        # reconfigure within the budget, and for no longer than the trials ran (a search that
        # stopped early because the contraction is cheap must not spend seconds here); the
        # kept trees of every score compete under the first one
        now = time.perf_counter()
        until = min(deadline, now + RECONF_SHARE / (1 - RECONF_SHARE) * (now - start))
        kept = [t for pair in _interleave([s.top for s in scores]) for t in pair]
        finals = []
        for tree in kept:
            if finals and time.perf_counter() >= until:
                break
            tree.set_default_objective("flops")
            finals.append((score.final(tree), len(finals), tree))
            # reconfiguring for FLOPs can widen a tree: both versions compete
            tree = tree.subtree_reconfigure(minimize="flops", inplace=False)
            finals.append((score.final(tree), len(finals), tree))
        tree = min(finals, key=lambda t: t[:2])[2]
    except Exception as exc:  # a planner failure must never make einsum fail
        warnings.warn(f"{prob.op}: cotengra's search failed ({exc!r}); using opt_einsum's "
                      f"result instead.", PlanningWarning, stacklevel=6)
        return None
    how = "" if len(scores) == 1 else ", some width-weighted"
    label = (f"cotengra hyper-optimizer ({trials} trials{how}, {'+'.join(methods)}, best "
             f"{len(finals) // 2} reconfigured)")
    return Found(tree.get_path(), tuple(tree.sliced_inds), planner=label, trials=trials)


def _interleave(lists):
    """Best-first from each list in turn: [a0, b0, a1, b1, ...] as singleton tuples."""
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if i < len(x):
                out.append((x[i][2],))
    return out


def _log2(x) -> float:
    return math.log2(max(x, 1))


# --------------------------------------------------------------------------- slicing


def slice_found(prob, found: Found, target, reconfigure: bool) -> Found:
    """Slice ``found`` further until its largest intermediate is at most ``target`` elements
    (``reconfigure``: cotengra may also change the path around the sliced indices)."""
    all_sliceable = prob.sliceable == set(prob.size_dict) - set(prob.output)
    if have_cotengra() and all_sliceable:
        try:
            import cotengra as ctg

            tree = ctg.ContractionTree.from_path(
                list(prob.terms), prob.output, prob.size_dict, path=found.path
            )
            for s in found.sliced:
                tree.remove_ind_(s)
            if reconfigure:
                tree = tree.slice_and_reconfigure(target_size=target, allow_outer=False,
                                                  minimize="flops", inplace=False)
            else:
                tree = tree.slice(target_size=target, allow_outer=False, minimize="flops",
                                  inplace=False)
            if tree.contraction_width() <= _log2(target) + 1e-9:
                how = "cotengra SliceFinder"
                return Found(tree.get_path(), tuple(tree.sliced_inds),
                             planner=_with_slicer(found.planner, how), trials=found.trials)
        except Exception:  # fall back to the greedy slicer below
            pass
    sliced = greedy_slices(prob, found.path, target, found.sliced)
    if sliced is None:
        return None
    return Found(found.path, sliced, planner=_with_slicer(found.planner, "greedy slicer"),
                 trials=found.trials)


def _with_slicer(planner, how):
    base = planner.split(" + sliced by ")[0]
    return f"{base} + sliced by {how}"
