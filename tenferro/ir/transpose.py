"""Transposition of linear equations: the heart of reverse mode.

``transpose_eqns`` walks linear equations backwards, calling each primitive's ``transpose``
rule with ``UndefinedPrimal`` for the linear inputs and known values for the others, and
accumulates cotangents with ``add``. Symbolic zeros are skipped.
"""

from __future__ import annotations

from chainrules import UndefinedPrimal, Zero

from ..errors import NonLinearError


def linear_eqn_mask(eqns, linear_ids: set[int]) -> list[bool]:
    """Which equations depend on the linear inputs (``linear_ids`` is updated in place)."""
    mask = []
    for eqn in eqns:
        lin = any(id(v) in linear_ids for v in eqn.inputs)
        mask.append(lin)
        if lin:
            linear_ids.update(id(v) for v in eqn.outputs)
    return mask


def transpose_eqns(builder, eqns, lin_mask, linear_ids, known, cts):
    """Backward pass over ``eqns``.

    ``known``: id(var) -> value for non-linear vars the transposes may read.
    ``cts``: id(var) -> cotangent, seeded with the output cotangents; updated in place and
    returned (it ends holding the cotangents of the linear inputs).
    """
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
                f"rule), so the function cannot be transposed. linear_transpose needs a "
                f"function that is linear in its arguments."
            )
        ct_out = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outputs, ct_out)]
        args = [
            UndefinedPrimal(v.aval) if id(v) in linear_ids else known[id(v)] for v in eqn.inputs
        ]
        ct_arg = tuple(ct_out) if prim.multiple_results else ct_out[0]
        ct_in = prim.transpose(builder, ct_arg, *args, **eqn.params)
        for v, c in zip(eqn.inputs, ct_in):
            if c is None or type(c) is Zero or id(v) not in linear_ids:
                continue
            prev = cts.get(id(v))
            cts[id(v)] = c if prev is None else builder.add(prev, c)
    return cts
