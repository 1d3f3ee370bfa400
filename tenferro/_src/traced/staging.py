"""Staging: run Python code on abstract values and record the primitives into IR.

``StagingTrace`` is the interpreter behind traced mode (as the *base* trace, inside
``tenferro.make_graph``/``jit``) and behind linear maps (``linearize``, ``linear_transpose``,
custom rules: pushed as a transformation level, so values of lower levels become constants of
the program). ``stage`` and ``stage_linear`` are the two entry points.

Functions with their own derivative rules (``custom_vjp``/``custom_jvp``) are staged as one
call equation whose parameter holds the function and its rule as sub-programs, so the rule
survives in the graph. Values such a function closes over that belong to the enclosing
staging become extra operands of the call (closure conversion); they are constants for the
rule, and differentiating through them raises rather than silently giving zero.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from chainrules import ShapedArray, aval_of
from chainrules.core import out_avals

from ..core.calls import (
    CALL_PRIMITIVES,
    StagedJVPCall,
    StagedVJPCall,
    _Staged,
    check_cotangents,
)
from ..core.dispatch import Trace, new_base, new_trace
from ..core.source import note_emitted, user_frame, with_user_line
from ..core.tracer import Tracer
from ..errors import ConcretizationError, GraphError, TenferroError
from ..ir.program import Eqn, Program, Var
from ..ops._base import tensor_of
from ..pytree import tree_flatten


class TracedTensor(Tracer):
    """A value of a traced program: only its shape and dtype are known."""

    __slots__ = ("var",)

    def __init__(self, trace, var: Var):
        self._trace = trace
        self.var = var

    shape = property(lambda self: self.var.aval.shape)
    dtype = property(lambda self: self.var.aval.dtype)
    aval = property(lambda self: self.var.aval)

    @property
    def device(self):
        return None

    def _lower(self):
        made_by = self._trace.producers.get(id(self.var))
        what = f"the output of '{made_by}'" if made_by else "an input"
        raise ConcretizationError(
            f"a traced value ({what}, {self.var.aval}) was used where Python needs a concrete "
            f"value (if/while on it, bool(), float(), .item(), .numpy(), format(), DLPack "
            f"export, or a NumPy function tenferro lacks). "
            f"Traced code cannot branch on data: use tenferro.where(cond, a, b) for elementwise "
            f"choices, or make the argument static (jit(f, static_argnums=...)). "
            f"[at {user_frame()}]"
        )

    def __repr__(self):
        return f"TracedTensor({self.var.aval}, %{self.var.id})"

    def _assign(self, new):
        if id(self.var) in self._trace.input_ids:
            raise GraphError(
                f"in-place operation on an input of a traced function ({self.var.aval}; "
                f"x += v, x[i] = v, x.add_(v), ...): in eager mode it would change the caller's "
                f"tensor, under jit/make_graph it cannot. Write the functional form and return the "
                f"result: y = x + v, or y = x.at[i].set(v). [at {user_frame()}]"
            )
        self.var = self._trace.full_raise(new).var


class StagingTrace(Trace):
    def __init__(self, level=0):
        self.level = level
        self.eqns: list[Eqn] = []
        self.consts: dict[Var, object] = {}
        self._const_ids: dict[int, Var] = {}
        self.producers: dict[int, str] = {}  # id(var) -> primitive name, for error messages
        self.record_source = True
        self.input_ids: set[int] = set()  # the program's inputs: never updated in place

    def new_arg(self, aval: ShapedArray) -> TracedTensor:
        t = TracedTensor(self, Var(aval))
        self.input_ids.add(id(t.var))
        return t

    def to_var(self, a) -> Var:
        """The program value of ``a``: its own variable, or a constant of the program."""
        if type(a) is TracedTensor and a._trace is self:
            return a.var
        v = self._const_ids.get(id(a))
        if v is None:
            v = Var(ShapedArray(a.shape, a.dtype))
            self._const_ids[id(a)] = v
            self.consts[v] = a
        return v

    def pure(self, x):
        return TracedTensor(self, self.to_var(x))

    def process_primitive(self, prim, tracers, params):
        ins = [t.var for t in tracers]
        try:
            avals = out_avals(prim, [v.aval for v in ins], params)
        except TenferroError as e:
            raise with_user_line(e) from None
        return self._emit(prim, ins, params, avals)

    def _emit(self, prim, ins, params, avals) -> list:
        outs = [Var(a) for a in avals]
        src = user_frame() if self.record_source else None
        note_emitted(src)
        self.eqns.append(Eqn(prim, ins, params, outs, src))
        for v in outs:
            self.producers[id(v)] = prim.name
        return [TracedTensor(self, v) for v in outs]

    def process_custom_vjp(self, call, tracers):
        avals = [t.aval for t in tracers]
        shell = _staged_or_in_progress(call, avals)
        if shell is not None:
            return self._emit_call(shell, tracers, [])
        fun, h_fun = stage(call.fun, avals, closure_owner=self)
        shell = StagedVJPCall(call.name, len(tracers), fun, None, None)
        with _in_progress(call, avals, shell):
            fwd, h_fwd = stage(lambda *xs: _concat(call.fwd(*xs)), avals, closure_owner=self)
            n_out = len(fun.outputs)
            res_avals = [v.aval for v in fwd.outputs[n_out:]]
            n_res = len(res_avals)

            def bwd_flat(*rc):
                grads = call.bwd(list(rc[:n_res]), list(rc[n_res:]))
                return check_cotangents(call, grads, avals)

            bwd, h_bwd = stage(bwd_flat, res_avals + [v.aval for v in fun.outputs],
                               closure_owner=self, allow_none=True)
        hoisted = _union(h_fun, h_fwd, h_bwd)
        shell.fun_program = _with_inputs(fun, hoisted, h_fun, after=len(avals))
        shell.fwd_program = _with_inputs(fwd, hoisted, h_fwd, after=len(avals))
        shell.bwd_program = _with_inputs(bwd, hoisted, h_bwd, after=len(res_avals))
        return self._emit_call(shell, tracers, hoisted)

    def process_custom_jvp(self, call, tracers):
        avals = [t.aval for t in tracers]
        shell = _staged_or_in_progress(call, avals)
        if shell is not None:
            return self._emit_call(shell, tracers, [])
        n = len(avals)
        fun, h_fun = stage(call.fun, avals, closure_owner=self)
        shell = StagedJVPCall(call.name, n, fun, None)

        def jvp_flat(*xt):
            return _concat(call.rule(list(xt[:n]), list(xt[n:])))

        with _in_progress(call, avals, shell):
            jvp, h_jvp = stage(jvp_flat, avals + avals, closure_owner=self)
        hoisted = _union(h_fun, h_jvp)
        shell.fun_program = _with_inputs(fun, hoisted, h_fun, after=n)
        shell.jvp_program = _with_inputs(jvp, hoisted, h_jvp, after=n)
        return self._emit_call(shell, tracers, hoisted)

    def _emit_call(self, staged, tracers, hoisted):
        ins = [t.var for t in tracers] + [self.to_var(h) for h in hoisted]
        return self._emit(CALL_PRIMITIVES[staged.kind], ins, {"call": staged}, staged.out_avals)


class _InProgress(threading.local):
    def __init__(self):
        self.calls: dict = {}


_IN_PROGRESS = _InProgress()


def _staged_or_in_progress(call, avals):
    """The staged call to emit for ``call`` without staging it: itself if already staged, or
    the one being staged when a rule calls its own function (a recursive reference, resolved
    by the time anything evaluates it)."""
    if isinstance(call, _Staged):
        return call
    shell = _IN_PROGRESS.calls.get((call.origin, tuple(avals)))
    if shell is not None and len(shell.fun_program.inputs) != shell.n_args:
        raise GraphError(
            f"{call.kind} function {call.name}: its rule calls the function itself, and the "
            f"function closes over traced values; pass those values as arguments."
        )
    return shell


@contextmanager
def _in_progress(call, avals, shell):
    key = (call.origin, tuple(avals))
    _IN_PROGRESS.calls[key] = shell
    try:
        yield
    finally:
        del _IN_PROGRESS.calls[key]


def _concat(pair) -> list:
    outs, rest = pair
    return [tensor_of(o) for o in tree_flatten(outs)[0]] + [
        tensor_of(r) for r in tree_flatten(rest)[0]]


def _union(*lists) -> list:
    seen, out = set(), []
    for lst in lists:
        for h in lst:
            if id(h) not in seen:
                seen.add(id(h))
                out.append(h)
    return out


def _with_inputs(program: Program, hoisted, own, after: int) -> Program:
    """``program`` whose inputs are its first ``after`` inputs, then one input per value in
    ``hoisted`` (the shared closure operands), then the rest of its inputs."""
    own_vars = dict(zip((id(h) for h in own), program.inputs[len(program.inputs) - len(own):]))
    core = program.inputs[: len(program.inputs) - len(own)]
    extra = [own_vars.get(id(h)) or Var(aval_of(h)) for h in hoisted]
    return Program(core[:after] + extra + core[after:], program.eqns, program.outputs,
                   program.consts)


def stage(f, avals, *, closure_owner=None, allow_none=False, name="f"):
    """Run ``f`` (flat tensors in, a flat list out) on abstract inputs at a fresh base; return
    its ``Program`` and the values it closes over that belong to ``closure_owner`` (a staging
    trace) — they are turned into trailing program inputs. ``allow_none``: outputs may be
    ``None`` (symbolic zeros)."""
    st = StagingTrace(level=0)
    with new_base(st):
        ins = [st.new_arg(a) for a in avals]
        outs = f(*ins)
        out_vars = [None if (o is None and allow_none) else st.to_var(tensor_of(o))
                    for o in outs]
    hoisted, consts, extra = [], {}, []
    for v, c in st.consts.items():
        if isinstance(c, Tracer):
            if closure_owner is not None and c._trace is closure_owner:
                hoisted.append(c)
                extra.append(v)
                continue
            raise GraphError(
                f"{name}: a staged function closes over a {type(c).__name__} of an enclosing "
                f"transformation; pass it in as an argument instead."
            )
        consts[v] = c
    program = Program([t.var for t in ins] + extra, st.eqns, out_vars, consts)
    return program, hoisted


def stage_linear(f, avals, *, allow_none=True):
    """Stage ``f`` as a new transformation level: its inputs become program inputs and every
    value of a lower level it touches becomes a constant. Used for linear maps (tangents,
    cotangent rules), whose constants are the residuals of the point they are taken at."""
    with new_trace(StagingTrace) as st:
        st.record_source = False
        ins = [st.new_arg(a) for a in avals]
        outs = f(*ins)
        out_vars = [None if o is None and allow_none else st.to_var(tensor_of(o))
                    for o in outs]
    return Program([t.var for t in ins], st.eqns, out_vars, st.consts)
