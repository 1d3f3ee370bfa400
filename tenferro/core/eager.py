"""Eager mode: ``EagerTensor``, the evaluating base trace, and the PyTorch-style tape.

Operations on eager tensors run immediately through the tensor's backend. When an input
requires grad (it has a ``_node``) and grad mode is on, the op is also recorded as a
``TemplateNode`` holding only what its derivative template reads. ``backward()`` runs the
shared engine: directly on raw arrays by default, or through ``bind`` with
``create_graph=True`` so the backward pass is itself recorded and can be differentiated again.
"""

from __future__ import annotations

import os
import weakref

import numpy as np

from chainrules import ShapedArray
from chainrules.dtypes import is_inexact

from ..autodiff.engine import BindContext, ImplContext, LeafNode, TemplateNode, backward_pass
from ..autodiff.templates import get_template
from ..backends import Backend, backend_of_array, get_backend
from ..errors import DeviceError, DTypeError, GradientError, ShapeError, TenferroError, fmt_aval
from ..ir.program import params_key
from .dispatch import Trace, state
from .tensor import Tensor

CHECK = os.environ.get("TENFERRO_CHECK", "0") not in ("", "0")
"""Validate every eager op with ``abstract_eval`` (the test suite turns this on)."""


class EagerTensor(Tensor):
    """A concrete array on a device, optionally recording operations for ``backward()``."""

    __slots__ = ("_value", "_backend", "_node", "_index", "_grad", "_version", "__weakref__")

    # construction is hot: avoid __init__ and use _wrap
    def __init__(self, value, backend: Backend, node=None, index=0):
        self._value = value
        self._backend = backend
        self._node = node
        self._index = index
        self._grad = None
        self._version = 0

    # ------------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple:
        return tuple(self._value.shape)

    @property
    def dtype(self) -> np.dtype:
        return self._backend.xp.np_dtype(self._value.dtype)

    @property
    def device(self) -> str:
        return self._backend.device

    @property
    def backend(self) -> Backend:
        return self._backend

    # ------------------------------------------------------------ Python values
    def numpy(self) -> np.ndarray:
        """The value as a NumPy array (a read-only view when the backend is NumPy)."""
        a = self._backend.to_numpy(self._value)
        if a is self._value or (a.base is not None and a.base is self._value):
            a = a.view()
            a.flags.writeable = False
        return a

    def __array__(self, dtype=None, copy=None):
        a = self._backend.to_numpy(self._value)
        return a if dtype is None else a.astype(dtype)

    def item(self):
        if self.size != 1:
            raise ShapeError(
                f"item: only a one-element tensor converts to a Python scalar; got "
                f"{fmt_aval(self)}."
            )
        return self._backend.to_numpy(self._value).reshape(()).item()

    def tolist(self):
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
        return self._node is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad:
            if self._node is None:
                if not is_inexact(self.dtype):
                    raise DTypeError(
                        f"requires_grad: only float and complex tensors can require gradients, "
                        f"got {fmt_aval(self)}; convert with .astype(tenferro.float64)."
                    )
                self._node = LeafNode(weakref.ref(self), ShapedArray(self.shape, self.dtype))
                self._index = 0
        else:
            if self._node is not None and type(self._node) is not LeafNode:
                raise GradientError(
                    "requires_grad_(False): only leaf tensors can stop requiring grad; use "
                    ".detach() for a non-leaf."
                )
            self._node = None
        return self

    @property
    def is_leaf(self) -> bool:
        return self._node is None or type(self._node) is LeafNode

    @property
    def grad(self):
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, EagerTensor):
            raise DTypeError("grad must be None or a tenferro tensor")
        self._grad = value

    @property
    def grad_fn(self):
        n = self._node
        return None if n is None or type(n) is LeafNode else n

    def detach(self) -> EagerTensor:
        return _wrap(self._value, self._backend)

    def clone(self) -> EagerTensor:
        from .. import ops

        return ops.copy(self)

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
        run_backward([(self, ct)], retain, create_graph, inputs)

    def retain_grad(self):
        raise GradientError(
            "retain_grad is not supported; use tenferro.autograd_grad(out, [intermediate]) to "
            "get the gradient of an intermediate tensor."
        )

    # ----------------------------------------------------------------- in place
    def _assign(self, new):
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
        if type(self._node) is LeafNode:
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
    """Turn arrays, scalars and nested lists into an ``EagerTensor`` (on ``like``'s device)."""
    if type(x) is EagerTensor:
        return x
    if isinstance(x, Tensor):
        raise TypeError(f"expected an eager tensor, got a {type(x).__name__}")
    backend = like._backend if like is not None else None
    if backend is None:
        backend = backend_of_array(x) or get_backend(state.default_device)
    if dtype is None and like is not None and np.ndim(x) == 0 and not hasattr(x, "dtype"):
        dtype = np.result_type(like.dtype, x)
    return _wrap(backend.asarray(x, dtype=dtype), backend)


