"""Run-time sizes in traced programs (see ``chainrules.symbolic``).

A program whose shapes contain symbolic sizes learns their values while it runs: right after
the equation that first produces a symbol (e.g. ``truncation_indices``), the symbol is bound to
the actual length, and every later equation whose parameters mention symbols (reshape targets,
broadcast shapes, constants...) gets them resolved before its ``impl`` is called.
"""

from __future__ import annotations

from chainrules.symbolic import Sym, contains_sym, resolve

from ..ir.program import Program


def symbol_sites(program: Program) -> list[list]:
    """Per equation, ``(output index, axis, symbol id)`` for symbols first produced there."""
    seen: set[int] = set()
    out = []
    for eqn in program.eqns:
        sites = []
        for j, v in enumerate(eqn.outputs):
            for ax, d in enumerate(v.aval.shape):
                if isinstance(d, Sym) and d.is_symbol and d.symbol not in seen:
                    seen.add(d.symbol)
                    sites.append((j, ax, d.symbol))
        out.append(sites)
    return out


def eval_program_dyn(program: Program, args, apply):
    """``eval_program`` that binds symbolic sizes from the values and resolves parameters."""
    env = dict(program.consts)
    for v, a in zip(program.inputs, args):
        env[v] = a
    sizes: dict[int, object] = {}
    sites = symbol_sites(program)
    for eqn, site in zip(program.eqns, sites):
        params = resolve(eqn.params, sizes) if contains_sym(eqn.params) else eqn.params
        outs = apply(eqn.prim, [env[v] for v in eqn.inputs], params)
        for v, o in zip(eqn.outputs, outs):
            env[v] = o
        for j, ax, sym in site:
            sizes[sym] = outs[j].shape[ax]
    return [None if v is None else env[v] for v in program.outputs]


__all__ = ["Sym", "contains_sym", "eval_program_dyn", "resolve", "symbol_sites"]
