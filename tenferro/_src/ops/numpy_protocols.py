"""NumPy's override protocols (NEP 13 ``__array_ufunc__``, NEP 18 ``__array_function__``):
NumPy calls on tenferro tensors run tenferro's functions.

``np.sin(t)``, ``np.sum(t, axis=0)``, ``np.linalg.svd(t)``, ``np.einsum("ij,jk", t, a)``,
``np.concatenate([t, a])`` and ``a + t`` for a NumPy ``a`` run the tenferro function of the same
name, so the result is a tensor, the tape records it and the call works under ``grad``, ``jit``
and ``vmap``. The NumPy name -> tenferro function table is generated once, at the first NumPy
call, from the public namespaces (``numpy`` -> ``tenferro``, ``numpy.linalg`` ->
``tenferro.linalg``, ``numpy.fft`` -> ``tenferro.fft``); the only hand-written entries say
which reduction a ufunc's ``reduce``/``accumulate`` is (``np.add.reduce`` is ``sum``).

Arguments are translated by the two signatures (``_Entry``): the leading required positional
parameters by position (NumPy's ``a`` is tenferro's ``x``), the others by name; NumPy's default
is passed where the two libraries' defaults differ (``np.linalg.svd`` means
``full_matrices=True``). ``out=`` writes the result into a tensor (an in-place update, recorded
like ``x.copy_(result)``) or into a NumPy array (only a result that carries no gradient and is
not traced); ``where=`` of a ufunc is honoured together with ``out=``.

A call tenferro cannot take (a function it lacks, an argument its function has not) falls back
to NumPy on the tensors' values when nothing is lost, returning NumPy's result as NumPy would:
plotting and data libraries keep working on plain tensors. When a value requires grad or is
traced, the fallback would lose the gradient or cannot run: it raises the named error
(``GradientError``, ``ConcretizationError``) naming the NumPy function and the argument, never a
silent conversion. design/interop.md lists the decisions.
"""

from __future__ import annotations

import inspect
import sys
import threading

import numpy as np

from ..core import tensor as _tensor_mod
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..core.tracer import Tracer
from ..errors import DTypeError, GradientError, TenferroError, fmt_aval
from .elementwise import where as select

# (NumPy namespace, tenferro namespace) pairs whose common names are the table
NAMESPACES = (("numpy", "tenferro"), ("numpy.linalg", "tenferro.linalg"),
              ("numpy.fft", "tenferro.fft"))

# Public tenferro callables that are not array functions although a NumPy function has their
# name (``tenferro.load`` loads a graph, not an ``.npy`` file): the implementation packages of
# transformations, traced mode, devices and tensors.
_NOT_ARRAY_FUNCTIONS = tuple(f"tenferro._src.{p}" for p in (
    "traced", "autodiff", "batching", "core", "backends", "fixed_point"))

# What a ufunc's ``reduce``/``accumulate`` method is, by the ufunc's name (NumPy's own
# identities: ``np.add.reduce`` is ``np.sum`` with ``axis=0`` by default).
REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
          "logical_and": "all", "logical_or": "any"}
ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}

# Parameters whose default may differ between the libraries without changing the result:
# tenferro keeps its own (the contraction order of ``einsum`` only changes the speed).
_SPEED_ONLY = frozenset({"optimize"})

# ufunc keywords at these values change nothing (NumPy passes some of them explicitly)
_UFUNC_NEUTRAL = {"casting": "same_kind", "order": "K", "subok": True, "signature": None,
                  "dtype": None}

# operand types that need no NEP 13 check (NumPy's arrays and scalars, Python's numbers)
_PLAIN_TYPES = frozenset({np.ndarray, float, int, complex, bool, np.float64, np.float32,
                          np.int64, np.int32, np.complex128, np.complex64, np.bool_})

_NO_VALUE = getattr(np, "_NoValue", None)
_EMPTY = inspect.Parameter.empty
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class _Tables:
    """The NumPy -> tenferro tables, built once, at the first NumPy call on a tensor."""

    def __init__(self):
        self.functions: dict = {}  # NumPy function -> _Entry
        self.ufuncs: dict = {}  # ufunc -> tenferro function
        self.namespace = None  # the public tenferro module (reductions by name)

    def build(self):
        for np_name, tf_name in NAMESPACES:
            np_mod = np if np_name == "numpy" else getattr(np, np_name.split(".")[1])
            # the public namespace, read (not imported: it is loaded before any tensor exists)
            tf_mod = sys.modules[tf_name]
            for name in dir(np_mod):
                if name.startswith("_"):
                    continue
                g = getattr(tf_mod, name, None)
                f = getattr(np_mod, name, None)
                if not _array_function(g) or f is None or isinstance(f, type) or not callable(f):
                    continue
                if isinstance(f, np.ufunc):
                    self.ufuncs.setdefault(f, g)
                else:
                    self.functions.setdefault(f, _Entry(f, g, f"{np_name}.{name}",
                                                        f"{tf_name}.{name}"))
        self.namespace = sys.modules[NAMESPACES[0][1]]
        return self


