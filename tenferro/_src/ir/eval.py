"""The program interpreter, and run-time sizes (see ``chainrules.symbolic``).

``eval_program`` runs a program by handing each equation to ``apply``: the callers decide
what applying a primitive means (``bind`` it, so transformations and tapes see it, or call its
``impl``). ``ir.compile`` turns a program into straight-line Python for the same job.

A program whose shapes contain symbolic sizes learns their values while it runs: right after
the equation that first produces a symbol (e.g. ``truncation_indices``), the symbol is bound to
the actual length, and every later equation whose parameters mention symbols (reshape targets,
broadcast shapes, constants...) gets them resolved before it is applied.
"""

from __future__ import annotations

from chainrules.symbolic import Sym, contains_sym, resolve

from .program import Program


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


def eval_program(program: Program, args, apply) -> list:
    """Run ``program`` on ``args``. ``apply(prim, *values, **params)`` returns the list of an
    equation's outputs (``bind_list`` is such a function). Outputs that are symbolic zeros
    (``None``) stay ``None``."""
    env = dict(program.consts)
    for v, a in zip(program.inputs, args):
        env[v] = a
    sizes: dict[int, object] = {}
    sites = symbol_sites(program) if program.has_symbols() else None
    for k, eqn in enumerate(program.eqns):
        params = eqn.params
        if sites is not None and contains_sym(params):
            params = resolve(params, sizes)
        outs = apply(eqn.prim, *[env[v] for v in eqn.inputs], **params)
        for v, o in zip(eqn.outputs, outs):
            env[v] = o
        if sites is not None:
            for j, ax, sym in sites[k]:
                sizes[sym] = outs[j].shape[ax]
    return [None if v is None else env[v] for v in program.outputs]
