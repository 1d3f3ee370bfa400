"""The large-network search with cotengra's hyper-optimizer, driven one step at a time.

cotengra's own ``max_time`` is checked only between trials, and one kahypar trial on a few
hundred tensors can take seconds; its subtree reconfiguration has no time limit at all. So the
search here runs *one trial per call* (``max_repeats=1``) and reconfigures in chunks of
``RECONF_CHUNK`` subtrees, and starts each step only when ``Effort.fits`` its predicted cost
(the slowest step of its kind so far; before the first, a multiple of what greedy took).
Importing cotengra (and optuna, its sampler) is a step too: a budget too small for it, or for
one trial, leaves the network to the random-greedy search.

Set-up (see design/einsum.md for the measurements behind it): trials without subtree
reconfiguration (many cheap trials train the sampler better than a few refined ones), scored
by ``candidates.rate`` (FLOPs with a preference for narrow intermediates, the memory target);
the ``TOP_K`` best trees, greedy's among them, are then reconfigured best first and every
tree competes before and after, through ``Candidates`` (so greedy's path is the bar).
"""

from __future__ import annotations

import importlib.util
import sys

from .candidates import admissible, log2, rate
from .effort import Effort

TOP_K = 16
"""How many of the best trial trees are kept for the final subtree reconfiguration."""

RECONF_SHARE = 0.3
"""Share of the effort kept for reconfiguring the kept trees, best first. The trial ranking
before reconfiguration predicts the result poorly (on the 6x6 PEPS the 2^25-wide optimum came
from the 2nd-best trial tree, at 4x the best one's FLOPs before reconfiguring)."""

NARROW_AFTER = 0.5
"""Share of the trial effort after which, if every kept tree is still wider than the memory
target, every other trial uses a score weighing width as much as FLOPs."""

MIN_TRIALS = 8
"""Trials the default budget always allows (a busy machine must not cut the search short)."""

RECONF_CHUNK = 8
"""Subtrees reconfigured per uninterruptible step."""

OFFERED = 4
"""How many of the best final trees (by cotengra's counts) are costed by tenferro's model and
offered to ``Candidates``."""

# Predicted CPU seconds of steps never run yet, as multiples of greedy's time on the network
# (measured: a cotengra greedy trial costs 2-20x, a kahypar trial 8-170x, eight subtree
# reconfigurations 2-12x) or in seconds (imports).
FIRST_GUESS = {"greedy": 10.0, "kahypar": 60.0, "labels": 60.0, "reconf": 12.0}
IMPORT_SECONDS = {"cotengra": 0.25, "optuna": 0.3}


class _Score:
    """cotengra trial objective (``candidates.rate``); remembers the ``TOP_K`` best trees."""

    def __init__(self, log_target, size_weight=None):
        self.log_target = log_target
        self.size_weight = size_weight
        self.top: list = []  # (score, n, tree), best first

    def rate(self, flops, log_size) -> float:
        if self.size_weight is None:
            return rate(flops, log_size, self.log_target)
        return rate(flops, log_size, self.log_target, self.size_weight)

    def keep(self, score, tree):
        if all(abs(score - s) > 1e-9 for s, _, _ in self.top):  # skip duplicates
            self.top.append((score, len(self.top) + 1e-3 * score, tree))
            self.top.sort(key=lambda t: t[:2])
            del self.top[TOP_K:]

    def __call__(self, trial):
        if not all(k in trial for k in ("flops", "write", "size")):
            stats = trial["tree"].contract_stats()
            for k in ("flops", "write", "size"):
                trial.setdefault(k, stats[k])
        score = self.rate(trial["flops"], log2(trial["size"]))
        self.keep(score, trial["tree"])
        return score

    def final(self, tree) -> float:
        return self.rate(tree.contraction_cost(), tree.contraction_width())


def _hyper(ctg, methods, score):
    return ctg.HyperOptimizer(
        methods=methods, max_repeats=1, parallel=False, reconf_opts=None,
        minimize=score, on_trial_error="ignore",
    )


def _import_cost() -> float:
    cost = 0.0
    if "cotengra" not in sys.modules:
        cost += IMPORT_SECONDS["cotengra"]
    if "optuna" not in sys.modules and importlib.util.find_spec("optuna") is not None:
        cost += IMPORT_SECONDS["optuna"]
    return cost


def cotengra_search(prob, pick, effort: Effort, allowance):
    """Search with cotengra into ``pick`` (a ``candidates.Candidates``); returns
    ``(description, trials)``, or ``None`` when the budget does not allow importing cotengra
    and one trial. Whatever cotengra raises propagates (the caller falls back)."""
    methods = ["greedy", "kahypar" if importlib.util.find_spec("kahypar") else "labels"]

    def guess(kind):
        return effort.guess(kind, FIRST_GUESS[kind] * effort.unit)

    def next_trial():
        return max(guess(m) for m in methods)

    share = 1 - RECONF_SHARE
    if not effort.fits(_import_cost() + guess("greedy"), allowance(), share):
        return None
    return _search(prob, pick, effort, allowance, methods, guess, next_trial, share)


