"""Batching: ``vmap`` as a trace (one interpreter per transformation) over the primitives'
``batch`` rules (``chainrules``). See design/vmap.md."""

from .api import vmap

__all__ = ["vmap"]
