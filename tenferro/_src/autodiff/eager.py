"""The eager tape: PyTorch-style reverse mode on ``EagerTensor``s.

The eager front end of the one recorder (``tape.py``). Tensors carry their history
(``_node``, ``_index``), as in PyTorch. ``EvalTrace`` runs every primitive now and hands the
ones whose inputs require grad to ``EAGER_TAPE.record_primitive``; checkpoints and functions
with custom rules go to the shared recording functions. A node keeps only what its derivative
template reads: inputs with their version counter and outputs by value plus a weak reference,
so in-place modification of anything a pending backward needs raises a clear error.

``backward()`` runs the shared engine directly on raw arrays (``ImplContext``), or through
``bind`` with ``create_graph=True`` so the backward pass is itself recorded (``BindContext``).
"""

from __future__ import annotations

import weakref

from chainrules import ShapedArray

from ..caches import BoundedCache
from ..core.dispatch import state
from ..core.eager import EVAL_TRACE, EagerTensor, _avals, _wrap, as_eager, no_grad
from ..core.tensor import Tensor
from ..errors import GradientError, fmt_aval
from .checkpoint import record_checkpoint
from .custom import record_custom_jvp, record_custom_vjp
from .tape import _SEQ, BindContext, ImplContext, LeafNode, PrimitiveNode, Tape, backward_pass
from .templates import get_template


# ----------------------------------------------------------------- saved values
# A saved input is the pair ``(tensor, version when saved)``; loading checks the version, so
# an in-place change after the op was recorded raises instead of giving a wrong gradient.
def _load_input(s, node, raw):
    t, version = s
    if t._version != version:
        _modified_error(node, t, version)
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
    raise GradientError(
        f"{node.name}: a tensor needed for the gradient ({fmt_aval(t)}) was modified "
        f"in place after it was used (version {version} -> {t._version}). Compute with a copy "
        f"(.clone()) or move the in-place update after backward()."
    )


