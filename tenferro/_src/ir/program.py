"""A small SSA intermediate representation: ``Var``, ``Eqn``, ``Program``.

Used for three things: the derivative *templates* compiled from primitive rules, the linear
maps recorded by ``linearize``, and the graphs of traced mode.
"""

from __future__ import annotations

import itertools

from chainrules import Builder, ShapedArray
from chainrules.core import out_avals, params_str

_counter = itertools.count()


class Var:
    """A value in a program, known only by its abstract value."""

    __slots__ = ("aval", "id")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.id = next(_counter)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    device = None  # programs are device-agnostic; the executor decides

    def __repr__(self):
        return f"%{self.id}:{self.aval}"


class Eqn:
    """One primitive application: ``outputs = prim(*inputs, **params)``."""

    __slots__ = ("prim", "inputs", "params", "outputs", "source")

    def __init__(self, prim, inputs, params, outputs, source=None):
        self.prim = prim
        self.inputs = list(inputs)
        self.params = params
        self.outputs = list(outputs)
        self.source = source

    def __repr__(self):
        outs = ", ".join(map(repr, self.outputs))
        ins = ", ".join(f"%{v.id}" for v in self.inputs)
        ps = params_str(self.params)
        return f"{outs} = {self.prim.name}({ins}{'; ' + ps if ps else ''})"


class Program:
    """A straight-line program. ``outputs`` may hold ``None`` for symbolic-zero outputs."""

    def __init__(self, inputs, eqns, outputs, consts=None):
        self.inputs = list(inputs)
        self.eqns = list(eqns)
        self.outputs = list(outputs)
        self.consts = dict(consts or {})  # Var -> concrete value
        self._has_symbols = None

    def has_symbols(self) -> bool:
        """Whether some shape is a size known only at run time (``chainrules.symbolic``)."""
        if self._has_symbols is None:
            self._has_symbols = any(
                not isinstance(d, int) for e in self.eqns for v in e.outputs
                for d in v.aval.shape
            )
        return self._has_symbols

    def __repr__(self):
        lines = [f"program({', '.join(map(repr, self.inputs))}):"]
        lines += [f"  {e!r}" for e in self.eqns]
        outs = ", ".join("0" if v is None else f"%{v.id}" for v in self.outputs)
        lines.append(f"  return {outs}")
        return "\n".join(lines)


class IRBuilder(Builder):
    """A builder that records equations instead of computing."""

    def __init__(self):
        self.eqns: list[Eqn] = []

    def bind(self, prim, *args, **params):
        avals = [a.aval for a in args]
        outs = [Var(a) for a in out_avals(prim, avals, params)]
        self.eqns.append(Eqn(prim, args, params, outs))
        return prim.unpack(outs)


def params_key(params: dict):
    """A hashable key for a params dict (sorted items; cheap for the common small cases)."""
    if not params:
        return ()
    if len(params) == 1:
        return tuple(params.items())
    return tuple(sorted(params.items()))


def dce(eqns, outputs) -> list[Eqn]:
    """Keep only the equations the ``outputs`` depend on."""
    live = {id(v) for v in outputs if v is not None}
    kept = []
    for eqn in reversed(eqns):
        if any(id(v) in live for v in eqn.outputs):
            kept.append(eqn)
            live.update(id(v) for v in eqn.inputs)
    kept.reverse()
    return kept


def used_vars(eqns, outputs) -> set[int]:
    ids = {id(v) for v in outputs if v is not None}
    for eqn in eqns:
        ids.update(id(v) for v in eqn.inputs)
    return ids