# ----------------------------------------------------------------- saved values
class SavedTensor:
    """An input kept for the backward pass, with the version it had when saved."""

    __slots__ = ("tensor", "version")

    def __init__(self, t: EagerTensor):
        self.tensor = t
        self.version = t._version

    def load(self, node, raw):
        t = self.tensor
        if t._version != self.version:
            _modified_error(node, t, self.version)
        return t._value if raw else t


class SavedOutput:
    """An output kept for the backward pass. Holds the value (not the tensor, which would
    be a reference cycle through the node) and watches the tensor for in-place changes."""

    __slots__ = ("value", "backend", "index", "ref", "version")

    def __init__(self, t: EagerTensor):
        self.value, self.backend, self.index = t._value, t._backend, t._index
        self.ref = weakref.ref(t)
        self.version = t._version

    def load(self, node, raw):
        t = self.ref()
        if t is not None and (t._version != self.version or t._value is not self.value):
            _modified_error(node, t, self.version)
        return self.value if raw else _wrap(self.value, self.backend, node, self.index)


def _modified_error(node, t, version):
    op = node.tmpl.prim.name if hasattr(node, "tmpl") else {
        "CheckpointNode": "checkpoint", "CustomVJPNode": "custom_vjp"}.get(type(node).__name__)
    raise GradientError(
        f"{op}: a tensor needed for the gradient ({fmt_aval(t)}) was modified "
        f"in place after it was used (version {version} -> {t._version}). Compute with a copy "
        f"(.clone()) or move the in-place update after backward()."
    )


class EagerNode(TemplateNode):
    """A recorded eager op; saved entries are ``SavedTensor``/``SavedOutput``."""

    __slots__ = ("backend",)

    def load(self, ctx):
        raw = ctx.raw
        return [s.load(self, raw) for s in self.saved]


# ------------------------------------------------------------------- the trace
_EAGER_TEMPLATES: dict = {}


class EvalTrace(Trace):
    """The base trace of eager mode: run now, record for the tape if needed."""

    level = 0

    def process_primitive(self, prim, args, params):
        backend = None
        vals = []
        recording = False
        for a in args:
            if type(a) is not EagerTensor:
                a = _foreign_arg(prim, a)
            b = a._backend
            if backend is None:
                backend = b
            elif b is not backend:
                raise DeviceError(
                    f"{prim.name}: operands are on different devices ({backend.device} and "
                    f"{b.device}); move one with .to({backend.device!r}) first."
                )
            vals.append(a._value)
            if a._node is not None:
                recording = True
        if backend is None:
            backend = get_backend(params.get("device") or state.default_device)
        if CHECK or prim.validate_eager:
            expected = _check(prim, vals, params, backend)
        try:
            out = prim.impl(backend.xp, *vals, **params)
        except TenferroError:
            raise
        except Exception as e:
            _check(prim, vals, params, backend)  # raises the clear error if inputs are bad
            raise _impl_error(prim, vals, params, backend, e) from e
        if prim.out_device is not None:  # a transfer: the output lives elsewhere
            out_backend = get_backend(prim.out_device(params))
            if CHECK:
                _check_outputs(prim, out, expected, out_backend)
            if recording and state.grad_enabled:
                return _record(prim, params, args, vals, out, out_backend, backend)
            return _wrap(out, out_backend)
        if CHECK:
            _check_outputs(prim, out, expected, backend)
        if recording and state.grad_enabled:
            return _record(prim, params, args, vals, out, backend, backend)
        if prim.multiple_results:
            return tuple(_wrap(o, backend) for o in out)
        return _wrap(out, backend)


    def process_checkpoint(self, fn, args, policy):
        if not state.grad_enabled or all(a._node is None for a in args):
            return fn(*args)
        from ..autodiff.checkpoint import CheckpointNode, run_forward
        from ..ops.creation import get_rng_state

        detached = [_wrap(a._value, a._backend) for a in args]
        rng = get_rng_state()
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            outs, stash = run_forward(fn, detached, policy, 0)
        finally:
            state.grad_enabled = prev
        parents = tuple(None if a._node is None else (a._node, a._index) for a in args)
        avals = [ShapedArray(o.shape, o.dtype) for o in outs]
        node = CheckpointNode(fn, parents, [SavedTensor(a) for a in args], avals, rng, policy,
                              stash, 0, loader=_AmbientCheckpointLoader(args[0]._backend))
        return [_wrap(o._value, o._backend, node if is_inexact(o.dtype) else None, i)
                for i, o in enumerate(outs)]


    def process_custom_vjp(self, fun, fwd, bwd, args):
        if not state.grad_enabled or all(a._node is None for a in args):
            return fun(*args)
        from ..autodiff.custom import record_custom_vjp

        # fwd runs on detached inputs with recording off: the outputs' history is the custom
        # node. Residuals that are inputs are saved as the inputs themselves (with their
        # history, and checked for in-place changes); residuals fwd computes are constants
        # for a create_graph=True backward (the functional API differentiates them too).
        detached = [_wrap(a._value, a._backend) for a in args]
        parents = tuple(None if a._node is None else (a._node, a._index) for a in args)
        prev = state.grad_enabled
        state.grad_enabled = False
        try:
            outs, node = record_custom_vjp(
                fwd, bwd, detached, parents,
                lambda o, node, i: _wrap(o._value, o._backend, node, i),
                loader=_AmbientCustomLoader(args[0]._backend),
            )
        finally:
            state.grad_enabled = prev
        by_id = {id(d): SavedTensor(a) for d, a in zip(detached, args)}
        node.saved = [by_id.get(id(r), r) for r in node.saved]
        return outs


