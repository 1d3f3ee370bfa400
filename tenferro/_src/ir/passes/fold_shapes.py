"""Fold chains of layout operations: transpose(transpose(x)) becomes one transpose,
reshape(reshape(x)) one reshape, broadcast(broadcast(x)) one broadcast, a broadcast constant
one bigger constant, involutions (conj(conj(x)), neg(neg(x))) and identity
reshapes/transposes/broadcasts/casts vanish. The inner equations, if unused, go in DCE."""

from __future__ import annotations

from chainrules import primitives as P

from ..program import Eqn, Program

_INVOLUTIONS = (P.conj_p, P.neg_p)


def fold_shapes(program: Program) -> Program:
    replace: dict[int, object] = {}
    producer: dict[int, Eqn] = {}
    eqns = []
    for eqn in program.eqns:
        ins = [replace.get(id(v), v) for v in eqn.inputs]
        prim, params = eqn.prim, eqn.params
        if prim is P.transpose_p:
            src = producer.get(id(ins[0]))
            if src is not None and src.prim is P.transpose_p:
                inner = src.params["permutation"]
                params = {"permutation": tuple(inner[p] for p in params["permutation"])}
                ins = [src.inputs[0]]
            if params["permutation"] == tuple(range(len(params["permutation"]))):
                replace[id(eqn.outputs[0])] = ins[0]
                continue
        elif prim is P.reshape_p:
            src = producer.get(id(ins[0]))
            if src is not None and src.prim is P.reshape_p:
                ins = [src.inputs[0]]
            if tuple(ins[0].aval.shape) == tuple(params["new_sizes"]):
                replace[id(eqn.outputs[0])] = ins[0]
                continue
        elif prim in _INVOLUTIONS and (src := producer.get(id(ins[0]))) is not None and (
            src.prim is prim
        ):  # conj(conj(x)) = x, neg(neg(x)) = x
            replace[id(eqn.outputs[0])] = src.inputs[0]
            continue
        elif prim is P.convert_element_type_p and ins[0].aval.dtype == params["new_dtype"]:
            replace[id(eqn.outputs[0])] = ins[0]
            continue
        elif prim is P.broadcast_in_dim_p:
            src = producer.get(id(ins[0]))
            if src is not None and src.prim is P.broadcast_in_dim_p:  # compose broadcasts
                inner = src.params["broadcast_dimensions"]
                outer = params["broadcast_dimensions"]
                params = {"shape": params["shape"],
                          "broadcast_dimensions": tuple(outer[d] for d in inner)}
                ins = [src.inputs[0]]
            elif src is not None and src.prim is P.full_p:  # a broadcast constant
                new = Eqn(P.full_p, [], dict(src.params, shape=tuple(params["shape"])),
                          eqn.outputs, eqn.source)
                producer[id(eqn.outputs[0])] = new
                eqns.append(new)
                continue
            if tuple(ins[0].aval.shape) == tuple(params["shape"]) and params[
                "broadcast_dimensions"
            ] == tuple(range(len(params["shape"]))):
                replace[id(eqn.outputs[0])] = ins[0]
                continue
        new = Eqn(prim, ins, params, eqn.outputs, eqn.source)
        for o in eqn.outputs:
            producer[id(o)] = new
        eqns.append(new)
    outputs = [None if v is None else replace.get(id(v), v) for v in program.outputs]
    return Program(program.inputs, eqns, outputs, program.consts)
