"""``custom_vjp``: a function whose reverse-mode derivative the user supplies.

For implicit differentiation (fixed points such as converged CTMRG environments, solvers),
straight-through estimators, or numerically better gradients. Usage, as in JAX::

    @tenferro.custom_vjp
    def f(x, y): ...
    def f_fwd(x, y): return f(x, y), residuals        # any pytree of tensors
    def f_bwd(residuals, ct): return (ct_x, ct_y)      # one cotangent per argument
    f.defvjp(f_fwd, f_bwd)

Reverse-mode traces (the eager tape, ``vjp``/``grad``) record one ``CustomVJPNode`` that calls
``f_bwd``; ``f_fwd`` runs one level down, so its residuals are visible to enclosing
transformations and ``f_bwd``, written with tenferro operations, is itself differentiable
(grad of grad, hvp). Every other interpreter (plain eager, forward mode, graph staging) runs
``f`` itself: forward mode therefore differentiates ``f``'s own operations.
"""

from __future__ import annotations

import functools

from chainrules import ShapedArray
from chainrules.dtypes import is_inexact

from ..core.dispatch import dispatch, top_trace
from ..core.tensor import Tensor
from ..errors import GradientError, ShapeError
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .engine import _SEQ, Node


class CustomVJPNode(Node):
    """A call whose backward pass is a user function of saved residuals and cotangents."""

    __slots__ = ("bwd", "saved", "n_out", "out_avals", "in_avals", "res_tree", "out_tree",
                 "loader")

    def __init__(self, bwd, parents, residuals, res_tree, out_tree, out_avals, in_avals,
                 loader=None):
        self.seq = next(_SEQ)
        self.bwd, self.parents, self.saved, self.res_tree = bwd, parents, residuals, res_tree
        self.out_tree = out_tree
        self.out_avals, self.in_avals = out_avals, in_avals
        self.n_out = len(out_avals)
        self.loader = loader

    def backward(self, cts, ctx):
        if self.saved is None:
            raise GradientError(
                "custom_vjp: trying to backward through the graph a second time (its residuals "
                "were freed). Pass retain_graph=True to the first backward() if needed."
            )
        res, cts = self.loader(self, cts, ctx) if self.loader else (self.saved, cts)
        cts = [dispatch.full(a.shape, 0, a.dtype) if c is None else c
               for c, a in zip(cts, self.out_avals)]
        grads = self.bwd(tree_unflatten(self.res_tree, res), tree_unflatten(self.out_tree, cts))
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        if len(grads) != len(self.in_avals):
            raise GradientError(
                f"custom_vjp: the backward function returned {len(grads)} cotangents for "
                f"{len(self.in_avals)} tensor arguments."
            )
        out = []
        for g, p, a in zip(grads, self.parents, self.in_avals):
            if p is None or g is None:
                out.append(None)
                continue
            g = tensor_of(g)
            if tuple(g.shape) != tuple(a.shape):
                raise ShapeError(
                    f"custom_vjp: a cotangent of shape {g.shape} was returned for an argument "
                    f"of shape {a.shape}."
                )
            out.append(g)
        return self.loader.unload(out, ctx) if self.loader else out

    def release(self):
        self.saved = None


class custom_vjp:  # noqa: N801 - a decorator, named like JAX's
    def __init__(self, fun):
        self.fun = fun
        self.fwd = self.bwd = None
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise GradientError(f"custom_vjp {self.__name__}: call defvjp(fwd, bwd) first.")
        if not all(isinstance(a, Tensor) for a in args):
            args = tuple(tensor_of(a) for a in args)
        out_tree_box = []

        def fun_flat(*xs):
            out = self.fun(*xs)
            leaves, tree = tree_flatten(out)
            out_tree_box[:] = [tree]
            return [tensor_of(o) for o in leaves]

        def fwd_flat(*xs):
            out, res = self.fwd(*xs)
            leaves, tree = tree_flatten(out)
            out_tree_box[:] = [tree]
            res_leaves, res_tree = tree_flatten(res)
            return [tensor_of(o) for o in leaves], res_leaves, res_tree, tree

        top = top_trace(args, f"custom_vjp {self.__name__}")
        outs = top.process_custom_vjp(fun_flat, fwd_flat, self.bwd, args)
        return tree_unflatten(out_tree_box[0], outs)


def record_custom_vjp(fwd_flat, bwd, primals, parents, wrap, loader=None):
    """Run the forward rule and record a ``CustomVJPNode`` (shared by the tapes).
    Returns the wrapped outputs and the node."""
    outs, res, res_tree, out_tree = fwd_flat(*primals)
    in_avals = [ShapedArray(p.shape, p.dtype) for p in primals]
    out_avals = [ShapedArray(o.shape, o.dtype) for o in outs]
    node = CustomVJPNode(bwd, tuple(parents), res, res_tree, out_tree, out_avals, in_avals,
                         loader)
    return [wrap(o, node, i) if is_inexact(o.dtype) else o for i, o in enumerate(outs)], node
