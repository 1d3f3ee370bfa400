"""Liveness analysis: for each equation, the values used for the last time there.

The executor frees them right after that equation, so a long chain of elementwise ops keeps
only a few buffers alive instead of one per step."""

from __future__ import annotations

from ..program import Program


def last_uses(program: Program) -> list[list]:
    """``result[k]`` lists the vars (inputs, constants or intermediates) whose last use is
    equation ``k``; program outputs are never freed."""
    keep = {id(v) for v in program.outputs if v is not None}
    last: dict[int, int] = {}
    var_of: dict[int, object] = {}
    for k, eqn in enumerate(program.eqns):
        for v in eqn.inputs:
            last[id(v)] = k
            var_of[id(v)] = v
    out: list[list] = [[] for _ in program.eqns]
    for vid, k in last.items():
        if vid not in keep:
            out[k].append(var_of[vid])
    # values produced but never used die right away
    for k, eqn in enumerate(program.eqns):
        for v in eqn.outputs:
            if id(v) not in last and id(v) not in keep:
                out[k].append(v)
    return out
