"""Eager mode: ``EagerTensor`` and ``EvalTrace``, the base trace that runs ``impl`` now.

An eager tensor is a concrete array on a device plus, when it requires grad, its place in the
recorded history (``_node``, ``_index``). ``EvalTrace`` only evaluates; when an input has
history and grad mode is on, it hands the operation and its result to the *eager tape*
(``EvalTrace.tape``, installed by ``tenferro.autodiff.eager``: the tape is reverse mode's
business, which sits above this layer). The tensor's autograd surface (``backward``,
``requires_grad_``, ``.grad``) forwards to the same tape.
"""

from __future__ import annotations

import copy as _copy
import functools
import os

import numpy as np

from chainrules import ShapedArray
from chainrules.core import out_avals, params_str
from chainrules.dtypes import is_inexact
from chainrules.symbolic import Sym

from ..backends import Backend, backend_of_array, get_backend
from ..caches import BoundedCache
from ..errors import (
    DeviceError,
    DTypeError,
    GradientError,
    LeakedTracerError,
    LinAlgError,
    ShapeError,
    TenferroError,
    fmt_aval,
)
from . import tensor as _tensor_mod
from .dispatch import _EVAL_TRACE, Trace, state
from .dlpack import export_dlpack
from .tensor import Tensor

CHECK = os.environ.get("TENFERRO_CHECK", "0") not in ("", "0")
"""Validate every eager op with ``abstract_eval`` (the test suite turns this on)."""


