"""``tenferro.jit``: trace on first call per signature, cache the optimised graph, run it.

The cache key holds the structure of the dynamic arguments (positional and keyword), every
tensor's shape, dtype and device, and the values of the static arguments. Python numbers
passed as dynamic arguments become 0-d tensors (float64, int64, complex128 or bool), so
changing their value does not retrace; keyword arguments are dynamic too (as in JAX) unless
named in ``static_argnames``. The cache is an LRU of ``cache_size`` graphs; a function that
keeps retracing (a shape or static value that changes every call) gets one warning.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections import OrderedDict
from numbers import Number

import numpy as np

from chainrules import ShapedArray

from ..core.tensor import Tensor
from ..errors import GraphError, RetraceWarning, check_callable
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .trace import trace_avals

RETRACE_WARNING_AFTER = 32  # traces of one jitted function before it warns (once)


class Jitted:
    def __init__(self, f, static_argnums=(), static_argnames=(), optimize=True,
                 cache_size=64):
        self.f = f
        self.static_argnums = (
            (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        )
        self.static_argnames = (
            (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
        )
        self.optimize = optimize
        self.cache_size = int(cache_size)
        self.cache: OrderedDict = OrderedDict()
        self.traces = 0  # how many times f was traced (for tests and diagnostics)
        self._lock = threading.Lock()
        self._warned = False
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        graph, dynamic = self._graph_for(args, kwargs)
        return graph(*dynamic)

    def clear_cache(self) -> None:
        self.cache.clear()

    def lower(self, *args, **kwargs):
        """The graph a call with these arguments runs (tracing it if needed)."""
        return self._graph_for(args, kwargs)[0]

    # ------------------------------------------------------------------ internals
    def _graph_for(self, args, kwargs):
        static_pos = self._static_positions(len(args))
        static = tuple((i, _static_key(self, i, args[i])) for i in sorted(static_pos))
        static_kw = tuple(sorted((k, _static_key(self, k, v)) for k, v in kwargs.items()
                                 if k in self.static_argnames))
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_pos)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        if dyn_kwargs:  # the graph takes them as one trailing dict argument
            dynamic = dynamic + (dyn_kwargs,)
        flat, tree = tree_flatten(dynamic)
        leaves = [_as_leaf(self, x) for x in flat]
        key = (tree, tuple(_leaf_key(x) for x in leaves), static, static_kw, bool(dyn_kwargs))
        graph = self.cache.get(key)
        if graph is None:
            with self._lock:  # concurrent first calls trace once
                graph = self.cache.get(key)
                if graph is None:
                    graph = self._trace(tree, leaves, args, kwargs, static_pos, bool(dyn_kwargs))
                    self.cache[key] = graph
                    if len(self.cache) > self.cache_size:
                        self.cache.popitem(last=False)
        self.cache.move_to_end(key)
        return graph, tree_unflatten(tree, leaves)

    def _static_positions(self, n) -> set:
        out = set()
        for i in self.static_argnums:
            if not -n <= i < n:
                raise GraphError(
                    f"jit({self.__name__}): static_argnums {i} is out of range for a call "
                    f"with {n} positional arguments."
                )
            out.add(i % n)
        return out

    def _trace(self, tree, leaves, args, kwargs, static_pos, has_kwargs):
        def body(*dyn):
            dyn_kwargs = dyn[-1] if has_kwargs else {}
            it = iter(dyn[:-1] if has_kwargs else dyn)
            full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
            kw = {k: v for k, v in kwargs.items() if k in self.static_argnames}
            kw.update(dyn_kwargs)
            return self.f(*full, **kw)

        self.traces += 1
        if self.traces > RETRACE_WARNING_AFTER and not self._warned:
            self._warned = True
            warnings.warn(
                f"jit({self.__name__}) has been traced {self.traces} times: an argument's shape, "
                f"dtype, device or a static value changes from call to call. Keep them fixed "
                f"(pad shapes, pass changing numbers as dynamic arguments) or do not jit this "
                f"function.",
                RetraceWarning,
                stacklevel=4,
            )
        avals = [ShapedArray(x.shape, x.dtype) for x in leaves]
        return trace_avals(body, avals, tree, name=getattr(self.f, "__name__", "f"),
                           optimize=self.optimize)


def _as_leaf(jitted, x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (Number, np.ndarray, np.generic, list)):
        return tensor_of(x)
    if isinstance(x, (str, type(None))):
        raise GraphError(
            f"jit({jitted.__name__}): a {type(x).__name__} argument must be marked static "
            f"(static_argnums / static_argnames)."
        )
    return tensor_of(x)


def _static_key(jitted, where, v):
    """A static argument as a cache key: a hashable value. Tensors and arrays are data (and
    mutable: keyed by identity they would give stale results), so they are refused."""
    if isinstance(v, (Tensor, np.ndarray)):
        raise GraphError(
            f"jit({jitted.__name__}): static argument {where!r} is a tensor/array; static "
            f"arguments must be hashable values (numbers, strings, tuples). Pass tensors as "
            f"dynamic arguments."
        )
    try:
        hash(v)
    except TypeError as e:
        raise GraphError(
            f"jit({jitted.__name__}): static argument {where!r} must be hashable ({e})."
        ) from None
    return v


def _leaf_key(x):
    return (tuple(x.shape), x.dtype, getattr(x, "device", None))


def jit(f=None, *, static_argnums=(), static_argnames=(), optimize: bool = True,
        cache_size: int = 64):
    """Compile ``f``: trace once per signature, optimise the graph, run it on later calls.
    Usable as ``@jit`` or ``jit(f, static_argnums=(1,))``. ``cache_size`` bounds the number of
    graphs kept (least recently used first out)."""
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, optimize=optimize,
                                 cache_size=cache_size)
    check_callable("jit", f)
    return Jitted(f, static_argnums, static_argnames, optimize, cache_size)
