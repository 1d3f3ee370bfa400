"""Contractions of symmetric tensors: ``tensordot``, ``einsum`` and ``ncon``.

A contraction of symmetric tensors is a sum of dense contractions of block pairs whose
contracted sectors match. Which pairs meet, and which output block each feeds, depends only
on the block structure (legs, charges, present keys): that *plan* is computed once and cached,
then every call runs plain ``tenferro.tensordot``s on the blocks (so derivatives are the dense
ones, block by block).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import ops
from ..caches import BoundedCache
from ..errors import DTypeError, ShapeError
from . import arguments as sarg
from ._blockops import ops_of
from .tensor import SymmetricTensor, _structure_class, symmetric_rule

__all__ = ["einsum", "ncon", "tensordot"]

_PLANS = BoundedCache("symmetric contraction plans", 8192)


def _norm_axes(axes, nx, ny):
    """``(x's axes, y's axes)`` from tensordot's ``axes``: an int n (x's last n legs with y's
    first n) or a pair of axis sequences (or single axes), each in range (never wrapped)."""
    if type(axes) in (tuple, list) and len(axes) == 2:  # the common case, checked fast
        ax, ay = ((a,) if type(a) is int else a for a in axes)
        if type(ax) in (tuple, list) and type(ay) in (tuple, list) and len(ax) == len(ay) \
                and all(type(a) is int and -nx <= a < nx for a in ax) \
                and all(type(a) is int and -ny <= a < ny for a in ay):
            ax, ay = tuple(a % nx for a in ax), tuple(a % ny for a in ay)
            if len(set(ax)) == len(ax) and len(set(ay)) == len(ay):
                return ax, ay
    op = "symmetric.tensordot"
    n = sarg.whole_number(axes)
    if n is not None:
        if not 0 <= n <= min(nx, ny):
            raise ShapeError(f"{op}: axes={n} contracts the last {n} legs of x ({nx} legs) "
                             f"with the first {n} of y ({ny}); it must lie in 0..{min(nx, ny)}.")
        return tuple(range(nx - n, nx)), tuple(range(n))
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise DTypeError(f"{op}: axes must be an int or a pair (x's axes, y's axes), got "
                         f"{sarg.describe(axes)}.")
    ax, ay = (a if isinstance(a, (tuple, list, range)) else (a,) for a in axes)
    ax, ay = sarg.axes(op, "x's axes", ax, nx), sarg.axes(op, "y's axes", ay, ny)
    if len(ax) != len(ay):
        raise ShapeError(f"{op}: axes {axes} pair {len(ax)} with {len(ay)} axes.")
    return ax, ay


def _plan(x: SymmetricTensor, y: SymmetricTensor, ax, ay):
    key = (type(x), tuple(x.blocks), type(y), tuple(y.blocks), ax, ay)
    hit = _PLANS.get(key)
    if hit is not None:
        return hit
    for a, b in zip(ax, ay):
        la, lb = x.legs[a], y.legs[b]
        if not la.can_contract(lb):
            why = ("both legs point the same way (contract a leg with its flip())"
                   if la.dual == lb.dual and la.sectors == lb.sectors else "sectors differ")
            raise ShapeError(f"symmetric.tensordot: axis {a} of x {la!r} cannot contract with "
                             f"axis {b} of y {lb!r}: {why}.")
    fx = [i for i in range(x.ndim) if i not in ax]
    fy = [i for i in range(y.ndim) if i not in ay]
    legs = tuple(x.legs[i] for i in fx) + tuple(y.legs[i] for i in fy)
    if not legs:
        raise ShapeError("symmetric.tensordot: a full contraction gives a scalar; use "
                         "symmetric.inner (or vdot) instead.")
    charge = x.symmetry.fuse(x.charge, y.charge)
    by_c: dict = {}
    for ky in y.blocks:
        by_c.setdefault(tuple(ky[b] for b in ay), []).append(ky)
    pairs: dict = {}
    for kx in x.blocks:
        for ky in by_c.get(tuple(kx[a] for a in ax), ()):
            ko = tuple(kx[i] for i in fx) + tuple(ky[i] for i in fy)
            pairs.setdefault(ko, []).append((kx, ky))
    plan = (_structure_class(legs, charge), tuple((ko, tuple(v)) for ko, v in pairs.items()))
    _PLANS.put(key, plan)
    return plan


def tensordot(x: SymmetricTensor, y: SymmetricTensor, axes=2) -> SymmetricTensor:
    """``numpy.tensordot`` for symmetric tensors: each contracted leg of ``x`` must be the
    ``flip()`` of the matching leg of ``y`` (same sectors, opposite direction). The result's
    legs are x's free legs then y's; its charge is the fusion of both charges."""
    if not isinstance(x, SymmetricTensor) or not isinstance(y, SymmetricTensor):
        raise DTypeError(f"symmetric.tensordot: both operands must be SymmetricTensors, got "
                         f"{type(x).__name__} and {type(y).__name__}.")
    if x.symmetry != y.symmetry:
        raise ShapeError(f"symmetric.tensordot: symmetries differ: {x.symmetry} and "
                         f"{y.symmetry}.")
    ax, ay = _norm_axes(axes, x.ndim, y.ndim)
    cls, plan = _plan(x, y, ax, ay)
    xb, yb = x.blocks, y.blocks
    ops = ops_of(xb)
    out = {}
    for ko, pairs in plan:
        acc = None
        for kx, ky in pairs:
            t = ops.tensordot(xb[kx], yb[ky], (ax, ay))
            acc = t if acc is None else acc + t
        out[ko] = acc
    return cls._trusted(out)


@sarg.checked(where="symmetric.inner", x=symmetric_rule, y=symmetric_rule)
def inner(x: SymmetricTensor, y: SymmetricTensor):
    """``sum conj(x) * y`` over matching blocks (a scalar tensor); legs and charges must
    agree."""
    if x.legs != y.legs or x.charge != y.charge:
        raise ShapeError(f"symmetric.inner: legs/charges differ: {list(x.legs)} charge "
                         f"{x.charge!r} vs {list(y.legs)} charge {y.charge!r}.")
    acc = None
    for k, b in x.blocks.items():
        if k in y.blocks:
            t = ops.vdot(ops.reshape(b, (-1,)), ops.reshape(y.blocks[k], (-1,)))
            acc = t if acc is None else acc + t
    return acc if acc is not None else ops.zeros((), dtype=x.dtype)


def _parse(subscripts: str, n: int):
    if not isinstance(subscripts, str):
        raise DTypeError(f"symmetric.einsum: subscripts must be a string such as 'ij,jk->ik', "
                         f"got {sarg.describe(subscripts)}.")
    if "->" not in subscripts:
        raise ShapeError(f"symmetric.einsum: give the output explicitly ('ij,jk->ik'), got "
                         f"{subscripts!r}.")
    parts = subscripts.replace(" ", "").split("->")
    if len(parts) != 2:
        raise ShapeError(f"symmetric.einsum: {subscripts!r} must have one '->'.")
    ins, out = parts
    ins = ins.split(",")
    if len(ins) != n:
        raise ShapeError(f"symmetric.einsum: {subscripts!r} names {len(ins)} operands, got {n}.")
    if "." in subscripts:
        raise ShapeError("symmetric.einsum: ellipsis is not supported for symmetric tensors.")
    return [list(s) for s in ins], list(out)


def einsum(subscripts: str, *operands: SymmetricTensor) -> SymmetricTensor:
    """``einsum`` with an explicit output (``"abc,cd->abd"``), contracted pairwise from left to
    right. Every index appears in exactly two operands (contracted) or in one operand and the
    output; traces within one operand and batch indices are not supported (fuse legs, or
    contract with an identity)."""
    labels, out = _parse(subscripts, len(operands))
    return _contract_labelled(list(operands), labels, out, "symmetric.einsum")


def _contract_labelled(ops, labels, out, where):
    if not ops:
        raise ShapeError(f"{where}: no operands.")
    for lab, x in zip(labels, ops):
        if not isinstance(x, SymmetricTensor):
            raise ShapeError(f"{where}: operands must be SymmetricTensors, got "
                             f"{type(x).__name__}.")
        if len(lab) != x.ndim:
            raise ShapeError(f"{where}: {len(lab)} indices for an operand with {x.ndim} legs.")
        if len(set(lab)) != len(lab):
            raise ShapeError(f"{where}: repeated index in one operand {lab} (traces are not "
                             f"supported).")
    cur, cl = ops[0], list(labels[0])
    for j in range(1, len(ops)):
        nxt, nl = ops[j], labels[j]
        later = set(out).union(*[set(l) for l in labels[j + 1:]]) if j + 1 < len(ops) else set(out)
        common = [c for c in cl if c in nl]
        for c in common:
            if c in later:
                raise ShapeError(f"{where}: index {c!r} appears in more than two places (batch "
                                 f"or hyper-indices are not supported).")
        if not common:
            raise ShapeError(f"{where}: operands {j - 1} and {j} share no index (outer products "
                             f"are not supported; reorder the operands).")
        cur = tensordot(cur, nxt, ([cl.index(c) for c in common], [nl.index(c) for c in common]))
        cl = [c for c in cl if c not in common] + [c for c in nl if c not in common]
    if sorted(cl) != sorted(out):
        raise ShapeError(f"{where}: the output indices {out} do not match the free indices {cl}.")
    perm = [cl.index(c) for c in out]
    return cur if perm == list(range(len(perm))) else cur.transpose(perm)


def ncon(tensors: Sequence[SymmetricTensor], connects: Sequence[Sequence[int]]):
    """ncon convention: positive labels are contracted, negative labels are the output legs in
    the order -1, -2, ...; tensors are contracted pairwise in the order given."""
    for name, v in (("tensors", tensors), ("connects", connects)):
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence):
            raise DTypeError(f"symmetric.ncon: {name} must be a sequence, got "
                             f"{sarg.describe(v)}.")
    if not all(isinstance(c, Sequence) and not isinstance(c, str) and all(
            sarg.whole_number(i) is not None and i != 0 for i in c) for c in connects):
        raise ShapeError(f"symmetric.ncon: connects must be one list of nonzero integer labels "
                         f"per tensor, got {connects!r}.")
    labels = [list(c) for c in connects]
    if len(labels) != len(tensors):
        raise ShapeError(f"symmetric.ncon: {len(tensors)} tensors but {len(labels)} label lists.")
    out = sorted({c for l in labels for c in l if c < 0}, reverse=True)
    return _contract_labelled(list(tensors), labels, out, "symmetric.ncon")
