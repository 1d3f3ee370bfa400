"""Planning an einsum: from a resolved ``Problem`` to a ``ContractionPlan`` (path, slices,
costs: what ``contract_path`` returns) and from that to a small static program of primitives.

A plan depends only on the subscripts, the operand shapes and the options, so it is computed
once and cached (``cache.py``); running it (``execute.run``) just binds the recorded
primitives. Nothing here looks at values, which is why the same plan serves eager mode,
traced mode and every transformation.

Lowering (``lower_problem``), in order:

1. **Per operand** (views, or one cheap pass over the operand): squeeze size-1 axes
   (``reshape``): they either broadcast or are trivial; repeated labels become diagonals
   (``transpose`` + ``diagonal``); labels used by this operand only and absent from the output
   are summed (``reduce_sum``) before anything is contracted.
2. **Path** (``search.py``) on that reduced problem, replayed on label sets
   (``costs.replay``) to find, for every pairwise product, which labels are still needed.
3. **Pairwise lowering** (``lower.py``, guided by the copy-cost model in ``layout.py``).
4. **Output.** One final ``transpose`` (a view) to the requested order, and a ``reshape`` to
   re-insert squeezed size-1 output axes.

A sliced plan lowers one slice (the operands' sliced axes have size 1 and are squeezed) and
runs it once per slice (``execute.run_sliced``).
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import Counter

from ..caches import BoundedCache
from ..errors import ShapeError
from . import cache as disk
from .costs import FLOP_RATE, costs_of, predicted_seconds, replay
from .effort import DEFAULT_MAX_TIME, Effort
from .lower import lower
from .memory import fmt_bytes, fmt_elements, peak_elements, physical_memory, sliced_peak
from .parse import describe_interleaved, label_name, parse_string, split_interleaved
from .problem import Problem
from .recorder import Recorder, prod
from .search import (
    Found,
    PlanningWarning,
    auto_search,
    have_cotengra,
    named_search,
    optimizer_search,
    slice_found,
    trivial_path,
)

HUGE_SECONDS = 600.0
"""A plan predicted to run longer than this draws a ``PlanningWarning`` naming its cost."""

GUARD_FRACTION = 0.9
"""Without ``max_memory``, a plan whose peak would exceed this fraction of the machine's RAM
cannot run here: it is sliced to fit, with a warning, rather than left to fail."""

BIG_FRACTION = 0.5
"""A plan whose peak exceeds this fraction of the machine's RAM draws a warning."""

SOFT_FRACTION = 0.25
"""Without ``max_memory``, ``"auto"`` prefers paths whose peak stays within this fraction of
the machine's RAM (a soft target: wider paths pay one bit of FLOPs per bit of excess width in
the search's score, nothing is sliced for it)."""


# --------------------------------------------------------------------------- programs


class Lowered:
    """A straight-line program over value ids; inputs are ids ``0..n_inputs-1``.

    ``instrs`` holds ``(prim, input_ids, params, output_id, ids_to_free)``; ``steps`` the
    per-step ``StepInfo``; ``peak`` the elements held at once (``memory.peak_elements``).
    """

    __slots__ = ("n_inputs", "n_values", "instrs", "result", "steps", "peak")
    sliced = False

    def __init__(self, n_inputs, n_values, instrs, result, steps, peak):
        self.n_inputs = n_inputs
        self.n_values = n_values
        self.instrs = instrs
        self.result = result
        self.steps = tuple(steps)
        self.peak = peak


class SlicedLowered:
    """One slice's program ``sub``, run once per slice; ``axes`` lists, per sliced index, its
    size and the (operand, axis) pairs it indexes."""

    __slots__ = ("sub", "axes", "n_slices", "peak")
    sliced = True

    def __init__(self, sub, axes, peak):
        self.sub, self.axes, self.peak = sub, axes, peak
        self.n_slices = prod(size for size, _ in axes)

    @property
    def steps(self):
        return self.sub.steps


