"""Find the user's source line (the first frame outside tenferro and chainrules)."""

from __future__ import annotations

import os
import sys

import chainrules

_PKG_DIRS = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
    os.path.dirname(os.path.abspath(chainrules.__file__)) + os.sep,
)


def user_frame() -> str | None:
    """``"file.py:123 (function)"`` of the innermost frame that is user code."""
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
