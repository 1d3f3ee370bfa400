"""A ``ContractionPlan`` as plain data, and back: what crosses a process boundary.

A plan holds a parsed problem and lowered programs of primitives; none of that needs to
travel. What determines it is small: the subscripts (or the interleaved sublists), the operand
shapes, the path and the sliced indices. ``plan_to_dict`` writes exactly that;
``plan_from_dict`` rebuilds the plan on the other side without searching (the path and the
slices are given), checking every part, so a hand-edited or stale plan fails with a named
error instead of contracting the wrong thing. ``ContractionPlan`` pickles through these two
functions (``__reduce__``), which is how plans reach Dask workers; rebuilt plans are cached per
process, so a worker lowers each plan once. Format: design/distributed.md.
"""

from __future__ import annotations

import threading

from ..caches import BoundedCache
from ..errors import ShapeError
from .api import _describe_interleaved
from .parse import label_name, parse_string, split_interleaved
from .plan import ContractionPlan
from .problem import Problem
from .search import Found

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

        text = _describe_interleaved(terms, out)
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