def lower_problem(prob: Problem, path, grad: bool, strided=()) -> Lowered:
    """Lower ``prob`` along ``path`` (see the module docstring)."""
    n = prob.n
    prog = Recorder(prob.sizes, prob.sym, n, grad, strided)
    vals = [prog.new(t) for t in prob.inputs]

    # squeeze size-1 axes (they broadcast, or are trivial)
    for k, (labels, shape) in enumerate(zip(prob.inputs, prob.shapes, strict=True)):
        if 1 in shape:
            kept = [lab for lab, d in zip(labels, shape, strict=True) if d != 1]
            vals[k] = prog.reshape(vals[k], kept)
    # repeated labels within an operand: diagonals
    for k in range(n):
        while True:
            cur = prog.labels[vals[k]]
            dup = next((lab for lab, c in Counter(cur).items() if c > 1), None)
            if dup is None:
                break
            p = cur.index(dup)
            q = cur.index(dup, p + 1)
            vals[k] = prog.diagonal(vals[k], p, q)
    # labels of one operand only, absent from the output: sum them first
    out_set = set(prob.out)
    count = Counter(lab for v in vals for lab in set(prog.labels[v]))
    for k in range(n):
        cur = prog.labels[vals[k]]
        lonely = {lab for lab in cur if count[lab] == 1 and lab not in out_set}
        if lonely:
            vals[k] = prog.reduce_sum(vals[k], lonely)

    live_out = list(prob.live_out)
    records, final_node, _ = replay(
        prob.op, [set(prog.labels[v]) for v in vals], set(live_out), path
    )
    result = lower(prog, vals, records, final_node, live_out)

    # final layout: requested order, then re-insert squeezed size-1 output axes
    result = prog.permute(result, live_out)
    if len(live_out) < len(prob.out):
        result = prog.reshape(result, prob.out)
    instrs = _with_frees(prog.instrs, result)
    peak = peak_elements(prog.alloc, prog.base, prog.temps, instrs)
    return Lowered(n, len(prog.labels), instrs, result, prog.steps, peak)


def _with_frees(instrs, result):
    """Attach to each instruction the values whose last use it is (so they are released)."""
    last = {}
    for i, (_, ins, _, _) in enumerate(instrs):
        for v in ins:
            last[v] = i
    out = []
    for i, (prim, ins, params, o) in enumerate(instrs):
        frees = tuple(v for v in set(ins) if last[v] == i and v != result)
        out.append((prim, ins, params, o, frees))
    return out


# --------------------------------------------------------------------------- the plan