class _AmbientCustomLoader:
    """Cotangents of the eager tape are raw arrays; the user's bwd works on tensors."""

    def __init__(self, backend):
        self.backend = backend

    def __call__(self, node, cts, ctx):
        res = []
        for r in node.saved:
            if type(r) is SavedTensor:
                r = r.load(node, False)
                if ctx.raw:  # no history wanted: plain values
                    r = _wrap(r._value, r._backend)
            res.append(r)
        if ctx.raw:
            cts = [None if c is None else _wrap(c, self.backend) for c in cts]
        return res, cts

    @staticmethod
    def unload(grads, ctx):
        return [g._value if (ctx.raw and g is not None) else g for g in grads]


class _AmbientCheckpointLoader:
    """Moves a checkpoint's saved inputs and cotangents between the tape's raw arrays and the
    tensors its recomputation runs on."""

    def __init__(self, backend):
        self.backend = backend

    def __call__(self, node, cts, ctx):
        if ctx.raw:
            xs = [_wrap(s.load(node, True), s.tensor._backend) for s in node.saved]
            cts = [None if c is None else _wrap(c, self.backend) for c in cts]
        else:
            xs = [s.load(node, False) for s in node.saved]
            node.policy = None  # replayed outputs would lack history: recompute them
        self.parents = node.parents
        return xs, cts

    def unload(self, grads, ctx):
        out = []
        for g, p in zip(grads, self.parents):
            if p is None:
                out.append(None)
            else:
                out.append(g._value if ctx.raw else g)
        return out


EVAL_TRACE = EvalTrace()


def _foreign_arg(prim, a):
    if isinstance(a, Tensor):
        from ..errors import LeakedTracerError

        raise LeakedTracerError(
            f"{prim.name}: got a {type(a).__name__} outside the transformation or trace that "
            f"created it. Values of a trace are only valid while it runs; return them as outputs."
        )
    raise TypeError(f"{prim.name}: expected tensors, got {type(a).__name__}")


def _avals(vals, backend):
    cd = backend.canonical_dtype
    return [ShapedArray(v.shape, cd(v.dtype)) for v in vals]


def _check(prim, vals, params, backend):
    from chainrules.core import out_avals

    return out_avals(prim, _avals(vals, backend), params)


def _check_outputs(prim, out, expected, backend):
    """TENFERRO_CHECK: an impl must return exactly what its abstract_eval promised."""
    outs = out if prim.multiple_results else (out,)
    got = _avals(outs, backend)
    for g, e in zip(got, expected):
        if g.shape != e.shape or g.dtype != e.dtype:
            raise AssertionError(
                f"{prim.name}: impl returned {g} but abstract_eval promised {e} "
                f"({backend.name} backend)"
            )


