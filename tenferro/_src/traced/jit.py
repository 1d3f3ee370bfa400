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
import importlib
import os
import pickle
import sys
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
from .graph import Graph
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

    # ------------------------------------------------------- pickling and copying
    def __reduce__(self):
        """Pickle the Python function by reference (its module and name, as pickle does for
        every function: never its code) and the compiled graphs through the graph file format
        (``Graph.__reduce__``), so the unpickled function runs without retracing. A function
        decorated with ``@jit`` at module level is this object under its name there: it
        pickles as that name."""
        graphs = []
        for key, graph in self.cache.items():
            try:
                pickle.dumps(key)  # a pytree node registered with a lambda cannot travel
            except Exception:
                continue  # that signature is traced again on its first call
            graphs.append((key, graph))
        where = _module_attribute(self)
        if where is not None:
            return _jitted_at, (*where, graphs)
        try:
            pickle.dumps(self.f)
        except Exception as e:
            raise GraphError(
                f"pickle: jit({self.__name__}) cannot be pickled because its Python function "
                f"{getattr(self.f, '__qualname__', self.f)!r} cannot be ({type(e).__name__}: "
                f"{e}). pickle stores a function by its module and name, so lambdas and "
                f"functions defined inside other functions cannot be pickled: define it at the "
                f"top level of a module. To ship the compiled computation alone, pickle a "
                f"Graph (jitted.lower(*args)) or save it (graph.save(path), tenferro.load)."
            ) from e
        return _rebuild_jitted, (self.f, self._options(), graphs)

    def __copy__(self):
        return _rebuild_jitted(self.f, self._options(), list(self.cache.items()))

    def __deepcopy__(self, memo):
        # a function deep-copies as itself; compiled graphs are immutable: shared
        return self.__copy__()

    def _options(self) -> dict:
        return dict(static_argnums=self.static_argnums, static_argnames=self.static_argnames,
                    optimize=self.optimize, cache_size=self.cache_size)

    def lower(self, *args, **kwargs):
        """The graph a call with these arguments runs (tracing it if needed)."""
        return self._graph_for(args, kwargs)[0]

    def save(self, path, *args, **kwargs) -> None:
        """Write the graph a call with these example arguments runs to ``path`` (the graph
        file format: ``tenferro.load`` runs it without the Python function)."""
        self.lower(*args, **kwargs).save(path)

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


def _rebuild_jitted(f, options: dict, graphs: list) -> Jitted:
    """Unpickle (or copy) a ``Jitted``: the function, its options and its compiled graphs."""
    out = Jitted(f, **options)
    out.cache.update(graphs)
    return out


def _module_attribute(jitted):
    """``(module, qualified name)`` where ``jitted`` is reachable (``@jit`` at module level)."""
    module, name = getattr(jitted, "__module__", None), getattr(jitted, "__qualname__", "")
    obj = sys.modules.get(module) if module else None
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return (module, name) if obj is jitted else None