class EagerTensor(Tensor):
    """A concrete array on a device, optionally recording operations for ``backward()``."""

    __slots__ = ("_value", "_backend", "_node", "_index", "_grad", "_version", "_view_of",
                 "__weakref__")

    def __init__(self, *args, **kwargs):
        # tensors are made by _wrap (construction is hot); users call tenferro.tensor
        raise TypeError("create eager tensors with tenferro.tensor(...) or tenferro.asarray(...)")

    # ------------------------------------------------------------------ in-place updates
    def _inplace(self, compute, *others):
        """See ``Tensor._inplace``: the version advances before ``compute`` runs, and what the
        operation's own nodes saved of this tensor then points at its old value."""
        version = getattr(self, "_version", None)
        if version is None:
            self._update(compute())
            return
        self._version = version + 1
        old = (self._value, self._backend, self._node, self._index)
        new = compute()
        self._update(new)
        _resave_old_value(self, old, version + 1, new, others)

    def _set_data(self, value):
        """``x.data = value`` (and in-place updates of ``x.data``): replace the values without
        recording anything and without touching the history."""
        with no_grad():
            new = as_eager(_tensor_mod._ops.stop_gradient(value) if isinstance(value, Tensor)
                           else value, like=self)
        if new.shape != self.shape or new.dtype != self.dtype or new.device != self.device:
            raise DTypeError(
                f"x.data = value: the value {new.dtype}{tuple(new.shape)} on {new.device} must "
                f"match the tensor {self.dtype}{tuple(self.shape)} on {self.device}; tenferro "
                f"tensors keep their shape, dtype and device."
            )
        self._value = new._value
        self._version += 1

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple:
        """The sizes of the axes (a tuple of ints)."""
        s = self._value.shape
        return s if s.__class__ is tuple else tuple(s)

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self._value.ndim

    @property
    def dtype(self) -> np.dtype:
        """The NumPy dtype of the elements (whatever the backend's own dtype object)."""
        d = self._value.dtype
        if isinstance(d, np.dtype):  # NumPy and CuPy arrays: already one
            return d
        return self._backend.xp.np_dtype(d)

    @property
    def device(self) -> str:
        """Where the data lives: "cpu", "cuda:N" or "strict:N"."""
        return self._backend.device

    @property
    def backend(self) -> Backend:
        """The array backend (namespace bound to the device) holding the data."""
        return self._backend

    # ------------------------------------------------------------ Python values
    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (a read-only view when the backend is NumPy: writes
        would bypass the version counter the tape relies on)."""
        self._check_leaves_tape(".numpy()", ".detach().numpy()")
        return self._host_view()

    def _check_leaves_tape(self, what: str, fix: str) -> None:
        """Refuse to hand the values out of tenferro (``.numpy()``, DLPack) when this tensor
        requires grad: whatever is computed from them contributes no gradient."""
        if self._node is not None:
            raise GradientError(
                f"{what} on a tensor that requires grad ({fmt_aval(self)}): the array "
                f"leaves the tape, so gradients through it would silently be zero. Use "
                f"{fix} if a constant is intended."
            )

    def _host_view(self) -> np.ndarray:
        a = self._backend.to_numpy(self._value)
        if a.flags.writeable:  # a view of the live buffer (or, per backend, maybe a copy):
            a = a.view()  # never writable, so no write can bypass the version counter
            a.flags.writeable = False
        return a

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def item(self):
        """The single element as a Python number (a host read; not differentiable)."""
        if self.size != 1:
            raise ShapeError(
                f"item: only a one-element tensor converts to a Python scalar; got "
                f"{fmt_aval(self)}."
            )
        return self._backend.to_numpy(self._value).reshape(()).item()

    def tolist(self):
        """Nested Python lists of the elements (a host read; not differentiable)."""
        return self._backend.to_numpy(self._value).tolist()

    def __bool__(self):
        return bool(self.item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, got {fmt_aval(self)}")
        return int(self.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.3f}"``: a one-element tensor formats as its number (as NumPy's 0-d arrays
        and scalars, and PyTorch's 0-d tensors, do); any tensor takes the empty format
        (``str``). A host read; not differentiable."""
        if not spec:
            return str(self)
        if self.size != 1:
            raise ShapeError(
                f"format: the format {spec!r} applies to one-element tensors only, got "
                f"{fmt_aval(self)}; format the entries (e.g. [f'{{v:{spec}}}' for v in "
                f"x.ravel().tolist()])."
            )
        return format(self.item(), spec)

    # ------------------------------------------------ DLPack, pickling and copying
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export for DLPack consumers (``torch.from_dlpack``, ``jax.numpy.from_dlpack``,
        ``np.from_dlpack``, ``cupy.from_dlpack``; the array API standard's protocol): zero-copy
        unless ``copy=True``; ``copy=False`` never copies (``BufferError`` when it would have
        to). The buffer is offered read-only to consumers that understand DLPack 1.0's flag
        (NumPy's array is then read-only, as ``.numpy()``'s). A tensor that requires grad
        refuses, as ``.numpy()`` does. design/interop.md has the details."""
        self._check_leaves_tape("DLPack export (__dlpack__)", "x.detach()")
        return export_dlpack(self._value, stream, max_version, dl_device, copy)

    def __dlpack_device__(self) -> tuple:
        """``(device type, index)`` of the buffer, DLPack's enumeration (CPU: ``(1, 0)``)."""
        return self._value.__dlpack_device__()

    def __reduce_ex__(self, protocol):
        """Pickle the values, dtype, device and ``requires_grad`` (PyTorch's rules: the result
        is a leaf, so a non-leaf's history is not pickled and it comes back as a leaf that
        requires grad; ``.grad`` is not pickled). Marks such as ``nn.Parameter`` are kept."""
        host = self._host_view()  # a read-only view: pickling reads it
        return _rebuild_tensor, (host, self.device, self._node is not None, _kinds_of(self))

    def __copy__(self) -> EagerTensor:
        """``copy.copy``: a new leaf with the same values (the buffer is shared: tenferro never
        writes into a buffer) and the same ``requires_grad``, as PyTorch's ``copy.copy``."""
        return _restore(_wrap(self._value, self._backend), self._node is not None,
                        _kinds_of(self))

    def __deepcopy__(self, memo) -> EagerTensor:
        """``copy.deepcopy``: a new leaf with its own copy of the values, the same
        ``requires_grad`` and a deep copy of ``.grad``, as in PyTorch; like PyTorch, only
        leaves can be deep-copied (a computed tensor's history cannot)."""
        if not self.is_leaf:
            raise GradientError(
                f"deepcopy: only leaf tensors (created by the user, not computed by a recorded "
                f"operation) can be deep-copied, as in PyTorch; this {fmt_aval(self)} tensor "
                f"was computed by '{self.grad_fn}'. Deep-copy .detach() for its values, or "
                f"the leaves it was computed from."
            )
        out = _restore(_wrap(self._backend.asarray_owned(self._value), self._backend),
                       self._node is not None, _kinds_of(self))
        memo[id(self)] = out
        if self._grad is not None:
            out._grad = _copy.deepcopy(self._grad, memo)
        return out

    def __repr__(self):
        body = np.array2string(
            self._backend.to_numpy(self._value), separator=", ", prefix="tensor("
        )
        extra = []
        if self.dtype not in (np.dtype("float64"), np.dtype("int64"), np.dtype("bool")):
            extra.append(f"dtype={self.dtype.name}")
        if self.device != "cpu":
            extra.append(f"device={self.device!r}")
        if self._node is not None:
            extra.append("requires_grad=True")
        return f"tensor({body}{''.join(', ' + e for e in extra)})"

    # --------------------------------------------------------- autograd surface
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded on the tape."""
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True):
        """Start (or stop) recording operations on this leaf; returns the tensor."""
        if requires_grad:
            if self._node is None:
                if not is_inexact(self.dtype):
                    raise DTypeError(
                        f"requires_grad: only float and complex tensors can require gradients, "
                        f"got {fmt_aval(self)}; convert with .astype(tenferro.float64)."
                    )
                self._node = EVAL_TRACE.tape.leaf(self)
                self._index = 0
        else:
            if not self.is_leaf:
                raise GradientError(
                    "requires_grad_(False): only leaf tensors can stop requiring grad; use "
                    ".detach() for a non-leaf."
                )
            self._node = None
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not computed by a recorded operation (their ``.grad`` fills)."""
        return self._node is None or self._node.is_leaf

    @property
    def grad(self):
        """The gradient accumulated by ``backward()`` (``None`` before)."""
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, EagerTensor):
                raise DTypeError(
                    f"grad: must be None or a tenferro eager tensor, got {type(value).__name__}."
                )
            if value.shape != self.shape or value.dtype != self.dtype:
                raise ShapeError(
                    f"grad: assigned {fmt_aval(value)} to a tensor {fmt_aval(self)}; the "
                    f"gradient must have the tensor's shape and dtype."
                )
            if value.device != self.device:
                raise DeviceError(
                    f"grad: assigned a gradient on {value.device} to a tensor on "
                    f"{self.device}; move it with .to({self.device!r})."
                )
        self._grad = value

    @property
    def grad_fn(self):
        """The recorded operation that produced this tensor (prints its name), or ``None``."""
        n = self._node
        return None if n is None or n.is_leaf else n

    def detach(self) -> EagerTensor:
        """The same values without history: a new leaf (in-place updates of it are refused:
        they would not reach this tensor, as they would through PyTorch's detach)."""
        out = _wrap(self._value, self._backend)
        out._view_of = "detach()"
        return out

    def clone(self) -> EagerTensor:
        """A copy with its own buffer; differentiable (the gradient passes through)."""
        return _tensor_mod._ops.copy(self)  # the Tensor surface forwards to tenferro.ops

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf requiring grad.

        ``gradient`` is the cotangent (required unless ``self`` has one element).
        The graph is released afterwards unless ``retain_graph`` (default: ``create_graph``).
        With ``create_graph=True`` the backward pass is recorded, so the gradients can be
        differentiated again (reverse-over-reverse).
        """
        if self._node is None:
            raise GradientError(
                f"backward: this tensor ({fmt_aval(self)}) does not require grad and has no "
                f"recorded history. Call requires_grad_() on the inputs before computing it."
            )
        if gradient is None:
            v = self._value
            if v.shape == () and type(v) in _REAL_SEEDABLE and v.dtype.kind == "f":
                # the commonest seed (a real scalar loss): a filled 0-d array, without
                # np.ones' Python wrapper and the checks below (they pass)
                ct = np.empty((), v.dtype)
                ct.fill(1)
                EVAL_TRACE.tape.backward([(self, _wrap(ct, self._backend))],
                                         create_graph if retain_graph is None else retain_graph,
                                         create_graph, inputs)
                return
            if self.size != 1:
                raise GradientError(
                    f"backward: gradient can be created implicitly only for one-element "
                    f"outputs; got {fmt_aval(self)}. Pass gradient= (same shape) or reduce "
                    f"first, e.g. loss.sum().backward()."
                )
            if self.dtype.kind == "c":
                raise GradientError(
                    f"backward: the output {fmt_aval(self)} is complex; the gradient of a "
                    f"complex output needs an explicit gradient= (or use .real / abs(...)**2)."
                )
            ct = _wrap(self._backend.xp.ones(self._value.shape, dtype=self._value.dtype),
                       self._backend)
        else:
            ct = as_eager(gradient, like=self)
            if ct.shape != self.shape or ct.dtype != self.dtype:
                raise ShapeError(
                    f"backward: gradient {fmt_aval(ct)} must match the output {fmt_aval(self)}."
                )
        retain = create_graph if retain_graph is None else retain_graph
        EVAL_TRACE.tape.backward([(self, ct)], retain, create_graph, inputs)

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after ``backward()``."""
        EVAL_TRACE.tape.retain_grad(self)

    def register_hook(self, fn):
        """``fn(grad)`` is called with this tensor's gradient in every backward pass; a
        returned tensor replaces it. Returns a handle with ``remove()``."""
        return EVAL_TRACE.tape.register_hook(self, fn)

    # ----------------------------------------------------------------- in place
    def _assign(self, new):
        if isinstance(new, Tensor) and type(new) is not EagerTensor:
            raise GradientError(
                f"in-place operation: the eager tensor {fmt_aval(self)} would receive a value "
                f"that a transformation differentiates or traces ({type(new).__name__}); it "
                f"cannot become that value in place. Use the functional form, e.g. "
                f"y = y.at[idx].set(v) instead of y[idx] = v, or y = y + v instead of y += v."
            )
        new = as_eager(new, like=self)
        if new.shape != self.shape:
            raise ShapeError(
                f"in-place operation: the result {fmt_aval(new)} does not fit the tensor "
                f"{fmt_aval(self)} being modified."
            )
        if new.dtype != self.dtype:
            raise DTypeError(
                f"in-place operation: the result dtype {new.dtype} cannot be stored in the "
                f"{self.dtype} tensor being modified; cast explicitly."
            )
        if self._node is not None and self._node.is_leaf:
            if state.grad_enabled:
                raise GradientError(
                    f"in-place operation on a leaf tensor that requires grad ({fmt_aval(self)}); "
                    f"wrap parameter updates in `with tenferro.no_grad():`."
                )
            self._value = new._value  # keep the leaf identity
        else:
            self._value, self._node, self._index = new._value, new._node, new._index
        self._version += 1


