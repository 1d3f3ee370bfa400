"""A resolved einsum problem and the reduced problem its contraction path is planned on.

``Problem`` holds the labels of every operand (``...`` expanded), the output labels, one size
per label, and the *reduced* problem: per operand, size-1 axes dropped (they broadcast, or are
trivial), repeated labels merged (diagonals) and labels that only this operand has and the
output does not want summed away. Those reductions happen before any pairwise product
(``plan.lower_problem``), so the path search, the slicer and the cost reports all work on the
reduced label sets. Labels become single-character opt_einsum symbols there; the reduced
equation in symbols (``Problem.eq``) is the same for networks that differ only in how their
labels are named, which is what the on-disk plan cache keys on.
"""

from __future__ import annotations

from collections import Counter

import opt_einsum as oe

from chainrules.symbolic import bound_of

from ..errors import ShapeError
from ..ops._base import as_dim
from .parse import label_name, resolve
from .recorder import prod


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


class Problem:
    """An einsum call resolved against its operand shapes (see the module docstring)."""

    def __init__(self, op: str, terms, output, shapes, text: str):
        inputs, out = resolve(op, terms, output, shapes, text)
        self.op, self.text = op, text
        self.inputs, self.out = inputs, tuple(out)
        self.shapes = tuple(tuple(s) for s in shapes)
        self.sizes = label_sizes(op, inputs, shapes, text)
        self.est = {lab: bound_of(d) for lab, d in self.sizes.items()}
        order = list(dict.fromkeys([lab for t in inputs for lab in t] + list(out)))
        self.sym = symbols(order)
        self.label_of = {s: lab for lab, s in self.sym.items()}
        out_set = set(out)
        kept = [
            tuple(dict.fromkeys(lab for lab, d in zip(t, s, strict=True) if as_dim(d) != 1))
            for t, s in zip(inputs, shapes, strict=True)
        ]
        count = Counter(lab for t in kept for lab in t)
        self.reduced = [
            tuple(lab for lab in t if count[lab] > 1 or lab in out_set) for t in kept
        ]
        present = {lab for t in self.reduced for lab in t}
        self.live_out = tuple(lab for lab in out if lab in present)
        self.terms = ["".join(self.sym[lab] for lab in t) for t in self.reduced]
        self.output = "".join(self.sym[lab] for lab in self.live_out)
        self.size_dict = {self.sym[lab]: self.est[lab] for lab in present}
        self.eq = ",".join(self.terms) + "->" + self.output
        # labels that may be sliced: summed (not in the output), with a size known now
        self.sliceable = frozenset(
            self.sym[lab] for lab in present
            if lab not in out_set and isinstance(self.sizes[lab], int)
        )

    @property
    def n(self) -> int:
        return len(self.inputs)

    def naive_flops(self) -> int:
        """opt_einsum's naive cost: one loop over every label of the reduced problem."""
        inner = sum(len(t) for t in self.terms) > len(self.size_dict)
        return prod(self.size_dict.values()) * (max(1, self.n - 1) + int(inner))

    def input_sizes(self) -> list:
        return [prod(bound_of(as_dim(d)) for d in s) for s in self.shapes]

    def sliced_shapes(self, sliced) -> tuple:
        """The operand shapes of one slice: axes carrying a sliced symbol become size 1."""
        labels = {self.label_of[s] for s in sliced}
        return tuple(
            tuple(1 if lab in labels else d for lab, d in zip(t, s, strict=True))
            for t, s in zip(self.inputs, self.shapes, strict=True)
        )

    def slice_axes(self, sliced) -> list:
        """For each sliced symbol, ``(size, [(operand, axis), ...])`` of the axes it indexes
        (axes of size 1 broadcast and are left alone)."""
        out = []
        for s in sliced:
            lab = self.label_of[s]
            axes = [
                (k, ax)
                for k, (t, shp) in enumerate(zip(self.inputs, self.shapes, strict=True))
                for ax, (x, d) in enumerate(zip(t, shp, strict=True))
                if x == lab and as_dim(d) != 1
            ]
            out.append((self.size_dict[s], axes))
        return out
