"""``tenferro.make_graph``: run a function once on abstract inputs and record its graph
(JAX's analogue is ``make_jaxpr``)."""

from __future__ import annotations

import functools
import os
import warnings

import numpy as np

from chainrules import ShapedArray

from ..core.source import _PKG_DIRS
from ..core.tensor import Tensor
from ..errors import GraphError, TenferroError, check_callable
from ..ir.passes import optimize as optimize_program
from ..ir.program import Program
from ..ops import matrix_trace
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .graph import Graph
from .staging import stage


class ShapeDtype:
    """An abstract example argument for ``make_graph`` and ``jit``: just a shape and a dtype."""

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


def make_graph(f, *example_args, name: str | None = None, optimize: bool = True) -> Graph:
    """Trace ``f`` once into a ``Graph``: a program you can inspect, run, differentiate and save.

    ``f`` runs on traced tensors of the examples' shapes and dtypes (no values are
    computed); every operation is recorded. Use it to look at what a function computes
    (``print(graph)``, ``graph.summary()``), to save a computation to a file
    (``graph.save(path)``, ``tenferro.load(path)``) or to run it many times without tracing.
    ``jit`` builds the same graphs behind a cache.

    Parameters
    ----------
    f : callable
        The function to trace.
    *example_args : Tensor, array, number, ShapeDtype or pytree
        Values (only their shapes and dtypes are used) or ``tenferro.ShapeDtype(shape,
        dtype)`` descriptions, in ``f``'s positional order.
    name : str, optional
        The graph's name (default: ``f.__name__``).
    optimize : bool, optional
        Optimise the graph (default True).

    Returns
    -------
    Graph
        Callable with arguments of the example shapes and dtypes (``graph(*args)``); it
        differentiates like any function (``grad(graph)``) and has ``in_avals``,
        ``out_avals``, ``num_nodes``, ``summary()``, ``to_dot()``, ``save()``.

    Raises
    ------
    tenferro.errors.ConcretizationError
        ``f`` needs a concrete value (``if x > 0``, ``float(x)``).
    tenferro.errors.GraphError
        ``f`` is not callable, or an example is not a tensor, array, number or ShapeDtype.

    Notes
    -----
    The graph is traced once: a Python branch is taken with the example's static
    information only. Its derivatives follow the same primitive rules (and conventions at
    non-differentiable points and for complex inputs) as eager mode.

    Examples
    --------
    >>> import tenferro as tf
    >>> g = tf.make_graph(lambda x, y: tf.sum(x * y),
    ...                   tf.ShapeDtype((3,), tf.float64), tf.ones(3))
    >>> g.in_avals, g.out_avals
    ([f64[3], f64[3]], [f64[]])
    >>> print(g)  # one line per operation, with the source line that recorded it
    graph <lambda>(%in0:f64[3], %in1:f64[3]) {
      %0:f64[3] = mul(%in0, %in1)    # ...
      %1:f64[] = reduce_sum(%0)  {axes=(0,)}    # ...
      return %1
    }
    >>> g(tf.tensor([1.0, 2.0, 3.0]), tf.ones(3))
    tensor(6.)
    >>> tf.grad(g)(tf.tensor([1.0, 2.0, 3.0]), tf.tensor([4.0, 5.0, 6.0]))
    tensor([4., 5., 6.])
    """
    check_callable("make_graph", f)
    flat, in_tree = tree_flatten(example_args)
    avals = [aval_of_example(x) for x in flat]
    return trace_avals(f, avals, in_tree, name=name, optimize=optimize)


@functools.wraps(matrix_trace)  # NumPy's signature and documentation
def trace(a, *args, **kwargs):
    # ``tenferro.trace`` is NumPy's matrix trace; a function as the first argument is the graph
    # tracer's former name, forwarded to ``make_graph`` with a warning (for one minor version)
    if callable(a) and not isinstance(a, Tensor):
        warnings.warn(
            "tenferro.trace(f, *example_args) is deprecated: tenferro.trace is NumPy's matrix "
            "trace now; call tenferro.make_graph(f, *example_args) to trace a function into a "
            "graph.", DeprecationWarning, stacklevel=2)
        return make_graph(a, *args, **kwargs)
    return matrix_trace(a, *args, **kwargs)


trace.__name__ = trace.__qualname__ = "trace"
trace.__doc__ = matrix_trace.__doc__.replace(
    "NumPy's ``trace``, which\n    ``tenferro.trace`` is", "NumPy's ``trace``") + (
    "\n\n    Called with a function first, ``trace(f, *example_args)`` is the graph tracer's "
    "former name: it forwards to ``make_graph`` with a ``DeprecationWarning`` (for one minor "
    "version).")


def trace_avals(f, avals, in_tree, *, name=None, optimize=True) -> Graph:
    name = name or getattr(f, "__name__", "f")
    got = {}

    def flat_f(*xs):
        leaves, got["tree"] = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        return leaves

    try:
        program, _ = stage(flat_f, avals, name=f"make_graph({name})")
    except TenferroError as e:
        raise _with_traceback_line(e) from None
    consts = {}
    for v, c in program.consts.items():
        if c.requires_grad:
            raise GraphError(
                f"make_graph({name}): the function closes over a tensor that requires grad "
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