def _array_function(g) -> bool:
    if g is None or not callable(g) or isinstance(g, type):
        return False
    return not (getattr(g, "__module__", None) or "").startswith(_NOT_ARRAY_FUNCTIONS)


_tables: _Tables | None = None
_lock = threading.Lock()


def tables() -> _Tables:
    global _tables
    t = _tables
    if t is None:
        with _lock:
            if _tables is None:
                _tables = _Tables().build()
            t = _tables
    return t


class Unsupported(Exception):
    """A NumPy call tenferro's function cannot take: ``why`` says which argument."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class _Entry:
    """One NumPy function and the tenferro function of the same name, with the translation of
    NumPy's arguments into tenferro's, worked out from the two signatures at the first call
    (``prepare``): ``names`` maps each NumPy parameter to tenferro's (``None``: tenferro's
    function has none; ``"**"``: its ``**kwargs``), ``fills`` holds NumPy's defaults that are
    passed because tenferro's differ."""

    def __init__(self, np_func, tf_func, np_name: str, tf_name: str):
        self.np_func, self.tf_func = np_func, tf_func
        self.np_name, self.tf_name = np_name, tf_name
        self.np_sig = self.tf_sig = None
        self.names: dict = {}
        self.fills: dict = {}
        self._prepared = False

    def prepare(self) -> bool:
        """Work out the translation once; ``False`` when a signature cannot be read."""
        if not self._prepared:
            self._prepared = True
            try:
                self.np_sig = inspect.signature(self.np_func)
                self.tf_sig = inspect.signature(self.tf_func)
            except (TypeError, ValueError):  # nothing to translate by: NumPy runs the call
                self.np_sig = self.tf_sig = None
            else:
                self._translate()
        return self.np_sig is not None

    def _translate(self):
        P = list(self.np_sig.parameters.values())
        Q = list(self.tf_sig.parameters.values())
        names = self.names
        i = 0  # the leading required positional parameters correspond by position
        while (i < len(P) and i < len(Q) and _required_positional(P[i])
               and _required_positional(Q[i])):
            names[P[i].name] = Q[i].name
            i += 1
        q_var = next((q.name for q in Q if q.kind == q.VAR_POSITIONAL), None)
        q_kw = any(q.kind == q.VAR_KEYWORD for q in Q)
        free = {q.name for q in Q[i:] if q.kind not in (q.VAR_POSITIONAL, q.VAR_KEYWORD)}
        for p in P[i:]:
            if p.kind == p.VAR_POSITIONAL:
                names[p.name] = q_var
            elif p.kind == p.VAR_KEYWORD:
                names[p.name] = "**" if q_kw else None
            else:
                names[p.name] = p.name if p.name in free else None
        for p in P:  # NumPy's default where tenferro's differs (and it changes the result)
            t = names.get(p.name)
            if t is None or t == "**" or t == q_var or t in _SPEED_ONLY:
                continue
            q = self.tf_sig.parameters[t]
            if (type(p.default) in (bool, int, str) and q.default is not _EMPTY
                    and not _same(p.default, q.default)):
                self.fills[t] = p.default

    def call(self, args, kwargs):
        """tenferro's result for NumPy's call, and the ``out`` argument (or ``None``)."""
        if not self.prepare():
            raise Unsupported(f"{self.tf_name} has no signature to translate the call by")
        tf_params = self.tf_sig.parameters
        bound = self.np_sig.bind(*args, **kwargs)  # NumPy's own TypeError for a wrong call
        given, out = {}, None
        for name, value in bound.arguments.items():
            param = self.np_sig.parameters[name]
            target = self.names.get(name)
            if param.kind == param.VAR_KEYWORD:  # NumPy's **kwargs (ufunc keywords...)
                for k, v in value.items():
                    if k == "out":
                        out = v
                    elif target == "**" or k in tf_params:
                        given[k] = v
                    elif not _is_default(v, _UFUNC_NEUTRAL.get(k, _EMPTY)):
                        raise Unsupported(f"{self.tf_name} takes no argument {k!r}")
            elif param.kind == param.VAR_POSITIONAL:
                if value and target is None:
                    raise Unsupported(f"{self.tf_name} takes no extra positional arguments")
                given[target] = tuple(value)
            elif target is None:
                if name == "out" and value is not None:
                    out = value
                elif name != "like" and not _is_default(value, param.default):
                    raise Unsupported(f"{self.tf_name} takes no argument {name!r}")
            elif not (_is_default(value, param.default) and target not in self.fills
                      and tf_params[target].default is not _EMPTY):
                given[target] = value
            # else: NumPy's default spelled out (``like=`` calls do): tenferro's default
        for t, v in self.fills.items():
            given.setdefault(t, v)
        call_args = []
        for q in tf_params.values():  # positional-only ones and those before *args
            if q.kind == q.VAR_POSITIONAL:
                call_args.extend(given.pop(q.name, ()))
                break
            if q.kind == q.POSITIONAL_ONLY or (q.kind in _POSITIONAL and any(
                    r.kind == r.VAR_POSITIONAL for r in tf_params.values())):
                if q.name in given:
                    call_args.append(given.pop(q.name))
                elif q.default is not _EMPTY:
                    call_args.append(q.default)
                else:
                    break
        try:
            self.tf_sig.bind(*call_args, **given)
        except TypeError as e:  # e.g. np.where(condition) alone: another function's job
            raise Unsupported(f"{self.tf_name} does not take this call ({e})") from None
        return self.tf_func(*call_args, **given), out