def _wrap(value, backend, node=None, index=0) -> EagerTensor:
    t = EagerTensor.__new__(EagerTensor)
    t._value = value
    t._backend = backend
    t._node = node
    t._index = index
    t._grad = None
    t._version = 0
    return t


def as_eager(x, like: EagerTensor | None = None, dtype=None) -> EagerTensor:
    """Turn arrays, scalars and nested lists into an ``EagerTensor`` (on ``like``'s device).
    Arrays are copied: the tensor never shares the caller's buffer (``Backend.asarray_owned``),
    so a later write into that array cannot change a value the tape recorded."""
    if type(x) is EagerTensor:
        return x
    if isinstance(x, Tensor):
        raise TypeError(f"expected an eager tensor, got a {type(x).__name__}")
    backend = like._backend if like is not None else None
    if backend is None:  # host data (NumPy, Python) goes to the default device
        backend = ((not isinstance(x, (np.ndarray, np.generic)) and backend_of_array(x))
                   or get_backend(state.default_device))
    if x is None or isinstance(x, (str, bytes, dict, set, type, np.dtype)):
        raise DTypeError(
            f"expected a tensor, array or number, got {type(x).__name__} {x!r:.40}"
            + (f" (next to a {like.dtype} tensor of shape {tuple(like.shape)})"
               if like is not None else "") + "; pass a numeric value."
        )
    try:
        if dtype is None and like is not None and np.ndim(x) == 0 and not hasattr(x, "dtype"):
            dtype = np.result_type(like.dtype, x)
        arr = backend.asarray_owned(x, dtype=dtype)  # never the caller's buffer
    except (TypeError, ValueError, OverflowError) as e:  # ragged lists, huge ints, objects
        raise DTypeError(
            f"cannot convert the {type(x).__name__} {x!r:.40} to a tensor ({type(e).__name__}: "
            f"{e}); give a number or a rectangular array of numbers."
        ) from None
    if getattr(arr.dtype, "kind", "f") not in "biufc":
        raise DTypeError(
            f"expected numeric data, got an array of dtype {arr.dtype}; tensors hold bool, "
            f"integer, float or complex numbers (convert structured/object/string data first)."
        )
    return _wrap(arr, backend)