# ---------------------------------------------------------------------- the tape
class EagerTape(Tape):
    """The recorder's hooks for eager tensors, the fast primitive path, and ``backward``."""

    def __init__(self):
        self._templates = BoundedCache("eager tape templates", 8192)
        # node -> {output index: [hook, ...]}; weak, so hooks die with the graph
        self._hooks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    # ------------------------------------------------------------------ hooks
    def leaf(self, t: EagerTensor) -> LeafNode:
        node = LeafNode(self, weakref.ref(t), ShapedArray(t.shape, t.dtype))
        node.backend = t._backend
        return node

    # --------------------------------------------------------------- hooks
    def register_hook(self, t: EagerTensor, fn) -> RemovableHandle:
        """Call ``fn(grad)`` with ``t``'s gradient during every backward pass through it; a
        returned tensor replaces the gradient (PyTorch's ``Tensor.register_hook``)."""
        if t._node is None:
            raise GradientError(
                f"register_hook: the tensor ({fmt_aval(t)}) does not require grad; call "
                f"requires_grad_() first."
            )
        fns = self._hooks.setdefault(t._node, {}).setdefault(t._index, [])
        fns.append(fn)
        return RemovableHandle(fns, fn)

    def retain_grad(self, t: EagerTensor) -> None:
        """Keep a non-leaf tensor's gradient in its ``.grad`` (accumulated like a leaf's)."""
        if t._node is None:
            raise GradientError(
                f"retain_grad: the tensor ({fmt_aval(t)}) does not require grad.")
        if t.is_leaf:
            return
        ref = weakref.ref(t)

        def keep(g):
            owner = ref()
            if owner is not None:  # with create_graph the gradient keeps its history
                owner._grad = g if owner._grad is None else owner._grad + g
            return None

        self.register_hook(t, keep)

    def parent(self, x):
        return None if x._node is None else (x._node, x._index)

    def lowered(self, x):
        return _wrap(x._value, x._backend)

    def box(self, y, node, index):
        return _wrap(y._value, y._backend, node, index)

    def box_output(self, y, node, index):
        y._node, y._index = node, index  # a fresh tensor made by record_primitive
        return y

    def save(self, x):
        return (x, x._version)

    def save_output(self, y):
        return SavedOutput(y)

    def save_residuals(self, res, primals, args) -> list:
        # Residuals that are inputs are kept as the inputs themselves (with their history,
        # checked for in-place changes); residuals fwd computed are constants for a
        # create_graph=True backward (the functional API differentiates them too).
        by_id = {id(p): (a, a._version) for p, a in zip(primals, args)}
        return [by_id.get(id(r), r) for r in res]

    def load(self, saved, node, ctx):
        if not saved:
            return saved
        raw = ctx.raw
        return [_load_input(s, node, raw) if type(s) is tuple else s.load(node, raw)
                for s in saved]

    def load_tensors(self, saved, node, ctx):
        out = []
        for s in saved:
            if type(s) is tuple:  # a saved input (residuals themselves are tensors)
                t = _load_input(s, node, False)
                s = _wrap(t._value, t._backend) if ctx.raw else t
            out.append(s)
        return out

    def paused(self):
        return no_grad()

    def replays(self, ctx) -> bool:
        return ctx.raw  # stored outputs lack the history a create_graph backward needs

    # --------------------------------------------------------------- recording
    def record_primitive(self, prim, params, args, vals, out, backend, in_backend,
                         sig=None) -> list:
        """Wrap ``out`` (on ``backend``) and record the op (inputs on ``in_backend``).
        ``sig``: the eager trace's cached ``Signature`` of this application (``None`` when it
        cannot be cached); templates are cached per (signature, inputs with history)."""
        n = len(args)
        if n == 1:  # unary ops, shape ops, reductions: without building lists
            a = args[0]
            na = a._node
            mask = 1
            parents = ((na, a._index),)
        elif n == 2:  # binary ops
            a, b = args
            na, nb = a._node, b._node
            if na is None:
                mask = 2
                parents = (None, (nb, b._index))
            elif nb is None:
                mask = 1
                parents = ((na, a._index), None)
            else:
                mask = 3
                parents = ((na, a._index), (nb, b._index))
        else:
            mask = 0
            parents = []
            for i, a in enumerate(args):
                node = a._node
                if node is None:
                    parents.append(None)
                else:
                    parents.append((node, a._index))
                    mask |= 1 << i
            parents = tuple(parents)
        if sig is None:  # an uncacheable signature: the shared template cache decides
            tmpl = get_template(prim, params, _avals(vals, in_backend),
                                tuple(p is not None for p in parents))
        else:
            key = sig if n == 1 else (sig, mask)  # one operand: its mask is always 1
            tmpl = self._templates.get(key)
            if tmpl is None:
                tmpl = self._templates.put(key, get_template(
                    prim, params, _avals(vals, in_backend),
                    tuple(p is not None for p in parents)))
        if not tmpl.one_output:
            if tmpl.single_result:  # one output without a derivative (comparisons)
                return _wrap(out, backend)
            return self._record_multiple(tmpl, parents, args, out, backend)
        # One output (almost every op): the node ``record`` would make, without its loops.
        node = _new_node(EagerNode)
        node.seq = next(_SEQ)
        node.tmpl = tmpl
        node.parents = parents
        node.backend = backend
        res = _new_tensor(EagerTensor)
        res._value = out
        res._backend = backend
        res._node = node
        res._index = 0
        res._grad = None
        res._version = 0
        saved_in = tmpl.saved_in
        if saved_in:
            if n == 1:
                saved = [(a, a._version)]
            elif n == 2:  # (0, 1), (0,) or (1,): no list comprehension
                if len(saved_in) == 2:
                    saved = [(a, a._version), (b, b._version)]
                elif saved_in[0] == 0:
                    saved = [(a, a._version)]
                else:
                    saved = [(b, b._version)]
            else:
                saved = [(args[i], args[i]._version) for i in saved_in]
            if tmpl.saved_out:
                saved.append(SavedOutput(res))
            node.saved = saved
        elif tmpl.saved_out:
            node.saved = [SavedOutput(res)]
        else:
            node.saved = ()  # nothing to keep (linear ops); ``None`` would mean released
        return res

    def _record_multiple(self, tmpl, parents, args, out, backend) -> tuple:
        """``record`` for a primitive with several outputs (decompositions), inline."""
        nonzero = tmpl.nonzero_out
        if True not in nonzero:
            return tuple([_wrap(o, backend) for o in out])
        node = _new_multi_node(EagerMultiNode)
        node.seq = next(_SEQ)
        node.tmpl = tmpl
        node.parents = parents
        node.backend = backend
        node.n_out = tmpl.n_out
        outs = []
        for i, o in enumerate(out):
            t = _new_tensor(EagerTensor)
            t._value = o
            t._backend = backend
            if nonzero[i]:
                t._node = node
                t._index = i
            else:  # no derivative: an ordinary tensor
                t._node = None
                t._index = 0
            t._grad = None
            t._version = 0
            outs.append(t)
        saved = [(args[i], args[i]._version) for i in tmpl.saved_in]
        for i in tmpl.saved_out:
            saved.append(SavedOutput(outs[i]))
        node.saved = saved
        return tuple(outs)

    def record_checkpoint(self, fn, args, policy):
        return record_checkpoint(self, fn, args, policy)

    def record_custom_vjp(self, call, args):
        return record_custom_vjp(self, call, args)

    def record_custom_jvp(self, call, args):
        return record_custom_jvp(self, call, args)

    # ---------------------------------------------------------------- backward
    def backward(self, pairs, retain_graph, create_graph, inputs=None, collect=None):
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
            got = backward_pass(seeds, ctx, retain_graph=retain_graph, want=want,
                                hooks=self._hooks or None)
        finally:
            state.grad_enabled = prev
        if collect is not None:
            return [_as_grad(got.get((id(t._node), t._index), (None, None))[1], t, ctx)
                    for t in collect]
        for node, ct in got.values():
            if not node.is_leaf:
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


