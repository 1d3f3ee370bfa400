"""Fold multiplications by one: ``mul(x, c)`` and ``mul(c, x)`` where ``c`` is a constant (or
a ``full``) of ones and the product has ``x``'s shape and dtype is ``x`` itself. Reverse mode
seeds the cotangent of a summed output with ones, so every gradient graph of ``sum(f(x))``
starts with such products; for real dtypes ``x * 1`` is exactly ``x`` in IEEE arithmetic (NaN,
infinities and signed zeros included), so the fold changes no bit of the result. Complex
products are left alone: ``(a + bj) * (1 + 0j)`` computes ``a*1 - b*0``, which is NaN for an
infinite ``b`` and can flip the sign of a zero."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..program import Program


def fold_seeds(program: Program) -> Program:
    ones: set[int] = set()
    for v, c in program.consts.items():
        a = np.asarray(c)
        if a.dtype != object and a.size and bool(np.all(a == 1)):
            ones.add(id(v))
    replace: dict[int, object] = {}
    eqns = []
    for eqn in program.eqns:
        if replace:
            ins = [replace.get(id(v), v) for v in eqn.inputs]
            if any(a is not b for a, b in zip(ins, eqn.inputs)):
                eqn = type(eqn)(eqn.prim, ins, eqn.params, eqn.outputs, eqn.source)
        if eqn.prim is P.full_p and _is_one(eqn.params["value"]):
            ones.add(id(eqn.outputs[0]))
        elif eqn.prim is P.mul_p:
            x, y = eqn.inputs
            out = eqn.outputs[0].aval
            for a, b in ((x, y), (y, x)):
                # real dtypes only: a complex product by 1+0j is not x (inf * 0 = nan, and
                # the signs of zeros change)
                if id(b) in ones and a.aval == out and out.dtype.kind != "c":
                    replace[id(eqn.outputs[0])] = a
                    break
            else:
                eqns.append(eqn)
            continue
        eqns.append(eqn)
    if not replace:
        return program
    outputs = [None if v is None else replace.get(id(v), v) for v in program.outputs]
    return Program(program.inputs, eqns, outputs, program.consts)


def _is_one(value) -> bool:
    try:
        return value == 1
    except Exception:  # noqa: BLE001 - a value that does not compare is not one
        return False
