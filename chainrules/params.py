"""Parameter kinds: what each parameter of a primitive may hold (``Primitive(params=...)``).

``abstract_eval`` rules check that parameters *fit* their operands (axes in range, sizes that
match) but trust their Python types, because in-process callers are trusted. A graph file is
not: a float where an axis belongs, a bool where a size belongs or a huge integer would pass
shape inference and fail (or allocate without bound) only when the graph runs. So every
primitive declares, with its parameters, the *kind* of each: a function
``kind(value, max_elements) -> None`` that raises ``BadParam``. The graph loader runs them on
every equation of a file before ``abstract_eval`` (design/graph-files.md).
"""

from __future__ import annotations

import re

import numpy as np

from . import dtypes
from .symbolic import Sym, bound_of

MAX_RANK = 64
"""Most axes an array (or a shape parameter) may have: NumPy's own limit."""

MAX_PARAM_INT = 2**62
"""Largest magnitude of a position parameter (slice bounds, padding, ranks): fits int64."""
MAX_AXIS_INT = 2**31 - 1
"""Largest magnitude of an axis, offset or diagonal parameter: fits a C int (NumPy's
``diagonal`` overflows beyond it)."""

DTYPES = {d.name: d for d in dtypes.ALL}
"""The dtypes a graph file may name (values, constants and dtype parameters), by name."""

_DEVICE = re.compile(r"(cpu|cuda|gpu|strict)(:[0-9]{1,4})?")


class BadParam(Exception):
    """A parameter does not have its kind (the caller adds where it is)."""


def _int(v, limit=MAX_PARAM_INT) -> bool:
    return type(v) is int and -limit <= v <= limit


def _real(v) -> bool:
    return _int(v) or type(v) is float


def elements(shape) -> int:
    """Number of elements, counting a run-time size at its static upper bound."""
    n = 1
    for d in shape:
        n *= bound_of(d)
    return n


def check_shape(shape, max_elements: int, what: str = "shape") -> None:
    """A shape: a tuple of at most ``MAX_RANK`` sizes (ints >= 0 or run-time sizes) whose
    element count is at most ``max_elements``."""
    if type(shape) is not tuple:
        raise BadParam(f"a {what} must be a tuple of sizes, got {shape!r}")
    if len(shape) > MAX_RANK:
        raise BadParam(f"{what} has {len(shape)} axes; at most {MAX_RANK} are allowed")
    for d in shape:
        if not (isinstance(d, Sym) or (type(d) is int and 0 <= d <= max_elements)):
            raise BadParam(
                f"{what} {shape!r} has the size {d!r}; sizes are integers from 0 to "
                f"max_elements={max_elements} (or run-time sizes)"
            )
    n = elements(shape)
    if n > max_elements:
        raise BadParam(
            f"{what} {shape!r} has {n} elements, more than max_elements={max_elements}; "
            f"if the file is trusted, load it with a larger max_elements"
        )


# ------------------------------------------------------------------------------- kinds
def INT(v, _):
    """An axis, offset or diagonal."""
    if not _int(v, MAX_AXIS_INT):
        raise BadParam(f"expected an integer (|n| < 2**31), got {v!r}")


def INDEX(v, _):
    """A position or count along an axis."""
    if not _int(v):
        raise BadParam(f"expected an integer (|n| <= 2**62), got {v!r}")


def BOOL(v, _):
    if type(v) is not bool:
        raise BadParam(f"expected true or false, got {v!r}")


def TEXT(v, _):
    """A short message fragment (an operation's name, what it indexes, a hint)."""
    if type(v) is not str or len(v) > 300 or not v.isprintable():
        raise BadParam(f"expected a short printable string, got {v!r:.60}")


def SIZE(v, _):
    """A size: an integer >= 0, or a run-time size."""
    if not (isinstance(v, Sym) or (_int(v) and v >= 0)):
        raise BadParam(f"expected a size (an integer >= 0 or a run-time size), got {v!r}")


def REAL(v, _):
    if not _real(v):
        raise BadParam(f"expected a real number, got {v!r}")


def OPT_REAL(v, m):
    if v is not None:
        REAL(v, m)


def OPT_POS_INT(v, _):
    if v is not None and not (_int(v) and v >= 1):
        raise BadParam(f"expected null or an integer >= 1, got {v!r}")


def SCALAR(v, _):
    """A fill value (whether it fits the dtype is checked with the dtype)."""
    if type(v) not in (bool, int, float, complex):
        raise BadParam(f"expected a number, got {v!r}")


def DTYPE(v, _):
    if not (isinstance(v, np.dtype) and DTYPES.get(v.name) == v):
        raise BadParam(f"expected one of the dtypes {', '.join(DTYPES)}, got {v!r}")


def DEVICE(v, _):
    if not (v is None or (type(v) is str and _DEVICE.fullmatch(v))):
        raise BadParam(f"expected null or a device such as 'cpu' or 'cuda:0', got {v!r}")


def SHAPE(v, m):
    check_shape(v, m)


def tuple_of(kind, n=None):
    """The kind of a tuple (of ``n`` entries, or at most ``MAX_RANK``) of ``kind`` values."""

    def check(v, m):
        if type(v) is not tuple or len(v) > MAX_RANK or (n is not None and len(v) != n):
            size = f"{n}" if n is not None else f"at most {MAX_RANK}"
            raise BadParam(f"expected a tuple of {size} entries, got {v!r}")
        for x in v:
            kind(x, m)

    return check


def one_of(names):
    """The kind of a string naming one of ``names``."""
    names = tuple(names)

    def check(v, _):
        if type(v) is not str or v not in names:
            raise BadParam(f"expected one of {', '.join(names)}, got {v!r}")

    return check


def _index_or_size(v, m):
    if not isinstance(v, Sym):
        INDEX(v, m)


INTS = tuple_of(INT)
INDICES = tuple_of(INDEX)
SLICE_LIMITS = tuple_of(_index_or_size)  # the whole of a run-time axis is sliced up to it
DIMENSION_NUMBERS = tuple_of(tuple_of(INTS, 2), 2)
PADDING = tuple_of(tuple_of(INDEX, 3))


def BASIC_SPEC(v, _):
    """A basic index: per entry an int (a dropped axis), None (a new axis), or a resolved
    slice (start, stop or None, step != 0)."""
    if type(v) is not tuple or len(v) > 2 * MAX_RANK:
        raise BadParam(f"expected a tuple of index entries, got {v!r}")
    for e in v:
        ok = e is None or (_int(e) and e >= 0) or (
            type(e) is tuple and len(e) == 3 and _int(e[0]) and e[0] >= 0
            and (e[1] is None or (_int(e[1]) and e[1] >= 0)) and _int(e[2]) and e[2] != 0)
        if not ok:
            raise BadParam(f"expected an int, null or [start, stop, step] entry, got {e!r}")


def FFT_NORM(v, _):
    if v not in ("backward", "ortho", "forward"):
        raise BadParam(f"expected 'backward', 'ortho' or 'forward', got {v!r}")


def LENGTH(v, m):
    if not (_int(v) and 1 <= v <= m):
        raise BadParam(f"expected a length from 1 to max_elements={m}, got {v!r}")


def NEW_SIZE(v, _):
    """A run-time size this equation produces (see ``Primitive.produces_size``)."""
    if not (isinstance(v, Sym) and v.is_symbol):
        raise BadParam(f"expected a run-time size (a single symbol), got {v!r}")
