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

from . import fusion
from .eval import symbol_sites
from .gcpause import gc_paused
from .passes.liveness import last_uses
from .program import Program

STRAIGHT_LINE_MAX = 2000
"""Programs with more equations than this run in a loop (``_looped``), not as generated code."""


def specialized(eqn, xp):
    """The primitive's ``specialize`` rule applied to ``eqn`` for the namespace ``xp``: a
    callable ``f(*inputs)`` with the layout work done now, or ``None`` (then ``impl`` runs).
    Only for static shapes and parameters; a rule that raises falls back to ``impl``, which
    then reports the problem at run time as it always has."""
    rule = eqn.prim.specialize
    if rule is None or xp is None:
        return None
    if not all(v.aval.is_static for v in eqn.inputs) or (eqn.params and contains_sym(eqn.params)):
        return None
    try:
        return rule(xp, [v.aval for v in eqn.inputs], **eqn.params)
    except Exception:  # noqa: BLE001 - impl runs instead and raises the proper error
        return None


def compile_program(program: Program, xp=None, fuse: bool = False):
    """Compile ``program`` to ``run(xp, consts, *inputs) -> list`` calling the primitives'
    ``impl`` directly, freeing each intermediate at its last use and resolving run-time
    (symbolic) sizes. Used by the graph executor and by the eager tape's derivative templates.

    With ``xp`` (the namespace the program will run with), equations whose primitive has a
    ``specialize`` rule call the callable it returns instead (layout precomputed); the
    function must then always be called with that ``xp``. With ``fuse`` (NumPy arrays only),
    runs of large elementwise equations become one fused region each (``ir.fusion``)."""
    if len(program.eqns) > STRAIGHT_LINE_MAX:
        return _looped(program, xp)
    regions: dict[int, int] = {}
    eng = fusion.engine() if fuse and xp is not None else None
    if eng is not None:
        eqns, spans = fusion.schedule(program.eqns)
        if spans:
            program = Program(program.inputs, eqns, program.outputs, program.consts)
            regions = dict(spans)
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
    if regions:
        last_use = {id(v): k for k, eqn in enumerate(program.eqns) for v in eqn.inputs}
        returned = {id(v) for v in program.outputs if v is not None}
    skip_to = 0
    for k, eqn in enumerate(program.eqns):
        if k < skip_to:
            continue
        if k in regions:
            stop = skip_to = regions[k]
            live_out = {id(v) for e in program.eqns[k:stop] for v in e.outputs
                        if id(v) in returned or last_use.get(id(v), -1) >= stop}
            fn, ins, outs = fusion.region_kernel(program.eqns[k:stop], live_out, last_use,
                                                 k, eng)
            ns[f"f{k}"] = fn
            for j, v in enumerate(outs):
                names[id(v)] = f"v{k}_{j}"
            eqn_at_line[len(lines) + 1] = k
            lhs = "".join(f"v{k}_{j}, " for j in range(len(outs)))
            lines.append(f"    {lhs}= f{k}({', '.join(names[id(v)] for v in ins)})")
            gone = sorted({names[id(v)] for j in range(k, stop) for v in dead[j]
                           if id(v) in names})
            if gone:
                lines.append(f"    del {', '.join(gone)}")
            continue
        fast = specialized(eqn, xp)
        ns[f"f{k}"] = eqn.prim.impl if fast is None else fast
        call = "".join(", " + names[id(v)] for v in eqn.inputs)
        if fast is not None:
            call = call[2:]
        elif eqn.params:
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
        lines.append(f"    {lhs} = f{k}({call})" if fast is not None else
                     f"    {lhs} = f{k}(xp{call})")
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
    run.eqns = program.eqns  # in the order compiled (fusion may reorder)
    return run


def _looped(program: Program, xp=None):
    """``compile_program``'s ``run`` as a loop over the equations (for long programs)."""
    with gc_paused():  # hundreds of thousands of small acyclic objects
        dead = last_uses(program)
        sites = symbol_sites(program)
        steps = [(_with_xp(fast) if (fast := specialized(eqn, xp)) is not None else eqn.prim.impl,
                  tuple(map(id, eqn.inputs)), {} if fast is not None else eqn.params,
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
    run.eqns = program.eqns
    return run


def _with_xp(fast):
    """A specialised callable with ``impl``'s signature (the loop passes ``xp`` first)."""
    return lambda xp, *args: fast(*args)


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
            return None if k is None else getattr(run, "eqns", program.eqns)[k]
        tb = tb.tb_next
    return None

