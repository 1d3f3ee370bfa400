"""Legs: the charge sectors of one tensor index, their dimensions, and the index's direction.

A leg is a sequence of sectors ``(charge, dim)``; the dense index runs over the sectors in
that order (sector 0's ``dim`` entries first). ``dual`` is the direction: the *effective*
charge of sector ``q`` is ``q`` on an ordinary leg and ``dual(q)`` on a dual one. A tensor with
total charge ``c`` has a block for the sectors ``(q_1, ..., q_n)`` only if the effective
charges fuse to ``c``. Two legs contract when they have the same sectors and opposite
directions (``leg.flip()``), so the charges flowing through them cancel.

A leg made by ``fuse_legs`` remembers its parts (``fused_from``), so ``split_legs`` can undo it.

Under ``jit`` a sector's dimension may be a run-time size (a ``chainrules.symbolic.Sym``, e.g.
the number of values one sector keeps in a truncation across sectors); such a dimension may
be 0 at run time (the sector is then empty; eager mode drops it from the leg instead).
``resolve_leg`` turns it back into ints once the blocks are concrete.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from chainrules.symbolic import Sym, size_range

from ..caches import BoundedCache
from ..errors import DTypeError, ShapeError
from ..tn.arguments import FLAG, checked, describe, size
from . import arguments as sarg
from .groups import Symmetry

__all__ = ["Leg", "leg_from_charges"]


@dataclass(frozen=True, eq=False)
class Leg:
    """One index of a symmetric tensor: ``symmetry``, ``sectors`` (pairs ``(charge, dim)``,
    charges distinct, dims >= 1, or run-time sizes under ``jit``), ``dual`` (direction) and,
    for a fused leg, the legs it was fused from."""

    symmetry: Symmetry
    sectors: tuple
    dual: bool = False
    fused_from: tuple | None = None
    _index: dict = field(default=None, init=False, repr=False, compare=False, hash=False)
    _hash: int = field(default=0, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        if not isinstance(self.symmetry, Symmetry):
            sarg.symmetry("Leg", "the symmetry", self.symmetry)  # raises, naming it
        secs = self.sectors
        if type(secs) is not tuple or not all(  # the common case, checked fast
                type(s) is tuple and len(s) == 2 and type(s[1]) is int for s in secs):
            secs = tuple(_sector(item) for item in _sector_list(secs))
        for q, d in secs:
            self.symmetry.validate(q, "Leg")
            if size_range(d)[1] < 1 or (not isinstance(d, Sym) and d < 1):
                raise ShapeError(f"Leg: sector {q!r} has dimension {d}; dimensions must be "
                                 f">= 1 (leave empty sectors out).")
        charges = [q for q, _ in secs]
        if len(set(charges)) != len(charges):
            raise ShapeError(f"Leg: repeated charge in sectors {secs}; give each charge once "
                             f"with its total dimension.")
        object.__setattr__(self, "sectors", secs)
        object.__setattr__(self, "dual", bool(self.dual))
        index, off = {}, 0
        for q, d in secs:
            index[q] = (off, d)
            off += d
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_hash", hash((self.symmetry, secs, self.dual,
                                                self.fused_from)))

    # legs key every cache (plans, structures, fusions): hash once, compare by identity first
    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Leg) or self._hash != other._hash:
            return False
        return (self.symmetry == other.symmetry and self.sectors == other.sectors
                and self.dual == other.dual and self.fused_from == other.fused_from)

    # ------------------------------------------------------------------ queries
    @property
    def charges(self) -> tuple:
        return tuple(q for q, _ in self.sectors)

    @property
    def is_static(self) -> bool:
        """Whether every sector dimension (and every part's, for a fused leg) is an int."""
        return not any(isinstance(d, Sym) for _, d in self.sectors) and (
            self.fused_from is None or all(l.is_static for l in self.fused_from))

    @property
    def dim(self) -> int:
        """The dense dimension (sum of the sector dimensions)."""
        return sum(d for _, d in self.sectors)

    def sector_dim(self, q) -> int:
        return self._index[q][1]

    def sector_slice(self, q) -> slice:
        off, d = self._index[q]
        return slice(off, off + d)

    def has(self, q) -> bool:
        return q in self._index

    def effective(self, q):
        """The charge that sector ``q`` contributes to conservation (``dual(q)`` on a dual leg)."""
        return self.symmetry.dual(q) if self.dual else q

    def flip(self) -> Leg:
        """The same sectors in the opposite direction: the leg this one contracts with."""
        fused = None if self.fused_from is None else tuple(l.flip() for l in self.fused_from)
        return Leg(self.symmetry, self.sectors, not self.dual, fused)

    def can_contract(self, other: Leg) -> bool:
        return (self.symmetry == other.symmetry and self.sectors == other.sectors
                and self.dual != other.dual)

    def __repr__(self):
        secs = ", ".join(f"{q!r}:{d}" for q, d in self.sectors)
        return f"Leg({self.symmetry!r}, {{{secs}}}{', dual' if self.dual else ''})"

    # ------------------------------------------------------------------ fusion
    def fusion_map(self) -> dict:
        """For a fused leg: charge -> list of (sub-charges, offset, sub-dims) in the order
        their entries are laid out inside the fused sector."""
        if self.fused_from is None:
            raise ShapeError(f"split_legs: {self!r} was not made by fuse_legs.")
        return _fusion_map(self.fused_from, self.dual)


def _sector_list(sectors):
    if isinstance(sectors, (str, bytes, dict)) or not isinstance(sectors, (Sequence, range)):
        raise DTypeError(f"Leg: sectors must be a sequence of (charge, dim) pairs, got "
                         f"{describe(sectors)}.")
    return sectors


def _sector(item) -> tuple:
    """One ``(charge, dim)`` pair with an int (or run-time) dimension; a dimension that is not
    a whole number is an error, never rounded."""
    if isinstance(item, (str, bytes)) or not isinstance(item, Sequence) or len(item) != 2:
        raise ShapeError(f"Leg: each sector must be a (charge, dim) pair, got "
                         f"{describe(item)}.")
    q, d = item
    if type(d) is not int and not isinstance(d, Sym):
        d = size("Leg", f"the dimension of sector {q!r}", d)
    return q, d


_FUSION_CACHE = BoundedCache("symmetric leg fusions", 4096)


def resolve_leg(leg: Leg, env: dict) -> Leg:
    """``leg`` with its run-time sizes evaluated in ``env`` ({symbol: int}) and sectors of
    dimension 0 dropped (as eager mode drops them); recursive for fused legs. Raises
    ``ShapeError`` when a size cannot be evaluated."""
    if leg.is_static:
        return leg
    secs = []
    for q, d in leg.sectors:
        if isinstance(d, Sym):
            d = d.evaluate(env)
            if isinstance(d, Sym):
                raise ShapeError(f"symmetric: the run-time size {d} of sector {q!r} on "
                                 f"{leg!r} is not known from the result's blocks.")
        if d > 0:
            secs.append((q, d))
    parts = None if leg.fused_from is None else tuple(resolve_leg(l, env)
                                                      for l in leg.fused_from)
    return Leg(leg.symmetry, tuple(secs), leg.dual, parts)


def _fusion_map(parts: tuple, dual: bool) -> dict:
    key = (parts, dual)
    hit = _FUSION_CACHE.get(key)
    if hit is not None:
        return hit
    sym = parts[0].symmetry
    groups: dict = {}
    for combo in itertools.product(*[l.sectors for l in parts]):
        eff = sym.fuse_all(l.effective(q) for l, (q, _) in zip(parts, combo))
        qf = sym.dual(eff) if dual else eff
        groups.setdefault(qf, []).append(combo)
    out = {}
    for qf in sorted(groups):
        entries, off = [], 0
        for combo in groups[qf]:
            dims = tuple(d for _, d in combo)
            entries.append((tuple(q for q, _ in combo), off, dims))
            off += math.prod(dims)
        out[qf] = (entries, off)
    _FUSION_CACHE.put(key, out)
    return out


def fused_leg(parts: Sequence[Leg], dual: bool = False) -> Leg:
    """The leg made by fusing ``parts`` (same symmetry): one sector per reachable charge, of
    dimension the sum over the sector combinations that fuse to it."""
    parts = tuple(parts)
    hit = _FUSED_LEGS.get((parts, dual))
    if hit is not None:
        return hit
    if not parts:
        raise ShapeError("fuse_legs: no legs to fuse.")
    sym = parts[0].symmetry
    if any(l.symmetry != sym for l in parts):
        raise ShapeError(f"fuse_legs: legs of different symmetries {[l.symmetry for l in parts]}.")
    fmap = _fusion_map(parts, dual)
    leg = Leg(sym, tuple((q, size) for q, (_, size) in fmap.items()), dual, parts)
    _FUSED_LEGS.put((parts, dual), leg)
    return leg


_FUSED_LEGS = BoundedCache("symmetric fused legs", 4096)


@checked(symmetry=sarg.symmetry, charges=sarg.charges, dual=FLAG)
def leg_from_charges(symmetry: Symmetry, charges: Sequence, dual: bool = False):
    """A leg from the charge of each dense index (in any order), and the permutation that
    sorts the dense index into the leg's sector order (stable): ``dense.take(perm, axis)``
    is laid out as the leg. Returns ``(leg, perm)``."""
    for q in charges:
        symmetry.validate(q, "leg_from_charges")
    order = sorted(set(charges))
    perm = [i for q in order for i, c in enumerate(charges) if c == q]
    leg = Leg(symmetry, tuple((q, charges.count(q)) for q in order), dual)
    return leg, np.asarray(perm, dtype=np.int64)
