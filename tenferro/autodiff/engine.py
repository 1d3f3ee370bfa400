"""The reverse-mode engine shared by the eager tape and the functional transforms.

Nodes form a DAG through ``parents`` (one ``(node, output_index)`` or ``None`` per input).
``backward_pass`` visits nodes consumers-first, asks each for its input cotangents, and
accumulates fan-out with ``add``. *How* a node's derivative program runs is the context's
business: ``ImplContext`` calls ``impl`` on raw arrays (fast, nothing recorded), while
``BindContext`` binds every operation (so the backward pass is itself recorded when
``create_graph=True``, or transformed by an outer trace).
"""

from __future__ import annotations

from ..core import dispatch as D
from ..errors import GradientError
from ..ir.program import eval_program


class Node:
    __slots__ = ("parents", "__weakref__")


class LeafNode(Node):
    """Where cotangents stop: a tensor that requires grad, or a transformation's input."""

    __slots__ = ("ref", "aval")

    def __init__(self, ref, aval):
        self.parents = ()
        self.ref = ref
        self.aval = aval


class TemplateNode(Node):
    """A primitive application: its derivative template and the values the template reads."""

    __slots__ = ("tmpl", "saved")

    def __init__(self, tmpl, parents, saved):
        self.tmpl = tmpl
        self.parents = parents
        self.saved = saved

    def load(self, ctx) -> list:
        return self.saved

    def backward(self, cts, ctx):
        if self.saved is None:
            raise GradientError(
                f"{self.tmpl.prim.name}: trying to backward through the graph a second time (its "
                f"saved values were freed by the first backward). Pass retain_graph=True to the "
                f"first backward() if you need to differentiate twice."
            )
        prog = self.tmpl.vjp_program(tuple(c is not None for c in cts))
        vals = [c for c in cts if c is not None]
        vals.extend(self.load(ctx))
        return ctx.run(prog, vals)

    def release(self):
        self.saved = None


def toposort(roots) -> list[Node]:
    """All nodes reachable from ``roots``, every consumer before what it consumes."""
    seen = set()
    post = []
    for root in roots:
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack = [(root, iter(root.parents))]
        while stack:
            node, it = stack[-1]
            for p in it:
                if p is not None and id(p[0]) not in seen:
                    seen.add(id(p[0]))
                    stack.append((p[0], iter(p[0].parents)))
                    break
            else:
                stack.pop()
                post.append(node)
    post.reverse()
    return post


def backward_pass(seeds, ctx, *, retain_graph=True, nodes=None, want=None):
    """Propagate cotangents from ``seeds`` = [(node, output_index, ct)].

    Returns ``{(id(node), index): (node, ct)}`` for every ``LeafNode`` reached, or, when
    ``want`` (a collection of ``(id(node), index)``) is given, for those outputs only (and
    only the part of the graph leading to them is differentiated). Unless ``retain_graph``,
    every visited node frees its saved values.
    """
    order = toposort([s[0] for s in seeds]) if nodes is None else nodes
    needed = None
    if want is not None:
        want_nodes = {k[0] for k in want}
        needed = set()
        for node in reversed(order):  # producers first
            if id(node) in want_nodes or any(
                p is not None and id(p[0]) in needed for p in node.parents
            ):
                needed.add(id(node))
    pending: dict[int, list] = {}
    add = ctx.add
    for node, i, ct in seeds:
        _accumulate(pending, node, i, ct, add)
    got = {}
    try:
        for node in order:
            cts = pending.pop(id(node), None)
            if cts is None:
                continue
            if want is None:
                if type(node) is LeafNode:
                    got[(id(node), 0)] = (node, cts[0])
                    continue
            else:
                for i, c in enumerate(cts):
                    if (id(node), i) in want:
                        got[(id(node), i)] = (node, c)
                if type(node) is LeafNode or not any(
                    p is not None and id(p[0]) in needed for p in node.parents
                ):
                    continue
            in_cts = node.backward(cts, ctx)
            for p, c in zip(node.parents, in_cts):
                if p is not None and c is not None:
                    _accumulate(pending, p[0], p[1], c, add)
    finally:
        if not retain_graph:
            for node in order:
                if type(node) is not LeafNode:
                    node.release()
    return got


def _accumulate(pending, node, i, ct, add):
    slot = pending.get(id(node))
    if slot is None:
        slot = pending[id(node)] = [None] * _n_out(node)
    prev = slot[i]
    slot[i] = ct if prev is None else add(prev, ct)


def _n_out(node):
    return 1 if type(node) is LeafNode else len(node.tmpl.out_avals)


# ------------------------------------------------------------------------- contexts
class ImplContext:
    """Run derivative programs directly on raw arrays of one backend; nothing is recorded."""

    raw = True

    def __init__(self, xp):
        self.xp = xp

    def run(self, prog, vals):
        xp = self.xp
        env = dict(zip(prog.inputs, vals))
        for eqn in prog.eqns:
            outs = eqn.prim.impl(xp, *[env[v] for v in eqn.inputs], **eqn.params)
            if eqn.prim.multiple_results:
                for v, o in zip(eqn.outputs, outs):
                    env[v] = o
            else:
                env[eqn.outputs[0]] = outs
        return [None if v is None else env[v] for v in prog.outputs]

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

    def run(self, prog, vals):
        if self.device is None:
            return eval_program(prog, vals, _apply_bind)
        with D.default_device(self.device):
            return eval_program(prog, vals, _apply_bind)

    @staticmethod
    def add(a, b):
        return D.dispatch.add(a, b)
