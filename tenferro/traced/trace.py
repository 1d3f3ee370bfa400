"""``tenferro.trace``: run a function once on abstract inputs and record its graph."""

from __future__ import annotations

import os

import numpy as np

from chainrules import ShapedArray

from ..core.dispatch import new_base
from ..core.eager import EagerTensor
from ..core.source import _PKG_DIRS
from ..core.tensor import Tensor
from ..errors import GraphError, TenferroError
from ..ir.passes import optimize as optimize_program
from ..ir.program import Program
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .graph import Graph
from .staging import StagingTrace


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
    flat, in_tree = tree_flatten(example_args)
    avals = [aval_of_example(x) for x in flat]
    return trace_avals(f, avals, in_tree, name=name, optimize=optimize)


def trace_avals(f, avals, in_tree, *, name=None, optimize=True, static=None) -> Graph:
    st = StagingTrace(level=0)
    with new_base(st):
        ins = [st.new_arg(a) for a in avals]
        try:
            out = f(*tree_unflatten(in_tree, ins))
        except TenferroError as e:
            raise _with_traceback_line(e) from None
        out_flat, out_tree = tree_flatten(out)
        out_vars = [st.to_var(tensor_of(o)) for o in out_flat]
    consts = {}
    for v, c in st.consts.items():
        if not isinstance(c, EagerTensor):
            raise GraphError(
                f"trace: the function closes over a {type(c).__name__} of an enclosing "
                f"transformation; pass it in as an argument instead."
            )
        consts[v] = np.asarray(c._backend.to_numpy(c._value))  # graphs keep host copies
    program = Program([t.var for t in ins], st.eqns, out_vars, consts)
    if optimize:
        program = optimize_program(program)
    return Graph(program, in_tree, out_tree, name or getattr(f, "__name__", "f"))


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
