"""Data type functions of the array API standard: ``finfo``, ``iinfo``, ``result_type``,
``can_cast``, ``isdtype``.

Tensors' dtypes are ``numpy.dtype`` objects, and ``tenferro.float64`` & co. are equal to them
(and callable, ``numpy_names.ScalarType``), so every function here also accepts NumPy's
spellings (``numpy.float32``, ``"int8"``) and
tensors (their dtype). Promotion is ``chainrules.dtypes.result_type`` (NumPy 2's, with weak
Python scalars), the one rule every operation uses.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chainrules import dtypes as D

from ..errors import DTypeError, ShapeError

__all__ = ["can_cast", "finfo", "iinfo", "isdtype", "result_type"]


class finfo_object(NamedTuple):  # noqa: N801  (the standard's name)
    """Machine limits of a floating-point dtype (the array API standard's ``finfo_object``;
    for a complex dtype, those of its real and imaginary parts). Values are Python numbers."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


class iinfo_object(NamedTuple):  # noqa: N801
    """Limits of an integer dtype (the standard's ``iinfo_object``)."""

    bits: int
    max: int
    min: int
    dtype: np.dtype


def _dtype_of(op: str, x) -> np.dtype:
    """The dtype named by ``x``: a dtype (any NumPy spelling) or a tensor/array's dtype."""
    d = getattr(x, "dtype", x)
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        raise DTypeError(f"{op}: expected a dtype or a tensor, got the Python "
                         f"{type(x).__name__} {x!r}; Python scalars have no dtype of their own.")
    try:
        d = np.dtype(d)
    except (TypeError, ValueError):
        raise DTypeError(f"{op}: {x!r:.40} is neither a dtype nor a tensor; use e.g. "
                         f"tenferro.float32.") from None
    if d not in D.ALL:
        raise DTypeError(f"{op}: {d} is not a tensor dtype (bool, int8..int64, uint8..uint64, "
                         f"float32, float64, complex64, complex128).")
    return d


def finfo(type, /) -> finfo_object:  # noqa: A002  (the standard's parameter name)
    """Machine limits of a floating-point ``type`` (a dtype or a tensor): ``bits``, ``eps``,
    ``max``, ``min``, ``smallest_normal`` and ``dtype`` (the real dtype, also for complex)."""
    d = _dtype_of("finfo", type)
    if d.kind not in "fc":
        raise DTypeError(f"finfo: {d} is not a floating-point dtype; use iinfo for integers.")
    r = D.real_dtype(d)
    f = np.finfo(r)
    return finfo_object(int(f.bits), float(f.eps), float(f.max), float(f.min),
                        float(f.smallest_normal), r)


def iinfo(type, /) -> iinfo_object:  # noqa: A002
    """Limits of an integer ``type`` (a dtype or a tensor): ``bits``, ``max``, ``min``,
    ``dtype``."""
    d = _dtype_of("iinfo", type)
    if d.kind not in "iu":
        raise DTypeError(f"iinfo: {d} is not an integer dtype; use finfo for floating point.")
    i = np.iinfo(d)
    return iinfo_object(int(i.bits), int(i.max), int(i.min), d)


def result_type(*arrays_and_dtypes) -> np.dtype:
    """The dtype of an operation on these operands: tensors, dtypes and Python scalars
    (weak: ``result_type(int8, 1)`` is ``int8``, ``result_type(float32, 1.0)`` is float32).
    The standard's promotion table where it defines one; NumPy 2's rule elsewhere (integers
    with floats, signed integers with ``uint64``)."""
    args = []
    for a in arrays_and_dtypes:
        if isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic):
            args.append(a)
        else:
            args.append(_dtype_of("result_type", a))
    if not any(isinstance(a, np.dtype) for a in args):
        raise DTypeError("result_type: give at least one tensor or dtype (Python scalars alone "
                         "have no dtype).")
    return D.result_type(*args)


def can_cast(from_, to, /) -> bool:
    """Whether ``from_`` (a dtype or a tensor) casts to ``to`` under the promotion rules: some
    dtype promotes with ``from_`` to ``to`` (``int8 -> int16`` yes, ``int64 -> int32`` no,
    ``float64 -> float32`` no, integers and bools to floating point yes, as in NumPy)."""
    a, b = _dtype_of("can_cast", from_), _dtype_of("can_cast", to)
    return bool(np.can_cast(a, b, casting="safe"))


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f",
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc",
}


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind``: a dtype, one of the standard's kind names ("bool",
    "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
    "numeric"), or a tuple of these (any of them)."""
    d = _dtype_of("isdtype", dtype) if not isinstance(dtype, np.dtype) else dtype
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            test = _KINDS.get(k)
            if test is None:
                raise ShapeError(f"isdtype: unknown kind {k!r}; use a dtype or one of "
                                 f"{sorted(_KINDS)}.")
            if test(d):
                return True
        elif d == _dtype_of("isdtype", k):
            return True
    return False
