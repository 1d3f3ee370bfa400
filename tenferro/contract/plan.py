"""Planning an einsum: from labels and shapes to a small static program of primitives.

A ``Plan`` depends only on the subscripts, the operand shapes, the ``optimize`` option and
whether the reverse pass may run, so it is computed once and cached (``PlanCache``); running it
(``execute.run``) just binds the recorded primitives. Nothing here looks at values, which is
why the same plan serves eager mode, traced mode and every transformation.

The steps, in order:

1. **Sizes.** Every label gets one size; a size-1 axis broadcasts against any size (NumPy).
2. **Per operand** (views, or one cheap pass over the operand): squeeze size-1 axes
   (``reshape``): they either broadcast or are trivial, and dropping them shrinks the problem;
   repeated labels become diagonals (``transpose`` + ``diagonal``); labels used by this
   operand only and absent from the output are summed (``reduce_sum``) before anything is
   contracted.
3. **Path.** ``opt_einsum`` chooses the pairwise order on the reduced problem (or the caller
   gives one, or ``optimize=False`` folds left to right). Paths use opt_einsum's format:
   positions in the current operand list; contracted operands are removed and the result
   is appended. ``_simulate`` replays the path on label sets to find, for every pairwise
   product, which labels are still needed afterwards.
4. **Pairwise lowering** (``lower.py``, guided by the copy-cost model in ``layout.py``).
5. **Output.** One final ``transpose`` (a view) to the requested order, and a ``reshape`` to
   re-insert squeezed size-1 output axes.
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, namedtuple

import opt_einsum as oe

from ..errors import ShapeError
from ..ops._base import as_dim
from .lower import lower
from .parse import label_name, resolve
from .recorder import Recorder, prod

# --------------------------------------------------------------------------- results


class PathInfo:
    """What ``contract_path`` reports: the path and its costs.

    ``flops`` counts a multiply-add as 2 (opt_einsum's convention, so ``opt_cost`` agrees with
    ``opt_einsum.contract_path`` for the same path); ``largest_intermediate`` is in elements.
    """

    def __init__(self, path, eq, steps, naive_flops):
        self.path = [tuple(s) for s in path]
        self.eq = eq
        self.steps = tuple(steps)
        self.flops = sum(s.flops for s in self.steps)
        sizes = [s.size for s in self.steps if s.kind in ("dot_general", "mul")]
        self.largest_intermediate = max(sizes, default=0)
        self.naive_flops = naive_flops

    @property
    def opt_cost(self) -> int:
        return self.flops

    @property
    def speedup(self) -> float:
        return self.naive_flops / max(self.flops, 1)

    def __repr__(self):
        return (
            f"PathInfo(path={self.path}, flops={self.flops:.4g}, "
            f"largest_intermediate={self.largest_intermediate:.4g})"
        )

    def __str__(self):
        lines = [
            f"  Complete contraction:  {self.eq}",
            f"       Naive FLOP count:  {self.naive_flops:.4e}",
            f"   Optimized FLOP count:  {self.flops:.4e}",
            f"    Theoretical speedup:  {self.speedup:.4g}",
            f"   Largest intermediate:  {self.largest_intermediate:.4e} elements",
            f"                   Path:  {self.path}",
            "-" * 64,
            f"{'step':>16}  {'flops':>12}  {'result size':>12}  contraction",
            "-" * 64,
        ]
        for s in self.steps:
            lines.append(f"{s.kind:>16}  {s.flops:12.4e}  {s.size:12.4e}  {s.eq}")
        return "\n".join(lines)


class Plan:
    """A straight-line program over value ids; inputs are ids ``0..n_inputs-1``.

    ``instrs`` holds ``(prim, input_ids, params, output_id, ids_to_free)``.
    """

    __slots__ = ("n_inputs", "n_values", "instrs", "result", "info")

    def __init__(self, n_inputs, n_values, instrs, result, info):
        self.n_inputs = n_inputs
        self.n_values = n_values
        self.instrs = instrs
        self.result = result
        self.info = info


# --------------------------------------------------------------------------- the cache

CacheInfo = namedtuple("CacheInfo", "hits misses maxsize currsize")


class PlanCache:
    """A thread-safe LRU of plans keyed by (subscripts, shapes, optimize, memory_limit)."""

    def __init__(self, maxsize: int = 4096):
        self.maxsize = maxsize
        self._d: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key):
        with self._lock:
            plan = self._d.get(key)
            if plan is None:
                self.misses += 1
            else:
                self.hits += 1
                self._d.move_to_end(key)
            return plan

    def put(self, key, plan):
        with self._lock:
            self._d[key] = plan
            if len(self._d) > self.maxsize:
                self._d.popitem(last=False)

    def info(self) -> CacheInfo:
        return CacheInfo(self.hits, self.misses, self.maxsize, len(self._d))

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self.hits = self.misses = 0


CACHE = PlanCache()


# --------------------------------------------------------------------------- optimize


_NAMES: dict = {}  # validated optimizer names


def normalize_optimize(op: str, optimize):
    """Validate ``optimize``; return ``(kind, value, cache_key)``.

    kind: "none" (fold left to right), "name" (an opt_einsum optimizer name), "optimizer"
    (a ``PathOptimizer`` instance: not cached, it may be stateful) or "path" (explicit).
    """
    if optimize is False:
        return "none", None, False
    if optimize is True or optimize is None:
        optimize = "auto"
    if isinstance(optimize, str):
        known = _NAMES.get(optimize)
        if known is not None:
            return known
        name = optimize.lower()
        try:
            oe.paths.get_path_fn(name)
        except KeyError:
            names = getattr(oe.paths, "_PATH_OPTIONS", ("auto", "greedy", "optimal", "dp"))
            valid = ", ".join(repr(n) for n in sorted(names))
            raise ShapeError(
                f"{op}: unknown optimize option {optimize!r}; use one of {valid}, False, "
                f"or an explicit path such as [(0, 1), (0, 1)]."
            ) from None
        known = _NAMES[optimize] = ("name", name, name)
        return known
    if isinstance(optimize, oe.paths.PathOptimizer):
        return "optimizer", optimize, None
    if isinstance(optimize, (list, tuple)):
        steps = list(optimize)
        if steps and steps[0] == "einsum_path":  # numpy.einsum_path's format
            steps = steps[1:]
        path = []
        for s in steps:
            try:
                t = tuple(int(i) for i in s)
            except (TypeError, ValueError):
                raise ShapeError(
                    f"{op}: invalid contraction path {optimize!r}: each step must be a tuple "
                    f"of operand positions, e.g. [(0, 1), (0, 1)]."
                ) from None
            path.append(t)
        path = tuple(path)
        return "path", path, ("path", path)
    raise ShapeError(
        f"{op}: unknown optimize option {optimize!r} ({type(optimize).__name__}); use 'auto', "
        f"'greedy', 'optimal', 'dp', 'random-greedy', ..., False, or an explicit path."
    )


# --------------------------------------------------------------------------- sizes


def label_sizes(op, inputs, shapes, text):
    """One size per label; size 1 broadcasts. Errors name the label, sizes and operands."""
    sizes: dict = {}
    where: dict = {}
    for k, (labels, shape) in enumerate(zip(inputs, shapes, strict=True)):
        local: dict = {}
        for ax, (lab, d) in enumerate(zip(labels, shape, strict=True)):
            d = as_dim(d)
            if lab in local and local[lab][1] != d:
                a0, d0 = local[lab]
                raise ShapeError(
                    f"{op}: index {label_name(lab)} is repeated in operand {k} (shape "
                    f"{tuple(shape)}) with sizes {d0} (axis {a0}) and {d} (axis {ax}); a repeated "
                    f"index takes a diagonal, which needs equal sizes ({text})."
                )
            local[lab] = (ax, d)
            prev = sizes.get(lab)
            if prev is None or (prev == 1 and d != 1):
                sizes[lab] = d
                where[lab] = (k, ax)
            elif d != 1 and d != prev:
                k0, a0 = where[lab]
                shp = ", ".join(str(tuple(s)) for s in shapes)
                raise ShapeError(
                    f"{op}: index {label_name(lab)} has size {prev} in operand {k0} (axis {a0}) "
                    f"but size {d} in operand {k} (axis {ax}) ({text}; shapes {shp}). The sizes "
                    f"of an index must agree (size 1 broadcasts)."
                )
    return sizes


def symbols(labels_in_order) -> dict:
    """A distinct opt_einsum symbol per label: ASCII letters keep their own, the rest
    (any hashable, broadcast dimensions) get fresh ones, so there is no 52-label limit."""
    sym: dict = {}
    used = set()
    for lab in labels_in_order:
        if isinstance(lab, str) and len(lab) == 1 and lab.isascii() and lab.isalpha():
            sym[lab] = lab
            used.add(lab)
    i = 0
    for lab in labels_in_order:
        if lab in sym:
            continue
        while oe.get_symbol(i) in used:
            i += 1
        sym[lab] = oe.get_symbol(i)
        used.add(sym[lab])
    return sym


def build_plan(op, terms, output, shapes, kind, optimize, memory_limit, text, grad=False):
    """Plan the contraction of operands with ``shapes`` (see the module docstring)."""
    inputs, out = resolve(op, terms, output, shapes, text)
    sizes = label_sizes(op, inputs, shapes, text)
    order = list(dict.fromkeys([lab for t in inputs for lab in t] + list(out)))
    sym = symbols(order)
    n = len(inputs)
    prog = Recorder(sizes, sym, n, grad)
    vals = [prog.new(t) for t in inputs]

    # squeeze size-1 axes (they broadcast, or are trivial)
    for k, (labels, shape) in enumerate(zip(inputs, shapes, strict=True)):
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
    out_set = set(out)
    count = Counter(lab for v in vals for lab in set(prog.labels[v]))
    for k in range(n):
        cur = prog.labels[vals[k]]
        lonely = {lab for lab in cur if count[lab] == 1 and lab not in out_set}
        if lonely:
            vals[k] = prog.reduce_sum(vals[k], lonely)

    eq = ",".join(prog.term(t) for t in inputs) + "->" + prog.term(out)
    live_out = [lab for lab in out if any(lab in prog.labels[v] for v in vals)]
    path = _find_path(prog, vals, live_out, kind, optimize, memory_limit)
    records, final_node = _simulate(op, prog, vals, set(live_out), path)
    result = lower(prog, vals, records, final_node, live_out)

    # final layout: requested order, then re-insert squeezed size-1 output axes
    result = prog.permute(result, live_out)
    if len(live_out) < len(out):
        result = prog.reshape(result, out)

    # naive cost (opt_einsum's convention) of the reduced problem
    all_labels = {lab for v in vals for lab in prog.labels[v]}
    n_terms = len(vals)
    inner = sum(len(set(prog.labels[v])) for v in vals) > len(all_labels)
    naive = prod(prog.est[lab] for lab in all_labels) * (max(1, n_terms - 1) + int(inner))
    info = PathInfo(path, eq, prog.steps, naive)
    return Plan(n, len(prog.labels), _with_frees(prog.instrs, result), result, info)


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


def _find_path(prog, vals, live_out, kind, optimize, memory_limit):
    n = len(vals)
    if kind == "path":
        return list(optimize)
    if n == 1:
        return [(0,)]
    if kind == "none" or n == 2:
        return [(0, 1)] + [(0, m - 1) for m in range(n - 1, 1, -1)]
    terms = [prog.term(prog.labels[v]) for v in vals]
    shapes = [prog.est_shape(prog.labels[v]) for v in vals]
    eq = ",".join(terms) + "->" + prog.term(live_out)
    path, _ = oe.contract_path(
        eq, *shapes, shapes=True, optimize=optimize, memory_limit=memory_limit
    )
    return [tuple(s) for s in path]


def _simulate(op, prog, vals, out_set, path):
    """Replay ``path`` on label *sets*: which pairs are contracted, and what each keeps.

    Returns records ``(node_a, node_b, node_out, keep)`` (multi-operand steps are folded left to
    right) and the final node. Nodes ``0..n-1`` are the operands; later ones are results.
    """
    n = len(vals)
    sets = [frozenset(prog.labels[v]) for v in vals]
    live = Counter(lab for s in sets for lab in s)
    slots = list(range(n))
    records = []
    for step in path:
        if not step or len(set(step)) != len(step) or any(not 0 <= p < len(slots) for p in step):
            raise ShapeError(
                f"{op}: invalid contraction path {path!r}: step {step!r} must name distinct "
                f"positions among the {len(slots)} operand(s) remaining at that point (opt_einsum "
                f"convention: contracted operands are removed, the result is appended)."
            )
        group = [slots[p] for p in step]
        for p in sorted(step, reverse=True):
            del slots[p]
        acc = group[0]
        for other in group[1:]:
            live.subtract(sets[acc])
            live.subtract(sets[other])
            union = sets[acc] | sets[other]
            keep = frozenset(lab for lab in union if live[lab] > 0 or lab in out_set)
            sets.append(keep)
            live.update(keep)
            node = len(sets) - 1
            records.append((acc, other, node, keep))
            acc = node
        slots.append(acc)
    if len(slots) != 1:
        raise ShapeError(
            f"{op}: the contraction path {path!r} leaves {len(slots)} operands uncontracted; "
            f"add steps until one remains (e.g. a final {tuple(range(len(slots)))})."
        )
    return records, slots[0]