# --------------------------------------------------------------- pickling helpers
PICKLE_KINDS: dict = {}
"""Marks that a layer above puts on eager tensors and that pickles and copies keep:
name -> ``(has_mark(t), mark(t))`` (``nn`` registers ``"parameter"``: ``nn.Parameter``)."""


def _kinds_of(t) -> tuple:
    return tuple(k for k, (has, _) in PICKLE_KINDS.items() if has(t)) if PICKLE_KINDS else ()


def _restore(t: EagerTensor, requires_grad: bool, kinds: tuple) -> EagerTensor:
    if requires_grad:
        t.requires_grad_()
    for k in kinds:
        mark = PICKLE_KINDS.get(k)
        if mark is not None:
            mark[1](t)
    return t


def _rebuild_tensor(values, device: str, requires_grad: bool, kinds: tuple = ()) -> EagerTensor:
    """Unpickle an eager tensor (``EagerTensor.__reduce_ex__``): ``values`` (a NumPy array)
    on ``device``, a leaf; the buffer is copied, so it is never shared with the pickle's."""
    backend = get_backend(device)
    return _restore(_wrap(backend.asarray_owned(values), backend), requires_grad, kinds)


# ------------------------------------------------------------------- the trace
class Signature:
    """What eager mode learned about one application signature (primitive, params, backend,
    input shapes and dtypes): the output avals ``abstract_eval`` promised (``None`` until it
    has run: primitives with ``validate_eager=False`` are not validated eagerly). One lookup
    per op serves validation and, through the entry's identity, the tape's template cache."""

    __slots__ = ("expected", "__weakref__")

    def __init__(self):
        self.expected = None


