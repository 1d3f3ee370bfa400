"""Higher-order primitives: calls of functions that carry their own derivative rules.

``tenferro.custom_vjp`` and ``tenferro.custom_jvp`` functions are bound as one primitive
application each (``custom_vjp_call``/``custom_jvp_call``) whose only parameter is a *call*
object holding the function and its rule as flat functions (lists of tensors in, lists out).
Binding goes to ``Trace.process_custom_vjp``/``process_custom_jvp`` of the right level, so
each interpreter decides what the call means: reverse-mode tapes record one node that runs
the rule, forward mode applies the rule (or the transpose of a VJP rule), staging turns the
function and its rule into sub-programs (a ``Staged*Call``) so that the rule survives in a
graph, is saved and loaded with it, and is used again when the graph is differentiated.

Once staged, the call's functions evaluate its programs by binding, so they run at whatever
level they are called; the executor evaluates the function's program with ``impl``s.
"""

from __future__ import annotations

import numpy as np

from chainrules import Primitive
from chainrules.params import BadParam

from ..errors import GradientError, GraphError, ShapeError, fmt_aval
from ..ir.compile import compile_program
from ..ir.cost import eqn_flops
from ..ir.eval import eval_program
from .dispatch import bind_list
from .eager import EagerTensor, as_eager


class CustomVJPCall:
    """``fun(*xs) -> outs``, ``fwd(*xs) -> (outs, residuals)``, ``bwd(residuals, cts) ->
    one cotangent (or ``None``) per x``; all flat lists of tensors."""

    kind = "custom_vjp"
    n_args = None  # operands past n_args are closure values (staged calls only)

    def __init__(self, name, fun, fwd, bwd, origin=None):
        self.name, self.fun, self.fwd, self.bwd = name, fun, fwd, bwd
        self.origin = origin  # the user's decorated function (recognises recursive calls)

    def __repr__(self):
        return f"{self.kind}({self.name})"


class CustomJVPCall:
    """``fun(*xs) -> outs`` and ``rule(primals, tangents) -> (outs, tangent_outs)``."""

    kind = "custom_jvp"
    n_args = None

    def __init__(self, name, fun, rule, origin=None):
        self.name, self.fun, self.rule = name, fun, rule
        self.origin = origin

    def __repr__(self):
        return f"{self.kind}({self.name})"


class _Staged:
    """Shared by the staged calls: programs evaluated by binding (so every interpreter sees
    their operations), and the function program compiled for the executor. Constants may be
    eager tensors or host arrays (a loaded graph); each path converts what it needs."""

    def _bind(self, program, args):
        if any(not isinstance(c, EagerTensor) for c in program.consts.values()):
            program.consts = {v: c if isinstance(c, EagerTensor) else as_eager(c)
                              for v, c in program.consts.items()}
        return eval_program(program, list(args), bind_list)

    @property
    def out_avals(self):
        return [v.aval for v in self.fun_program.outputs]

    @property
    def n_out(self) -> int:
        return len(self.fun_program.outputs)

    def impl(self, xp, *args):
        if self._compiled is None:
            self._compiled = compile_program(self.fun_program)
        consts = [xp.asarray(c._backend.to_numpy(c._value)) if isinstance(c, EagerTensor)
                  else xp.asarray(c) for c in self.fun_program.consts.values()]
        return self._compiled(xp, consts, *args)

    def flops(self):
        costs = [eqn_flops(e) for e in self.fun_program.eqns]
        return None if None in costs else sum(costs)

    def fun(self, *xs):
        return self._bind(self.fun_program, xs)


class StagedVJPCall(_Staged, CustomVJPCall):
    """A custom-VJP call as programs over operands ``xs + hs`` (``n_args`` arguments, then the
    values the function closes over): ``fun`` (operands -> outs), ``fwd`` (operands -> outs +
    residuals) and ``bwd`` (residuals + hs + cts -> one cotangent per argument, ``None`` = 0).
    The closure values travel with the residuals and get no cotangent."""

    def __init__(self, name, n_args, fun_program, fwd_program, bwd_program):
        self.name, self.n_args = name, n_args
        self.fun_program, self.fwd_program, self.bwd_program = fun_program, fwd_program, bwd_program
        self._compiled = None

    def fwd(self, *ops):
        outs = self._bind(self.fwd_program, ops)
        return outs[: self.n_out], outs[self.n_out:] + list(ops[self.n_args:])

    def bwd(self, res, cts):
        n_closure = len(self.fun_program.inputs) - self.n_args
        grads = self._bind(self.bwd_program, list(res) + list(cts))
        return grads + [None] * n_closure

    @property
    def programs(self) -> dict:
        return {"fun": self.fun_program, "fwd": self.fwd_program, "bwd": self.bwd_program}


