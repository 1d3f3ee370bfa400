"""Implementation of ``tenferro.nn`` (its docstring is the user documentation)."""

from . import functional, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all

__all__ = sorted(["functional", "utils", *_modules_all])
del _modules_all
