"""Transposition of programs: the heart of reverse mode.

``transpose_program`` takes a program that is linear in some of its inputs and returns the
program computing its transpose: cotangents of the outputs in, cotangents of the linear inputs
out. It walks the linear equations backwards, calling each primitive's ``transpose`` rule with
``UndefinedPrimal`` for the linear inputs and the (non-linear) values for the others, and
accumulates cotangents with ``add``; symbolic zeros are skipped. Equations that do not depend
on the linear inputs (residuals, such as ``cos(x)`` in the derivative of ``sin``) are kept,
ahead of the transposed ones.

Its clients: the tape's derivative templates (the JVP rule of a primitive, transposed in its
tangents) and ``linear_transpose``/custom rules (a staged linear function, transposed).
"""

from __future__ import annotations

from chainrules import UndefinedPrimal, Zero

from ..errors import NonLinearError
from .program import IRBuilder, Program, Var, dce


def linear_eqn_mask(eqns, linear_ids: set[int]) -> list[bool]:
    """Which equations depend on the linear inputs (``linear_ids`` is updated in place)."""
    mask = []
    for eqn in eqns:
        lin = any(id(v) in linear_ids for v in eqn.inputs)
        mask.append(lin)
        if lin:
            linear_ids.update(id(v) for v in eqn.outputs)
    return mask


def transpose_program(program: Program, linear, ct_mask=None) -> Program:
    """The transpose of ``program`` with respect to the inputs flagged in ``linear``.

    The result takes one cotangent per output that is not ``None`` (and selected by
    ``ct_mask``), then the non-linear inputs, and returns one cotangent per linear input
    (``None`` where it is zero). Raises ``NonLinearError`` naming the first operation that is
    not linear in the flagged inputs.
    """
    linear = list(linear)
    linear_ids = {id(v) for v, lin in zip(program.inputs, linear) if lin}
    lin_mask = linear_eqn_mask(program.eqns, linear_ids)
    b = IRBuilder()
    ct_vars, cts = [], {}
    if ct_mask is None:
        ct_mask = [True] * len(program.outputs)
    for v, on in zip(program.outputs, ct_mask):
        if v is None or not on:
            continue
        c = Var(v.aval)
        ct_vars.append(c)
        if id(v) in linear_ids:  # an output that does not depend on the linear inputs is
            prev = cts.get(id(v))  # a constant: its cotangent is ignored
            cts[id(v)] = c if prev is None else b.add(prev, c)
    residual = [e for e, lin in zip(program.eqns, lin_mask) if not lin]
    known = {id(v): v for v in program.inputs if id(v) not in linear_ids}
    known.update((id(v), v) for v in program.consts)
    known.update((id(v), v) for e in residual for v in e.outputs)
    _transpose_eqns(b, program.eqns, lin_mask, linear_ids, known, cts)
    outs = [cts.get(id(v)) for v, lin in zip(program.inputs, linear) if lin]
    nonlinear_inputs = [v for v, lin in zip(program.inputs, linear) if not lin]
    eqns = dce(residual + b.eqns, outs)
    return Program(ct_vars + nonlinear_inputs, eqns, outs, program.consts)


def _transpose_eqns(builder, eqns, lin_mask, linear_ids, known, cts):
    """Backward over the linear ``eqns``; ``cts`` (id(var) -> cotangent) is seeded with the
    output cotangents and ends holding those of the linear inputs."""
    for eqn, lin in zip(reversed(eqns), reversed(lin_mask)):
        if not lin:
            continue
        ct_out = [cts.pop(id(v), None) for v in eqn.outputs]
        if all(c is None or type(c) is Zero for c in ct_out):
            continue
        prim = eqn.prim
        if prim.transpose is None:
            raise NonLinearError(
                f"{prim.name}: this operation is not linear in its input (it has no transpose "
                f"rule), so the function cannot be transposed. linear_transpose (and forward "
                f"mode through a custom_vjp rule) needs a function that is linear in its "
                f"arguments."
            )
        ct_out = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outputs, ct_out)]
        args = [
            UndefinedPrimal(v.aval) if id(v) in linear_ids else known[id(v)] for v in eqn.inputs
        ]
        ct_in = prim.transpose(builder, prim.unpack(ct_out), *args, **eqn.params)
        for v, c in zip(eqn.inputs, ct_in):
            if c is None or type(c) is Zero or id(v) not in linear_ids:
                continue
            prev = cts.get(id(v))
            cts[id(v)] = c if prev is None else builder.add(prev, c)
    return cts
