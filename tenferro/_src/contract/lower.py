"""Lowering the pairwise products of a path to ``dot_general`` (or ``mul``) with good layouts.

For operands A and B, a shared label still needed later (by the output or by another remaining
operand: a hyper-edge) is a *batch* dimension of ``dot_general``; a shared label needed
nowhere else is *contracted*. With nothing to contract, the step is an elementwise ``mul`` of
broadcast views instead (a Hadamard or batched outer product is not a matrix product, and
``matmul`` with 1x1 matrices would be slow). Which operand is the lhs and the order of the
batch and contracted labels are chosen to minimise the copying ``dot_general``'s impl must do
before calling BLAS (``layout.copies``), with a one-step look-ahead so the result is laid out
well for the step that consumes it (``layout.layout_penalty``). When the reverse pass may run,
its copies count too (``layout.backward_copies``), and large steps are *matricized*
(``_emit_matricized``).
"""

from __future__ import annotations

from chainrules import primitives as P

from .layout import backward_copies, copies, layout_penalty, ordered
from .recorder import StepInfo, prod


def lower(prog, vals, records, final_node, live_out):
    """Emit the products ``records`` (from ``plan._simulate``) in order; return the value id of
    the final result. ``vals`` maps operand nodes to value ids."""
    node_val = {k: v for k, v in enumerate(vals)}
    node_sets = {k: frozenset(prog.labels[v]) for k, v in enumerate(vals)}
    for _, _, c, keep in records:
        node_sets[c] = keep
    consumer = {}
    for a, b, _, keep in records:
        consumer[a] = (node_sets[b], keep)
        consumer[b] = (node_sets[a], keep)
    for a, b, c, keep in records:
        want = consumer.get(c)
        final = tuple(live_out) if c == final_node else None
        node_val[c] = _emit_pair(prog, node_val[a], node_val[b], keep, want, final)
    return node_val[final_node]


MATRICIZE_MIN = 1 << 15
"""Steps whose operands or result reach this many elements are matricized when planning for
the reverse pass (see ``_emit_pair``); below it the extra reshape nodes cost more than the
copies they save."""


class _Merged:
    """The label of a merged axis (several labels reshaped into one) of a matricized step."""

    __slots__ = ("labels",)

    def __init__(self, labels):
        self.labels = tuple(labels)

    def __repr__(self):
        return f"merged{self.labels!r}"


