"""Dispatch: the per-thread stack of traces, and ``bind``.

Every operation ends in ``bind(prim, *args, **params)``. The *base* trace evaluates eagerly
(``EvalTrace``) or, while ``tenferro.make_graph``/``jit`` runs, appends equations to a program
(``StagingTrace``). Transformations (reverse mode, forward mode, linearization) push traces
above it; their values are ``Tracer``s wrapping values of the level below. ``bind`` hands the
primitive to the highest-level trace among its arguments after lifting every argument into
that trace (``Trace.full_raise``): autodidax's design, one interpreter per transformation.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from chainrules import Builder

from ..backends import get_backend
from ..errors import LeakedTracerError


class Trace:
    """One interpreter: how primitives are processed at one level of the stack.

    ``process_*`` methods receive values already lifted into this trace and return a list of
    outputs (values of this trace or of any lower level: lower values are constants here)."""

    level: int = 0
    eager = False  # EvalTrace: values need no lifting and ``eval`` returns outputs unpacked

    def pure(self, x):
        """A value of a lower level (or a constant) as a value of this trace."""
        return x

    def full_raise(self, x):
        if getattr(x, "_trace", None) is self:
            return x
        return self.pure(x)

    def lift_all(self, args) -> list:
        return [self.full_raise(a) for a in args]

    def process_primitive(self, prim, tracers, params) -> list:  # pragma: no cover
        raise NotImplementedError

    def process_checkpoint(self, fn, tracers, policy) -> list:
        """Run a checkpointed function. Only reverse-mode traces (which keep residuals) do
        something special; everything else just runs it."""
        return fn(*tracers)

    def process_custom_vjp(self, call, tracers) -> list:
        """A function with a user-defined VJP rule (``core.calls``): by default just run it."""
        return call.fun(*tracers)

    def process_custom_jvp(self, call, tracers) -> list:
        """A function with a user-defined JVP rule (``core.calls``): by default just run it."""
        return call.fun(*tracers)


class _State(threading.local):
    def __init__(self):
        self.stack: list[Trace] = []  # transformation traces, index = level - 1
        self.base: Trace | None = None  # EvalTrace or StagingTrace
        self._grad_enabled = True
        self.default_device = None
        self._hook = None
        # ``fast``: ``None`` unless the base is the eager trace, no transformation runs and
        # no hook is set; then whether grad mode is on. ``bind`` hands such an op straight to
        # ``EvalTrace.eval`` after one thread-local read (instead of four). Kept up to date by
        # ``new_trace``, ``new_base`` and the ``hook``/``grad_enabled`` setters.
        self.fast = True

    @property
    def grad_enabled(self) -> bool:
        """Whether eager operations on tensors that require grad are recorded."""
        return self._grad_enabled

    @grad_enabled.setter
    def grad_enabled(self, enabled: bool):
        self._grad_enabled = enabled
        self.refresh()

    @property
    def hook(self):
        """Checkpoint policies record/replay selected primitives here (``None``: none)."""
        return self._hook

    @hook.setter
    def hook(self, hook):
        self._hook = hook
        self.refresh()

    def refresh(self) -> None:
        """Recompute ``fast`` after the base, the stack, the hook or grad mode changed."""
        base = self.base
        plain = (base is None or base.eager) and not self.stack and self._hook is None
        self.fast = self._grad_enabled if plain else None


state = _State()
_EVAL_TRACE: list[Trace] = []  # set by core.eager (the default base trace)


def base_trace() -> Trace:
    b = state.base
    if b is None:
        b = state.base = _EVAL_TRACE[0]
        state.refresh()
    return b


def top_trace(args, what="operation") -> Trace:
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


def _apply(prim, args, params) -> list:
    """Hand ``prim`` to the highest trace among ``args``, lifting every argument into it."""
    st = state
    top = st.base
    if top is None:
        top = base_trace()
    if st.stack:
        top = top_trace(args, prim.name)
    return _dispatch(top, prim, args, params, st)


def _dispatch(top, prim, args, params, st) -> list:
    tracers = top.lift_all(args)
    if st.hook is not None:
        out = st.hook(prim, top, tracers, params)
        if out is not NotImplemented:
            return out
    if prim.process is not None:  # a higher-order primitive (a call with sub-programs)
        return prim.process(top, tracers, params)
    return top.process_primitive(prim, tracers, params)


def bind_list(prim, *args, **params) -> list:
    """Apply ``prim`` at the right level; always returns the list of outputs."""
    return _apply(prim, args, params)


def bind(prim, *args, **params):
    """``bind_list`` for user-facing code: the single output, or a tuple of outputs."""
    grad = state.fast
    if grad is not None and prim.process is None:  # plain eager: the hot path
        return _EVAL_TRACE[0].eval(prim, args, params, grad)
    st = state
    top = st.base
    if top is None:
        top = base_trace()
    if st.stack:
        top = top_trace(args, prim.name)
    return prim.unpack(_dispatch(top, prim, args, params, st))


@contextmanager
def new_trace(make):
    """Push a transformation trace built by ``make(level)``; pop it on exit."""
    st = state
    tr = make(len(st.stack) + 1)
    st.stack.append(tr)
    st.fast = None
    try:
        yield tr
    finally:
        st.stack.pop()
        st.refresh()


@contextmanager
def new_base(trace: Trace):
    """Swap the base trace (graph building) with an empty transformation stack."""
    st = state
    saved = st.base, st.stack
    st.base, st.stack = trace, []
    st.refresh()
    try:
        yield trace
    finally:
        st.base, st.stack = saved
        st.refresh()


@contextmanager
def default_device(device):
    """Where constants created without operands (``zeros``, ``full``...) are placed.

    The device is checked on entry: an unknown device, or one whose backend is not installed
    (``cuda`` without CuPy), raises ``DeviceError`` here, before the block runs."""
    if device is not None:
        get_backend(device)
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
