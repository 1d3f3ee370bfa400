"""Constant folding: an equation whose inputs are all constants is evaluated once, at compile
time, on the host (NumPy). Results much larger than their inputs (e.g. a scalar broadcast to
a big matrix) are not folded: materialising them would cost memory and file size for nothing.
For the same reason zero-input constants (``full``, ``iota``) become constants only when small."""

from __future__ import annotations

from chainrules.core import static_size
from chainrules.symbolic import contains_sym

from ...backends.numpy_backend import host_xp
from ..program import Program

MIN_BYTES = 1 << 16


def const_fold(program: Program) -> Program:
    consts = dict(program.consts)
    by_id = {id(v): c for v, c in consts.items()}
    xp = host_xp()
    eqns = []
    for eqn in program.eqns:
        # parameters that mention run-time sizes are only resolvable while the graph runs
        if all(id(v) in by_id for v in eqn.inputs) and not contains_sym(eqn.params):
            in_bytes = sum(_nbytes(v) for v in eqn.inputs)
            out_bytes = sum(_nbytes(v) for v in eqn.outputs)
            limit = max(in_bytes, MIN_BYTES) if eqn.inputs else MIN_BYTES // 16
            if out_bytes <= limit:
                outs = eqn.prim.as_list(
                    eqn.prim.impl(xp, *[by_id[id(v)] for v in eqn.inputs], **eqn.params))
                for v, o in zip(eqn.outputs, outs):
                    consts[v] = o
                    by_id[id(v)] = o
                continue
        eqns.append(eqn)
    return Program(program.inputs, eqns, program.outputs, consts)


def _nbytes(v) -> int:
    n = static_size(v.aval)
    return (1 << 62) if n is None else n * v.aval.dtype.itemsize  # run-time sizes never fold