def _required_positional(p) -> bool:
    return p.kind in _POSITIONAL and p.default is _EMPTY


def _same(a, b) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def _is_default(value, default) -> bool:
    if value is default or (value is _NO_VALUE and _NO_VALUE is not None):
        return True
    if default is _EMPTY or default is _NO_VALUE:
        return False
    return type(value) is type(default) and type(value) in (bool, int, float, str) and \
        value == default


# ------------------------------------------------------------------------- the protocols
def _foreign(types) -> bool:
    """Another library's array type takes part: let it (or NumPy) decide (NEP 18)."""
    return not all(issubclass(t, (Tensor, np.ndarray)) for t in types)


def array_function(func, types, args, kwargs):
    """``Tensor.__array_function__``."""
    if _foreign(types):
        return NotImplemented
    entry = tables().functions.get(func)
    name = _numpy_name(func)
    if entry is None:
        return _fallback(func, args, kwargs, f"tenferro has no {name.split('.')[-1]}",
                         unconverted=True)
    try:
        result, out = entry.call(args, kwargs)
    except Unsupported as e:
        return _fallback(func, args, kwargs, e.why)
    return result if out is None else write_out(name, result, out)


def array_ufunc(ufunc, method, inputs, kwargs):
    """``Tensor.__array_ufunc__``."""
    t = _tables or tables()
    if method == "__call__" and not kwargs:  # ndarray + tensor and friends: straight on
        fn = t.ufuncs.get(ufunc)
        if fn is not None and all(type(x) in _PLAIN_TYPES or isinstance(x, Tensor)
                                  for x in inputs):
            return fn(*inputs)
    for x in inputs + tuple(_as_tuple(kwargs.get("out"))):
        if (getattr(type(x), "__array_ufunc__", None) is not None and not isinstance(
                x, (Tensor, np.ndarray, np.generic))):
            return NotImplemented  # another library's array: NEP 13 defers to it
    name = f"numpy.{ufunc.__name__}"
    if method == "__call__":
        fn = t.ufuncs.get(ufunc)
        if fn is not None:
            if not kwargs:
                return fn(*inputs)
            try:
                return _ufunc_call(fn, name, inputs, kwargs)
            except Unsupported as e:
                return _fallback(ufunc, inputs, kwargs, e.why)
        return _fallback(ufunc, inputs, kwargs, f"tenferro has no {ufunc.__name__}")
    table = REDUCE if method == "reduce" else ACCUMULATE if method == "accumulate" else {}
    fn = getattr(t.namespace, table.get(ufunc.__name__, ""), None)
    what = f"{name}.{method}"
    if fn is None:
        return _fallback(getattr(ufunc, method), inputs, kwargs, f"tenferro has no {what}", what)
    try:
        result, out = _reduction_call(fn, what, inputs, kwargs)
    except Unsupported as e:
        return _fallback(getattr(ufunc, method), inputs, kwargs, e.why, what)
    return result if out is None else write_out(what, result, out)


def _ufunc_call(fn, name, inputs, kwargs):
    out = kwargs.get("out")
    where = kwargs.get("where", True)
    for k, v in kwargs.items():
        if k not in ("out", "where") and not _is_default(v, _UFUNC_NEUTRAL.get(k, _EMPTY)):
            raise Unsupported(f"tenferro's {name.split('.')[-1]} takes no argument {k!r}")
    if where is not True and out is None:
        raise Unsupported("where= without out= leaves the other entries unspecified")
    result = fn(*inputs)
    if out is None:
        return result
    outs = _as_tuple(out)
    if where is not True:
        result = select(where, result, outs[0])
    return write_out(name, result, out)