_SIGNATURES = BoundedCache("eager validated signatures", 16384)
# The last params seen per (primitive, backend, input shapes and dtypes), with their entry:
# comparing two small dicts is cheaper than building and hashing the params key, and an op
# usually repeats with the same params (a loop body).
_LAST = BoundedCache("eager last signatures", 4096)
# (primitive, operand dtypes) that passed abstract_eval once: primitives that skip per-signature
# validation (validate_eager=False) rely on their impl for shape errors, but NumPy accepts
# dtypes tenferro refuses (max of complex numbers, arithmetic on bools), so eager mode checks
# each dtype combination once, as traced mode does every time.
_DTYPES_SEEN = BoundedCache("eager validated dtypes", 4096)


def _signature(prim, params, backend, vals):
    """The cached ``Signature`` of this application, or ``None`` when it cannot be cached
    (unhashable parameters, or parameters that are data such as ``full``'s fill value)."""
    n = len(vals)
    if n == 1:
        v = vals[0]
        akey = (prim, backend, v.shape, v.dtype)
    elif n == 2:
        v, w = vals
        akey = (prim, backend, v.shape, v.dtype, w.shape, w.dtype)
    else:
        akey = [prim, backend]
        for v in vals:
            akey.append(v.shape)
            akey.append(v.dtype)
        akey = tuple(akey)
    last = _LAST.get(akey)
    if last is not None:
        try:
            if last[0] == params:  # what equal hashable keys would say
                return last[1]
        except ValueError:  # an array among the new params: the hashing path decides
            pass
    if params:
        if "value" in params:
            return None
        pk = tuple(params.items()) if len(params) == 1 else tuple(sorted(params.items()))
    else:
        pk = ()
    key = (pk, akey)
    try:
        entry = _SIGNATURES.get(key)
    except TypeError:  # unhashable parameters: nothing is cached for them
        return None
    if entry is None:
        entry = _SIGNATURES.put(key, Signature())
    _LAST.put(akey, (params, entry))
    return entry


