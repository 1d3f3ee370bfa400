"""The instruction recorder used while planning: values are known by their labels only."""

from __future__ import annotations

from collections import namedtuple

from chainrules import primitives as P
from chainrules.symbolic import bound_of


class StepInfo(namedtuple("StepInfo", "kind eq flops size")):
    """One step of a plan: ``kind`` is "dot_general", "mul", "reduce_sum" or "diagonal";
    ``eq`` its einsum string; ``flops`` its cost; ``size`` the elements of its result."""


def _subsequence(short, long) -> bool:
    """Whether ``short`` is ``long`` with some labels left out (only size-1 axes are ever
    dropped or inserted that way: a view)."""
    it = iter(long)
    return all(any(x == y for y in it) for x in short)


def prod(it):
    n = 1
    for d in it:
        n *= d
    return n


VIEWS = frozenset({P.transpose_p, P.broadcast_in_dim_p, P.diagonal_p})
"""Primitives whose NumPy impl returns a view (no new memory): the planner's memory model of
the NumPy backend, not a fact of the primitives (other namespaces may copy)."""


class Recorder:
    """Records instructions ``[prim, input ids, params, output id]`` while tracking each
    value's labels (its axes, in memory order), the per-step costs, and a memory model:
    which values own new memory (``alloc``), which are views of which (``base``), which are
    C-contiguous in their label order (``contig``), and the temporary copies an instruction's
    impl makes (``temps``). ``memory.peak_elements`` replays it."""

    def __init__(self, sizes, sym, n_inputs, grad, strided=()):
        self.grad = grad  # plan for the reverse pass too (layout.backward_copies)
        self.ct_need: dict = {}  # dot_general result -> how its transpose rule groups its ct
        self.sizes = sizes  # label -> size (int, or symbolic in traced graphs): for shapes
        self.est = {lab: bound_of(d) for lab, d in sizes.items()}  # int estimates: for costs
        self.sym = sym
        self.labels: list[tuple] = []
        self.instrs: list[list] = []
        self.steps: list[StepInfo] = []
        self.n_inputs = n_inputs
        self.alloc: list[int] = []  # elements of new memory owned by each value
        self.base: list[int] = []  # the value whose memory each value lives in
        self.contig: list[bool] = []
        self.temps: list[int] = []  # per instruction: elements of temporary copies
        self.strided = frozenset(strided)  # inputs that are strided views (slices)

    def new(self, labels) -> int:
        v = len(self.labels)
        self.labels.append(tuple(labels))
        self.alloc.append(0)
        self.base.append(v)
        self.contig.append(v not in self.strided)
        return v

    def size(self, v) -> int:
        """Number of elements (an estimate from static bounds for run-time sizes)."""
        return prod(self.est[lab] for lab in self.labels[v])

    def shape(self, labels) -> tuple:
        return tuple(self.sizes[lab] for lab in labels)

    def est_shape(self, labels) -> tuple:
        return tuple(self.est[lab] for lab in labels)

    def term(self, labels) -> str:
        return "".join(self.sym[lab] for lab in labels)

    def emit(self, prim, ins, params, labels, temp=0) -> int:
        out = self.new(labels)
        self.instrs.append([prim, tuple(ins), params, out])
        self.temps.append(temp)
        if prim in VIEWS:
            self.base[out] = self.base[ins[0]]
            self.contig[out] = False
        else:
            self.alloc[out] = self.size(out)
        return out

    def reshape(self, v, labels) -> int:
        """A view when ``v`` is contiguous, or when only size-1 axes are removed (NumPy
        reshape never copies then); otherwise a copy."""
        out = self.emit(P.reshape_p, (v,), {"new_sizes": self.shape(labels)}, labels)
        old, new = self.labels[v], tuple(labels)
        if self.contig[v] or _subsequence(new, old) or _subsequence(old, new):
            self.alloc[out] = 0
            self.base[out] = self.base[v]
            self.contig[out] = self.contig[v]
        return out

    def permute(self, v, order) -> int:
        """Reorder value ``v`` to the label order ``order`` (no-op if already so)."""
        cur = self.labels[v]
        order = tuple(order)
        if order == cur:
            return v
        perm = tuple(cur.index(lab) for lab in order)
        return self.emit(P.transpose_p, (v,), {"permutation": perm}, order)

    def diagonal(self, v, p, q) -> int:
        cur = self.labels[v]
        lab = cur[p]
        rest = [x for i, x in enumerate(cur) if i not in (p, q)]
        perm = tuple(i for i in range(len(cur)) if i not in (p, q)) + (p, q)
        if perm != tuple(range(len(cur))):
            v = self.emit(P.transpose_p, (v,), {"permutation": perm}, rest + [lab, lab])
        out = self.emit(P.diagonal_p, (v,), {"offset": 0}, rest + [lab])
        eq = f"{self.term(cur)}->{self.term(rest + [lab])}"
        self.steps.append(StepInfo("diagonal", eq, 0, self.size(out)))
        return out

    def reduce_sum(self, v, summed) -> int:
        cur = self.labels[v]
        axes = tuple(i for i, lab in enumerate(cur) if lab in summed)
        if not axes:
            return v
        kept = [lab for lab in cur if lab not in summed]
        n_in = self.size(v)
        out = self.emit(P.reduce_sum_p, (v,), {"axes": axes}, kept)
        self.steps.append(
            StepInfo("reduce_sum", f"{self.term(cur)}->{self.term(kept)}", n_in, self.size(out))
        )
        return out

