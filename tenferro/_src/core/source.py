"""Find the user's source line (the first frame outside tenferro and chainrules)."""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

import chainrules

_PKG_DIRS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(chainrules.__file__)) + os.sep,
)


_state = threading.local()  # per thread: ``backward_of`` and ``emitted`` (see below)


@contextmanager
def backward_of(source: str | None):
    """Attribute what is staged (and errors raised) inside to ``source``, the line of the
    forward operation whose derivative is being built, instead of the line that asked for the
    gradient: a backward equation then reads ``y = sin(x)  # model.py:12 (f), backward``."""
    prev = getattr(_state, "backward_of", None)
    _state.backward_of = None if source is None else f"{source}, backward"
    try:
        yield
    finally:
        _state.backward_of = prev


def note_emitted(source: str | None) -> None:
    """Called by the staging trace with the source line of the equation it just recorded."""
    _state.emitted = source


def take_emitted() -> str | None:
    """The source line noted since the last call (``None`` if nothing was staged)."""
    s = getattr(_state, "emitted", None)
    _state.emitted = None
    return s


def user_frame() -> str | None:
    """``"file.py:123 (function)"`` of the innermost frame that is user code (or, while a
    derivative is staged, the forward operation's line: ``backward_of``)."""
    fwd = getattr(_state, "backward_of", None)
    if fwd is not None:
        return fwd
    f = sys._getframe(1)
    while f is not None:
        fn = os.path.abspath(f.f_code.co_filename)
        if not fn.startswith(_PKG_DIRS):
            return f"{f.f_code.co_filename}:{f.f_lineno} ({f.f_code.co_name})"
        f = f.f_back
    return None


def with_user_line(err: Exception) -> Exception:
    """Append the user's source line to an error message (once)."""
    where = user_frame()
    if where and "[at " not in str(err):
        err.args = (f"{err.args[0] if err.args else ''} [at {where}]",) + tuple(err.args[1:])
    return err
