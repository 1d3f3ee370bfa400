"""``tenferro.jit``: trace on first call per signature, cache the optimised graph, run it.

The cache key holds the argument structure, every tensor's shape, dtype and device, and the
static arguments. Python numbers passed as dynamic arguments become 0-d tensors (float64,
int64, complex128 or bool), so changing their value does not retrace.
"""

from __future__ import annotations

import functools
from numbers import Number

import numpy as np

from chainrules import ShapedArray

from ..core.tensor import Tensor
from ..errors import GraphError
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .trace import trace_avals


class Jitted:
    def __init__(self, f, static_argnums=(), optimize=True):
        self.f = f
        self.static_argnums = (
            (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        )
        self.optimize = optimize
        self.cache: dict = {}
        self.traces = 0  # how many times f was traced (for tests and diagnostics)
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        n = len(args)
        static_pos = {i % n for i in self.static_argnums} if n else set()
        static = tuple((i, args[i]) for i in sorted(static_pos))
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_pos)
        flat, tree = tree_flatten(dynamic)
        leaves = [_as_leaf(x) for x in flat]
        try:
            key = (tree, tuple(_leaf_key(x) for x in leaves), static,
                   tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError as e:
            raise GraphError(
                f"jit({self.__name__}): static arguments and keyword arguments must be hashable "
                f"({e})."
            ) from None
        graph = self.cache.get(key)
        if graph is None:
            graph = self._trace(tree, leaves, static, kwargs, n)
            self.cache[key] = graph
        return graph(*tree_unflatten(tree, leaves))

    def _trace(self, tree, leaves, static, kwargs, n):
        static_map = dict(static)

        def body(*dyn):
            it = iter(dyn)
            full = [static_map[i] if i in static_map else next(it) for i in range(n)]
            return self.f(*full, **kwargs)

        self.traces += 1
        avals = [ShapedArray(x.shape, x.dtype) for x in leaves]
        return trace_avals(body, avals, tree, name=getattr(self.f, "__name__", "f"),
                           optimize=self.optimize)

    def lower(self, *args, **kwargs):
        """The graph this call would run (tracing it if needed)."""
        self(*args, **kwargs)
        return next(reversed(self.cache.values()))


def _as_leaf(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (Number, np.ndarray, np.generic, list)):
        return tensor_of(x)
    if isinstance(x, (str, type(None))):
        raise GraphError(
            f"jit: a {type(x).__name__} argument must be marked static (static_argnums)."
        )
    return tensor_of(x)


def _leaf_key(x):
    return (tuple(x.shape), x.dtype, getattr(x, "device", None))


def jit(f=None, *, static_argnums=(), optimize: bool = True):
    """Compile ``f``: trace once per signature, optimise the graph, run it on later calls.
    Usable as ``@jit`` or ``jit(f, static_argnums=(1,))``."""
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums, optimize=optimize)
    return Jitted(f, static_argnums, optimize)