class ContractionPlan:
    """How an einsum will be contracted: what ``tenferro.contract_path`` returns and
    ``tenferro.einsum(..., plan=...)`` accepts.

    Attributes: ``path`` (opt_einsum format), ``flops`` (all slices; a multiply-add counts 2,
    as opt_einsum counts), ``largest_intermediate`` (elements, one slice), ``peak_memory``
    (elements held at once by the forward contraction, not counting the operands),
    ``n_slices`` and ``sliced`` (the sliced indices, in the caller's labels), ``planner``
    (which search produced the path), ``planning_time`` (seconds), ``predicted_time``
    (seconds, at ``costs.FLOP_RATE``), ``naive_flops`` and ``speedup``, ``max_memory`` (the
    limit in elements, or ``None``), ``steps`` (per-step breakdown of one slice). ``print``
    it for a summary.
    """

    def __init__(self, prob: Problem, found: Found, planning_time: float, limit, key):
        self._prob = prob
        self._key = key
        self._lowered: dict = {}
        self.eq = prob.eq
        self.subscripts = prob.text
        self.shapes = prob.shapes
        self.path = [tuple(s) for s in found.path]
        self._sliced_syms = tuple(found.sliced)
        self.sliced = tuple(prob.label_of[s] for s in found.sliced)
        c = costs_of(prob.op, prob.terms, prob.output, prob.size_dict, found.path, found.sliced)
        self.flops = c.flops
        self.largest_intermediate = c.largest
        self.n_slices = c.n_slices
        self._n_steps = c.steps
        self.planner = found.planner
        self.trials = found.trials
        self.planning_time = planning_time
        self.max_memory = limit
        self.naive_flops = prob.naive_flops()

    # ------------------------------------------------------------------ reports
    @property
    def opt_cost(self) -> int:
        """``flops`` under opt_einsum's name."""
        return self.flops

    @property
    def speedup(self) -> float:
        return self.naive_flops / max(self.flops, 1)

    @property
    def predicted_time(self) -> float:
        return predicted_seconds(self.flops, self._n_steps * self.n_slices)

    @property
    def peak_memory(self) -> int:
        return self.lowered(False).peak

    @property
    def steps(self):
        return self.lowered(False).steps

    def __repr__(self):
        return (
            f"ContractionPlan(flops={self.flops:.4g}, "
            f"largest_intermediate={self.largest_intermediate:.4g}, "
            f"n_slices={self.n_slices}, planner={self.planner!r})"
        )

    def __str__(self):
        sliced = ""
        if self.n_slices > 1:
            sliced = f" over {', '.join(_label_text(x) for x in self.sliced)}"
        lines = [
            f"  Complete contraction:  {_ellipsize(self.subscripts, 200)}",
            f"     Reduced (planned):  {_ellipsize(self.eq, 200)}",
            f"               Planner:  {self.planner}, {self.planning_time:.3g} s",
            f"      Naive FLOP count:  {self.naive_flops:.4e}",
            f"  Optimized FLOP count:  {self.flops:.4e}",
            f"   Theoretical speedup:  {self.speedup:.4g}",
            f"  Largest intermediate:  {fmt_elements(self.largest_intermediate)}",
            f"           Peak memory:  {fmt_elements(self.peak_memory)}"
            + ("" if self.max_memory is None else f" (limit {self.max_memory:.4g})"),
            f"                Slices:  {self.n_slices}{sliced}",
            f"        Predicted time:  {_fmt_seconds(self.predicted_time)} "
            f"(at {FLOP_RATE:.2g} FLOP/s)",
            f"                  Path:  {_ellipsize(str(self.path), 400)}",
            "-" * 72,
            f"{'step':>16}  {'flops':>12}  {'result size':>12}  contraction"
            + ("  (one slice)" if self.n_slices > 1 else ""),
            "-" * 72,
        ]
        for s in self.steps:
            lines.append(f"{s.kind:>16}  {s.flops:12.4e}  {s.size:12.4e}  {s.eq}")
        return "\n".join(lines)

    # ------------------------------------------------------------------ plain data
    def to_dict(self) -> dict:
        """The plan as plain data: subscripts (or sublists), shapes, path, sliced indices
        (format in design/distributed.md). ``ContractionPlan.from_dict`` rebuilds it."""
        return plan_to_dict(self)

    @staticmethod
    def from_dict(d: dict) -> ContractionPlan:
        """Rebuild a plan from ``to_dict``'s data without searching; a path or a sliced index
        that does not fit the contraction raises ``ShapeError``."""
        return plan_from_dict(d)

    def __reduce__(self):
        # pickled (e.g. sent to Dask workers) as its plain data, rebuilt once per process
        return plan_from_dict, (self.to_dict(),)

    # ------------------------------------------------------------------ lowering
    def lowered(self, grad: bool):
        """The program of primitives (tuned for the reverse pass when ``grad``), cached."""
        low = self._lowered.get(grad)
        if low is None:
            low = self._lower(grad)
            self._lowered[grad] = low
        return low

    def _lower(self, grad):
        prob = self._prob
        if not self._sliced_syms:
            return lower_problem(prob, self.path, grad)
        shapes = prob.sliced_shapes(self._sliced_syms)
        sub = Problem(prob.op, prob.inputs, prob.out, shapes, prob.text)
        axes = prob.slice_axes(self._sliced_syms)
        strided = {
            k for _, where in axes for k, ax in where
            if prod(d for d in prob.shapes[k][:ax]) > 1
        }
        low = lower_problem(sub, self.path, grad, strided)
        out_size = prod(sub.est[lab] for lab in prob.out)
        return SlicedLowered(low, axes, sliced_peak(low.peak, out_size))


def _label_text(lab) -> str:
    return label_name(lab)


def _ellipsize(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 4] + " ..."


def _fmt_seconds(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.3g} us"
    if t < 1:
        return f"{t * 1e3:.3g} ms"
    if t < 120:
        return f"{t:.3g} s"
    if t < 7200:
        return f"{t / 60:.3g} min"
    if t < 3 * 86400:
        return f"{t / 3600:.3g} h"
    return f"{t / 86400:.3g} days"


# --------------------------------------------------------------------------- making plans


