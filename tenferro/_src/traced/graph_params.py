"""What each primitive parameter may hold in a graph file (see design/graph-files.md).

``abstract_eval`` rules check that parameters *fit* their operands (axes in range, sizes that
match) but trust their Python types, because in-process callers are trusted. A file is not:
a float where an axis belongs, a bool where a size belongs or a huge integer would pass
shape inference and fail (or allocate without bound) only when the graph runs. So every
parameter of every primitive has a *kind* here, checked on load before ``abstract_eval`` runs.
A test keeps this table in step with the registered primitives.
"""

from __future__ import annotations

import re
import warnings

import numpy as np

from chainrules import dtypes
from chainrules.symbolic import Sym, bound_of

from ..core.calls import _Staged

MAX_RANK = 64
"""Most axes an array (or a shape parameter) may have: NumPy's own limit."""

MAX_PARAM_INT = 2**62
"""Largest magnitude of a position parameter (slice bounds, padding, ranks): fits int64."""
MAX_AXIS_INT = 2**31 - 1
"""Largest magnitude of an axis, offset or diagonal parameter: fits a C int (NumPy's
``diagonal`` overflows beyond it)."""

DTYPES = {
    d.name: d
    for d in (dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
              dtypes.float32, dtypes.float64, dtypes.complex64, dtypes.complex128)
}
"""The dtypes a graph file may name (values, constants and dtype parameters), by name."""

_DEVICE = re.compile(r"(cpu|cuda|gpu|strict)(:[0-9]{1,4})?")


class BadParam(Exception):
    """Internal: a parameter does not have its kind (the caller adds where it is)."""


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
# A kind is a function (value, max_elements) -> None that raises BadParam.
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


def _tuple_of(kind, n=None):
    def check(v, m):
        if type(v) is not tuple or len(v) > MAX_RANK or (n is not None and len(v) != n):
            size = f"{n}" if n is not None else f"at most {MAX_RANK}"
            raise BadParam(f"expected a tuple of {size} entries, got {v!r}")
        for x in v:
            kind(x, m)

    return check


def _index_or_size(v, m):
    if not isinstance(v, Sym):
        INDEX(v, m)


INTS = _tuple_of(INT)
INDICES = _tuple_of(INDEX)
SLICE_LIMITS = _tuple_of(_index_or_size)  # the whole of a run-time axis is sliced up to it
DIMENSION_NUMBERS = _tuple_of(_tuple_of(INTS, 2), 2)
PADDING = _tuple_of(_tuple_of(INDEX, 3))


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
    """A run-time size this equation produces (see ``PRODUCES_SIZE``)."""
    if not (isinstance(v, Sym) and v.is_symbol):
        raise BadParam(f"expected a run-time size (a single symbol), got {v!r}")


def CALL(v, _):
    if not isinstance(v, _Staged):
        raise BadParam(f"expected a custom-rule call, got {v!r}")


_REDUCE = {"axes": INTS}
_LINALG_EPS = {"eps": REAL}
_WINDOW = {"kernel_size": SHAPE, "strides": INDICES,
           "padding": _tuple_of(_tuple_of(INDEX, 2)), "dilation": INDICES}  # im2col/col2im

PARAM_KINDS: dict[str, dict] = {
    "argmax": {"axis": INT},
    "argmin": {"axis": INT},
    "argsort": {"axis": INT},
    "broadcast_in_dim": {"shape": SHAPE, "broadcast_dimensions": INTS},
    "concatenate": {"dimension": INT},
    "convert_element_type": {"new_dtype": DTYPE},
    "cumsum": {"axis": INT, "reverse": BOOL},
    "custom_jvp_call": {"call": CALL},
    "custom_vjp_call": {"call": CALL},
    "device_put": {"device": DEVICE, "src": DEVICE},
    "diag_embed": {"offset": INT, "dims": SHAPE},
    "diagonal": {"offset": INT},
    "dot_general": {"dimension_numbers": DIMENSION_NUMBERS},
    "eig": _LINALG_EPS,
    "eigh": _LINALG_EPS,
    "fft": {"axes": INTS, "inverse": BOOL, "norm": FFT_NORM},
    "irfft": {"axis": INT, "n": LENGTH, "norm": FFT_NORM},
    "polygamma": {"n": INDEX},
    "rfft": {"axis": INT, "norm": FFT_NORM},
    "sort": {"axis": INT},
    "eigvalsh": _LINALG_EPS,
    "flip": {"axes": INTS},
    "full": {"shape": SHAPE, "value": SCALAR, "dtype": DTYPE, "device": DEVICE},
    "basic_index": {"spec": BASIC_SPEC},
    "basic_index_transpose": {"spec": BASIC_SPEC, "shape": SHAPE},
    "gather": {"axis": INT},
    "im2col": _WINDOW,
    "col2im": {"input_shape": SHAPE, **_WINDOW},
    "iota": {"shape": SHAPE, "dimension": INT, "dtype": DTYPE, "device": DEVICE},
    "pad": {"padding_config": PADDING},
    "pow_scalar": {"exponent": REAL},
    "qr": {"complete": BOOL, "positive": BOOL},
    "reduce_max": _REDUCE,
    "reduce_min": _REDUCE,
    "reduce_prod": _REDUCE,
    "reduce_sum": _REDUCE,
    "reshape": {"new_sizes": SHAPE},
    "scatter_add": {"axis": INT},
    "slice": {"start_indices": INDICES, "limit_indices": SLICE_LIMITS, "strides": INDICES},
    "svd": {"full_matrices": BOOL, "eps": REAL},
    "svdvals": _LINALG_EPS,
    "transpose": {"permutation": INTS},
    "triangular_solve": {"left_side": BOOL, "lower": BOOL, "transpose_a": BOOL,
                         "conjugate_a": BOOL},
    "tril": {"k": INT},
    "triu": {"k": INT},
    "truncation_indices": {"max_rank": OPT_POS_INT, "cutoff": OPT_REAL,
                           "relative_cutoff": OPT_REAL, "size": NEW_SIZE},
}
"""Per primitive, its parameters and their kinds. A primitive missing here has none."""

PRODUCES_SIZE = {"truncation_indices": "size"}
"""Primitives whose output length is decided at run time, and the parameter naming it. Only
these may introduce a run-time size; every other equation may only use sizes already
produced (the executor binds a size right after the equation that produces it)."""


def _full_value_fits(params):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        try:
            np.asarray(params["value"], dtype=params["dtype"])
        except Exception:
            raise BadParam(
                f"value {params['value']!r} cannot be stored as {params['dtype'].name}"
            ) from None


def _iota_dtype(params):
    if params["dtype"].kind not in "iuf":
        raise BadParam(f"iota counts in an integer or real dtype, not {params['dtype'].name}")


EXTRA_CHECKS = {"full": _full_value_fits, "iota": _iota_dtype}
"""Checks across one equation's parameters that ``abstract_eval`` leaves to run time."""
