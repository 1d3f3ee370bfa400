"""Canonical dtypes and NumPy type promotion.

Everything in ``chainrules`` and ``tenferro`` speaks ``numpy.dtype`` objects; backends with
their own dtype objects (``array_api_strict``, CuPy) convert at the boundary.
"""

from __future__ import annotations

import numpy as np

bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in ("int8", "int16", "int32", "int64"))
uint8 = np.dtype("uint8")
float32, float64 = np.dtype("float32"), np.dtype("float64")
complex64, complex128 = np.dtype("complex64"), np.dtype("complex128")

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
