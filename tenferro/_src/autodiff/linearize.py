"""``linearize`` and ``linear_transpose``.

``linearize`` is forward mode with the tangents *staged*: primal work happens now, the linear
tangent computation is recorded as a program whose residuals are constants, so the returned
``jvp_fn`` evaluates the linear map without redoing the primal. ``linear_transpose`` stages a
linear function and transposes it (``ir.transpose.transpose_program``, the same driver reverse
mode uses).
"""

from __future__ import annotations

import numpy as np

from chainrules import ShapedArray, Zero, aval_of
from chainrules.dtypes import is_inexact

from ..core.dispatch import bind_list, dispatch, new_trace
from ..core.eager import EagerTensor
from ..errors import NonLinearError, ShapeError, check_callable
from ..ir.eval import eval_program
from ..ir.transpose import transpose_program
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from ..traced.staging import stage_linear
from .call import call_traced
from .forward import JVPTrace, JVPTracer


def linearize(f, *primals):
    """``(f(*primals), jvp_fn)``; ``jvp_fn(*tangents)`` applies the Jacobian at ``primals``."""
    check_callable("linearize", f)
    flat, tree = tree_flatten(primals)
    flat = [tensor_of(p) for p in flat]
    got = {}

    def tangent_map(*tins):
        with new_trace(JVPTrace) as jt:
            ins = [JVPTracer(jt, p, t) if is_inexact(p.dtype) else p
                   for p, t in zip(flat, tins)]
            outs, got["tree"], _ = call_traced("linearize", f, jt, tree, ins, False)
        got["outs"] = [o.primal for o in outs]
        return [None if type(o.tangent) is Zero else o.tangent for o in outs]

    program = stage_linear(tangent_map, [aval_of(p) for p in flat])
    otree, outs = got["tree"], got["outs"]
    oavals = [aval_of(o) for o in outs]

    def jvp_fn(*tangents):
        tf, ttree = tree_flatten(tangents)
        if ttree != tree:
            raise ShapeError(f"linearize: tangents {ttree} do not match the primals {tree}.")
        tf = [tensor_of(t, like=p) for t, p in zip(tf, flat)]
        res = eval_program(program, tf, bind_list)
        res = [dispatch.full(a.shape, 0, a.dtype) if r is None else r for r, a in zip(res, oavals)]
        return tree_unflatten(otree, res)

    jvp_fn.program = program
    return tree_unflatten(otree, outs), jvp_fn


def linear_transpose(f_lin, *primals):
    """The transpose of the linear function ``f_lin`` at the avals of ``primals``.

    Returns ``ft(ct) -> tuple of input cotangents``. Raises ``NonLinearError`` naming the
    first operation that is not linear in the inputs.
    """
    check_callable("linear_transpose", f_lin)
    flat, tree = tree_flatten(primals)
    avals = [ShapedArray(p.shape, p.dtype) for p in (tensor_of(x) for x in flat)]
    got = {}

    def flat_f(*xs):
        oflat, got["tree"] = tree_flatten(f_lin(*tree_unflatten(tree, xs)))
        return oflat

    program = stage_linear(flat_f, avals)
    otree = got["tree"]
    transposed = transpose_program(program, [True] * len(avals))
    _check_zero_at_zero(program, avals)

    def transposed_fn(ct):
        cflat, ctree = tree_flatten(ct)
        if ctree != otree:
            raise ShapeError(f"linear_transpose: cotangent {ctree} does not match output {otree}.")
        feed = [tensor_of(c) for c, v in zip(cflat, program.outputs) if v is not None]
        res = eval_program(transposed, feed, bind_list)
        res = [dispatch.full(a.shape, 0, a.dtype) if r is None else r for r, a in zip(res, avals)]
        return tree_unflatten(tree, res)

    return transposed_fn


def _check_zero_at_zero(program, avals):
    """A linear map sends 0 to 0: an affine function (``x + 1``) passes the structural check
    (``add`` is linear) but its transpose would silently drop the constant."""


    zeros = [dispatch.full(a.shape, 0, a.dtype) for a in avals]
    for k, r in enumerate(eval_program(program, zeros, bind_list)):
        if r is None or type(r) is not EagerTensor or r._node is not None:
            continue  # symbolic zero, or not a concrete value to inspect
        v = np.asarray(r._backend.to_numpy(r._value))
        if v.size and np.any(v != 0):
            raise NonLinearError(
                f"linear_transpose: the function is not linear: output {k} "
                f"({r.dtype}, shape {tuple(r.shape)}) is not zero at zero inputs (it is affine, "
                f"e.g. x + 1). Transpose its linear part (subtract f(0))."
            )
