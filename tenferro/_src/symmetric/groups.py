"""Abelian symmetry groups: how charges fuse, what a charge's dual is, and the identity.

A charge is a plain hashable, orderable value: an ``int`` for ``U1`` and ``Zn``, a tuple of
the factors' charges for a ``ProductSymmetry``. Groups are frozen value objects, so legs that
carry them can be compared and hashed (block-structure plans are cached on them).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

from ..errors import ShapeError

__all__ = ["U1", "Z2", "ProductSymmetry", "Symmetry", "Zn", "product"]


class Symmetry:
    """An abelian group of charges. Subclasses define ``identity``, ``fuse``, ``dual`` and
    ``check`` (is this a valid charge?)."""

    identity: object

    def fuse(self, a, b):
        raise NotImplementedError

    def dual(self, a):
        raise NotImplementedError

    def check(self, a) -> bool:
        raise NotImplementedError

    def fuse_all(self, charges):
        """The fusion of any number of charges (the identity for none)."""
        return reduce(self.fuse, charges, self.identity)

    def validate(self, a, where: str):
        if not self.check(a):
            raise ShapeError(f"{where}: {a!r} is not a charge of {self}.")
        return a


@dataclass(frozen=True)
class _U1(Symmetry):
    """U(1): integer charges, fusion is addition (particle number, 2 S_z, ...)."""

    identity = 0

    def fuse(self, a, b):
        return a + b

    def dual(self, a):
        return -a

    def check(self, a) -> bool:
        return isinstance(a, int) and not isinstance(a, bool)

    def __repr__(self):
        return "U1"


U1 = _U1()


@dataclass(frozen=True)
class Zn(Symmetry):
    """Z_n: charges 0..n-1, fusion is addition mod n (parity for n = 2)."""

    n: int

    identity = 0

    def __post_init__(self):
        if not isinstance(self.n, int) or self.n < 2:
            raise ShapeError(f"Zn: n must be an integer >= 2, got {self.n!r}.")

    def fuse(self, a, b):
        return (a + b) % self.n

    def dual(self, a):
        return (-a) % self.n

    def check(self, a) -> bool:
        return isinstance(a, int) and not isinstance(a, bool) and 0 <= a < self.n

    def __repr__(self):
        return f"Z{self.n}"


Z2 = Zn(2)


@dataclass(frozen=True)
class ProductSymmetry(Symmetry):
    """A direct product of abelian groups (U(1) x U(1), U(1) x Z2, ...): a charge is a tuple
    with one charge per factor, fused and dualised factor by factor."""

    factors: tuple

    def __post_init__(self):
        if len(self.factors) < 2 or not all(isinstance(f, Symmetry) for f in self.factors):
            raise ShapeError(f"ProductSymmetry: needs at least two Symmetry factors, got "
                             f"{self.factors!r}.")

    @property
    def identity(self):
        return tuple(f.identity for f in self.factors)

    def fuse(self, a, b):
        return tuple(f.fuse(x, y) for f, x, y in zip(self.factors, a, b))

    def dual(self, a):
        return tuple(f.dual(x) for f, x in zip(self.factors, a))

    def check(self, a) -> bool:
        return (isinstance(a, tuple) and len(a) == len(self.factors)
                and all(f.check(x) for f, x in zip(self.factors, a)))

    def __repr__(self):
        return " x ".join(map(repr, self.factors))


def product(*factors: Symmetry) -> ProductSymmetry:
    """The product group of ``factors``, e.g. ``product(U1, U1)`` or ``product(U1, Z2)``."""
    return ProductSymmetry(tuple(factors))
