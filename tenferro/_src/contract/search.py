"""Finding a contraction path (and, under a memory limit, the indices to slice).

``optimize="auto"`` scales the effort with the network (``auto_search``):

* up to ``EXACT_MAX`` operands: opt_einsum's exhaustive ``optimal``;
* up to ``DP_MAX``: opt_einsum's dynamic programming (exact in FLOPs, milliseconds here);
* larger: an *anytime* search. opt_einsum's greedy path comes first and stays a candidate
  (``candidates.py``: the result never has more FLOPs than it, nor a larger intermediate
  unless within the memory target). The search improves on it in steps (a trial, a chunk of
  trials, a round of subtree reconfiguration), each started only when its predicted cost fits
  (``effort.py``): the CPU time of the planning thread within the *allowance* (the predicted
  contraction time of the best path seen, ``costs.predicted_seconds``, but at least
  ``FLOOR_PER_OPERAND`` per operand: planning costs about what it can save) and the budget
  (10 CPU seconds by default, or ``max_time`` as a wall-clock bound). A floor of work (the
  first ``hyper.MIN_TRIALS`` trials and reconfiguration round) runs whatever the clock says
  (except an explicit ``max_time``), so a busy machine does not make plans worse. From
  ``COTENGRA_MIN`` operands it uses cotengra's hyper-optimizer when cotengra is installed
  (``pip install 'tenferro[cotengra]'``) and the allowance covers importing it and a trial
  (``hyper.py``: one trial per step, then subtree reconfiguration of the best trees in
  steps). Otherwise, and for medium networks, opt_einsum's random-greedy in doubling chunks,
  then our own subtree reconfiguration (``reconf.py``) in rounds.

``target`` (the largest intermediate aimed at, in elements) only steers the search; slicing
to a memory limit happens afterwards (``slice_found``): cotengra's ``SliceFinder`` (with
reconfiguration around the sliced indices while the effort allows) when installed, otherwise
``slicing.greedy_slices``.
"""

from __future__ import annotations

import importlib.util
import math
import random
import warnings

import opt_einsum as oe

from .candidates import Candidates, log2
from .effort import Effort
from .hyper import MIN_TRIALS, RECONF_SHARE, cotengra_search, slice_and_reconfigure
from .reconf import reconfigure
from .slicing import greedy_slices

EXACT_MAX = 4
DP_MAX = 12
COTENGRA_MIN = 20
FLOOR_PER_OPERAND = 0.002
"""CPU seconds per operand the search may always spend, however cheap the contraction."""
POST_FACTOR = 4.0
POST_SHARE = 0.2
"""The work after the search (costs, lowering, slicing to fit the memory) is given
``POST_FACTOR`` times what greedy took plus ``POST_SHARE`` of the budget."""
RG_CHUNK = 16
RECONF_ROUND = 0.125
"""Subtree reconfiguration steps per operand in one round of the fallback search (the first
round always runs)."""


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


def auto_search(prob, max_time, target, effort: Effort | None = None) -> Found:
    """tenferro's default planner (see the module docstring). ``effort``: the clock started
    when planning began (a fresh one otherwise)."""
    n = prob.n
    if n <= 2:
        return Found(trivial_path(n), planner="trivial")
    ins, out = _sets(prob)
    if n <= EXACT_MAX:
        return Found(oe.paths.optimal(ins, out, prob.size_dict), planner="optimal")
    if n <= DP_MAX:
        dp = oe.DynamicProgramming(minimize="flops")
        return Found(dp(ins, out, prob.size_dict), planner="dp")
    effort = Effort(max_time) if effort is None else effort
    c = effort.cpu()
    pick = Candidates(prob, target, oe.paths.greedy(ins, out, prob.size_dict))
    effort.unit = max(effort.cpu() - c, 1e-4)  # what one greedy search costs here
    effort.reserve, effort.reserve_share = POST_FACTOR * effort.unit, POST_SHARE

    def allowance() -> float:
        # stop once the best path found would contract faster than the planning so far took
        return max(FLOOR_PER_OPERAND * n, pick.seen_seconds())

    done = None
    if n >= COTENGRA_MIN and have_cotengra():
        try:
            done = cotengra_search(prob, pick, effort, allowance)
        except Exception as exc:  # a planner failure must never make einsum fail
            warnings.warn(f"{prob.op}: cotengra's search failed ({exc!r}); using opt_einsum's "
                          f"result instead.", PlanningWarning, stacklevel=6)
    if done is None:
        done = _random_greedy(prob, pick, effort, allowance)
        if n >= COTENGRA_MIN and pick.seconds() > effort.cpu():
            _hint_cotengra(prob.op, n)
    how, trials = done
    kept = "" if pick.label != "opt_einsum greedy" else "; opt_einsum's greedy path kept"
    return Found(pick.path, planner=how + kept, trials=trials)


