"""What the arguments of the symmetric-tensor functions must be: the rules of
``tenferro._src.tn.arguments`` (sizes, tolerances, the ``checked`` decorator) plus the kinds
only symmetric tensors have (a symmetry group, charges, axes of a tensor with ``ndim`` legs,
per-sector ranks; the rules for a ``SymmetricTensor`` and for legs live with those classes in
``tensor.py``). Every rule raises ``DTypeError`` for a wrong kind of object and
``ShapeError`` for a wrong value, naming the function and the argument.

Axes follow NumPy: ``-ndim <= axis < ndim``; anything else is an error, never wrapped.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import DTypeError, ShapeError
from ..tn.arguments import checked, describe, rule, size, whole_number  # noqa: F401
from .groups import Symmetry

__all__: list = []  # internal


def axis(op: str, name: str, value, ndim: int, *, within: str | None = None) -> int:
    """One axis of a tensor with ``ndim`` legs, in ``[-ndim, ndim)``, as a non-negative int
    (``within``: the sequence it belongs to, for the message)."""
    n = whole_number(value)
    what = f"{name}={value!r}" if within is None else f"axis {value!r} of {within}"
    if n is None:
        raise DTypeError(f"{op}: {what} is not an integer axis.")
    if not -ndim <= n < ndim:
        raise ShapeError(f"{op}: {what} is out of range for a tensor with {ndim} legs (axes "
                         f"{-ndim}..{ndim - 1}).")
    return n % ndim


def axes(op: str, name: str, value, ndim: int) -> tuple:
    """Distinct axes of a tensor with ``ndim`` legs (a sequence of integers)."""
    if type(value) in (tuple, list) and all(type(a) is int and -ndim <= a < ndim
                                            for a in value):  # the common case, fast
        out = tuple(a % ndim for a in value)
        if len(set(out)) == len(out):
            return out
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, range)):
        raise DTypeError(f"{op}: {name} must be a sequence of integer axes, got "
                         f"{describe(value)}.")
    within = f"{name} {tuple(value)!r}"
    out = tuple(axis(op, name, a, ndim, within=within) for a in value)
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: {within} names an axis twice.")
    return out


def symmetry(op: str, name: str, value) -> Symmetry:
    """A ``Symmetry`` group object."""
    if not isinstance(value, Symmetry):
        raise DTypeError(f"{op}: {name} must be a Symmetry (U1, Z2, Zn(n), product(...)), "
                         f"got {describe(value)}.")
    return value


def charges(op: str, name: str, value) -> list:
    """A non-empty sequence of charges (each checked by its symmetry where it is used)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, range)) or len(
            value) == 0:
        raise DTypeError(f"{op}: {name} must be a non-empty sequence of charges, got "
                         f"{describe(value)}.")
    return list(value)


def sector_ranks(op: str, ranks, available: dict) -> dict:
    """Per-sector ranks ``{charge: r}``: integers >= 0 for charges of ``available``
    (``{charge: the sector's full size}``). Sectors not listed keep nothing; at least one
    value must be kept in all."""
    if not isinstance(ranks, dict):
        raise DTypeError(f"{op}: sector_ranks must be a dict {{charge: rank}}, got "
                         f"{describe(ranks)}.")
    unknown = [q for q in ranks if q not in available]
    if unknown:
        raise ShapeError(f"{op}: sector_ranks names charges {unknown!r} that are not sectors "
                         f"of the bond; its sectors are {sorted(available)!r}.")
    out = {q: min(size(op, f"sector_ranks[{q!r}]", ranks.get(q, 0), minimum=0), n)
           for q, n in available.items()}
    if not any(out.values()):
        raise ShapeError(f"{op}: sector_ranks {ranks!r} keeps no singular value; give at least "
                         f"one sector a rank >= 1.")
    return out


SYMMETRY = symmetry
