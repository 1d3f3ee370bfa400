"""Reverse mode as a transformation: ``vjp``, ``grad``, ``value_and_grad``.

``TapeTrace`` records each primitive application as a ``TemplateNode`` whose saved values are
the primal values one level down. The backward pass runs the templates' programs through
``bind`` at that level, so the cotangents are themselves differentiable by any enclosing
transformation: grad of grad, jvp of grad (hvp), and so on, with no special cases.
"""

from __future__ import annotations

import numpy as np

from chainrules import ShapedArray
from chainrules.dtypes import is_inexact

from ..core.dispatch import Trace, bind, dispatch, new_trace, top_trace
from ..core.tracer import Tracer
from ..errors import DTypeError, GradientError, ShapeError
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_map, tree_unflatten
from .engine import BindContext, LeafNode, TemplateNode, backward_pass
from .templates import get_template


class TapeTracer(Tracer):
    __slots__ = ("primal", "node", "index")

    def __init__(self, trace, primal, node, index):
        self._trace = trace
        self.primal = primal
        self.node = node
        self.index = index

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)

    def _primal_device(self):
        return self.primal.device

    def _concrete(self):
        p = self.primal
        return p._concrete() if isinstance(p, Tracer) else p

    def __repr__(self):
        return f"TapeTracer({self.primal!r})"

    def _assign(self, new):
        new = self._trace.lift(new)
        self.primal, self.node, self.index = new.primal, new.node, new.index


class TapeTrace(Trace):
    def __init__(self, level):
        self.level = level
        self.finished = False

    def lift(self, x):
        if type(x) is TapeTracer and x._trace is self:
            return x
        return TapeTracer(self, x, None, 0)

    def process_primitive(self, prim, args, params):
        primals, parents, any_parent = [], [], False
        for a in args:
            if type(a) is TapeTracer and a._trace is self:
                primals.append(a.primal)
                if a.node is not None:
                    parents.append((a.node, a.index))
                    any_parent = True
                    continue
            else:
                primals.append(a)
            parents.append(None)
        out = bind(prim, *primals, **params)
        if not any_parent:
            return out
        avals = [ShapedArray(p.shape, p.dtype) for p in primals]
        tmpl = get_template(prim, params, avals, tuple(p is not None for p in parents))
        multi = prim.multiple_results
        outs = out if multi else (out,)
        nzo = tmpl.nonzero_out
        if True not in nzo:
            return out
        saved = [primals[i] for i in tmpl.saved_in] + [outs[i] for i in tmpl.saved_out]
        node = TemplateNode(tmpl, tuple(parents), saved)
        res = [TapeTracer(self, o, node, i) if z else o for i, (o, z) in enumerate(zip(outs, nzo))]
        return tuple(res) if multi else res[0]


    def _split(self, args):
        """(primal values, parents) of arguments; foreign values have no parent here."""
        primals, parents = [], []
        for a in args:
            if type(a) is TapeTracer and a._trace is self:
                primals.append(a.primal)
                parents.append(None if a.node is None else (a.node, a.index))
            else:
                primals.append(a)
                parents.append(None)
        return primals, parents

    def process_checkpoint(self, fn, args, policy):
        from ..ops.creation import get_rng_state
        from .checkpoint import CheckpointNode, run_forward

        primals, parents = self._split(args)
        if all(p is None for p in parents):
            return fn(*primals)
        level = top_trace(primals, "checkpoint").level
        rng = get_rng_state()
        outs, stash = run_forward(fn, primals, policy, level)
        avals = [ShapedArray(o.shape, o.dtype) for o in outs]
        node = CheckpointNode(fn, tuple(parents), primals, avals, rng, policy, stash, level)
        return [TapeTracer(self, o, node, i) if is_inexact(o.dtype) else o
                for i, o in enumerate(outs)]

    def process_custom_vjp(self, fun, fwd, bwd, args):
        from .custom import record_custom_vjp

        primals, parents = self._split(args)
        if all(p is None for p in parents):
            return fun(*primals)
        return record_custom_vjp(fwd, bwd, primals, parents,
                                 lambda o, node, i: TapeTracer(self, o, node, i))[0]


def _inputs(trace, flat):
    ins, leaves = [], []
    for x in flat:
        if is_inexact(x.dtype):
            leaf = LeafNode(None, ShapedArray(x.shape, x.dtype))
            ins.append(TapeTracer(trace, x, leaf, 0))
            leaves.append(leaf)
        else:
            ins.append(x)
            leaves.append(None)
    return ins, leaves


