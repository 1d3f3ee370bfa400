"""A rough cost model: FLOPs and bytes per equation, for ``Graph.summary()``.

Each primitive carries its own cost formula (``Primitive.cost``, defined next to the primitive:
one FLOP per element by default, nothing for pure data movement, ``2 M N K`` for
``dot_general``, LAPACK estimates for decompositions). This module only applies it to
equations. ``None`` means some size is only known at run time."""

from __future__ import annotations

from chainrules.core import static_size


def eqn_flops(eqn) -> int | None:
    ins = [v.aval for v in eqn.inputs]
    outs = [v.aval for v in eqn.outputs]
    return eqn.prim.cost(ins, outs, **eqn.params)


def eqn_bytes(eqn) -> int | None:
    """Bytes of the values an equation produces."""
    total = 0
    for v in eqn.outputs:
        n = static_size(v.aval)
        if n is None:
            return None
        total += n * v.aval.dtype.itemsize
    return total
