"""Compile a program to a straight-line Python function that calls each primitive's ``impl``
and deletes every intermediate right after its last use (liveness analysis), so peak memory
is a few live buffers, not one per step. Used by the graph executor and by the eager tape's
derivative templates.

A program of more than ``STRAIGHT_LINE_MAX`` equations runs in a loop over its equations
instead: compiling a Python function costs ~5 kB of memory per line and more than linear time
(a 200,000-equation graph took 12 s and 1.3 GB at its first call), while the loop costs a
microsecond or two per equation, which the primitives' own work dwarfs in a program that
long."""

from __future__ import annotations

from chainrules.symbolic import contains_sym, resolve

from .eval import symbol_sites
from .gcpause import gc_paused
from .passes.liveness import last_uses
from .program import Program

STRAIGHT_LINE_MAX = 2000
"""Programs with more equations than this run in a loop (``_looped``), not as generated code."""


def compile_program(program: Program):
    """Compile ``program`` to ``run(xp, consts, *inputs) -> list`` calling the primitives'
    ``impl`` directly, freeing each intermediate at its last use and resolving run-time
    (symbolic) sizes. Used by the graph executor and by the eager tape's derivative templates."""
    if len(program.eqns) > STRAIGHT_LINE_MAX:
        return _looped(program)
    ns: dict = {}
    names: dict[int, str] = {}
    args = []
    for i, v in enumerate(program.inputs):
        names[id(v)] = f"a{i}"
        args.append(f"a{i}")
    lines = [f"def run(xp, C{''.join(', ' + a for a in args)}):"]
    sites = symbol_sites(program)
    if any(sites):
        lines.append("    D = {}  # run-time sizes of symbolic dimensions")
        ns["_R"] = resolve
    for i, v in enumerate(program.consts):
        names[id(v)] = f"c{i}"
    if program.consts:
        lines.append("    " + "".join(f"c{i}, " for i in range(len(program.consts))) + "= C")
    dead = last_uses(program)
    eqn_at_line: dict[int, int] = {}  # generated line -> equation (to name a failing one)
    for k, eqn in enumerate(program.eqns):
        ns[f"f{k}"] = eqn.prim.impl
        call = "".join(", " + names[id(v)] for v in eqn.inputs)
        if eqn.params:
            ns[f"p{k}"] = eqn.params
            call += f", **_R(p{k}, D)" if contains_sym(eqn.params) else f", **p{k}"
        outs = []
        for j, v in enumerate(eqn.outputs):
            names[id(v)] = f"v{k}_{j}"
            outs.append(f"v{k}_{j}")
        # the assignment target has the structure ``impl`` returns (one output, or a tuple)
        target = eqn.prim.unpack(outs)
        lhs = target if type(target) is str else ", ".join(target) + ","
        eqn_at_line[len(lines) + 1] = k
        lines.append(f"    {lhs} = f{k}(xp{call})")
        for j, ax, sym in sites[k]:
            lines.append(f"    D[{sym}] = {outs[j]}.shape[{ax}]")
        gone = sorted({names[id(v)] for v in dead[k]})
        if gone:
            lines.append(f"    del {', '.join(gone)}")
    ret = ", ".join("None" if v is None else names[id(v)] for v in program.outputs)
    lines.append(f"    return [{ret}]")
    exec("\n".join(lines), ns)  # noqa: S102 - generated from our own IR
    run = ns["run"]
    run.eqn_at_line = eqn_at_line
    return run


def _looped(program: Program):
    """``compile_program``'s ``run`` as a loop over the equations (for long programs)."""
    with gc_paused():  # hundreds of thousands of small acyclic objects
        dead = last_uses(program)
        sites = symbol_sites(program)
        steps = [(eqn.prim.impl, tuple(map(id, eqn.inputs)), eqn.params,
                  bool(eqn.params) and contains_sym(eqn.params), tuple(map(id, eqn.outputs)),
                  eqn.prim.multiple_results, tuple(map(id, dead[k])), tuple(sites[k]))
                 for k, eqn in enumerate(program.eqns)]
    const_ids = [id(v) for v in program.consts]
    input_ids = [id(v) for v in program.inputs]
    output_ids = [None if v is None else id(v) for v in program.outputs]

    def run(xp, C, *args):
        env = dict(zip(const_ids, C))
        env.update(zip(input_ids, args))
        D = {}  # run-time sizes of symbolic dimensions
        # ``k`` is read from this frame by ``failing_eqn`` when an impl raises
        for k, (f, ins, params, symbolic, outs, multiple, gone, produced) in enumerate(  # noqa: B007
                steps):
            r = f(xp, *[env[i] for i in ins], **(resolve(params, D) if symbolic else params))
            if multiple:
                for o, x in zip(outs, r, strict=True):
                    env[o] = x
            else:
                env[outs[0]] = r
            for j, ax, sym in produced:
                D[sym] = env[outs[j]].shape[ax]
            for i in gone:
                del env[i]
        return [None if o is None else env[o] for o in output_ids]

    run.eqn_at_line = None  # a loop: the failing equation is the frame's ``k``
    return run


def failing_eqn(run, program: Program, tb):
    """The equation of ``program`` whose ``impl`` raised, from the traceback ``tb`` of an
    exception out of ``run`` (a function ``compile_program`` made), or ``None``."""
    code = run.__code__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            if run.eqn_at_line is None:  # the loop of ``_looped``
                k = tb.tb_frame.f_locals.get("k")
            else:
                k = run.eqn_at_line.get(tb.tb_lineno)
            return None if k is None else program.eqns[k]
        tb = tb.tb_next
    return None