def _search(prob, pick, effort, allowance, methods, guess, next_trial, share):
    import cotengra as ctg

    inputs, output, size = list(prob.terms), prob.output, prob.size_dict
    log_target = pick.log_target
    score = _Score(log_target)
    scores = [score]
    opts = [_hyper(ctg, methods, score)]
    greedy_tree = ctg.ContractionTree.from_path(inputs, output, size, path=pick.path)
    g_flops, g_width = greedy_tree.contraction_cost(), greedy_tree.contraction_width()
    score.keep(score.final(greedy_tree), greedy_tree)
    cheap = None  # a greedy-only optimizer, for when a trial of the other method won't fit
    trials = turn = 0
    while True:
        floor = _floor(effort, trials, allowance())
        if effort.fits(next_trial(), allowance(), share, floor):
            if (len(scores) == 1 and log_target is not None and score.top
                    and effort.cpu() >= NARROW_AFTER * share * min(allowance(),
                                                                   effort.cpu_budget)
                    and min(t.contraction_width() for _, _, t in score.top) > log_target):
                # every tree so far is wider than the target: from now on, every other trial
                # weighs width as much as FLOPs
                scores.append(_Score(log_target, size_weight=1.0))
                opts.append(_hyper(ctg, methods, scores[-1]))
            opt = opts[turn % len(opts)]
            turn += 1
        elif effort.fits(guess("greedy"), allowance(), share, floor):
            if cheap is None:
                cheap = _hyper(ctg, ["greedy"], score)
            opt = cheap
        else:
            break
        before = len(opt.method_choices)
        c = effort.cpu()
        opt.search(inputs, output, size)
        trials += 1
        if len(opt.method_choices) > before:
            effort.seen(opt.method_choices[-1], effort.cpu() - c)
            best = opt.best
            if best.get("tree") is not None and admissible(
                    best["flops"], log2(best["size"]), g_flops, g_width, log_target):
                # cotengra counts a multiply-add once, tenferro twice
                pick.hint(2 * best["flops"], prob.n - 1)

    # reconfigure the kept trees, best first, while the effort allows
    kept = _interleave([s.top for s in scores])
    finals = [(score.final(tree), k, tree) for k, tree in enumerate(kept)]
    n_reconf = 0
    for tree in kept:
        if not effort.fits(guess("reconf"), allowance()):
            break
        tree = tree.copy()
        tree.set_default_objective("flops")
        _reconfigure(tree, effort, allowance, guess)
        n_reconf += 1
        # reconfiguring for FLOPs can widen a tree: both versions compete
        finals.append((score.final(tree), len(finals), tree))
    finals.sort(key=lambda t: t[:2])
    offered = 0
    for _, _, tree in finals:
        if offered >= OFFERED:
            break
        if admissible(tree.contraction_cost(), tree.contraction_width(), g_flops, g_width,
                      log_target):
            offered += 1
            pick.offer(tree.get_path(), "cotengra")
    how = "" if len(scores) == 1 else ", some width-weighted"
    return (f"cotengra hyper-optimizer ({trials} trials{how}, {'+'.join(methods)}, best "
            f"{n_reconf} reconfigured)", trials)


def slice_and_reconfigure(tree, target, effort: Effort) -> None:
    """cotengra's ``slice_and_reconfigure`` (slice until the largest intermediate is at most
    ``target``, reconfiguring around the sliced indices), with the reconfiguration in steps
    that stop when the effort is spent (the slicing itself always finishes)."""

    def guess(kind):
        return effort.guess(kind, FIRST_GUESS[kind] * effort.unit)

    def unlimited():
        return float("inf")

    while tree.max_size() > target:
        tree.slice_(target_slices=2, temperature=0.01, minimize="flops", allow_outer=False,
                    max_repeats=16)
        _reconfigure(tree, effort, unlimited, guess)


def _floor(effort, trials, allowance) -> bool:
    """Whether the next trial belongs to the floor of ``MIN_TRIALS``: under the default
    budget, for a network whose contraction is worth the whole budget."""
    return not effort.hard and trials < MIN_TRIALS and allowance >= effort.cpu_budget


def _reconfigure(tree, effort, allowance, guess):
    """``tree.subtree_reconfigure_`` in chunks of ``RECONF_CHUNK`` subtrees, while the effort
    allows and until cotengra's usual ``tree.N`` subtrees are done or none is left."""
    done = 0
    while done < tree.N and effort.fits(guess("reconf"), allowance()):
        before = _n_optimized(tree)
        c = effort.cpu()
        tree.subtree_reconfigure_(minimize="flops", maxiter=RECONF_CHUNK)
        effort.seen("reconf", effort.cpu() - c)
        done += RECONF_CHUNK
        after = _n_optimized(tree)
        if None not in (before, after) and after - before < RECONF_CHUNK:
            break  # every subtree has been optimized


def _n_optimized(tree):
    seen = getattr(tree, "already_optimized", None)
    if not isinstance(seen, dict):
        return None
    return sum(len(v) for v in seen.values())


def _interleave(lists):
    """Best-first from each list in turn: [a0, b0, a1, b1, ...] (trees)."""
    out = []
    for i in range(max((len(x) for x in lists), default=0)):
        for x in lists:
            if i < len(x):
                out.append(x[i][2])
    return out
