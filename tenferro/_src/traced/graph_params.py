"""What each primitive parameter may hold in a graph file (see design/graph-files.md).

Each primitive declares its parameters with their kinds where it is defined
(``Primitive(params=..., check_params=..., produces_size=...)``; the kinds live in
``chainrules.params``); the loader (``serialize.py``) reads them from the primitive. This
module keeps read-only views of those declarations by primitive name, for listings and tests,
and re-exports the limits; nothing here is written to.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from chainrules import PRIMITIVES
from chainrules.params import (  # noqa: F401  (the limits and kinds the loader's callers name)
    DTYPES,
    MAX_AXIS_INT,
    MAX_PARAM_INT,
    MAX_RANK,
    NEW_SIZE,
    BadParam,
    check_shape,
)


class _Declared(Mapping):
    """A read-only view, by primitive name, of one fact the registered primitives declare
    (primitives without it are absent). Live: a primitive registered later shows up."""

    def __init__(self, fact):
        self._fact = fact

    def __getitem__(self, name):
        prim = PRIMITIVES.get(name)
        value = None if prim is None else self._fact(prim)
        if not value:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return (name for name, prim in list(PRIMITIVES.items()) if self._fact(prim))

    def __len__(self) -> int:
        return sum(1 for _ in self)


PARAM_KINDS: Mapping[str, Mapping] = _Declared(lambda prim: prim.params)
"""Per primitive with parameters, its parameters and their kinds (``Primitive.params``)."""

PRODUCES_SIZE: Mapping[str, str] = _Declared(lambda prim: prim.produces_size)
"""Primitives whose output length is decided at run time, and the parameter naming it
(``Primitive.produces_size``). Only these may introduce a run-time size; every other equation
may only use sizes already produced (the executor binds a size right after the equation that
produces it)."""
