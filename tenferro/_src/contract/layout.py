"""The copy-cost model that guides the lowering of each pairwise step.

Every value is assumed C-contiguous in the order of its labels (true of user inputs in the
common case and of every ``dot_general`` / ``reduce_sum`` result). ``dot_general``'s impl
(chainrules/primitives/dot.py) permutes each operand to (batch, free, contracted) /
(batch, contracted, free) order (a view), reshapes it to a (batch, rows, cols) array and
calls ``matmul``. The reshape is a view, and BLAS gets the operand without a copy, exactly
when each axis group it merges (batch, free, contracted) is a contiguous run in memory, in
the requested order, and the innermost axis is not a batch axis. Copies that keep the
innermost axis innermost are cheaper than ones that do not.

The reverse pass is modelled from the ``dot_general`` transpose rule (same file), whose
output layouts are static; if that rule changes, only the quality of the plans (never their
correctness) depends on updating ``backward_copies``.
"""

from __future__ import annotations


def ordered(labels, which):
    return tuple(lab for lab in labels if lab in which)


def runs(layout, groups) -> bool:
    """Whether each group (ordered labels) is a contiguous run of ``layout``, in that order."""
    pos = {lab: i for i, lab in enumerate(layout)}
    for g in groups:
        if len(g) > 1:
            p0 = pos[g[0]]
            if any(pos[lab] != p0 + j for j, lab in enumerate(g)):
                return False
    return True


FAST_COPY = 0.35
"""Relative cost of a copy that keeps the innermost axis innermost (a run of contiguous
reads and writes) versus one that changes it (strided reads: measured 3-5x slower)."""


def copies(memory, groups, batch) -> float:
    """How expensive it is (0, ``FAST_COPY`` or 1, per element) for ``dot_general``'s impl to
    bring an operand whose axes lie in memory in the order ``memory`` into the grouping
    ``groups`` (ordered label groups, in the impl's axis order) for BLAS."""
    if not memory:
        return 0.0
    groups = [g for g in groups if g]
    ok = runs(memory, groups)
    if ok and batch and memory[-1] in batch and len(batch) < len(memory):
        ok = False  # innermost axis a batch axis: matrices without a unit stride
    if ok:
        return 0.0
    return FAST_COPY if groups and groups[-1][-1] == memory[-1] else 1.0


def layout_penalty(layout, size, want, final) -> float:
    """Look-ahead: would the step consuming this result have to copy it?"""
    if final is not None:
        return 0.0 if tuple(layout) == final else 0.5 * size
    if want is None:
        return 0.0
    partner, keep = want
    shared = [lab for lab in layout if lab in partner]
    if not shared:
        return 0.0
    bt = {lab for lab in shared if lab in keep}
    ct = set(shared) - bt
    free = [lab for lab in layout if lab not in partner]
    pos = {lab: i for i, lab in enumerate(layout)}
    for g in (bt, ct, free):
        if g:
            ps = sorted(pos[lab] for lab in g)
            if ps[-1] - ps[0] != len(ps) - 1:
                return float(size)
    if bt and layout[-1] in bt and len(bt) < len(layout):
        return float(size)
    return 0.0


def backward_copies(prog, vl, vr, ll, lr, co, bo, fl, fr, batch, is_dot, matricized) -> float:
    """Elements the reverse pass of this step will copy, given the ``dot_general`` transpose
    rule (chainrules/primitives/dot.py): for C = dot(L, R),

    * dL = dot(ct, R) contracts R's free labels: R is grouped (bo, fr, K in R's order) and the
      result lies in memory as bo + fl + K(R's order);
    * dR = dot(L, ct) contracts L's free labels: L is grouped (bo, K in L's order, fl) and the
      result lies in memory as bo + K(L's order) + fr.

    Those results are the cotangents of L and R; when L or R is itself a ``dot_general``
    result, its own reverse step groups that cotangent as recorded in ``prog.ct_need`` (twice,
    once per operand, or once if that step was matricized). A matricized step saves contiguous
    matrices and hands back bo + fl + K and bo + K + fr (K in the chosen order); a ``mul``
    step hands back bo + fl and bo + fr.
    """
    cost = 0.0
    if matricized:
        mem_l, mem_r = bo + fl + co, bo + co + fr
    elif is_dot:
        kl, kr = ordered(ll, set(co)), ordered(lr, set(co))
        cost += prog.size(vr) * copies(lr, (bo, fr, kr), batch)
        cost += prog.size(vl) * copies(ll, (bo, kl, fl), batch)
        mem_l, mem_r = bo + fl + kr, bo + kl + fr
    else:
        mem_l, mem_r = bo + fl, bo + fr
    for v, mem in ((vl, mem_l), (vr, mem_r)):
        need = prog.ct_need.get(v)
        if need is not None:
            groups, nbatch, mult = need
            cost += mult * prog.size(v) * copies(mem, groups, nbatch)
    return cost
