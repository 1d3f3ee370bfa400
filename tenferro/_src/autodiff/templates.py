"""Derivative templates: a primitive's JVP rule compiled once per signature.

For a primitive application with given params, input avals and set of differentiated inputs,
the JVP rule is traced symbolically (into IR) with the primal output known in advance (the
rule's own call to the primitive is answered with the recorded outputs instead of recomputing
them). That gives the *JVP program*, linear in the tangents; its transpose
(``ir.transpose.transpose_program``) is the VJP program: reverse mode is exactly
transpose-of-linearize, derived from the one rule, never hand-written.

The template also records which primal inputs/outputs the VJP program reads: that is all a tape
node has to keep alive (residual computations such as ``cos(x)`` for ``sin`` are redone in the
backward pass from those saved values, as PyTorch does).
"""

from __future__ import annotations

from chainrules import Zero
from chainrules.core import out_avals
from chainrules.dtypes import is_inexact

from ..caches import BoundedCache
from ..ir.compile import compile_program
from ..ir.passes import cse, dce, fold_shapes
from ..ir.program import IRBuilder, Program, Var, params_key, used_vars
from ..ir.transpose import linear_eqn_mask, transpose_program


class _MemoBuilder(IRBuilder):
    """Records equations, but answers the primitive being differentiated with its outputs."""

    def __init__(self, prim, xs, params, ys):
        super().__init__()
        self.memo = (prim, xs, params, ys)

    def bind(self, prim, *args, **params):
        mprim, xs, mparams, ys = self.memo
        if (
            prim is mprim
            and len(args) == len(xs)
            and all(a is x for a, x in zip(args, xs))
            and params == mparams
        ):
            return prim.unpack(ys)
        return super().bind(prim, *args, **params)


class Template:
    """Compiled derivative of one primitive signature (see module docstring)."""

    __slots__ = (
        "prim", "params", "in_avals", "out_avals", "n_out", "nonzero_in", "nonzero_out",
        "saved_in", "saved_out", "_xs", "_ys", "_jvp_full", "_vjp", "_vjp_fn",
        "mask1", "single_result", "one_output",
    )

    def __init__(self, prim, params, in_avals, nonzero_in):
        self.prim, self.params = prim, params
        self.in_avals = tuple(in_avals)
        self.out_avals = out_avals(prim, in_avals, params)
        self.n_out = len(self.out_avals)
        self.nonzero_in = tuple(nz and is_inexact(a.dtype) for nz, a in zip(nonzero_in, in_avals))
        xs = [Var(a) for a in self.in_avals]
        ys = [Var(a) for a in self.out_avals]
        ts = [Var(a) if nz else Zero(a) for a, nz in zip(self.in_avals, self.nonzero_in)]
        b = _MemoBuilder(prim, xs, params, ys)
        _, touts = prim.jvp(b, xs, ts, **params)
        tins = [t for t in ts if type(t) is Var]
        linear_ids = {id(t) for t in tins}
        linear_eqn_mask(b.eqns, linear_ids)
        tvars = []
        for i, tv in enumerate(prim.as_list(touts)):
            if type(tv) is Zero:
                tvars.append(None)
            elif id(tv) in linear_ids:
                tvars.append(tv)
            else:
                raise AssertionError(
                    f"jvp rule of {prim.name}: tangent output {i} does not depend on the tangents "
                    f"(return Zero instead)"
                )
        self._xs, self._ys = xs, ys
        # (primal inputs, primal outputs, tangents) -> tangent outputs
        self._jvp_full = Program(xs + ys + tins, b.eqns, tvars)
        self.nonzero_out = tuple(v is not None for v in tvars)
        self._vjp, self._vjp_fn = {}, {}
        self.mask1 = (True,) if len(tvars) == 1 else None
        # ``impl`` returns one array, not a tuple (read here once per signature, so the eager
        # tape's per-op fast path branches on its template, not on the primitive)
        self.single_result = not prim.multiple_results
        # the eager tape's fast case: one output, which carries a derivative
        self.one_output = self.single_result and self.nonzero_out == (True,)
        # What the derivative reads: everything a tape node keeps alive.
        full = self._transposed((True,) * len(tvars))
        used = used_vars(full.eqns, full.outputs)
        self.saved_in = tuple(i for i, x in enumerate(xs) if id(x) in used)
        self.saved_out = tuple(i for i, y in enumerate(ys) if id(y) in used)

    def _saved_vars(self):
        return [self._xs[i] for i in self.saved_in] + [self._ys[i] for i in self.saved_out]

    def _transposed(self, ct_mask) -> Program:
        n_primal = len(self._xs) + len(self._ys)
        linear = [False] * n_primal + [True] * (len(self._jvp_full.inputs) - n_primal)
        return transpose_program(self._jvp_full, linear, ct_mask)

    def vjp_program(self, ct_mask: tuple) -> Program:
        """Inputs: nonzero cotangents, then saved inputs, then saved outputs.
        Outputs: one cotangent per primal input (``None`` = zero). Simplified by the graph
        passes (repeated residual work such as conj(V) is computed once)."""
        p = self._vjp.get(ct_mask)
        if p is None:
            t = self._transposed(ct_mask)
            n_ct = len(t.inputs) - len(self._xs) - len(self._ys)
            it = iter(t.outputs)
            outs = [next(it) if nz else None for nz in self.nonzero_in]
            p = Program(t.inputs[:n_ct] + self._saved_vars(), t.eqns, outs)
            p = self._vjp[ct_mask] = simplify(p)
        return p

    def vjp_impl(self, ct_mask: tuple):
        """``vjp_program(ct_mask)`` compiled to a function ``run(xp, consts, *inputs)``."""
        f = self._vjp_fn.get(ct_mask)
        if f is None:
            f = self._vjp_fn[ct_mask] = compile_program(self.vjp_program(ct_mask))
        return f


def simplify(program: Program) -> Program:
    return dce(cse(fold_shapes(program)))


_CACHE = BoundedCache("derivative templates", 8192)


def get_template(prim, params, in_avals, nonzero_in) -> Template:
    key = (prim, params_key(params), tuple(in_avals), tuple(nonzero_in))
    t = _CACHE.get(key)
    if t is None:
        t = _CACHE.put(key, Template(prim, params, in_avals, nonzero_in))
    return t