# NumPy value types whose 0-d values EagerTensor.backward seeds directly (real floating)
_REAL_SEEDABLE = frozenset({np.ndarray, np.float64, np.float32, np.float16})


class EvalTrace(Trace):
    """The base trace of eager mode: run each primitive's ``impl`` now."""

    level = 0
    tape = None  # the eager tape (tenferro.autodiff.eager installs it)

    eager = True

    def lift_all(self, args):
        return args  # eager values are checked in eval, nothing to lift

    def process_primitive(self, prim, args, params):
        return prim.as_list(self.eval(prim, args, params))

    def eval(self, prim, args, params, grad=None):
        """Run ``prim`` now; the output (a tuple for several), recorded if it needs to be.
        ``grad``: whether grad mode is on, when the caller knows (``None``: look it up)."""
        n = len(args)
        if n == 1:  # unary, shape, reduction and indexing ops: no loop
            a = args[0]
            if type(a) is not EagerTensor:
                a = _foreign_arg(prim, a)
            backend = a._backend
            vals = (a._value,)
            recording = a._node is not None
        elif n == 2:  # binary ops
            a, b = args
            if type(a) is not EagerTensor:
                a = _foreign_arg(prim, a)
            if type(b) is not EagerTensor:
                b = _foreign_arg(prim, b)
            backend = a._backend
            if b._backend is not backend:
                raise _device_error(prim, backend, b._backend)
            vals = (a._value, b._value)
            recording = a._node is not None or b._node is not None
        else:
            backend = None
            vals = []
            recording = False
            for a in args:
                if type(a) is not EagerTensor:
                    a = _foreign_arg(prim, a)
                if backend is None:
                    backend = a._backend
                elif a._backend is not backend:
                    raise _device_error(prim, backend, a._backend)
                vals.append(a._value)
                if a._node is not None:
                    recording = True
            if backend is None:
                backend = get_backend(params.get("device") or state.default_device)
        if recording:
            recording = state.grad_enabled if grad is None else grad
        validate = CHECK or prim.validate_eager
        sig = expected = None
        if validate or recording:  # once per signature: abstract_eval is pure
            if n == 1:  # _signature's memo hit, inline (the commonest case)
                v = vals[0]
                last = _LAST.get((prim, backend, v.shape, v.dtype))
                try:
                    if last is not None and last[0] == params:
                        sig = last[1]
                except ValueError:
                    pass
            if sig is None:
                sig = _signature(prim, params, backend, vals)
            if sig is not None:
                expected = sig.expected
            if validate and expected is None:
                expected = _check(prim, vals, params, backend)
                if sig is not None:
                    sig.expected = expected
        elif 0 < n < 3:  # not validated per signature: still refuse dtypes abstract_eval refuses
            # the backend before the dtypes: array_api_strict dtypes must not meet NumPy's
            key = ((prim, backend, vals[0].dtype) if n == 1
                   else (prim, backend, vals[0].dtype, vals[1].dtype))
            if key not in _DTYPES_SEEN:
                _check(prim, vals, params, backend)  # the named error for a wrong dtype
                _DTYPES_SEEN.put(key, True)
        elif n:
            _check(prim, vals, params, backend)
        try:
            out = prim.impl(backend.xp, *vals, **params)
        except TenferroError:
            raise
        except Exception as e:
            _check(prim, vals, params, backend)  # raises the clear error if inputs are bad
            raise impl_error(prim, _avals(vals, backend), params, backend, e) from e
        out_backend = backend
        if prim.out_device is not None:  # a transfer: the output lives elsewhere
            out_backend = get_backend(prim.out_device(params))
        if CHECK:
            _check_outputs(prim, out, expected, out_backend)
        if recording:
            return self.tape.record_primitive(prim, params, args, vals, out, out_backend, backend,
                                              sig)
        # Reads the fact itself rather than ``prim.unpack``/``as_list``: this line runs for
        # every eager operation, and the calls and list cost 0.4-0.5 us (+11-21% on small
        # no-grad ops; benchmarks/README.md).
        if prim.multiple_results:
            return tuple([_wrap(o, out_backend) for o in out])
        return _wrap(out, out_backend)

    # Functions with their own derivative rules, and checkpoints, concern only the tape.
    def process_checkpoint(self, fn, args, policy):
        if not state.grad_enabled or all(a._node is None for a in args):
            return fn(*args)
        return self.tape.record_checkpoint(fn, args, policy)

    def process_custom_vjp(self, call, args):
        if not state.grad_enabled or all(a._node is None for a in args):
            return call.fun(*args)
        return self.tape.record_custom_vjp(call, args)

    def process_custom_jvp(self, call, args):
        if not state.grad_enabled or all(a._node is None for a in args):
            return call.fun(*args)
        return self.tape.record_custom_jvp(call, args)