def _random_greedy(prob, pick, effort, allowance):
    """opt_einsum's random-greedy, then our subtree reconfiguration of the best path;
    returns ``(description, trials)``.

    The work comes in rounds: ``MIN_TRIALS`` trials, then as many again (doubling), each
    round only when its predicted cost fits the effort; then reconfiguration of the best path
    and of greedy's, each in rounds of ``RECONF_ROUND`` steps per operand, the first always.
    Decisions fall between rounds, so a busy machine (which makes every step slower) changes
    the plan only when it moves a whole round across the limit. An explicit ``max_time`` is
    checked before every chunk of trials and every step."""
    ins, out = _sets(prob)
    share = 1 - RECONF_SHARE
    trials = 0
    rg = oe.RandomGreedy()  # trial r is seeded with r: reproducible
    state = random.getstate()  # opt_einsum reseeds the global generator
    try:
        while True:
            chunk = MIN_TRIALS if not trials else min(trials, RG_CHUNK)
            per = effort.guess("random-greedy", 2 * effort.unit)
            if not effort.fits(per * chunk if trials else per, allowance(), share,
                               floor=not trials):
                break
            rg.max_repeats = chunk
            rg.max_time = effort.wall_left(allowance(), share) if effort.hard else None
            c = effort.cpu()
            path = rg(ins, out, prob.size_dict)
            ran = len(rg.costs) - trials
            trials = len(rg.costs)
            effort.seen("random-greedy", (effort.cpu() - c) / max(ran, 1))
            pick.offer(path, "random-greedy")
            if ran < chunk:  # the wall-clock limit ended the chunk
                break
    finally:
        random.setstate(state)
    # reconfigure the best path, and greedy's too (the better start is not always the
    # cheaper one: on the 12x12 Ising lattice greedy's path reconfigures to 3x fewer FLOPs)
    for start in [pick.path] + ([pick.greedy_path] if pick.path != pick.greedy_path else []):
        pick.offer(reconfigure(prob, start, _reconf_rounds(effort, allowance, prob.n)),
                   "reconfigured")
    if not trials:
        return "opt_einsum greedy, reconfigured", 1
    return f"random-greedy ({trials} trials, reconfigured)", trials


def _reconf_rounds(effort, allowance, n):
    """``reconfigure``'s stop rule: rounds of ``RECONF_ROUND * n`` steps, the first always,
    each further one when its predicted cost fits; an explicit ``max_time`` at every step."""
    size = max(1, math.ceil(RECONF_ROUND * n))
    state = {"steps": 0, "start": effort.cpu(), "stopped": False}

    def stop() -> bool:
        if state["stopped"]:
            return True
        state["steps"] += 1
        k = state["steps"]
        if effort.hard and not effort.fits(0.0, allowance(), floor=True):
            state["stopped"] = True  # the wall-clock bound, at every step
        elif k > size and k % size == 0:
            per_round = (effort.cpu() - state["start"]) * size / k
            state["stopped"] = not effort.fits(per_round, allowance())
        return state["stopped"]

    return stop


# --------------------------------------------------------------------------- slicing


def slice_found(prob, found: Found, target, effort: Effort | None = None) -> Found:
    """Slice ``found`` further until its largest intermediate is at most ``target`` elements
    (with ``effort``: cotengra may also reconfigure the path around the sliced indices, for as
    long as that effort allows)."""
    all_sliceable = prob.sliceable == set(prob.size_dict) - set(prob.output)
    if have_cotengra() and all_sliceable:
        try:
            import cotengra as ctg

            tree = ctg.ContractionTree.from_path(
                list(prob.terms), prob.output, prob.size_dict, path=found.path
            )
            for s in found.sliced:
                tree.remove_ind_(s)
            if effort is not None:
                slice_and_reconfigure(tree, target, effort)
            else:
                tree = tree.slice(target_size=target, allow_outer=False, minimize="flops",
                                  inplace=False)
            if tree.contraction_width() <= log2(target) + 1e-9:
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