def _jitted_at(module: str, name: str, graphs: list) -> Jitted:
    """Unpickle a module-level ``@jit`` function: the object under that name, with the
    pickled compiled graphs it does not have yet."""
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, Jitted):
        raise GraphError(f"unpickling jit({name}): {module}.{name} is no longer a jitted "
                         f"function (a {type(obj).__name__}).")
    for key, graph in graphs:
        obj.cache.setdefault(key, graph)
    return obj


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
    """Compile ``f``: trace it once per signature into an optimised graph, run the graph after.

    On the first call with a new signature (the pytree structure of the arguments, each
    tensor's shape, dtype and device, and the static arguments' values) ``f`` runs once on
    traced tensors; the recorded graph is optimised (folded transposes and reshapes, constant
    folding, common subexpressions, dead code) and cached; later calls with that
    signature run the graph without calling ``f`` again. Usable as ``@jit``, ``jit(f, ...)`` or
    ``@jit(static_argnums=...)``.

    Parameters
    ----------
    f : callable, optional
        The function of tensors (pytrees allowed) to compile. Python numbers passed as
        dynamic arguments become 0-d tensors, so changing their value does not retrace.
    static_argnums : int or tuple of int, optional
        Positional arguments that are compile-time constants (sizes, flags, strings): they
        are part of the cache key and ``f`` sees their Python values; they must be hashable.
    static_argnames : str or tuple of str, optional
        The same for keyword arguments (others are dynamic, as in JAX).
    optimize : bool, optional
        Optimise the traced graph (default True).
    cache_size : int, optional
        The most graphs kept, least recently used first out (default 64). A function that
        keeps retracing warns once (``tenferro.errors.RetraceWarning``).

    Returns
    -------
    callable
        The compiled function (``.lower(*args)`` returns the ``Graph`` a call runs,
        ``.clear_cache()`` empties the cache). It can be differentiated (``grad(jit(f))``),
        jitted inside transformations (``jit(grad(f))``), vmapped and pickled (a function
        defined at module level).

    Raises
    ------
    tenferro.errors.ConcretizationError
        ``f`` uses a traced value where Python needs a number (``if x > 0``, ``float(x)``,
        ``.numpy()``): use ``tenferro.where`` or make that argument static.
    tenferro.errors.GraphError
        ``f`` is not callable; a static argument is a tensor, unhashable, or out of range; a
        non-tensor, non-number argument is not marked static.

    Notes
    -----
    Derivatives of a jitted function are those of the primitives it records, with the
    same conventions at non-differentiable points and for complex inputs as in eager mode
    (both modes share one set of rules). Python side effects (printing, appending to a list)
    happen only while tracing. Data-dependent output shapes (``nonzero``, boolean masks)
    are supported with symbolic sizes (design/symbolic-sizes.md).

    Examples
    --------
    >>> import tenferro as tf
    >>> @tf.jit
    ... def f(x):
    ...     return tf.sum(tf.sin(x) ** 2)
    >>> x = tf.tensor([0.0, 1.0])
    >>> round(float(f(x)), 6)
    0.708073
    >>> tf.grad(f)(x)
    tensor([0.        , 0.90929743])

    Static arguments are Python values inside ``f``:

    >>> power = tf.jit(lambda x, n: x ** n, static_argnums=1)
    >>> power(tf.tensor(2.0), 3)
    tensor(8.)

    Branching on a traced value raises:

    >>> @tf.jit
    ... def g(x):
    ...     return x if x > 0 else -x
    >>> g(tf.tensor(1.0))
    Traceback (most recent call last):
        ...
    tenferro.errors.ConcretizationError: a traced value (the output of 'gt', bool[]) was used ...
    """
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums,
                                 static_argnames=static_argnames, optimize=optimize,
                                 cache_size=cache_size)
    check_callable("jit", f)
    return Jitted(f, static_argnums, static_argnames, optimize, cache_size)


def save(f_or_graph, path, *example_args, **example_kwargs) -> None:
    """Save a graph to ``path``: a ``Graph`` as it is, a jitted or plain function traced for
    ``example_args`` (shapes and dtypes; their values do not matter). ``tenferro.load`` reads
    it back and runs it without the Python code that built it."""
    if not (isinstance(path, (str, bytes, os.PathLike)) or hasattr(path, "write")):
        raise GraphError(f"tenferro.save: path must be a file name or an open binary file, got "
                         f"{type(path).__name__}. Call it as tenferro.save(f, path, "
                         f"*example_args) or tenferro.save(graph, path).")
    if isinstance(f_or_graph, Graph):
        if example_args or example_kwargs:
            raise GraphError("tenferro.save: a Graph is saved as it is; example arguments are "
                         "for a function (pass the function, or drop the arguments).")
        f_or_graph.save(path)
        return
    if not callable(f_or_graph):
        raise GraphError(f"tenferro.save: expected a Graph or a function, got "
                        f"{type(f_or_graph).__name__}. Call it as tenferro.save(f, path, "
                        f"*example_args) or tenferro.save(graph, path).")
    jitted = f_or_graph if isinstance(f_or_graph, Jitted) else Jitted(f_or_graph)
    jitted.save(path, *example_args, **example_kwargs)
