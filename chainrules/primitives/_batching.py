"""Batching (vmap) rules from facts: the generic rule makers the primitive modules use.

A batch rule has the signature ``batch(b, args, dims, **params) -> (outs, out_dims)``:
``dims[i]`` is the mapped axis of ``args[i]`` (``None``: the argument is shared by every batch
member). Most primitives fall into a few families, each with one rule maker here:

``elementwise``
    operands of equal shape: mapped axes moved to the front, shared operands broadcast;
``leading``
    the primitive already maps over leading axes (``diagonal``, ``tril``, the linear-algebra
    decompositions and solves): the same, the batch becomes one more leading axis;
``axis_shift``
    one operand with axis parameters (reductions, ``cumsum``, ``sort``, FFTs, ``flip``): the
    mapped axis moves to the front and every axis parameter shifts by one.

The rest (shape operations, ``dot_general``, indexing, ``pad``, windows) have their own short
rules next to the primitive. Nothing here touches arrays: rules only call the builder.
"""

from __future__ import annotations

from ..errors import ShapeError


def batch_size(args, dims) -> int:
    """The batch size, read from the first mapped argument."""
    for a, d in zip(args, dims):
        if d is not None:
            return a.shape[d]
    raise ValueError("batch rule called without a mapped argument")


def move_axis(b, x, src: int, dst: int):
    """``x`` with axis ``src`` moved to position ``dst`` (a ``transpose`` when needed)."""
    if src == dst:
        return x
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    return b.permute(x, perm)


def to_front(b, x, d):
    """The mapped axis ``d`` of ``x`` moved to position 0 (``x`` itself when unmapped)."""
    return x if d is None else move_axis(b, x, d, 0)


def with_batch(b, x, d, size: int):
    """``x`` mapped over axis 0: the mapped axis moved there, or a shared ``x`` broadcast."""
    if d is not None:
        return move_axis(b, x, d, 0)
    shape = (size,) + tuple(x.shape)
    return b.broadcast_in_dim(x, shape, tuple(range(1, len(shape))))


def all_at_front(b, args, dims) -> list:
    """Every argument mapped over axis 0 (shared ones broadcast)."""
    n = batch_size(args, dims)
    return [with_batch(b, a, d, n) for a, d in zip(args, dims)]


def _outs(prim, out):
    return prim.as_list(out)


def elementwise(prim):
    """Operands of one shape, output of that shape: batch over axis 0 of everything. A shared
    operand is broadcast (primitives do not broadcast implicitly)."""

    def rule(b, args, dims, /, **params):
        out = b.bind(prim, *all_at_front(b, args, dims), **params)
        outs = _outs(prim, out)
        return outs, [0] * len(outs)

    prim.def_batch(rule)
    return rule


leading = elementwise
"""A primitive that maps over leading axes already (trailing-axes operations, linear-algebra
decompositions and solves): the batch is one more leading axis. Shared operands are
broadcast because such primitives require equal leading axes."""


def axis_shift(prim, *names: str):
    """A one-operand primitive whose parameters ``names`` are an axis or a tuple of axes: the
    mapped axis goes to the front and every axis parameter shifts by one."""
    unknown = [k for k in names if k not in prim.params]
    if unknown:
        raise ValueError(f"axis_shift({prim.name}): {unknown} are not parameters of it "
                         f"(it declares {sorted(prim.params)})")

    def rule(b, args, dims, /, **params):
        (x,), (d,) = args, dims
        x = move_axis(b, x, d, 0)
        for k in names:
            v = params[k]
            if v is None:
                continue
            params[k] = tuple(a + 1 for a in v) if isinstance(v, tuple) else v + 1
        out = b.bind(prim, x, **params)
        outs = _outs(prim, out)
        return outs, [0] * len(outs)

    prim.def_batch(rule)
    return rule


def data_dependent(op: str, hint: str) -> ShapeError:
    """The error for a value whose shape depends on per-member data under ``vmap``."""
    return ShapeError(
        f"vmap: {op} has an output shape that depends on the values of each batch member "
        f"(members could disagree), which a batch cannot hold. {hint}"
    )
