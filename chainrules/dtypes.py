"""Canonical dtypes and type promotion.

Everything in ``chainrules`` and ``tenferro`` speaks ``numpy.dtype`` objects; backends with
their own dtype objects (``array_api_strict``, CuPy) convert at the boundary.

The dtypes are the array API standard's: ``bool``, ``int8..int64``, ``uint8..uint64``,
``float32``, ``float64``, ``complex64``, ``complex128``. Promotion is NumPy 2's
(``numpy.result_type`` with NEP 50's weak Python scalars), which on every pair the standard
defines gives the standard's result (tests/array_api/test_promotion.py checks the whole table);
pairs the standard leaves undefined (integer with float, signed with ``uint64``) follow NumPy.
"""

from __future__ import annotations

import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in ("uint8", "uint16", "uint32", "uint64"))
float32, float64 = np.dtype("float32"), np.dtype("float64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
REAL_FLOATING = (float32, float64)
COMPLEX_FLOATING = (complex64, complex128)
ALL = (bool_, *SIGNED, *UNSIGNED, *REAL_FLOATING, *COMPLEX_FLOATING)
"""Every dtype a tensor may hold (the array API standard's)."""

_SHORT = {
    bool_: "bool",
    float32: "f32",
    float64: "f64",
    complex64: "c64",
    complex128: "c128",
    int8: "i8",
    int16: "i16",
    int32: "i32",
    int64: "i64",
    uint8: "u8",
    uint16: "u16",
    uint32: "u32",
    uint64: "u64",
}


def canonical(dtype) -> np.dtype:
    """Turn any NumPy-understood dtype spec into a ``numpy.dtype``."""
    return dtype if type(dtype) is np.dtype else np.dtype(dtype)


def short_name(dtype) -> str:
    d = canonical(dtype)
    return _SHORT.get(d, d.name)


def is_complex(dtype) -> bool:
    return dtype.kind == "c"


def is_inexact(dtype) -> bool:
    """Float or complex: the dtypes that carry tangents."""
    return dtype.kind in "fc"


def is_integer(dtype) -> bool:
    return dtype.kind in "iu"


def real_dtype(dtype) -> np.dtype:
    """complex64 -> float32, complex128 -> float64; others unchanged."""
    if dtype == complex64:
        return float32
    if dtype == complex128:
        return float64
    return dtype


def complex_dtype(dtype) -> np.dtype:
    """float32 -> complex64, other real -> complex128; complex unchanged."""
    if dtype.kind == "c":
        return dtype
    if dtype == float32:
        return complex64
    return complex128


def inexact_dtype(dtype) -> np.dtype:
    """Integers/bools promote to float64 (NumPy's true-division rule); inexact unchanged."""
    return dtype if dtype.kind in "fc" else float64


def result_type(*dtypes_or_scalars) -> np.dtype:
    """NumPy 2 promotion; Python scalars are weakly typed (NEP 50)."""
    return np.result_type(*dtypes_or_scalars)
