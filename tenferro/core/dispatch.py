"""Dispatch: the per-thread stack of traces and ``bind``.

Every operation ends in ``bind(prim, *args, **params)``. The *base* trace evaluates eagerly
(``EvalTrace``) or, while ``tenferro.trace``/``jit`` runs, appends graph nodes (``GraphTrace``).
Transformations (reverse mode, forward mode) push traces above it; their values are ``Tracer``s
wrapping values of the level below. ``bind`` hands the primitive to the highest-level trace
among its arguments: the autodidax design, one interpreter per transformation.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from chainrules import Builder

from ..errors import LeakedTracerError


class Trace:
    """One interpreter: how primitives are processed at one level of the stack."""

    level: int = 0

    def process_primitive(self, prim, args, params):  # pragma: no cover - abstract
        raise NotImplementedError

    def process_checkpoint(self, fn, args, policy):
        """Run a checkpointed function. Only reverse-mode traces (which keep residuals) do
        something special; everything else just runs it."""
        return fn(*args)

    def process_custom_vjp(self, fun, fwd, bwd, args):
        """Run a function with a user-defined VJP: only reverse-mode traces use the rule."""
        return fun(*args)


class _State(threading.local):
    def __init__(self):
        self.stack: list[Trace] = []  # transformation traces, index = level - 1
        self.base: Trace | None = None  # EvalTrace or GraphTrace
        self.grad_enabled = True
        self.default_device = None
        self.hook = None  # checkpoint policies record/replay selected primitives here


state = _State()


def base_trace() -> Trace:
    b = state.base
    if b is None:
        from .eager import EVAL_TRACE

        b = state.base = EVAL_TRACE
    return b


def top_trace(args, what="operation"):
    """The trace that must process an operation on ``args``."""
    st = state
    top = st.base
    if top is None:
        top = base_trace()
    if st.stack:
        for a in args:
            tr = getattr(a, "_trace", None)
            if tr is not None and tr.level > top.level:
                top = tr
        if top.level and st.stack[top.level - 1] is not top:
            raise LeakedTracerError(
                f"{what}: an input is a tracer of a transformation that has already "
                f"finished (it leaked out, e.g. through a global or a closure). Pass values "
                f"in as arguments and return them as outputs instead."
            )
    return top


def bind(prim, *args, **params):
    """Apply ``prim`` at the right level: the highest trace among the arguments."""
    st = state
    top = st.base
    if top is None:
        top = base_trace()
    if st.stack:
        top = top_trace(args, prim.name)
    if st.hook is not None:
        out = st.hook(prim, top, args, params)
        if out is not NotImplemented:
            return out
    return top.process_primitive(prim, args, params)


@contextmanager
def new_trace(make):
    """Push a transformation trace built by ``make(level)``; pop it on exit."""
    st = state
    tr = make(len(st.stack) + 1)
    st.stack.append(tr)
    try:
        yield tr
    finally:
        st.stack.pop()
        tr.finished = True


@contextmanager
def new_base(trace: Trace):
    """Swap the base trace (graph building) with an empty transformation stack."""
    st = state
    saved = st.base, st.stack
    st.base, st.stack = trace, []
    try:
        yield trace
    finally:
        st.base, st.stack = saved


@contextmanager
def default_device(device):
    """Where constants created without operands (``zeros``, ``full``...) are placed."""
    st = state
    old = st.default_device
    st.default_device = device
    try:
        yield
    finally:
        st.default_device = old


class DispatchBuilder(Builder):
    """The builder of the current dispatch: ``bind`` goes through the trace stack."""

    def bind(self, prim, *args, **params):
        return bind(prim, *args, **params)


dispatch = DispatchBuilder()
