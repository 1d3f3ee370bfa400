"""The instruction recorder used while planning: values are known by their labels only."""

from __future__ import annotations

from collections import namedtuple

from chainrules import primitives as P
from chainrules.symbolic import bound_of


class StepInfo(namedtuple("StepInfo", "kind eq flops size")):
    """One step of a plan: ``kind`` is "dot_general", "mul", "reduce_sum" or "diagonal";
    ``eq`` its einsum string; ``flops`` its cost; ``size`` the elements of its result."""


def prod(it):
    n = 1
    for d in it:
        n *= d
    return n


class Recorder:
    """Records instructions ``[prim, input ids, params, output id]`` while tracking each
    value's labels (its axes, in memory order) and the per-step costs for ``PathInfo``."""

    def __init__(self, sizes, sym, n_inputs, grad):
        self.grad = grad  # plan for the reverse pass too (layout.backward_copies)
        self.ct_need: dict = {}  # dot_general result -> how its transpose rule groups its ct
        self.sizes = sizes  # label -> size (int, or symbolic in traced graphs): for shapes
        self.est = {lab: bound_of(d) for lab, d in sizes.items()}  # int estimates: for costs
        self.sym = sym
        self.labels: list[tuple] = []
        self.instrs: list[list] = []
        self.steps: list[StepInfo] = []
        self.n_inputs = n_inputs

    def new(self, labels) -> int:
        self.labels.append(tuple(labels))
        return len(self.labels) - 1

    def size(self, v) -> int:
        """Number of elements (an estimate from static bounds for run-time sizes)."""
        return prod(self.est[lab] for lab in self.labels[v])

    def shape(self, labels) -> tuple:
        return tuple(self.sizes[lab] for lab in labels)

    def est_shape(self, labels) -> tuple:
        return tuple(self.est[lab] for lab in labels)

    def term(self, labels) -> str:
        return "".join(self.sym[lab] for lab in labels)

    def emit(self, prim, ins, params, labels) -> int:
        out = self.new(labels)
        self.instrs.append([prim, tuple(ins), params, out])
        return out

    def reshape(self, v, labels) -> int:
        return self.emit(P.reshape_p, (v,), {"new_sizes": self.shape(labels)}, labels)

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

