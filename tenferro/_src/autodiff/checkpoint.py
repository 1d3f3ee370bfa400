"""Gradient checkpointing: trade recomputation for memory.

``checkpoint(f)(*args)`` runs ``f`` in the forward pass *without* recording its internal
residuals: the reverse-mode trace (or the eager tape) records a single ``CheckpointNode`` that
keeps only ``f``'s inputs. In the backward pass the node re-runs ``f`` under a fresh reverse
trace (with the random-number state of the forward pass replayed) and backpropagates through
it. Other interpreters (eager without gradients, forward mode, graph staging) simply run ``f``.

In traced graphs the recomputation is fed through an ``optimization_barrier`` so common-
subexpression elimination cannot merge it back into the forward pass; liveness analysis then
frees the forward's intermediates early and the recomputation happens late.

A *policy* names primitives whose outputs are cheap to keep but expensive to recompute (e.g.
decompositions): their outputs are stored during the forward pass and replayed, in order,
during the recomputation instead of being computed again.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from chainrules import ShapedArray
from chainrules.dtypes import is_inexact
from chainrules.primitives.elementwise import optimization_barrier_p

from ..core.dispatch import bind, dispatch, new_trace, state, top_trace
from ..core.tensor import Tensor
from ..errors import check_callable
from ..ops._base import tensor_of
from ..ops.creation import get_rng_state, set_rng_state
from ..pytree import tree_flatten, tree_unflatten
from .reverse import TapeTrace, TapeTracer, vjp, watch
from .tape import _SEQ, Node, PrimitiveNode, released_error, toposort


def save_decompositions(prim) -> bool:
    """Policy: keep the outputs of matrix decompositions (``Primitive.decomposition``),
    recompute everything else."""
    return prim.decomposition


def _policy_fn(policy):
    if policy is None:
        return None
    if callable(policy):
        return policy
    names = frozenset(policy)
    return lambda prim: prim.name in names


# ------------------------------------------------------------------ policy hooks
class _Record:
    """Forward pass: store the outputs of policy primitives processed at ``level``."""

    def __init__(self, policy, level, outer):
        self.policy, self.level, self.outer = policy, level, outer
        self.stash: list = []

    def __call__(self, prim, top, args, params):
        if top.level == self.level and self.policy(prim):
            out = top.process_primitive(prim, args, params)
            self.stash.append(out)
            return out
        return self.outer(prim, top, args, params) if self.outer else NotImplemented


class _Replay:
    """Recomputation: answer the same primitives, in order, from the stash."""

    def __init__(self, policy, level, stash, outer):
        self.policy, self.level, self.stash, self.outer = policy, level, stash, outer
        self.i = 0

    def __call__(self, prim, top, args, params):
        if top.level == self.level and self.policy(prim) and self.i < len(self.stash):
            out = self.stash[self.i]
            self.i += 1
            return out
        return self.outer(prim, top, args, params) if self.outer else NotImplemented


def run_forward(fn, args, policy, level):
    """Run ``fn`` once (no recording at the checkpoint's level); return outputs and stash."""
    if policy is None:
        return fn(*args), None
    rec = _Record(policy, level, state.hook)
    state.hook = rec
    try:
        return fn(*args), rec.stash
    finally:
        state.hook = rec.outer


# ------------------------------------------------------------------------ the node
class CheckpointNode(Node):
    """A checkpointed call on a tape: keeps the inputs, recomputes the inside on backward."""

    __slots__ = ("fn", "saved", "n_out", "out_avals", "rng", "policy", "stash", "level")
    name = "checkpoint"

    def __init__(self, tape, fn, parents, saved, out_avals, rng, policy, stash, level, backend):
        self.seq = next(_SEQ)
        self.tape, self.backend = tape, backend
        self.fn, self.parents, self.saved = fn, parents, saved
        self.n_out, self.out_avals = len(out_avals), out_avals
        self.rng, self.policy, self.stash, self.level = rng, policy, stash, level

    def backward(self, cts, ctx):
        if self.saved is None:
            raise released_error("checkpoint")
        xs = self.tape.load_tensors(self.saved, self, ctx)
        cts = ctx.to_tensors(cts, self)
        cts = [dispatch.full(a.shape, 0, a.dtype) if c is None else c
               for c, a in zip(cts, self.out_avals)]
        barrier = [bind(optimization_barrier_p, x) if _inexact(x) else x for x in xs]
        outer_rng = get_rng_state()
        set_rng_state(self.rng)
        old = state.hook
        if self.policy is not None and self.tape.replays(ctx):
            state.hook = _Replay(self.policy, self.level, self.stash, old)
        try:
            _, pull = vjp(self.fn, *barrier)
            grads = pull(list(cts))
        finally:
            state.hook = old
            set_rng_state(outer_rng)
        return ctx.from_tensors([g if p is not None else None
                                 for g, p in zip(grads, self.parents)])

    def release(self):
        self.saved = None
        self.stash = None


def record_checkpoint(tape, fn, args, policy) -> list:
    """Run ``fn`` on ``args``' values without recording its inside, and record one node on
    ``tape`` that recomputes it in the backward pass."""
    parents = tuple(tape.parent(a) for a in args)
    primals = [tape.lowered(a) for a in args]
    if parents.count(None) == len(parents):
        return fn(*primals)
    level = top_trace(primals, "checkpoint").level
    rng = get_rng_state()
    with tape.paused():
        outs, stash = run_forward(fn, primals, policy, level)
    avals = [ShapedArray(o.shape, o.dtype) for o in outs]
    backend = getattr(args[0], "_backend", None)
    node = CheckpointNode(tape, fn, parents, [tape.save(a) for a in args], avals, rng, policy,
                          stash, level, backend)
    return [tape.box(o, node, i) if _inexact(o) else o for i, o in enumerate(outs)]


def _inexact(x) -> bool:
    return is_inexact(x.dtype)


# ---------------------------------------------------------------------- public API
def checkpoint(f=None, *, policy=None):
    """Make ``f`` recompute its intermediates in the backward pass instead of storing them.

    Gradient checkpointing (rematerialisation) trades compute for memory: the reverse pass
    keeps only ``f``'s inputs and re-runs ``f`` when its cotangents arrive, so a loop of
    checkpointed blocks holds one block's intermediates at a time. Values and derivatives are
    unchanged. Works in eager mode, under ``jit`` (the graph keeps the recomputation) and
    under every transformation. Usable as ``checkpoint(f)``, ``@checkpoint`` or
    ``@checkpoint(policy=...)``.

    Parameters
    ----------
    f : callable, optional
        The function to checkpoint. Tensors it is differentiated with respect to must be
        passed as its positional arguments (pytrees allowed); anything it closes over, and
        non-tensor arguments, are constants.
    policy : callable or collection of str, optional
        Which intermediates to store after all: a predicate ``prim -> bool`` on the
        primitive that produced a value, or a collection of primitive names (e.g.
        ``{"svd", "qr", "eigh"}``: a decomposition is often worth more than its memory).

    Returns
    -------
    callable
        The checkpointed function, with ``f``'s signature (positional arguments only).

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable.

    Notes
    -----
    The recomputation runs the same primitives on the same inputs, so values and
    derivatives (including the conventions at non-differentiable points and for complex
    inputs) are those of ``f`` without the checkpoint.
    ``tenferro.saved_residuals`` shows what a backward pass keeps; ``checkpoint_loop``
    checkpoints a long loop in about sqrt(n) segments.

    Examples
    --------
    >>> import tenferro as tf
    >>> block = lambda x: tf.sin(tf.sin(x))
    >>> x = tf.tensor([0.5, 1.0])
    >>> g = tf.grad(lambda x: tf.sum(tf.checkpoint(block)(x)))(x)
    >>> bool(tf.allclose(g, tf.grad(lambda x: tf.sum(block(x)))(x)))
    True
    >>> tf.saved_residuals(lambda x: tf.sum(block(x)), x).total_bytes
    16
    >>> tf.saved_residuals(lambda x: tf.sum(tf.checkpoint(block)(x)), x).total_bytes
    0
    """
    if f is None:
        return functools.partial(checkpoint, policy=policy)
    check_callable("checkpoint", f)
    pol = _policy_fn(policy)

    @functools.wraps(f)
    def wrapped(*args):
        flat, tree = tree_flatten(args)
        is_t = [isinstance(x, Tensor) for x in flat]
        tensors = [x for x, t in zip(flat, is_t) if t]
        out_tree_box = []

        def fn_flat(*ts):
            it = iter(ts)
            full = [next(it) if t else x for x, t in zip(flat, is_t)]
            out = f(*tree_unflatten(tree, full))
            leaves, otree = tree_flatten(out)
            if not out_tree_box:
                out_tree_box.append(otree)
            return [tensor_of(o) for o in leaves]

        top = top_trace(tensors, "checkpoint")
        outs = top.process_checkpoint(fn_flat, top.lift_all(tensors), pol)
        return tree_unflatten(out_tree_box[0], outs)

    return wrapped


def checkpoint_loop(step, carry, n: int, segments: int | None = None, policy=None):
    """Run ``carry = step(carry)`` ``n`` times with ~sqrt(n) checkpointed segments, so the
    residuals kept for the backward pass grow like sqrt(n) instead of n, for about one extra
    forward pass of compute. ``carry`` may be a pytree of tensors."""
    check_callable("checkpoint_loop", step)
    if n <= 0:
        return carry
    if segments is None:
        segments = max(1, round(n**0.5))
    segments = max(1, min(segments, n))
    base, extra = divmod(n, segments)
    lengths = [base + (1 if i < extra else 0) for i in range(segments)]

    def run(c, k):
        for _ in range(k):
            c = step(c)
        return c

    for k in lengths:
        carry = checkpoint(functools.partial(_run_segment, run, k), policy=policy)(carry)
    return carry


def _run_segment(run, k, carry):
    return run(carry, k)


# ------------------------------------------------------------ residual inspection
@dataclass
class Residual:
    op: str
    shape: tuple
    dtype: str
    nbytes: int


class Residuals(list):
    """What a backward pass would keep alive, one entry per distinct saved array."""

    @property
    def total_bytes(self) -> int:
        return sum(r.nbytes for r in self)

    def __str__(self):
        lines = [f"{'op':<20}{'shape':<22}{'dtype':<12}{'bytes':>14}"]
        for r in self:
            lines.append(f"{r.op:<20}{str(r.shape):<22}{r.dtype:<12}{r.nbytes:>14,}")
        lines.append(f"{'total':<54}{self.total_bytes:>14,}")
        return "\n".join(lines)


def saved_residuals(f, *args) -> Residuals:
    """Run ``f`` under reverse mode and list what the backward pass keeps alive (each
    distinct saved array once, with the operation that saved it), and the total bytes."""
    check_callable("saved_residuals", f)

    flat, tree = tree_flatten(args)
    flat = [tensor_of(x) for x in flat]
    with new_trace(TapeTrace) as tr:
        ins, _ = watch(tr, flat)
        out = f(*tree_unflatten(tree, ins))
        roots = [o.node for o in tree_flatten(out)[0]
                 if type(o) is TapeTracer and o._trace is tr and o.node is not None]
    res, seen = Residuals(), set()
    input_ids = {_buffer_id(x) for x in flat}
    for node in toposort(roots):
        if not isinstance(node, (PrimitiveNode, CheckpointNode)):
            continue
        op, vals = node.name, node.saved
        for v in vals or ():
            key, n = _buffer(v)
            if key in seen or key in input_ids:
                continue
            seen.add(key)
            res.append(Residual(op, tuple(v.shape), v.dtype.name, n))
    return res


def _buffer(v):
    """(identity, bytes) of the memory a saved value keeps alive: for NumPy arrays the whole
    underlying buffer (a view keeps its base alive; a broadcast constant is tiny)."""

    a = getattr(v, "_value", None)
    if isinstance(a, np.ndarray):
        while isinstance(a.base, np.ndarray):
            a = a.base
        return id(a), a.nbytes
    n = v.dtype.itemsize
    for d in v.shape:
        n *= d if isinstance(d, int) else 1
    return (id(v) if a is None else id(a)), n


def _buffer_id(v):
    return _buffer(v)[0]