EVAL_TRACE = EvalTrace()
_EVAL_TRACE.append(EVAL_TRACE)


def _foreign_arg(prim, a):
    if isinstance(a, Tensor):
        raise LeakedTracerError(
            f"{prim.name}: got a {type(a).__name__} outside the transformation or trace that "
            f"created it. Values of a trace are only valid while it runs; return them as outputs."
        )
    raise TypeError(f"{prim.name}: expected tensors, got {type(a).__name__}")


def _device_error(prim, backend, other):
    return DeviceError(
        f"{prim.name}: operands are on different devices ({backend.device} and "
        f"{other.device}); move one with .to({backend.device!r}) first."
    )


def _avals(vals, backend):
    cd = backend.canonical_dtype
    return [ShapedArray(v.shape, cd(v.dtype)) for v in vals]


def check_eager(prim, tensors, params) -> None:
    """Run ``prim``'s ``abstract_eval`` on eager operands (raises its named error)."""
    _check(prim, [t._value for t in tensors], params, tensors[0]._backend)


def _check(prim, vals, params, backend):
    return out_avals(prim, _avals(vals, backend), params)


def _check_outputs(prim, out, expected, backend):
    """TENFERRO_CHECK: an impl must return exactly what its abstract_eval promised."""
    got = _avals(prim.as_list(out), backend)
    for g, e in zip(got, expected):
        # a run-time (symbolic) size promised by abstract_eval matches any concrete size
        shapes_agree = len(g.shape) == len(e.shape) and all(
            isinstance(d, Sym) or d == c for c, d in zip(g.shape, e.shape))
        if not shapes_agree or g.dtype != e.dtype:
            raise AssertionError(
                f"{prim.name}: impl returned {g} but abstract_eval promised {e} "
                f"({backend.name} backend)"
            )


def impl_error(prim, avals, params, backend, e) -> TenferroError:
    """The named error for an ``impl`` that raised on valid-looking operands (eager mode and
    the graph executor alike): the operation, its operands, what NumPy said, and a hint."""
    shapes = ", ".join(fmt_aval(a) for a in avals)
    cls, hint = classify_failure(e)
    return cls(
        f"{prim.name}({shapes}; {params_str(params)}) failed in the {backend.name} backend: "
        f"{type(e).__name__}: {e}. {hint}"
    )