def _lower(trace, x):
    """Split an output of the traced function into (primal, (node, index) or None)."""
    if type(x) is TapeTracer and x._trace is trace:
        return x.primal, (None if x.node is None else (x.node, x.index))
    return x, None


def vjp(f, *primals, has_aux: bool = False):
    """``(out, vjp_fn)`` or ``(out, vjp_fn, aux)``: ``vjp_fn(ct)`` returns one cotangent per
    primal argument (pytrees allowed). Cotangents of complex inputs follow the convention
    dL/dRe z + i dL/dIm z."""
    flat, tree = tree_flatten(primals)
    flat = [tensor_of(x) for x in flat]
    with new_trace(TapeTrace) as tr:
        ins, leaves = _inputs(tr, flat)
        out = f(*tree_unflatten(tree, ins))
        if has_aux:
            out, aux = out
        out_flat, out_tree = tree_flatten(out)
        lowered = [_lower(tr, tensor_of(o)) for o in out_flat]
        if has_aux:
            aux = tree_map(lambda x: _lower(tr, x)[0] if isinstance(x, Tracer) else x, aux)
    out_primals = [p for p, _ in lowered]
    refs = [r for _, r in lowered]

    def vjp_fn(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise GradientError(
                f"vjp: the cotangent structure {ct_tree} does not match the output {out_tree}."
            )
        seeds = []
        for c, p, r in zip(ct_flat, out_primals, refs):
            c = tensor_of(c, like=p)
            if c.shape != p.shape:
                raise ShapeError(f"vjp: cotangent shape {c.shape} != output shape {p.shape}.")
            if c.dtype != p.dtype:
                if not np.can_cast(c.dtype, p.dtype, "same_kind"):
                    raise DTypeError(f"vjp: cotangent dtype {c.dtype} != output dtype {p.dtype}.")
                c = dispatch.convert(c, p.dtype)
            if r is not None:
                seeds.append((r[0], r[1], c))
        got = backward_pass(seeds, BindContext(), retain_graph=True) if seeds else {}
        grads = []
        for x, leaf in zip(flat, leaves):
            g = got.get((id(leaf), 0)) if leaf is not None else None
            grads.append(g[1] if g is not None else dispatch.zeros_like(x))
        return tree_unflatten(tree, grads)

    out_tree_val = tree_unflatten(out_tree, out_primals)
    if has_aux:
        return out_tree_val, vjp_fn, aux
    return out_tree_val, vjp_fn


def _check_scalar_out(out):
    if not hasattr(out, "shape") or out.size != 1:
        raise GradientError(
            f"grad: the function must return a one-element tensor, got "
            f"{getattr(out, 'shape', type(out).__name__)}. Use vjp or jacrev for other outputs."
        )
    if not is_inexact(out.dtype) or out.dtype.kind == "c":
        raise DTypeError(
            f"grad: the function must return a real float value, got {out.dtype}. For complex "
            f"outputs differentiate .real, abs(...)**2, or use vjp."
        )


def value_and_grad(f, argnums=0, has_aux: bool = False):
    """A function returning ``(f(*args), gradient)`` (``((value, aux), gradient)`` with aux)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def wrapped(*args, **kwargs):
        for n in nums:
            if n >= len(args):
                raise GradientError(f"grad: argnums {n} but only {len(args)} positional args.")

        def partial(*diff):
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            return f(*full, **kwargs)

        res = vjp(partial, *[args[n] for n in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        _check_scalar_out(out)
        g = vjp_fn(dispatch.ones_like(out))
        g = g[0] if single else tuple(g)
        return ((out, res[2]) if has_aux else out), g

    wrapped.__name__ = f"value_and_grad({getattr(f, '__name__', 'f')})"
    return wrapped


def grad(f, argnums=0, has_aux: bool = False):
    """The gradient of a real scalar function (complex inputs: dL/dRe z + i dL/dIm z)."""
    vg = value_and_grad(f, argnums, has_aux)

    def wrapped(*args, **kwargs):
        (val, g) = vg(*args, **kwargs)
        if has_aux:
            return g, val[1]
        return g

    wrapped.__name__ = f"grad({getattr(f, '__name__', 'f')})"
    return wrapped
