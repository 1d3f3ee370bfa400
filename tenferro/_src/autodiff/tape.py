"""The reverse-mode recorder: nodes, recording, and the backward pass.

One recorder serves both reverse-mode front ends:

* the eager tape (``autodiff/eager.py``): tensors carry their history, PyTorch-style;
* the functional tape (``autodiff/reverse.py``): ``vjp``/``grad`` as a transformation.

They differ only in how values look, which a ``Tape`` subclass says through a few hooks: what
a recorded value is (an eager tensor with ``_node``, or a ``TapeTracer``), what the same value
without this tape's history is (a detached tensor, or the tracer's primal one level down), and
how a node keeps what its derivative reads (with in-place checks, or as is). Recording a
primitive (here), a checkpoint (``checkpoint.py``) or a function with its own derivative rule
(``custom.py``), and running the backward pass, are written once, against those hooks.

**Nodes** form a DAG through ``parents`` (one ``(node, output_index)`` or ``None`` per input)
and carry a creation sequence number: a consumer is always created after what it consumes, so
processing nodes by decreasing sequence number (a heap) visits every consumer first, without a
separate topological sort. Fan-out is accumulated with ``add``.

**How** a node's derivative runs is the backward *context*'s business: ``ImplContext`` calls the
compiled ``impl`` functions on raw arrays (the eager tape's fast path, nothing recorded), while
``BindContext`` binds every operation, so the backward pass is itself recorded
(``create_graph=True``) or seen by an enclosing transformation (nested ``grad``, ``hvp``).
"""

from __future__ import annotations

import heapq
import itertools
from contextlib import nullcontext

from ..core.dispatch import bind_list, default_device, dispatch
from ..core.eager import _wrap, classify_failure
from ..core.source import backward_of
from ..errors import GradientError, TenferroError
from ..ir.eval import eval_program

_SEQ = itertools.count()


# ----------------------------------------------------------------------------- nodes
class Node:
    """A recorded operation. ``backward(cts, ctx)`` maps one cotangent (or ``None``) per output
    to one per parent; ``release()`` drops what it saved."""

    __slots__ = ("parents", "seq", "tape", "backend", "__weakref__")
    is_leaf = False
    n_out = 1
    name = "node"
    runs_user_code = False  # True where backward runs a user's rule (its errors pass through)

    def release(self):
        pass

    @property
    def next_functions(self) -> tuple:
        """``(node, output index)`` of each input (``None`` for constants), as in PyTorch."""
        return tuple(self.parents)

    def __repr__(self):
        return f"<{self.name} backward>"


class LeafNode(Node):
    """Where cotangents stop: a tensor that requires grad, or a transformation's input."""

    __slots__ = ("ref", "aval")
    is_leaf = True
    name = "leaf"

    def __init__(self, tape, ref, aval):
        self.parents = ()
        self.seq = next(_SEQ)
        self.tape = tape
        self.backend = None
        self.ref = ref  # weak reference to the eager tensor (None for transformation inputs)
        self.aval = aval


class PrimitiveNode(Node):
    """A primitive application: its derivative template and the values the template reads."""

    __slots__ = ("tmpl", "saved", "n_out", "source")

    def __init__(self, tape, tmpl, parents, backend=None, source=None):
        self.source = source  # the forward equation's line, when it was staged (jit)
        self.seq = next(_SEQ)
        self.tape = tape
        self.tmpl = tmpl
        self.parents = parents
        self.backend = backend  # where the compiled derivative runs (eager tape only)
        self.saved = None
        self.n_out = tmpl.n_out

    @property
    def name(self) -> str:
        return self.tmpl.prim.name

    def backward(self, cts, ctx):
        saved = self.saved
        if saved is None:
            raise released_error(self.name)
        tmpl = self.tmpl
        if self.n_out == 1:
            mask = tmpl.mask1
            vals = [cts[0]]
        else:
            mask = tuple(c is not None for c in cts)
            vals = [c for c in cts if c is not None]
        if saved:
            vals.extend(self.tape.load(saved, self, ctx))
        if ctx is ImplContext:  # ImplContext.run_vjp, inline (the eager backward())
            f = tmpl._vjp_fn.get(mask)
            if f is None:
                f = tmpl.vjp_impl(mask)
            return f(self.backend.xp, (), *vals)
        return ctx.run_vjp(self, mask, vals)

    def release(self):
        self.saved = None


