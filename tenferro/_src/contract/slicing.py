"""Slicing: fix some summed indices to one value at a time, contract each slice with the same
path, and add the slices up. Every intermediate shrinks by the sliced sizes; the FLOPs grow
only by what the sliced indices' absence makes redundant.

``greedy_slices`` is the slicer used without cotengra (with it, cotengra's ``SliceFinder`` is
used, see ``search.slice_found``). Sliced plans run in ``execute.run_sliced``.
"""

from __future__ import annotations

from .costs import path_costs, replay


def greedy_slices(prob, path, target, already=()):
    """Summed indices to slice so that the largest intermediate of ``path`` has at most
    ``target`` elements, chosen one at a time: among the indices of the currently largest
    intermediates, the one whose slicing adds the fewest total FLOPs (ties: the larger
    index). ``None`` when even slicing every summed index is not enough."""
    records, _, sets = replay(prob.op, [set(t) for t in prob.terms], set(prob.output), path)
    size = prob.size_dict
    sliced = list(already)
    current = path_costs(records, sets, size, sliced)
    while current.largest > target:
        big = [keep for _, _, _, keep in records
               if _size(keep, size, sliced) == current.largest]
        cands = {lab for keep in big for lab in keep} & prob.sliceable
        cands -= set(sliced)
        if not cands:
            return None
        best = None
        for lab in sorted(cands):
            c = path_costs(records, sets, size, sliced + [lab])
            key = (c.largest >= current.largest, c.flops, -size[lab], lab)
            if best is None or key < best[0]:
                best = (key, lab, c)
        _, lab, current = best
        sliced.append(lab)
    return tuple(sliced)


def _size(labels, size, sliced):
    n = 1
    for lab in labels:
        if lab not in sliced:
            n *= size[lab]
    return n
