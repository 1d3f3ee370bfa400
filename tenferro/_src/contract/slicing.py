"""Slicing: fix some summed indices to one value at a time, contract each slice with the same
path, and add the slices up. Every intermediate shrinks by the sliced sizes; the FLOPs grow
only by what the sliced indices' absence makes redundant.

``greedy_slices`` is the slicer used without cotengra (with it, cotengra's ``SliceFinder`` is
used, see ``search.slice_found``). ``run_sliced`` executes a sliced plan slice by slice
through ``bind``, so it is recorded by the tape, staged in graphs and differentiated like any
other composition of primitives; when gradients may flow, each slice is wrapped in
``tenferro.checkpoint`` so the reverse pass, too, holds one slice's intermediates at a time.
"""

from __future__ import annotations

import itertools

from chainrules import primitives as P

from ..autodiff.checkpoint import checkpoint
from ..core.dispatch import bind
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


def slice_index(axes, flat: int) -> tuple:
    """The value of every sliced index in slice number ``flat`` (row-major over ``axes``)."""
    index = []
    for size, _ in reversed(axes):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def run_sliced(sliced_plan, operands, differentiable: bool, slices=None):
    """Contract every slice of ``operands`` with the one-slice program and add them up
    (only the slices numbered in ``slices``, when given: how a group of slices runs on a
    worker)."""
    from .execute import run

    axes = sliced_plan.axes  # [(size, [(operand, axis), ...]), ...]
    sub = sliced_plan.sub
    shapes = [tuple(t.shape) for t in operands]

    def one_slice(index, *xs):
        starts = [[0] * len(s) for s in shapes]
        limits = [list(s) for s in shapes]
        touched = set()
        for i, (_, where) in zip(index, axes):
            for k, ax in where:
                starts[k][ax], limits[k][ax] = i, i + 1
                touched.add(k)
        parts = [
            bind(P.slice_p, x, start_indices=tuple(starts[k]), limit_indices=tuple(limits[k]),
                 strides=(1,) * len(shapes[k]))
            if k in touched else x
            for k, x in enumerate(xs)
        ]
        return run(sub, parts)

    if slices is None:
        indices = itertools.product(*[range(size) for size, _ in axes])
    else:
        indices = [slice_index(axes, k) for k in slices]
    total = None
    for index in indices:
        f = _partial(one_slice, index)
        if differentiable:

            f = checkpoint(f)
        part = f(*operands)
        total = part if total is None else bind(P.add_p, total, part)
    return total


def _partial(fn, index):
    def call(*xs):
        return fn(index, *xs)

    return call
