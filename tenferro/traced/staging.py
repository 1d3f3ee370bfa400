"""Staging: run Python code on abstract values and record the primitives into IR.

``StagingTrace`` is the interpreter behind traced mode (as the *base* trace, inside
``tenferro.trace``/``jit``) and behind ``linearize``/``linear_transpose`` (pushed as a
transformation level, so values of lower levels become constants of the program).
"""

from __future__ import annotations

from chainrules import ShapedArray
from chainrules.core import out_avals

from ..core.dispatch import Trace
from ..core.source import user_frame, with_user_line
from ..core.tracer import Tracer
from ..errors import ConcretizationError, TenferroError
from ..ir.program import Eqn, Var


class TracedTensor(Tracer):
    """A value of a traced program: only its shape and dtype are known."""

    __slots__ = ("var",)

    def __init__(self, trace, var: Var):
        self._trace = trace
        self.var = var

    shape = property(lambda self: self.var.aval.shape)
    dtype = property(lambda self: self.var.aval.dtype)
    aval = property(lambda self: self.var.aval)

    def _primal_device(self):
        return None

    def _concrete(self):
        made_by = self._trace.producers.get(id(self.var))
        what = f"the output of '{made_by}'" if made_by else "an input"
        raise ConcretizationError(
            f"a traced value ({what}, {self.var.aval}) was used where Python needs a concrete "
            f"value (if/while on it, bool(), float(), .item(), .numpy(), or a NumPy call). "
            f"Traced code cannot branch on data: use tenferro.where(cond, a, b) for elementwise "
            f"choices, or make the argument static (jit(f, static_argnums=...)). "
            f"[at {user_frame()}]"
        )

    def __repr__(self):
        return f"TracedTensor({self.var.aval}, %{self.var.id})"

    def _assign(self, new):
        new = self._trace.to_tracer(new)
        self.var = new.var


class StagingTrace(Trace):
    def __init__(self, level=0):
        self.level = level
        self.finished = False
        self.eqns: list[Eqn] = []
        self.consts: dict[Var, object] = {}
        self._const_ids: dict[int, Var] = {}
        self.producers: dict[int, str] = {}  # id(var) -> primitive name, for error messages
        self.record_source = True

    def new_arg(self, aval: ShapedArray) -> TracedTensor:
        return TracedTensor(self, Var(aval))

    def to_var(self, a) -> Var:
        if type(a) is TracedTensor and a._trace is self:
            return a.var
        v = self._const_ids.get(id(a))
        if v is None:
            v = Var(ShapedArray(a.shape, a.dtype))
            self._const_ids[id(a)] = v
            self.consts[v] = a
        return v

    def to_tracer(self, a) -> TracedTensor:
        if type(a) is TracedTensor and a._trace is self:
            return a
        return TracedTensor(self, self.to_var(a))

    def process_primitive(self, prim, args, params):
        ins = [self.to_var(a) for a in args]
        try:
            avals = out_avals(prim, [v.aval for v in ins], params)
        except TenferroError as e:
            raise with_user_line(e) from None
        outs = [Var(a) for a in avals]
        src = user_frame() if self.record_source else None
        self.eqns.append(Eqn(prim, ins, params, outs, src))
        for v in outs:
            self.producers[id(v)] = prim.name
        res = [TracedTensor(self, v) for v in outs]
        return tuple(res) if prim.multiple_results else res[0]
