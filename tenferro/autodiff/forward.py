"""Forward mode: ``jvp`` (and ``hvp``, ``jacfwd``, ``jacrev``, ``hessian`` built on it).

``JVPTrace`` carries (primal, tangent) pairs; each primitive's ``jvp`` rule runs with the
dispatch builder, so both halves are computed one level down, where an enclosing
transformation sees them. Levels keep nested derivatives apart (no perturbation confusion).
"""

from __future__ import annotations

from chainrules import ShapedArray, Zero
from chainrules.dtypes import is_inexact

from ..core.dispatch import Trace, bind, dispatch, new_trace
from ..core.tracer import Tracer
from ..errors import DTypeError, ShapeError
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)

    def _primal_device(self):
        return self.primal.device

    def _concrete(self):
        p = self.primal
        return p._concrete() if isinstance(p, Tracer) else p

    def __repr__(self):
        return f"JVPTracer({self.primal!r}, tangent={self.tangent!r})"

    def _assign(self, new):
        if type(new) is JVPTracer and new._trace is self._trace:
            self.primal, self.tangent = new.primal, new.tangent
        else:
            self.primal, self.tangent = new, Zero(ShapedArray(new.shape, new.dtype))


class JVPTrace(Trace):
    def __init__(self, level):
        self.level = level
        self.finished = False

    def process_primitive(self, prim, args, params):
        primals, tangents, any_t = [], [], False
        for a in args:
            if type(a) is JVPTracer and a._trace is self:
                primals.append(a.primal)
                tangents.append(a.tangent)
                any_t = any_t or type(a.tangent) is not Zero
            else:
                primals.append(a)
                tangents.append(Zero(ShapedArray(a.shape, a.dtype)))
        if not any_t:
            return bind(prim, *primals, **params)
        out, tout = prim.jvp(dispatch, primals, tangents, **params)
        if not prim.multiple_results:
            return out if type(tout) is Zero else JVPTracer(self, out, tout)
        return tuple(
            o if type(t) is Zero else JVPTracer(self, o, t) for o, t in zip(out, tout)
        )


def _check_tangent(p, t):
    if t.shape != p.shape:
        raise ShapeError(f"jvp: tangent shape {t.shape} does not match primal shape {p.shape}.")
    if t.dtype != p.dtype:
        raise DTypeError(f"jvp: tangent dtype {t.dtype} does not match primal dtype {p.dtype}.")


def jvp(f, primals, tangents, has_aux: bool = False):
    """``(f(*primals), J(primals) @ tangents)``: one forward-mode pass.

    ``primals`` and ``tangents`` are tuples (pytrees) of the same structure.
    """
    pflat, ptree = tree_flatten(tuple(primals))
    tflat, ttree = tree_flatten(tuple(tangents))
    if ptree != ttree:
        raise ShapeError(f"jvp: primals {ptree} and tangents {ttree} differ in structure.")
    pflat = [tensor_of(p) for p in pflat]
    tflat = [tensor_of(t, like=p) for p, t in zip(pflat, tflat)]
    with new_trace(JVPTrace) as tr:
        ins = []
        for p, t in zip(pflat, tflat):
            if is_inexact(p.dtype):
                _check_tangent(p, t)
                ins.append(JVPTracer(tr, p, t))
            else:
                ins.append(p)
        out = f(*tree_unflatten(ptree, ins))
        if has_aux:
            out, aux = out
        oflat, otree = tree_flatten(out)
        outs, touts = [], []
        for o in oflat:
            o = tensor_of(o)
            if type(o) is JVPTracer and o._trace is tr:
                outs.append(o.primal)
                touts.append(o.tangent)
            else:
                outs.append(o)
                touts.append(Zero(ShapedArray(o.shape, o.dtype)))
        if has_aux:
            aux = _strip(tr, aux)
    touts = [dispatch.instantiate(t) for t in touts]
    res = tree_unflatten(otree, outs), tree_unflatten(otree, touts)
    return (res + (aux,)) if has_aux else res


def _strip(tr, tree):
    from ..pytree import tree_map

    return tree_map(
        lambda x: x.primal if type(x) is JVPTracer and x._trace is tr else x, tree
    )
