"""Fusing consecutive legs into one and splitting them again.

The fused leg has one sector per reachable charge; inside a sector the sector combinations of
the parts are laid out one after another (in C order of the parts' sectors), each as the
reshape of its block. ``split_legs`` slices them back out. Both are reshapes, slices and
concatenations of blocks, so their derivatives are the dense ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import ShapeError
from . import arguments as sarg
from ._blockops import ops_of
from .legs import fused_leg
from .tensor import SymmetricTensor, _structure_class, symmetric_rule

__all__ = ["fuse_legs", "split_legs"]


def _consecutive(op, axes, ndim):
    axes = list(sarg.axes(op, "axes", axes, ndim))
    if not axes or axes != list(range(axes[0], axes[0] + len(axes))):
        raise ShapeError(f"{op}: axes {axes} must be consecutive and increasing (transpose "
                         f"first).")
    return axes[0], axes[0] + len(axes)


def fuse_legs(x: SymmetricTensor, axes: Sequence[int], dual: bool = False) -> SymmetricTensor:
    """Fuse the consecutive legs ``axes`` into one leg (direction ``dual``) at their place."""
    symmetric_rule("fuse_legs", "x", x)
    a, b = _consecutive("fuse_legs", axes, x.ndim)
    leg = fused_leg(x.legs[a:b], dual)
    fmap = leg.fusion_map()
    legs = x.legs[:a] + (leg,) + x.legs[b:]
    cls = _structure_class(legs, x.charge)
    # group present blocks by (outer key, fused charge)
    groups: dict = {}
    sym = x.symmetry
    for k, blk in x.blocks.items():
        sub = k[a:b]
        eff = sym.fuse_all(l.effective(q) for l, q in zip(x.legs[a:b], sub))
        qf = sym.dual(eff) if dual else eff
        groups.setdefault(k[:a] + (qf,) + k[b:], {})[sub] = blk
    ops = ops_of(x.blocks)
    out = {}
    for ko, present in groups.items():
        qf = ko[a]
        entries, _ = fmap[qf]
        pieces = []
        some = next(iter(present.values()))
        for sub, _off, dims in entries:
            blk = present.get(sub)
            n = math.prod(dims)
            if blk is None:
                shape = tuple(some.shape[:a]) + (n,) + tuple(some.shape[b:])
                blk = ops.zeros(shape, some)
            else:
                blk = ops.reshape(blk, tuple(blk.shape[:a]) + (n,) + tuple(blk.shape[b:]))
            pieces.append(blk)
        out[ko] = pieces[0] if len(pieces) == 1 else ops.concatenate(pieces, axis=a)
    return cls._trusted(out)


def split_legs(x: SymmetricTensor, axis: int) -> SymmetricTensor:
    """Undo ``fuse_legs``: replace the fused leg ``axis`` by the legs it was made from."""
    symmetric_rule("split_legs", "x", x)
    axis = sarg.axis("split_legs", "axis", axis, x.ndim)
    leg = x.legs[axis]
    fmap = leg.fusion_map()
    parts = leg.fused_from
    legs = x.legs[:axis] + parts + x.legs[axis + 1:]
    cls = _structure_class(legs, x.charge)
    ops = ops_of(x.blocks)
    out = {}
    for k, blk in x.blocks.items():
        entries, _ = fmap[k[axis]]
        for sub, off, dims in entries:
            n = math.prod(dims)
            # every axis named (the array API does not define partial indices)
            idx = (slice(None),) * axis + (slice(off, off + n),) + (slice(None),) * (
                blk.ndim - axis - 1)
            piece = blk[idx]
            shape = tuple(blk.shape[:axis]) + dims + tuple(blk.shape[axis + 1:])
            out[k[:axis] + sub + k[axis + 1:]] = ops.reshape(piece, shape)
    return cls._trusted(out)
