"""``tenferro.trace``: run a function once on abstract inputs and record its graph."""

from __future__ import annotations

import os

import numpy as np

from chainrules import ShapedArray

from ..core.source import _PKG_DIRS
from ..core.tensor import Tensor
from ..errors import GraphError, TenferroError, check_callable
from ..ir.passes import optimize as optimize_program
from ..ir.program import Program
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .graph import Graph
from .staging import stage


class ShapeDtype:
    """An abstract example argument for ``trace``: just a shape and a dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype=np.float64):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    def __repr__(self):
        return f"ShapeDtype({self.shape}, {self.dtype.name})"


def aval_of_example(x) -> ShapedArray:
    if isinstance(x, (ShapeDtype, Tensor)):
        return ShapedArray(x.shape, x.dtype)
    t = tensor_of(x)
    return ShapedArray(t.shape, t.dtype)


def trace(f, *example_args, name: str | None = None, optimize: bool = True) -> Graph:
    """Trace ``f`` on abstract versions of ``example_args`` (tensors, arrays, numbers or
    ``ShapeDtype``; pytrees allowed) and return its (optimised) ``Graph``."""
    check_callable("trace", f)
    flat, in_tree = tree_flatten(example_args)
    avals = [aval_of_example(x) for x in flat]
    return trace_avals(f, avals, in_tree, name=name, optimize=optimize)


def trace_avals(f, avals, in_tree, *, name=None, optimize=True) -> Graph:
    name = name or getattr(f, "__name__", "f")
    got = {}

    def flat_f(*xs):
        leaves, got["tree"] = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        return leaves

    try:
        program, _ = stage(flat_f, avals, name=f"trace({name})")
    except TenferroError as e:
        raise _with_traceback_line(e) from None
    consts = {}
    for v, c in program.consts.items():
        if c.requires_grad:
            raise GraphError(
                f"trace({name}): the function closes over a tensor that requires grad "
                f"({c.shape}, {c.dtype}); in a graph it would be a constant and its gradient "
                f"silently zero. Pass it in as an argument (jit(f)(params, x))."
            )
        consts[v] = np.asarray(c._backend.to_numpy(c._value))  # graphs keep host copies
    program = Program(program.inputs, program.eqns, program.outputs, consts)
    if optimize:
        program = optimize_program(program)
    return Graph(program, in_tree, got["tree"], name)


def _with_traceback_line(e: TenferroError) -> TenferroError:
    """Append the innermost user-code line of the traceback (where the bad op was written)."""
    if "[at " in str(e):
        return e
    tb, where = e.__traceback__, None
    while tb is not None:
        fn = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not fn.startswith(_PKG_DIRS):
            code = tb.tb_frame.f_code
            where = f"{code.co_filename}:{tb.tb_lineno} ({code.co_name})"
        tb = tb.tb_next
    if where:
        e.args = (f"{e.args[0] if e.args else ''} [at {where}]",) + tuple(e.args[1:])
    return e
