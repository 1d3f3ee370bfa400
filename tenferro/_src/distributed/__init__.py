"""Implementation of ``tenferro.distributed`` (its docstring is the user documentation)."""

from .api import value_and_grad

__all__ = ["value_and_grad"]
