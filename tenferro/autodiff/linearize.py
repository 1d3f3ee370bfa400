"""``linearize`` and ``linear_transpose``.

``linearize`` is forward mode with the tangents *staged*: primal work happens now, the linear
tangent computation is recorded as a program whose residuals are constants, so the returned
``jvp_fn`` evaluates the linear map without redoing the primal. ``linear_transpose`` stages a
linear function and transposes the recorded equations with the primitives' transpose rules.
"""

from __future__ import annotations

from chainrules import ShapedArray, Zero
from chainrules.dtypes import is_inexact

from ..core.dispatch import bind, dispatch, new_trace
from ..errors import ShapeError
from ..ir.eval import eval_program
from ..ir.program import Program
from ..ir.transpose import linear_eqn_mask, transpose_eqns
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from ..traced.staging import StagingTrace, TracedTensor
from .forward import JVPTrace, JVPTracer


def _apply(prim, vals, params):
    out = bind(prim, *vals, **params)
    return out if prim.multiple_results else (out,)


def linearize(f, *primals):
    """``(f(*primals), jvp_fn)``; ``jvp_fn(*tangents)`` applies the Jacobian at ``primals``."""
    flat, tree = tree_flatten(primals)
    flat = [tensor_of(p) for p in flat]
    with new_trace(StagingTrace) as st:
        st.record_source = False
        tins = [st.new_arg(ShapedArray(p.shape, p.dtype)) for p in flat]
        with new_trace(JVPTrace) as jt:
            ins = [JVPTracer(jt, p, t) if is_inexact(p.dtype) else p for p, t in zip(flat, tins)]
            out = f(*tree_unflatten(tree, ins))
            oflat, otree = tree_flatten(out)
            outs, tvars, oavals = [], [], []
            for o in oflat:
                o = tensor_of(o)
                if type(o) is JVPTracer and o._trace is jt:
                    outs.append(o.primal)
                    t = o.tangent
                    tvars.append(None if type(t) is Zero else st.to_var(t))
                else:
                    outs.append(o)
                    tvars.append(None)
                oavals.append(ShapedArray(o.shape, o.dtype))
    prog = Program([t.var for t in tins], st.eqns, tvars, st.consts)

    def jvp_fn(*tangents):
        tf, ttree = tree_flatten(tangents)
        if ttree != tree:
            raise ShapeError(f"linearize: tangents {ttree} do not match the primals {tree}.")
        tf = [tensor_of(t, like=p) for t, p in zip(tf, flat)]
        res = eval_program(prog, tf, _apply)
        res = [dispatch.full(a.shape, 0, a.dtype) if r is None else r for r, a in zip(res, oavals)]
        return tree_unflatten(otree, res)

    jvp_fn.program = prog
    return tree_unflatten(otree, outs), jvp_fn


def linear_transpose(f_lin, *primals):
    """The transpose of the linear function ``f_lin`` at the avals of ``primals``.

    Returns ``ft(ct) -> tuple of input cotangents``. Raises ``NonLinearError`` naming the
    first operation that is not linear in the inputs.
    """
    flat, tree = tree_flatten(primals)
    avals = [ShapedArray(p.shape, p.dtype) for p in (tensor_of(x) for x in flat)]
    with new_trace(StagingTrace) as st:
        st.record_source = False
        ins = [st.new_arg(a) for a in avals]
        out = f_lin(*tree_unflatten(tree, ins))
        oflat, otree = tree_flatten(out)
        out_vars = [
            o.var if type(o) is TracedTensor and o._trace is st else None for o in oflat
        ]
    eqns, consts = st.eqns, st.consts
    in_ids = {id(t.var) for t in ins}

    def transposed(ct):
        cflat, ctree = tree_flatten(ct)
        if ctree != otree:
            raise ShapeError(f"linear_transpose: cotangent {ctree} does not match output {otree}.")
        linear_ids = set(in_ids)
        lin_mask = linear_eqn_mask(eqns, linear_ids)
        known = {id(v): c for v, c in consts.items()}
        for eqn, lin in zip(eqns, lin_mask):
            if not lin:
                outs = _apply(eqn.prim, [known[id(v)] for v in eqn.inputs], eqn.params)
                known.update((id(v), o) for v, o in zip(eqn.outputs, outs))
        cts = {}
        for v, c in zip(out_vars, cflat):
            if v is not None and id(v) in linear_ids:
                c = tensor_of(c)
                prev = cts.get(id(v))
                cts[id(v)] = c if prev is None else dispatch.add(prev, c)
        transpose_eqns(dispatch, eqns, lin_mask, linear_ids, known, cts)
        res = []
        for t, a in zip(ins, avals):
            c = cts.get(id(t.var))
            res.append(dispatch.full(a.shape, 0, a.dtype) if c is None else c)
        return tree_unflatten(tree, res)

    return transposed
