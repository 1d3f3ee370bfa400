"""The reverse-mode engine shared by the eager tape and the functional transforms.

Nodes form a DAG through ``parents`` (one ``(node, output_index)`` or ``None`` per input) and
carry a creation sequence number: a consumer is always created after what it consumes, so
processing nodes by decreasing sequence number (a heap) visits every consumer first, without a
separate topological sort. Fan-out is accumulated with ``add``.

*How* a node's derivative program runs is the context's business: ``ImplContext`` calls the
compiled ``impl`` functions on raw arrays (fast, nothing recorded), while ``BindContext``
binds every operation, so the backward pass is itself recorded (``create_graph=True``) or
seen by an enclosing transformation.
"""

from __future__ import annotations

import heapq
import itertools

from ..core import dispatch as D
from ..errors import GradientError
from ..ir.eval import eval_program

_SEQ = itertools.count()


class Node:
    __slots__ = ("parents", "seq", "__weakref__")


class LeafNode(Node):
    """Where cotangents stop: a tensor that requires grad, or a transformation's input."""

    __slots__ = ("ref", "aval")

    n_out = 1

    def __init__(self, ref, aval):
        self.parents = ()
        self.seq = next(_SEQ)
        self.ref = ref
        self.aval = aval


class TemplateNode(Node):
    """A primitive application: its derivative template and the values the template reads."""

    __slots__ = ("tmpl", "saved", "n_out")

    def __init__(self, tmpl, parents, saved):
        self.seq = next(_SEQ)
        self.tmpl = tmpl
        self.parents = parents
        self.saved = saved
        self.n_out = len(tmpl.out_avals)

    def load(self, ctx) -> list:
        return self.saved

    def backward(self, cts, ctx):
        if self.saved is None:
            raise GradientError(
                f"{self.tmpl.prim.name}: trying to backward through the graph a second time (its "
                f"saved values were freed by the first backward). Pass retain_graph=True to the "
                f"first backward() if you need to differentiate twice."
            )
        if self.n_out == 1:
            mask = self.tmpl.mask1
            vals = [cts[0]]
        else:
            mask = tuple(c is not None for c in cts)
            vals = [c for c in cts if c is not None]
        vals.extend(self.load(ctx))
        return ctx.apply_vjp(self, mask, vals)

    def release(self):
        self.saved = None


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


def backward_pass(seeds, ctx, *, retain_graph=True, want=None):
    """Propagate cotangents from ``seeds`` = [(node, output_index, ct)].

    Returns ``{(id(node), index): (node, ct)}`` for every ``LeafNode`` reached, or, when
    ``want`` (a collection of ``(id(node), index)``) is given, for those outputs only (and
    only the part of the graph leading to them is differentiated). Unless ``retain_graph``,
    every visited node frees its saved values.
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
    try:
        while heap:
            node = heapq.heappop(heap)[1]
            cts = pending.pop(id(node))
            if type(node) is LeafNode:
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
            in_cts = node.backward(cts, ctx)
            for p, c in zip(node.parents, in_cts):
                if p is not None and c is not None:
                    _accumulate(pending, heap, p[0], p[1], c, add)
    finally:
        if not retain_graph:
            for node in visited:
                node.release()
    return got


def _accumulate(pending, heap, node, i, ct, add):
    slot = pending.get(id(node))
    if slot is None:
        slot = pending[id(node)] = [None] * node.n_out
        heapq.heappush(heap, (-node.seq, node))
    prev = slot[i]
    slot[i] = ct if prev is None else add(prev, ct)


# ------------------------------------------------------------------------- contexts
class ImplContext:
    """Run compiled derivative programs on raw arrays, each on its node's backend;
    nothing is recorded."""

    raw = True

    @staticmethod
    def apply_vjp(node, mask, vals):
        return node.tmpl.vjp_impl(mask)(node.backend.xp, (), *vals)

    @staticmethod
    def add(a, b):
        return a + b


def _apply_bind(prim, vals, params):
    out = D.bind(prim, *vals, **params)
    return out if prim.multiple_results else (out,)


class BindContext:
    """Run derivative programs through ``bind``: at the current dispatch level, recorded by
    whatever trace (or tape) the values belong to."""

    raw = False

    def __init__(self, device=None):
        self.device = device

    def apply_vjp(self, node, mask, vals):
        prog = node.tmpl.vjp_program(mask)
        # constants the program creates go where its cotangent lives
        device = self.device or getattr(vals[0], "device", None)
        if device is None:
            return eval_program(prog, vals, _apply_bind)
        with D.default_device(device):
            return eval_program(prog, vals, _apply_bind)

    @staticmethod
    def add(a, b):
        return D.dispatch.add(a, b)