def make_plan(prob: Problem, kind, opt, opt_key, limit, max_time, key, itemsize,
              cache_dir=None) -> ContractionPlan:
    """Search (or read from ``cache_dir``), slice to fit ``limit`` elements (or, without a
    limit, the machine's memory), warn about huge costs."""
    t0 = time.perf_counter()
    effort = Effort(max_time)
    ram = physical_memory()
    guard = soft = None
    if limit is None and ram is not None:
        guard = max(1, int(GUARD_FRACTION * ram) // itemsize)
        soft = max(1, int(SOFT_FRACTION * ram) // itemsize)
    dkey = None
    found = None
    if cache_dir is not None and kind in ("auto", "name"):
        dkey = disk.disk_key(prob, opt_key, limit if limit is not None else soft, max_time)
        hit = disk.load(cache_dir, dkey)
        if hit is not None:
            found = _validated(prob, hit)
    from_disk = found is not None
    if found is None:
        found = _search(prob, kind, opt, limit if limit is not None else soft, effort)
    plan = ContractionPlan(prob, found, 0.0, limit, key)
    # lowering the plan (for its exact peak) is skipped while a cheap upper bound shows that
    # no limit, guard or warning is near: it is lowered when it first runs
    bound = _allocation_bound(prob, found)
    if limit is not None:
        if bound > limit:
            plan = _fit(prob, plan, found, kind, limit, key, itemsize, effort)
        unsliced_peak = 0
    elif ram is None or bound * itemsize <= BIG_FRACTION * ram:
        unsliced_peak = 0
    else:
        unsliced_peak = plan.peak_memory
    if limit is None and guard is not None and unsliced_peak > guard:
        unsliced = plan
        plan = _fit(prob, plan, found, kind, guard, key, itemsize, effort)
        warnings.warn(
            f"{prob.op}: the contraction of {_ellipsize(prob.text, 160)} along "
            f"{_path_text(unsliced, itemsize)} would hold {fmt_bytes(unsliced_peak * itemsize)} "
            f"at once, more than this machine's {fmt_bytes(ram)} of memory allow; it is sliced "
            f"into {plan.n_slices} pieces ({plan.flops / max(unsliced.flops, 1):.3g}x the "
            f"FLOPs) to fit. Pass max_memory= to choose the limit yourself"
            f"{_better_hint(kind)}.",
            PlanningWarning, stacklevel=4,
        )
    elif limit is None and ram is not None and unsliced_peak * itemsize > BIG_FRACTION * ram:
        warnings.warn(
            f"{prob.op}: the contraction of {_ellipsize(prob.text, 160)} along "
            f"{_path_text(plan, itemsize)} will hold {fmt_bytes(unsliced_peak * itemsize)} at "
            f"once, more than half of this machine's {fmt_bytes(ram)}. Pass max_memory= to "
            f"slice it into smaller pieces{_better_hint(kind)}.",
            PlanningWarning, stacklevel=4,
        )
    found = Found(plan.path, plan._sliced_syms, plan.planner, plan.trials)
    seconds = time.perf_counter() - t0
    if from_disk:
        plan.planner = f"{found.planner} (from the disk cache)"
    plan.planning_time = seconds
    if dkey is not None and not from_disk:
        disk.store(cache_dir, dkey, found.path, found.sliced, found.planner, found.trials,
                   seconds)
    if plan.predicted_time > HUGE_SECONDS:
        _warn_huge(prob, plan, kind, max_time, itemsize)
    return plan


def _allocation_bound(prob, found) -> int:
    """An upper bound on the elements the unsliced plan of ``found`` holds at once: every
    value it could allocate, alive together. Per pairwise step the lowering allocates at most
    copies of both operands, the product and a copy of it (``lower.py``); per operand at most
    a squeeze, a diagonal and a sum; 4x covers them."""
    if found.sliced:
        return 1 << 62
    records, _, sets = replay(prob.op, [set(t) for t in prob.terms], set(prob.output),
                              found.path)
    size = prob.size_dict

    def elements(labels):
        return prod(size[lab] for lab in labels)

    total = sum(prob.input_sizes())
    for a, b, _, keep in records:
        total += elements(sets[a]) + elements(sets[b]) + elements(keep)
    return 4 * total


def _path_text(plan, itemsize) -> str:
    """Which path a warning is about: its planner, costs and (the start of) its steps."""
    return (f"the path found by {plan.planner} ({plan.flops:.3g} FLOPs, largest intermediate "
            f"{fmt_elements(plan.largest_intermediate, itemsize)}; path "
            f"{_ellipsize(str(plan.path), 120)})")


def _better_hint(kind) -> str:
    if kind == "auto":
        return ", or a longer max_time= for a narrower path"
    return ", or optimize='auto' for a narrower path"


def _validated(prob, hit):
    path, sliced, planner, trials, _ = hit
    if any(s not in prob.sliceable for s in sliced):
        return None
    try:
        replay(prob.op, [set(t) for t in prob.terms], set(prob.output), path)
    except ShapeError:
        return None
    return Found(path, sliced, planner, trials)


def _search(prob, kind, opt, limit, effort) -> Found:
    n = prob.n
    if kind == "path":
        return Found(opt, planner="explicit path")
    if kind == "none" or n <= 2:
        return Found(trivial_path(n), planner="left to right" if kind == "none" else "trivial")
    if kind == "name":
        return named_search(prob, opt)
    if kind == "optimizer":
        return optimizer_search(prob, opt)
    all_sliceable = prob.sliceable == set(prob.size_dict) - set(prob.output)
    # the largest intermediate the search aims at: a peak is typically 2-4 intermediates
    target = max(1, limit // 4) if limit is not None and all_sliceable else None
    return auto_search(prob, None, target, effort)


def _fit(prob, plan, found, kind, limit, key, itemsize, effort) -> ContractionPlan:
    """Slice ``found`` until the plan's peak memory is at most ``limit`` elements."""
    out_size = prod(prob.est[lab] for lab in prob.out)
    if out_size > limit:
        raise ShapeError(
            f"{prob.op}: max_memory allows {fmt_elements(limit, itemsize)}, but the result of "
            f"{_ellipsize(prob.text, 160)} alone has {out_size} elements (shapes "
            f"{', '.join(str(s) for s in prob.shapes)}). Raise max_memory; output indices "
            f"are not sliced."
        )
    target = max(1, min(limit, plan.largest_intermediate) // 2)
    for _ in range(256):
        if plan.peak_memory <= limit:
            return plan
        nxt = slice_found(prob, found, target, effort if kind == "auto" else None)
        if nxt is None:
            break
        found = nxt
        plan = ContractionPlan(prob, found, 0.0, limit, key)
        target = max(1, min(target, plan.largest_intermediate) // 2)
    raise ShapeError(
        f"{prob.op}: cannot fit the contraction of {_ellipsize(prob.text, 160)} into max_memory = "
        f"{fmt_elements(limit, itemsize)}: slicing every summed index still needs "
        f"{fmt_elements(plan.peak_memory, itemsize)} at once. Raise max_memory."
    )


def _warn_huge(prob, plan, kind, max_time, itemsize):
    hints = []
    if kind == "auto":
        budget = DEFAULT_MAX_TIME if max_time is None else max_time
        hints.append(f"search longer (max_time={budget * 10:g})")

        if not have_cotengra():
            hints.append("install cotengra (pip install 'tenferro[cotengra]')")
    else:
        hints.append("use optimize='auto'")
    if plan.max_memory is None:
        hints.append("slice with max_memory= if memory is the problem")
    warnings.warn(
        f"{prob.op}: the best contraction path found for {_ellipsize(prob.text, 160)} "
        f"({plan.planner}) needs {plan.flops:.3g} FLOPs, predicted "
        f"{_fmt_seconds(plan.predicted_time)} at {FLOP_RATE:.2g} FLOP/s, with a largest "
        f"intermediate of {fmt_elements(plan.largest_intermediate, itemsize)} (path "
        f"{_ellipsize(str(plan.path), 120)}"
        + ("" if plan.n_slices == 1 else f", {plan.n_slices} slices") + "). To do better: "
        f"{'; '.join(hints)}.",
        PlanningWarning, stacklevel=5,
    )


# ---------------------------------------------------------------------- plans as plain data
# What crosses a process boundary. A plan holds a parsed problem and lowered programs of
# primitives; none of that needs to travel. What determines it is small: the subscripts (or the
# interleaved sublists), the operand shapes, the path and the sliced indices. ``plan_to_dict``
# writes exactly that; ``plan_from_dict`` rebuilds the plan on the other side without searching
# (the path and the slices are given), checking every part, so a hand-edited or stale plan fails
# with a named error instead of contracting the wrong thing. ``ContractionPlan`` pickles through
# these two functions (``__reduce__``), which is how plans reach Dask workers; rebuilt plans are
# cached per process, so a worker lowers each plan once. Format: design/distributed.md.
FORMAT = "tenferro.ContractionPlan/1"

_REBUILT = BoundedCache("plans rebuilt from dicts", 256)
_LOCK = threading.Lock()


def plan_to_dict(plan: ContractionPlan) -> dict:
    """The plan as plain Python data (JSON-compatible when every label is a str or an int)."""
    form, shapes = plan._key
    for s in shapes:
        if not all(isinstance(d, int) for d in s):
            raise ShapeError(
                f"ContractionPlan.to_dict: the plan for {plan.subscripts} has symbolic sizes "
                f"{tuple(s)} (a plan made while tracing with run-time sizes); only plans for "
                f"concrete shapes can be written out or sent to other processes."
            )
    d = {"format": FORMAT}
    if isinstance(form, str):
        d["subscripts"] = form
    else:
        subs, out = form
        d["sublists"] = [list(t) for t in subs]
        d["output"] = None if out is None else list(out)
    d.update(
        shapes=[list(s) for s in shapes],
        path=[list(step) for step in plan.path],
        sliced=list(plan.sliced),
        planner=plan.planner,
        trials=plan.trials,
        max_memory=plan.max_memory,
    )
    return d


def _freeze(x):
    if isinstance(x, (list, tuple)):
        return tuple(_freeze(e) for e in x)
    return x


def plan_from_dict(d: dict) -> ContractionPlan:
    """Rebuild a plan written by ``plan_to_dict`` (cached per process). Raises ``ShapeError``
    naming what is wrong: an unknown format, a path that does not contract these operands, or
    a sliced index that is not a summed index of the contraction."""
    op = "ContractionPlan.from_dict"
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        got = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise ShapeError(f"{op}: expected a dict with format {FORMAT!r}, got {got!r}.")
    try:
        key = _freeze([d.get("subscripts"), d.get("sublists"), d.get("output"), d["shapes"],
                       d["path"], d["sliced"], d.get("max_memory")])
        hash(key)
    except (KeyError, TypeError) as e:
        raise ShapeError(f"{op}: the plan dict is incomplete or malformed ({e!r}).") from None
    with _LOCK:
        hit = _REBUILT.get(key)
    if hit is not None:
        return hit
    plan = _rebuild(op, d)
    with _LOCK:
        _REBUILT.put(key, plan)
    return plan


def _rebuild(op, d) -> ContractionPlan:
    shapes = tuple(tuple(int(x) for x in s) for s in d["shapes"])
    if d.get("subscripts") is not None:
        form_key = d["subscripts"]
        terms, out = parse_string(op, form_key)
        text = repr(form_key)
    else:
        subs = [tuple(t) for t in d["sublists"]]
        args = []
        for s, t in zip(shapes, subs):
            args += [s, list(t)]
        if d.get("output") is not None:
            args.append(list(d["output"]))
        _, terms, out = split_interleaved(op, args)
        form_key = (tuple(subs), None if out is None else tuple(out))

        text = describe_interleaved(terms, out)
    prob = Problem(op, terms, out, shapes, text)
    sliced = []
    for lab in d["sliced"]:
        lab = _freeze(lab)
        sym = prob.sym.get(lab)
        if sym is None or sym not in prob.size_dict:
            raise ShapeError(
                f"{op}: the plan slices index {label_name(lab)}, which is not an index of "
                f"{text} with shapes {', '.join(str(s) for s in shapes)} (indices that can be "
                f"sliced: {_sliceable(prob)}). Make the plan for this contraction with "
                f"tenferro.contract_path."
            )
        if sym not in prob.sliceable:
            raise ShapeError(
                f"{op}: the plan slices index {label_name(lab)} of {text}, but it is an "
                f"output index; only summed indices can be sliced ({_sliceable(prob)})."
            )
        if sym in sliced:
            raise ShapeError(f"{op}: the plan slices index {label_name(lab)} twice.")
        sliced.append(sym)
    try:
        found = Found(d["path"], tuple(sliced), d.get("planner", "from a dict"),
                      d.get("trials", 1))
    except (TypeError, ValueError):
        raise ShapeError(f"{op}: the plan's path {d['path']!r} is not a list of index "
                         f"lists (opt_einsum's format).") from None
    limit = d.get("max_memory")
    plan = ContractionPlan(prob, found, 0.0, limit, (form_key, shapes))  # checks the path
    plan.planner = found.planner
    return plan


def _sliceable(prob) -> str:
    names = sorted(label_name(prob.label_of[s]) for s in prob.sliceable)
    return ", ".join(names) if names else "none"