class RemovableHandle:
    """Returned by ``register_hook``: ``handle.remove()`` unregisters the hook."""

    def __init__(self, fns, fn):
        self._fns, self._fn = fns, fn

    def remove(self) -> None:
        if self._fn in self._fns:
            self._fns.remove(self._fn)


def _as_grad(ct, t, ctx):
    if ct is None:
        return None
    if ctx.raw:
        return _wrap(ct, t._backend)
    return ct if type(ct) is EagerTensor else as_eager(ct, like=t)


class EagerNode(PrimitiveNode):
    """A one-output primitive recorded on the eager tape: ``PrimitiveNode`` with its tape and
    output count as class attributes (fewer attributes to set on the hot path). Built by
    ``EagerTape.record_primitive`` without calling ``__init__``."""

    __slots__ = ()
    n_out = 1


class EagerMultiNode(PrimitiveNode):
    """A primitive with several outputs recorded on the eager tape (its tape as a class
    attribute); built by ``EagerTape._record_multiple`` without calling ``__init__``."""

    __slots__ = ()


_new_node = EagerNode.__new__  # nodes and outputs are built inline on the hot path
_new_multi_node = EagerMultiNode.__new__
_new_tensor = EagerTensor.__new__

EAGER_TAPE = EagerTape()
EagerNode.tape = EagerMultiNode.tape = EAGER_TAPE
EVAL_TRACE.tape = EAGER_TAPE  # EvalTrace hands the ops it records to this tape


def _tensor_list(what: str, xs) -> list:
    """``autograd_grad``'s outputs/inputs: a tensor or a sequence of tensors."""
    if isinstance(xs, EagerTensor):
        return [xs]
    if isinstance(xs, (list, tuple)) and all(isinstance(x, EagerTensor) for x in xs):
        return list(xs)
    items = xs if isinstance(xs, (list, tuple)) else [xs]
    traced = [x for x in items if isinstance(x, Tensor) and not isinstance(x, EagerTensor)]
    if traced:
        raise GradientError(
            f"autograd.grad: the {what} are {type(traced[0]).__name__}s, the values a function "
            f"sees inside tenferro.grad/vjp/jvp/vmap/jit: tenferro.autograd.grad "
            f"(torch.autograd.grad) differentiates the eager tape only. Inside such a "
            f"function take the inner derivative with a nested transform instead, "
            f"e.g. g = tenferro.grad(inner)(x) (or tenferro.vjp), which composes with the "
            f"outer one; or call the function eagerly on tensors with requires_grad=True.")
    raise GradientError(f"autograd_grad: {what} must be a tensor or a list/tuple of tensors, "
                        f"got {type(xs).__name__} {xs!r:.40}.")


def autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
                  allow_unused=False) -> tuple:
    """Like ``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` (any tensors
    that require grad, leaves or intermediates), without touching ``.grad``. Always returns a
    tuple, one entry per input, as PyTorch does."""
    outputs = _tensor_list("outputs", outputs)
    inputs = _tensor_list("inputs", inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, EagerTensor):
        grad_outputs = [grad_outputs]
    pairs = []
    for o, g in zip(outputs, grad_outputs):
        if o._node is None:
            raise GradientError(
                f"autograd_grad: an output ({fmt_aval(o)}) does not require grad.")
        if g is None:
            if o.size != 1:
                raise GradientError(
                    f"autograd_grad: grad_outputs needed for the non-scalar output {o.shape}."
                )
            g = _wrap(o._backend.xp.ones(o._value.shape, dtype=o._value.dtype), o._backend)
        pairs.append((o, as_eager(g, like=o)))
    retain = create_graph if retain_graph is None else retain_graph
    grads = EAGER_TAPE.backward(pairs, retain, create_graph, collect=inputs)
    if not allow_unused:
        for i, g in enumerate(grads):
            if g is None:
                raise GradientError(
                    f"autograd_grad: input {i} was not used to compute the outputs "
                    f"(pass allow_unused=True to get None)."
                )
    return tuple(grads)