def _reduction_call(fn, what, inputs, kwargs):
    if len(inputs) != 1:
        raise Unsupported(f"{what} takes one array")
    params = inspect.signature(fn).parameters
    call = {"axis": kwargs.get("axis", 0)}  # the ufunc methods' default axis is 0
    for k, v in kwargs.items():
        if k in ("axis", "out"):
            continue
        if k in params:
            call[k] = v
        elif not _is_default(v, {"keepdims": False, "dtype": None, "where": True}.get(
                k, _EMPTY)):
            raise Unsupported(f"tenferro's {fn.__name__} takes no argument {k!r}")
    out = kwargs.get("out")
    return fn(inputs[0], **call), (None if out is None else out)


def _as_tuple(out):
    if out is None:
        return ()
    return out if isinstance(out, tuple) else (out,)


def _numpy_name(func) -> str:
    """``numpy.sum``, ``numpy.linalg.svd``, ``numpy.add``: how messages name a NumPy call."""
    if isinstance(func, np.ufunc):
        return f"numpy.{func.__name__}"
    return f"{getattr(func, '__module__', None) or 'numpy'}.{getattr(func, '__name__', func)}"


# ------------------------------------------------------------------- out= and fallbacks
def write_out(name, result, out):
    """NumPy's ``out=``: the result written into a tensor (in place, recorded as
    ``out.copy_(result)``) or into a NumPy array (values only: refused for a result that
    requires grad or is traced). Returns ``out`` (its array, for one result) as NumPy does."""
    outs = _as_tuple(out)
    results = result if isinstance(result, tuple) else (result,)
    if len(outs) != len(results):
        raise DTypeError(f"{name}: out= holds {len(outs)} arrays for {len(results)} results.")
    for o, r in zip(outs, results):
        if isinstance(o, Tensor):
            if not np.can_cast(r.dtype, o.dtype, "same_kind"):
                raise DTypeError(f"{name}: cannot write the {r.dtype} result into out= of "
                                 f"dtype {o.dtype} (NumPy's same_kind casting rule).")
            o.copy_(r)
        elif isinstance(o, np.ndarray):
            np.copyto(o, host_value(r, f"{name}(..., out=<numpy array>)",
                                    "the values would be written into a NumPy array"),
                      casting="same_kind")
        else:
            raise DTypeError(f"{name}: out= must hold tenferro tensors or NumPy arrays, got "
                             f"{type(o).__name__}.")
    return outs if isinstance(result, tuple) else outs[0]


def host_value(x, what: str, why: str):
    """A tensor's values as a NumPy array for a NumPy fallback, or the named error when that
    would lose a gradient (``GradientError``) or cannot run on a traced value."""
    if type(x) is EagerTensor:
        if x._node is not None:
            raise GradientError(
                f"{what}: {why}, which would silently drop the gradient of a tensor that "
                f"requires grad ({fmt_aval(x)}). Call .detach() first if a constant is "
                f"intended, or write the computation with tenferro functions (or a "
                f"tenferro.custom_vjp rule) so it is differentiated."
            )
        return x._host_view()
    if isinstance(x, Tracer):
        try:
            return x._escape(f"{what} ({why})")._host_view()
        except TenferroError as e:
            if what in str(e):
                raise
            raise type(e)(f"{what} ({why}): {e}") from None
    return x


def _convert(x, what, why):
    if isinstance(x, Tensor):
        return host_value(x, what, why)
    if type(x) in (list, tuple):
        return type(x)(_convert(e, what, why) for e in x)
    if type(x) is dict:
        return {k: _convert(v, what, why) for k, v in x.items()}
    return x


def _fallback(func, args, kwargs, why, what=None, unconverted=False):
    """Run NumPy's ``func`` on the values of the tensors among ``args``/``kwargs`` (its result
    is NumPy's), or raise the named error when a gradient would be lost or a value is
    traced. ``unconverted``: a function tenferro lacks may still work on the tensors
    themselves (``np.ndim``, ``np.shape`` read attributes), so before raising NumPy's
    implementation is tried on them; anything it needs beyond attributes raises."""
    what = what or _numpy_name(func)
    reason = f"{why}, so NumPy's would run on the values"
    try:
        cargs, ckwargs = _convert(tuple(args), what, reason), _convert(dict(kwargs), what,
                                                                         reason)
    except TenferroError as err:
        impl = getattr(func, "_implementation", None)
        if not unconverted or impl is None:
            raise
        try:
            return impl(*args, **kwargs)
        except TenferroError:
            raise err from None
    return func(*cargs, **ckwargs)


_tensor_mod._numpy = sys.modules[__name__]
