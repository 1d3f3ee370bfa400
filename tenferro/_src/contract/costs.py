"""Replaying a contraction path on label sets: which pairs meet, what each result keeps, and
what the whole costs (opt_einsum's FLOP convention: a multiply-add counts 2).

Used by the lowering (``replay``), the slicer, the search's stopping rule and the reports.
"""

from __future__ import annotations

from collections import Counter

from ..errors import ShapeError
from .recorder import prod

FLOP_RATE = 2e10
"""FLOPs per second assumed when predicting how long a contraction takes (multiply-add = 2;
a typical NumPy/OpenBLAS core on the mid-sized, many-legged steps of tensor networks)."""

STEP_SECONDS = 3e-5
"""Fixed cost of one pairwise step (dispatch, layout handling), in seconds."""


def predicted_seconds(flops: float, steps: int) -> float:
    """How long a contraction of ``flops`` in ``steps`` pairwise products should take."""
    return flops / FLOP_RATE + steps * STEP_SECONDS


def replay(op, sets, out_set, path):
    """Replay ``path`` on label *sets*: which pairs are contracted, and what each keeps.

    Returns records ``(node_a, node_b, node_out, keep)`` (multi-operand steps are folded left to
    right) and the final node. Nodes ``0..n-1`` are the operands; later ones are results.
    """
    n = len(sets)
    sets = [frozenset(s) for s in sets]
    live = Counter(lab for s in sets for lab in s)
    slots = list(range(n))
    records = []
    for step in path:
        if not step or len(set(step)) != len(step) or any(not 0 <= p < len(slots) for p in step):
            raise ShapeError(
                f"{op}: invalid contraction path {list(path)!r}: step {step!r} must name distinct "
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
            f"{op}: the contraction path {list(path)!r} leaves {len(slots)} operands "
            f"uncontracted; add steps until one remains (e.g. a final "
            f"{tuple(range(len(slots)))})."
        )
    return records, slots[0], sets


class Costs:
    """FLOPs (all slices), largest intermediate (elements, one slice), number of slices and
    pairwise steps of a path, with ``sliced`` labels fixed to one value per slice."""

    __slots__ = ("flops", "largest", "n_slices", "steps")

    def __init__(self, flops, largest, n_slices, steps):
        self.flops, self.largest, self.n_slices, self.steps = flops, largest, n_slices, steps

    @property
    def seconds(self) -> float:
        return predicted_seconds(self.flops, self.steps * self.n_slices)


def path_costs(records, sets, size, sliced=()) -> Costs:
    """Costs of replayed ``records`` (see ``replay``) with label sizes ``size``."""
    sliced = frozenset(sliced)

    def sz(labels):
        return prod(size[lab] for lab in labels if lab not in sliced)

    flops = 0
    largest = 0
    for a, b, _, keep in records:
        union = sets[a] | sets[b]
        flops += sz(union) * (2 if len(union) > len(keep) else 1)
        largest = max(largest, sz(keep))
    n_slices = prod(size[lab] for lab in sliced)
    return Costs(flops * n_slices, largest, n_slices, len(records))


def costs_of(op, terms, output, size, path, sliced=()) -> Costs:
    """Costs of ``path`` on a problem given as symbol strings (see ``Problem``)."""
    records, _, sets = replay(op, [set(t) for t in terms], set(output), path)
    return path_costs(records, sets, size, sliced)