def _impl_error(prim, vals, params, backend, e):
    from chainrules.core import params_str

    shapes = ", ".join(fmt_aval(a) for a in _avals(vals, backend))
    return TenferroError(
        f"{prim.name}({shapes}; {params_str(params)}) failed in the {backend.name} backend: "
        f"{type(e).__name__}: {e}"
    )


def _record(prim, params, args, vals, out, backend, in_backend):
    """Wrap ``out`` (on ``backend``) and record the op; ``in_backend`` holds the inputs."""
    pk = params_key(params)
    if len(args) == 2:  # the common case, without building lists
        a, b = args
        va, vb = vals
        na, nb = a._node, b._node
        key = (prim, pk, in_backend, va.shape, va.dtype, na is not None, vb.shape, vb.dtype,
               nb is not None)
        parents = (None if na is None else (na, a._index), None if nb is None else (nb, b._index))
    else:
        key = [prim, pk, in_backend]
        parents = []
        for a, v in zip(args, vals):
            n = a._node
            key.append(v.shape)
            key.append(v.dtype)
            if n is None:
                parents.append(None)
                key.append(False)
            else:
                parents.append((n, a._index))
                key.append(True)
        key = tuple(key)
    tmpl = _EAGER_TEMPLATES.get(key)
    if tmpl is None:
        nz = tuple(p is not None for p in parents)
        tmpl = _EAGER_TEMPLATES[key] = get_template(prim, params, _avals(vals, in_backend), nz)
    multi = prim.multiple_results
    nzo = tmpl.nonzero_out
    if not multi:
        if not nzo[0]:
            return _wrap(out, backend)
        node = EagerNode(tmpl, parents, None)
        node.backend = backend
        res = _wrap(out, backend, node, 0)
        saved = [SavedTensor(args[i]) for i in tmpl.saved_in]
        if tmpl.saved_out:
            saved.append(SavedOutput(res))
        node.saved = saved
        return res
    if True not in nzo:
        return tuple(_wrap(o, backend) for o in out)
    node = EagerNode(tmpl, parents, None)
    node.backend = backend
    res = [_wrap(o, backend, node if z else None, i) for i, (o, z) in enumerate(zip(out, nzo))]
    saved = [SavedTensor(args[i]) for i in tmpl.saved_in]
    saved.extend(SavedOutput(res[i]) for i in tmpl.saved_out)
    node.saved = saved
    return tuple(res)


# ------------------------------------------------------------------- backward
def run_backward(pairs, retain_graph, create_graph, inputs=None, collect=None):
    """Backpropagate ``pairs`` = [(output tensor, cotangent tensor)].

    Accumulates into ``.grad`` of leaves (restricted to ``inputs`` if given), or, with
    ``collect`` = a list of tensors, returns their gradients instead of touching ``.grad``.
    """
    if create_graph:
        devices = {t.device for t, _ in pairs}
        ctx = BindContext(devices.pop() if len(devices) == 1 else None)
        seeds = [(t._node, t._index, ct) for t, ct in pairs]
    else:
        ctx = ImplContext
        seeds = [(t._node, t._index, ct._value) for t, ct in pairs]
    targets = collect if collect is not None else inputs
    want = None
    if targets is not None:
        want = {}
        for t in targets:
            if not isinstance(t, EagerTensor) or t._node is None:
                raise GradientError("backward inputs must be tensors that require grad")
            want[(id(t._node), t._index)] = t
    prev = state.grad_enabled
    state.grad_enabled = bool(create_graph)
    try:
        got = backward_pass(seeds, ctx, retain_graph=retain_graph, want=want)
    finally:
        state.grad_enabled = prev
    if collect is not None:
        return [_as_grad(got.get((id(t._node), t._index), (None, None))[1], t, ctx)
                for t in collect]
    for node, ct in got.values():
        if type(node) is not LeafNode:
            continue
        t = node.ref()
        if t is None:
            continue
        g = _as_grad(ct, t, ctx)
        if t._grad is None:
            t._grad = g
        elif create_graph:
            t._grad = t._grad + g
        else:
            t._grad = _wrap(t._grad._value + g._value, t._backend)
    return None


def _as_grad(ct, t, ctx):
    if ct is None:
        return None
    if ctx.raw:
        return _wrap(ct, t._backend)
    return ct if type(ct) is EagerTensor else as_eager(ct, like=t)


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
        import functools

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


def set_grad_enabled(mode: bool):
    return _GradMode(bool(mode))


def is_grad_enabled() -> bool:
    return state.grad_enabled


__all__ = ["EagerTensor", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled"]