def released_error(op: str) -> GradientError:
    return GradientError(
        f"{op}: trying to backward through the graph a second time (what it saved was freed by "
        f"the first backward). Pass retain_graph=True to the first backward() if you need to "
        f"differentiate twice."
    )


# ------------------------------------------------------------------------------ tape
class Tape:
    """How values look on one reverse-mode front end (the hooks), and recording on it."""

    def parent(self, x):
        """``(node, index)`` of a recorded value, or ``None`` (a constant here)."""
        raise NotImplementedError

    def lowered(self, x):
        """The same value without this tape's history (user functions run on it)."""
        raise NotImplementedError

    def box(self, y, node, index):
        """A user function's output ``y`` (a lowered value) as produced by ``node``."""
        raise NotImplementedError

    def box_output(self, y, node, index):
        """A primitive's fresh output ``y`` as produced by ``node`` (may reuse ``y``)."""
        return self.box(y, node, index)

    def save(self, x):
        """What a node keeps of its input ``x``."""
        raise NotImplementedError

    def save_output(self, y):
        """What a node keeps of its (boxed) output ``y``."""
        raise NotImplementedError

    def save_residuals(self, res, primals, args) -> list:
        """What a custom-VJP node keeps of the residuals its forward rule returned (computed
        from ``primals``, the lowered ``args``)."""
        return list(res)

    def load(self, saved, node, ctx) -> list:
        """Saved values in the form ``ctx`` runs derivative programs on."""
        return saved

    def load_tensors(self, saved, node, ctx) -> list:
        """Saved values as tensors, for derivative rules written in Python (checkpoints,
        ``custom_vjp``)."""
        return saved

    def paused(self):
        """A context in which user code runs on lowered values without recording here."""
        return nullcontext()

    def replays(self, ctx) -> bool:
        """Whether values a checkpoint stored in the forward pass may be replayed when
        recomputing under ``ctx`` (they must carry the history ``ctx`` differentiates)."""
        return True

    def record(self, tmpl, parents, args, outs, backend=None, source=None) -> list:
        """Record a primitive application (its derivative ``tmpl``) and box its outputs;
        ``source`` is the forward line its staged derivative is attributed to."""
        node = PrimitiveNode(self, tmpl, parents, backend, source)
        boxed = [
            self.box_output(o, node, i) if nz else o
            for i, (o, nz) in enumerate(zip(outs, tmpl.nonzero_out))
        ]
        save, save_output = self.save, self.save_output
        saved = [save(args[i]) for i in tmpl.saved_in]
        saved.extend(save_output(boxed[i]) for i in tmpl.saved_out)
        node.saved = saved
        return boxed


# ------------------------------------------------------------------------ backward
def toposort(roots) -> list[Node]:
    """All nodes reachable from ``roots``, every consumer before what it consumes."""
    seen = {}
    stack = list(roots)
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(p[0] for p in n.parents if p is not None)
    return sorted(seen.values(), key=lambda n: -n.seq)


def backward_pass(seeds, ctx, *, retain_graph=True, want=None, hooks=None):
    """Propagate cotangents from ``seeds`` = [(node, output_index, ct)].

    Returns ``{(id(node), index): (node, ct)}`` for every ``LeafNode`` reached, or, when
    ``want`` (a collection of ``(id(node), index)``) is given, for those outputs only (and
    only the part of the graph leading to them is differentiated). Unless ``retain_graph``,
    every visited node frees its saved values. ``hooks`` maps a node to
    ``{output index: [fn, ...]}``: each ``fn(ct)`` sees an output's complete cotangent (as a
    tensor) before it is used, and may return a replacement.
    """
    needed = None
    if want is not None:
        want_nodes = {k[0] for k in want}
        needed = set()
        for node in reversed(toposort([s[0] for s in seeds])):  # producers first
            if id(node) in want_nodes or any(
                p is not None and id(p[0]) in needed for p in node.parents
            ):
                needed.add(id(node))
    pending: dict[int, list] = {}
    heap: list = []
    add = ctx.add
    for node, i, ct in seeds:
        _accumulate(pending, heap, node, i, ct, add)
    got = {}
    visited = []
    heappop, heappush = heapq.heappop, heapq.heappush
    try:
        while heap:
            node = heappop(heap)[1]
            cts = pending.pop(id(node))
            if hooks and node in hooks:
                cts = _run_hooks(hooks[node], cts, node, ctx)
            if node.is_leaf:
                if want is None or (id(node), 0) in want:
                    got[(id(node), 0)] = (node, cts[0])
                continue
            visited.append(node)
            if want is not None:
                for i, c in enumerate(cts):
                    if (id(node), i) in want:
                        got[(id(node), i)] = (node, c)
                if not any(p is not None and id(p[0]) in needed for p in node.parents):
                    continue
            try:
                if getattr(node, "source", None) is None:
                    in_cts = node.backward(cts, ctx)
                else:  # staged: the backward equations carry the forward line
                    with backward_of(node.source):
                        in_cts = node.backward(cts, ctx)
            except TenferroError as e:
                _name_derivative(node, e)
                raise
            except Exception as e:
                if node.runs_user_code:  # the user's own rule raised: keep its exception
                    _name_derivative(node, e)
                    raise
                raise _derivative_error(node, e) from e
            for p, c in zip(node.parents, in_cts):
                if p is not None and c is not None:  # _accumulate, inline (per edge)
                    pn, i = p
                    slot = pending.get(id(pn))
                    if slot is None:
                        slot = pending[id(pn)] = [None] * pn.n_out
                        heappush(heap, (-pn.seq, pn))
                        slot[i] = c
                    else:
                        prev = slot[i]
                        slot[i] = c if prev is None else add(prev, c)
    finally:
        if not retain_graph:
            for node in visited:
                node.release()
    return got


