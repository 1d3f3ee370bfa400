"""Dead-code elimination: drop equations (and constants) nothing observable depends on.
Every primitive is pure, so an equation whose outputs are unused can go."""

from __future__ import annotations

from ..program import Program, used_vars
from ..program import dce as _dce_eqns


def dce(program: Program) -> Program:
    eqns = _dce_eqns(program.eqns, program.outputs)
    used = used_vars(eqns, program.outputs)
    consts = {v: c for v, c in program.consts.items() if id(v) in used}
    return Program(program.inputs, eqns, program.outputs, consts)