class StagedJVPCall(_Staged, CustomJVPCall):
    """A custom-JVP call as programs over operands ``xs + hs`` (``n_args`` arguments, then
    closure values): ``fun`` (operands -> outs) and ``jvp`` (operands + tangents of the
    arguments -> outs + tangent outs)."""

    def __init__(self, name, n_args, fun_program, jvp_program):
        self.name, self.n_args = name, n_args
        self.fun_program, self.jvp_program = fun_program, jvp_program
        self._compiled = None

    def rule(self, primals, tangents):
        outs = self._bind(self.jvp_program, list(primals) + list(tangents[: self.n_args]))
        return outs[: self.n_out], outs[self.n_out:]

    @property
    def programs(self) -> dict:
        return {"fun": self.fun_program, "jvp": self.jvp_program}


def _staged_call_kind(v, _):
    """The kind of a custom-rule call's one parameter: a staged call (graph files hold it in
    their ``calls`` table)."""
    if not isinstance(v, _Staged):
        raise BadParam(f"expected a custom-rule call, got {v!r}")


def _call_primitive(name, process_name):
    p = Primitive(name, multiple_results=True, cse=False, params={"call": _staged_call_kind},
                  cost=lambda ins, outs, *, call: call.flops())

    @p.def_abstract_eval
    def _aval(*avals, call):
        if not isinstance(call, _Staged):
            raise GraphError(f"{name}: only a staged call has a known output shape")
        return call.out_avals

    @p.def_impl
    def _impl(xp, *args, call):
        return call.impl(xp, *args)

    p.process = lambda trace, tracers, params: getattr(trace, process_name)(
        params["call"], tracers)
    return p


custom_vjp_call_p = _call_primitive("custom_vjp_call", "process_custom_vjp")
custom_jvp_call_p = _call_primitive("custom_jvp_call", "process_custom_jvp")
CALL_PRIMITIVES = {"custom_vjp": custom_vjp_call_p, "custom_jvp": custom_jvp_call_p}


def check_closure_operands(call, derivative_flags) -> None:
    """A staged call's closure operands are constants for its rule: refuse to differentiate
    through them rather than silently dropping that part of the derivative."""
    n = call.n_args
    if n is not None and any(derivative_flags[n:]):
        raise GradientError(
            f"{call.kind} function {call.name}: it closes over a value that depends on what is "
            f"being differentiated, and its rule gives no derivative for closed-over values. "
            f"Pass that value to the function as an argument."
        )


def check_cotangents(call, grads, in_avals) -> list:
    """Validate what a ``bwd`` rule returned: one cotangent (or ``None``) per argument, each
    a tensor (an array or a number) of its argument's shape, real for a real argument."""
    grads = list(grads) if isinstance(grads, (tuple, list)) else [grads]
    if len(grads) != len(in_avals):
        raise GradientError(
            f"custom_vjp {call.name}: the backward function returned {len(grads)} cotangents "
            f"for {len(in_avals)} tensor arguments."
        )
    for k, (g, a) in enumerate(zip(grads, in_avals)):
        if g is None:
            continue
        shape, dtype = _shape_and_dtype(g)
        if dtype is None or dtype.kind not in "biufc":
            raise GradientError(
                f"custom_vjp {call.name}: the backward function returned {type(g).__name__} "
                f"{g!r:.40} as the cotangent of input {k} ({fmt_aval(a)}); return a tensor "
                f"of that shape (or None for no gradient)."
            )
        if dtype.kind == "c" and a.dtype.kind != "c":
            raise GradientError(
                f"custom_vjp {call.name}: the backward function returned a complex cotangent "
                f"({dtype}) for the real input {k} ({fmt_aval(a)}); the gradient with respect "
                f"to a real input is real. Return ct.real if the imaginary part is meant to be "
                f"dropped."
            )
        if tuple(shape) != tuple(a.shape):
            raise ShapeError(
                f"custom_vjp {call.name}: a cotangent of shape {tuple(shape)} was returned "
                f"for an argument of shape {tuple(a.shape)}."
            )
    return grads


def _shape_and_dtype(g):
    """``(shape, dtype)`` of a returned cotangent (``dtype`` None when it is not numeric)."""
    if hasattr(g, "shape") and hasattr(g, "dtype"):
        try:
            return tuple(g.shape), np.dtype(g.dtype)
        except TypeError:
            return (), None
    if isinstance(g, (bool, int, float, complex, np.generic)):
        return (), np.asarray(g).dtype
    return (), None


def bind_call(call, *args) -> list:
    """Apply a custom call at the right level (also used to pass it one level down)."""
    return bind_list(CALL_PRIMITIVES[call.kind], *args, call=call)