def _what(node) -> str:
    name = getattr(node, "name", type(node).__name__)
    return f"(while computing the derivative of '{name}' in the backward pass)"


def _name_derivative(node, e) -> None:
    """Name the user's operation whose derivative failed (the failing primitive inside its
    derivative program, such as ``triangular_solve``, means nothing to the user)."""
    if e.args and isinstance(e.args[0], str) and "while computing the derivative" not in (
            e.args[0]):
        e.args = (f"{e.args[0]} {_what(node)}",) + tuple(e.args[1:])


def _derivative_error(node, e):
    cls, hint = classify_failure(e)
    return cls(f"{type(e).__name__}: {e} {_what(node)}. {hint}")


def _run_hooks(by_index, cts, node, ctx) -> list:
    cts = list(cts)
    for i, fns in by_index.items():
        if cts[i] is None:
            continue
        (ct,) = ctx.to_tensors([cts[i]], node)
        for fn in list(fns):
            new = fn(ct)
            if new is not None:
                if tuple(new.shape) != tuple(ct.shape) or new.dtype != ct.dtype:
                    raise GradientError(
                        f"a gradient hook returned {new.dtype}{list(new.shape)} for a gradient "
                        f"{ct.dtype}{list(ct.shape)}; a hook must keep the shape and dtype."
                    )
                ct = new
        (cts[i],) = ctx.from_tensors([ct])
    return cts


def _accumulate(pending, heap, node, i, ct, add):
    slot = pending.get(id(node))
    if slot is None:
        slot = pending[id(node)] = [None] * node.n_out
        heapq.heappush(heap, (-node.seq, node))
    prev = slot[i]
    slot[i] = ct if prev is None else add(prev, ct)


# ------------------------------------------------------------------------- contexts
class ImplContext:
    """Run compiled derivative programs on raw arrays, each on its node's backend; nothing
    is recorded (the eager tape's ``backward()``)."""

    raw = True

    @staticmethod
    def run_vjp(node, mask, vals):
        return node.tmpl.vjp_impl(mask)(node.backend.xp, (), *vals)

    @staticmethod
    def add(a, b):
        return a + b

    @staticmethod
    def to_tensors(vals, node) -> list:
        return [None if v is None else _wrap(v, node.backend) for v in vals]

    @staticmethod
    def from_tensors(ts) -> list:
        return [None if t is None else t._value for t in ts]


class BindContext:
    """Run derivative programs through ``bind``: at the current dispatch level, recorded by
    whatever trace (or tape) the values belong to."""

    raw = False

    def __init__(self, device=None):
        self.device = device

    def run_vjp(self, node, mask, vals):
        prog = node.tmpl.vjp_program(mask)
        # constants the program creates go where its cotangent lives
        device = self.device or getattr(vals[0], "device", None)
        if device is None:
            return eval_program(prog, vals, bind_list)
        with default_device(device):
            return eval_program(prog, vals, bind_list)

    @staticmethod
    def add(a, b):
        return dispatch.add(a, b)

    @staticmethod
    def to_tensors(vals, node) -> list:
        return list(vals)

    @staticmethod
    def from_tensors(ts) -> list:
        return list(ts)
