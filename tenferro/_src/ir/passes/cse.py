"""Common-subexpression elimination: an equation identical to an earlier one (same primitive,
params and inputs) is replaced by the earlier outputs.

Primitives with ``cse=False`` are never merged: checkpointing marks its recomputation with
such a barrier (``optimization_barrier``) so that the recomputed forward is not folded back
into the original forward (which would keep every residual alive and defeat the checkpoint).
"""

from __future__ import annotations

import numpy as np

from ..program import Eqn, Program, params_key


def cse(program: Program) -> Program:
    replace: dict[int, object] = {}
    seen: dict = {}
    # identical constants are one value: the same object, or small arrays with equal contents
    const_ids: dict = {}
    consts = {}
    for v, c in program.consts.items():
        key = _const_key(c)
        prev = const_ids.get(key)
        if prev is None:
            const_ids[key] = v
            consts[v] = c
        else:
            replace[id(v)] = prev
    eqns = []
    for eqn in program.eqns:
        ins = [replace.get(id(v), v) for v in eqn.inputs]
        if not eqn.prim.cse:
            eqns.append(Eqn(eqn.prim, ins, eqn.params, eqn.outputs, eqn.source))
            continue
        try:
            key = (eqn.prim, params_key(eqn.params), tuple(id(v) for v in ins))
            hash(key)
        except TypeError:  # unhashable params: leave the equation alone
            key = None
        prev = seen.get(key) if key is not None else None
        if prev is not None:
            for o, p in zip(eqn.outputs, prev.outputs):
                replace[id(o)] = p
            continue
        new = Eqn(eqn.prim, ins, eqn.params, eqn.outputs, eqn.source)
        if key is not None:
            seen[key] = new
        eqns.append(new)
    outputs = [None if v is None else replace.get(id(v), v) for v in program.outputs]
    return Program(program.inputs, eqns, outputs, consts)


def _const_key(c):
    a = np.asarray(c)
    if a.size <= 16:
        return ("value", a.shape, a.dtype.str, a.tobytes())
    return ("object", id(c))
