"""Saved graphs keep symmetric tensors: a ``SymmetricTensor`` argument or result of a traced
graph is written with its legs and charge (``tenferro.pytree.register_pytree_serialization``),
so ``tenferro.load(path)(x)`` takes and returns symmetric tensors like the function that was
traced, not tuples of blocks. Pickles and deep copies use the same structure (``_reduce``).

The structure is written as nested tuples: a symmetry is ``("U1",)``, ``("Zn", n)`` or
``("product", factors)``; a leg is ``(symmetry, ((charge, dim), ...), dual, fused_from)``
(``dim`` may be a run-time size of a truncation under ``jit``); the node's data is
``(legs, charge)``. Reading validates everything through the ``Leg``/group constructors.
"""

from __future__ import annotations

from ..pytree import register_pytree_serialization
from .groups import U1, ProductSymmetry, Symmetry, Zn
from .legs import Leg
from .tensor import SymmetricTensor, _structure_class

NAME = "tenferro.symmetric.SymmetricTensor"


def _symmetry_value(s: Symmetry) -> tuple:
    if s is U1:
        return ("U1",)
    if isinstance(s, Zn):
        return ("Zn", s.n)
    if isinstance(s, ProductSymmetry):
        return ("product", tuple(_symmetry_value(f) for f in s.factors))
    raise TypeError(f"cannot save a symmetric tensor of the symmetry {s!r}")


def _symmetry(v) -> Symmetry:
    if v == ("U1",):
        return U1
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "Zn":
        return Zn(v[1])
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "product" and isinstance(v[1], tuple):
        return ProductSymmetry(tuple(_symmetry(f) for f in v[1]))
    raise ValueError(f"unknown symmetry {v!r}")


def _leg_value(leg: Leg) -> tuple:
    parts = None if leg.fused_from is None else tuple(_leg_value(p) for p in leg.fused_from)
    return (_symmetry_value(leg.symmetry), leg.sectors, leg.dual, parts)


def _leg(v) -> Leg:
    sym, sectors, dual, parts = v  # a malformed tuple raises here: the loader words it
    if not isinstance(sectors, tuple) or not all(
            isinstance(s, tuple) and len(s) == 2 for s in sectors):
        raise ValueError(f"sectors must be (charge, dim) pairs, got {sectors!r}")
    if type(dual) is not bool:
        raise ValueError(f"dual must be a boolean, got {dual!r}")
    fused = None if parts is None else tuple(_leg(p) for p in parts)
    return Leg(_symmetry(sym), sectors, dual, fused)


def _to_value(cls) -> tuple:
    return (tuple(_leg_value(l) for l in cls.legs), cls.charge)


def _from_value(v):
    legs_v, charge = v
    legs = tuple(_leg(l) for l in legs_v)
    if not legs or any(l.symmetry != legs[0].symmetry for l in legs):
        raise ValueError("a symmetric tensor needs at least one leg, all of one symmetry")
    cls = _structure_class(legs, legs[0].symmetry.validate(charge, NAME))
    return cls, cls


register_pytree_serialization(SymmetricTensor, NAME, _to_value, _from_value)


# Pickles and deep copies use the same plain structure: a symmetric tensor's class is made per
# (legs, charge) at run time, so it cannot be pickled by name.
def _reduce(x):
    return _rebuild, (_to_value(type(x)), x.blocks)


def _rebuild(structure, blocks) -> SymmetricTensor:
    """Unpickle a ``SymmetricTensor``: its legs and charge (checked) and its blocks."""
    cls, _ = _from_value(structure)
    return cls(blocks)  # conservation and block shapes checked


SymmetricTensor.__reduce__ = _reduce
