"""Derivative templates: a primitive's JVP rule compiled once per signature.

For a primitive application with given params, input avals and set of differentiated inputs,
the JVP rule is traced symbolically (into IR) with the primal output known in advance (the rule's
own call to the primitive is answered with the recorded outputs instead of recomputing them).
The traced equations split into *residual* equations (primal-only) and *linear* equations
(on tangents). Transposing the linear ones gives the VJP program: reverse mode is exactly
transpose-of-linearize, derived from the one rule, never hand-written.

The template also records which primal inputs/outputs the derivative reads: that is all a tape
node has to keep alive (residual computations such as ``cos(x)`` for ``sin`` are redone in the
backward pass from those saved values, as PyTorch does).
"""

from __future__ import annotations

from chainrules import Zero
from chainrules.core import out_avals
from chainrules.dtypes import is_inexact

from ..ir.program import IRBuilder, Program, Var, dce, params_key, used_vars
from ..ir.transpose import linear_eqn_mask, transpose_eqns


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
            return tuple(ys) if prim.multiple_results else ys[0]
        return super().bind(prim, *args, **params)


class Template:
    """Compiled derivative of one primitive signature (see module docstring)."""

    __slots__ = (
        "prim", "params", "in_avals", "out_avals", "nonzero_in", "nonzero_out",
        "saved_in", "saved_out", "_xs", "_ys", "_ts", "_touts", "_eqns", "_lin_mask",
        "_linear_ids", "_vjp", "_vjp_fn", "_jvp", "mask1",
    )

    def __init__(self, prim, params, in_avals, nonzero_in):
        self.prim, self.params = prim, params
        self.in_avals = tuple(in_avals)
        self.out_avals = out_avals(prim, in_avals, params)
        self.nonzero_in = tuple(nz and is_inexact(a.dtype) for nz, a in zip(nonzero_in, in_avals))
        xs = [Var(a) for a in self.in_avals]
        ys = [Var(a) for a in self.out_avals]
        ts = [Var(a) if nz else Zero(a) for a, nz in zip(self.in_avals, self.nonzero_in)]
        b = _MemoBuilder(prim, xs, params, ys)
        _, touts = prim.jvp(b, xs, ts, **params)
        if not prim.multiple_results:
            touts = (touts,)
        linear_ids = {id(t) for t in ts if type(t) is Var}
        lin_mask = linear_eqn_mask(b.eqns, linear_ids)
        tvars = []
        for i, tv in enumerate(touts):
            if type(tv) is Zero:
                tvars.append(None)
            elif id(tv) in linear_ids:
                tvars.append(tv)
            else:
                raise AssertionError(
                    f"jvp rule of {prim.name}: tangent output {i} does not depend on the tangents "
                    f"(return Zero instead)"
                )
        self._xs, self._ys, self._ts, self._touts = xs, ys, ts, tvars
        self._eqns, self._lin_mask, self._linear_ids = b.eqns, lin_mask, linear_ids
        self.nonzero_out = tuple(v is not None for v in tvars)
        self._vjp, self._vjp_fn, self._jvp = {}, {}, None
        self.mask1 = (True,) if len(tvars) == 1 else None
        # What the derivative reads, in both directions (vjp with all cotangents, and jvp).
        full = self._build_vjp((True,) * len(tvars), None)
        fwd = self._build_jvp(None)
        used = full[1] | fwd[1]
        self.saved_in = tuple(i for i, x in enumerate(xs) if id(x) in used)
        self.saved_out = tuple(i for i, y in enumerate(ys) if id(y) in used)

    def _saved_vars(self):
        return [self._xs[i] for i in self.saved_in] + [self._ys[i] for i in self.saved_out]

    def _build_vjp(self, ct_mask, saved_vars):
        vb = IRBuilder()
        ct_vars, cts = [], {}
        for tv, on, aval in zip(self._touts, ct_mask, self.out_avals):
            if tv is None or not on:
                continue
            c = Var(aval)
            ct_vars.append(c)
            prev = cts.get(id(tv))
            cts[id(tv)] = c if prev is None else vb.add(prev, c)
        known = {id(v): v for v in self._xs + self._ys}
        residual = []
        for eqn, lin in zip(self._eqns, self._lin_mask):
            if not lin:
                residual.append(eqn)
                known.update((id(v), v) for v in eqn.outputs)
        transpose_eqns(vb, self._eqns, self._lin_mask, self._linear_ids, known, cts)
        outs = [cts.get(id(t)) if type(t) is Var else None for t in self._ts]
        eqns = dce(residual + vb.eqns, outs)
        if saved_vars is None:
            return None, used_vars(eqns, outs)
        return Program(ct_vars + saved_vars, eqns, outs), None

    def _build_jvp(self, saved_vars):
        tin = [t for t in self._ts if type(t) is Var]
        eqns = dce(self._eqns, self._touts)
        if saved_vars is None:
            return None, used_vars(eqns, self._touts)
        return Program(tin + saved_vars, eqns, self._touts), None

    def vjp_program(self, ct_mask: tuple) -> Program:
        """Inputs: nonzero cotangents, then saved inputs, then saved outputs.
        Outputs: one cotangent per primal input (``None`` = zero). Simplified by the graph
        passes (repeated residual work such as conj(V) is computed once)."""
        p = self._vjp.get(ct_mask)
        if p is None:
            p = simplify(self._build_vjp(ct_mask, self._saved_vars())[0])
            self._vjp[ct_mask] = p
        return p

    def vjp_impl(self, ct_mask: tuple):
        """``vjp_program(ct_mask)`` compiled to a function ``run(xp, consts, *inputs)``."""
        f = self._vjp_fn.get(ct_mask)
        if f is None:
            from ..ir.compile import compile_program

            f = self._vjp_fn[ct_mask] = compile_program(self.vjp_program(ct_mask))
        return f

    def jvp_program(self) -> Program:
        """Inputs: nonzero tangents, then saved inputs, then saved outputs.
        Outputs: one tangent per primal output (``None`` = zero)."""
        if self._jvp is None:
            self._jvp = self._build_jvp(self._saved_vars())[0]
        return self._jvp


def simplify(program: Program) -> Program:
    from ..ir.passes import cse, dce, fold_shapes

    return dce(cse(fold_shapes(program)))


_CACHE: dict = {}


def get_template(prim, params, in_avals, nonzero_in, key=None) -> Template:
    if key is None:
        key = (prim, params_key(params), tuple(in_avals), tuple(nonzero_in))
    t = _CACHE.get(key)
    if t is None:
        t = _CACHE[key] = Template(prim, params, in_avals, nonzero_in)
    return t