def classify_failure(e: BaseException):
    """``(error class, hint)`` for an exception a backend raised on valid-looking operands."""

    cls, hint = TenferroError, (
        "If the operands are valid, this is a bug in tenferro: please report it with this "
        "message.")
    if isinstance(e, np.linalg.LinAlgError) or type(e).__name__ == "LinAlgError":
        cls, hint = LinAlgError, (
            "The matrix is singular, not positive definite, or the algorithm did not converge "
            "on these values: check the input for NaN/inf, regularise it (add eps * I), or use "
            "a decomposition that handles rank deficiency (svd, lstsq, pinv).")
    elif isinstance(e, MemoryError):
        cls, hint = ShapeError, (
            "The result does not fit in memory: reduce the sizes, work in slices, or use "
            "einsum(..., max_memory=...) for contractions.")
    elif isinstance(e, IndexError):
        cls, hint = ShapeError, "An index is out of range: indices must lie within the axis sizes."
    elif isinstance(e, (FloatingPointError, OverflowError, ZeroDivisionError)):
        cls, hint = ShapeError, "The values overflow or divide by zero; rescale the input."
    return cls, hint


# ----------------------------------------------------------------- grad mode
class _GradMode:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def __call__(self, f):
        @functools.wraps(f)
        def wrapper(*a, **k):
            with _GradMode(self.enabled):
                return f(*a, **k)

        return wrapper


def no_grad():
    """Context manager / decorator: nothing is recorded on the tape inside."""
    return _GradMode(False)


def enable_grad():
    """Context manager / decorator: re-enable recording (e.g. inside ``no_grad``)."""
    return _GradMode(True)


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn recording on or off, as PyTorch's ``set_grad_enabled``: called as a function it
    sets the mode at once (``set_grad_enabled(False)`` stops recording on this thread until
    ``set_grad_enabled(True)``); used as a context manager it restores the previous mode on
    exit, and as a decorator it applies the mode while the function runs (and leaves the
    current mode unchanged by the decoration)."""

    def __init__(self, mode: bool):
        if not isinstance(mode, (bool, np.bool_)):
            raise DTypeError(f"set_grad_enabled: mode must be True or False, got "
                             f"{type(mode).__name__} {mode!r:.40}.")
        super().__init__(bool(mode))
        self.prev = state.grad_enabled
        state.grad_enabled = self.enabled

    def __enter__(self):
        state.grad_enabled = self.enabled  # (already set by the call; again if reused)

    def __call__(self, f):
        state.grad_enabled = self.prev  # a decorator does not change the mode now
        return super().__call__(f)


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are being recorded (per thread)."""
    return state.grad_enabled


__all__ = ["EagerTensor", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]


def _resave_old_value(t, old, version, new, others) -> None:
    """Point what the nodes of one in-place operation on ``t`` saved of ``t`` (entries
    ``(t, version)``) at a tensor holding ``old`` = (buffer, backend, node, index), the value
    they read. Only nodes newer than every input's node can be the operation's own, so the
    walk from ``new`` stops at the first older one (usually after one node)."""
    node = getattr(new, "_node", None)
    if node is None:
        return
    mark = -1 if old[2] is None else old[2].seq
    for o in others:
        n = getattr(o, "_node", None)
        if n is not None and n.seq > mark:
            mark = n.seq
    snapshot = None
    stack = [node]
    seen = None
    while stack:
        n = stack.pop()
        if n.seq <= mark:
            continue
        if seen is None:
            seen = {id(n)}
        elif id(n) in seen:
            continue
        else:
            seen.add(id(n))
        saved = getattr(n, "saved", None)
        if type(saved) is list:
            for i, e in enumerate(saved):
                if type(e) is tuple and e[0] is t and e[1] == version:
                    if snapshot is None:
                        snapshot = _wrap(*old)
                    saved[i] = (snapshot, 0)
        for p in n.parents or ():
            if p is not None and p[0].seq > mark:
                stack.append(p[0])