def _emit_pair(prog, va, vb, keep, want, final) -> int:
    """Lower one pairwise product of values ``va`` and ``vb``; ``keep`` is the set of labels
    needed afterwards, ``want`` the consumer's (partner labels, keep) and ``final`` the output
    order if this is the last product.

    When planning for the reverse pass, a large step is *matricized*: each operand is
    transposed and reshaped to a (batch, rows, cols) array (a view when its memory allows,
    otherwise the one copy ``dot_general``'s impl would make anyway), the product is a plain
    batched matrix product, and the result is reshaped back. The tape then saves the
    contiguous matrices, so the reverse pass never re-copies the operands, and the incoming
    cotangent is matricized once (a single reshape feeding both transposed products) instead
    of being copied inside each of them.
    """
    la, lb = prog.labels[va], prog.labels[vb]
    sa, sb = set(la), set(lb)
    # labels of one operand that nothing needs any more (only possible with odd explicit
    # paths): sum them before the product
    va = prog.reduce_sum(va, {lab for lab in la if lab not in sb and lab not in keep})
    vb = prog.reduce_sum(vb, {lab for lab in lb if lab not in sa and lab not in keep})
    la, lb = prog.labels[va], prog.labels[vb]
    shared = set(la) & set(lb)
    batch = {lab for lab in shared if lab in keep}
    contract = shared - batch
    is_dot = bool(contract) or not batch
    union_size = prod(prog.est[lab] for lab in set(la) | set(lb))
    out_size = prod(prog.est[lab] for lab in keep)
    grad = prog.grad
    matricize = (
        grad and bool(contract)
        and max(prog.size(va), prog.size(vb), out_size) >= MATRICIZE_MIN
    )
    corders = list(dict.fromkeys([ordered(la, contract), ordered(lb, contract)]))
    borders = list(dict.fromkeys([ordered(la, batch), ordered(lb, batch)]))
    best = None
    for swap in (False, True):
        (vl, ll), (vr, lr) = ((vb, lb), (va, la)) if swap else ((va, la), (vb, lb))
        fl = tuple(lab for lab in ll if lab not in shared)
        fr = tuple(lab for lab in lr if lab not in shared)
        sl, sr = prog.size(vl), prog.size(vr)
        for co in corders:
            for bo in borders:
                layout = bo + fl + fr
                cost = layout_penalty(layout, out_size, want, final) * (2 if grad else 1)
                if is_dot:
                    cost += sl * copies(ll, (bo, fl, co), batch)
                    cost += sr * copies(lr, (bo, co, fr), batch)
                if grad:
                    cost += backward_copies(
                        prog, vl, vr, ll, lr, co, bo, fl, fr, batch, is_dot, matricize
                    )
                key = (cost, swap)
                if best is None or key < best[0]:
                    best = (key, vl, ll, vr, lr, co, bo, fl, fr)
    _, vl, ll, vr, lr, co, bo, fl, fr = best
    layout = bo + fl + fr
    eq = f"{prog.term(ll)},{prog.term(lr)}->{prog.term(layout)}"
    if is_dot:
        flops = union_size * (2 if contract else 1)
        prog.steps.append(StepInfo("dot_general", eq, flops, out_size))
        if matricize:
            return _emit_matricized(prog, vl, vr, co, bo, fl, fr)
        dn = (
            (tuple(ll.index(lab) for lab in co), tuple(lr.index(lab) for lab in co)),
            (tuple(ll.index(lab) for lab in bo), tuple(lr.index(lab) for lab in bo)),
        )
        # the copies dot_general's impl makes before calling BLAS (for the memory model)
        temp = 0
        if not prog.contig[vl] or copies(ll, (bo, fl, co), batch):
            temp += prog.size(vl)
        if not prog.contig[vr] or copies(lr, (bo, co, fr), batch):
            temp += prog.size(vr)
        out = prog.emit(P.dot_general_p, (vl, vr), {"dimension_numbers": dn}, layout, temp)
        prog.ct_need[out] = ((bo, fl, fr), set(bo), 2)
        return out
    # nothing to contract but shared batch labels: an elementwise product of broadcast views
    shape = prog.shape(layout)
    nb, nl = len(bo), len(fl)
    xl = prog.permute(vl, bo + fl)
    if len(bo + fl) < len(layout):
        xl = prog.emit(
            P.broadcast_in_dim_p, (xl,),
            {"shape": shape, "broadcast_dimensions": tuple(range(nb + nl))}, layout,
        )
    xr = prog.permute(vr, bo + fr)
    if len(bo + fr) < len(layout):
        dims = tuple(range(nb)) + tuple(range(nb + nl, len(layout)))
        xr = prog.emit(
            P.broadcast_in_dim_p, (xr,), {"shape": shape, "broadcast_dimensions": dims}, layout
        )
    out = prog.emit(P.mul_p, (xl, xr), {}, layout)
    prog.steps.append(StepInfo("mul", eq, union_size, out_size))
    return out


def _merge(prog, labels) -> tuple:
    """Merged-axis labels for the groups ``labels`` (empty groups become size-1 axes)."""
    out = []
    for g in labels:
        m = _Merged(g)
        prog.sizes[m] = prod(prog.sizes[lab] for lab in g)
        prog.est[m] = prod(prog.est[lab] for lab in g)
        out.append(m)
    return tuple(out)


def _emit_matricized(prog, vl, vr, co, bo, fl, fr) -> int:
    """(B, M, K) x (B, K, N) -> (B, M, N), then back to the labels bo + fl + fr."""
    groups_l = ((bo,) if bo else ()) + (fl, co)
    groups_r = ((bo,) if bo else ()) + (co, fr)
    ml, mr = _merge(prog, groups_l), _merge(prog, groups_r)
    xl = prog.reshape(prog.permute(vl, bo + fl + co), ml)
    xr = prog.reshape(prog.permute(vr, bo + co + fr), mr)
    nb = 1 if bo else 0
    dn = (((nb + 1,), (nb,)), ((0,), (0,)) if bo else ((), ()))
    out_m = ml[:nb] + (ml[nb], mr[nb + 1])
    out = prog.emit(P.dot_general_p, (xl, xr), {"dimension_numbers": dn}, out_m)
    out = prog.reshape(out, bo + fl + fr)
    prog.ct_need[out] = ((bo, fl, fr), set(), 1)
    return out
