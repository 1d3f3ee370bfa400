"""Validation helpers shared by ``abstract_eval`` rules: one place for clear error messages."""

from __future__ import annotations

from ..core import ShapedArray
from ..dtypes import is_complex, is_inexact
from ..errors import DTypeError, ShapeError, fmt_aval


def shapes_str(avals) -> str:
    return ", ".join(fmt_aval(a) for a in avals)


def same_shape_and_dtype(op: str, *avals) -> ShapedArray:
    a0 = avals[0]
    for a in avals[1:]:
        if a.shape != a0.shape:
            raise ShapeError(
                f"{op}: operand shapes differ ({shapes_str(avals)}). Primitives do not broadcast; "
                f"use the tenferro.{op} function (which broadcasts NumPy-style) or "
                f"tenferro.broadcast_to first."
            )
    for a in avals[1:]:
        if a.dtype != a0.dtype:
            raise DTypeError(
                f"{op}: operand dtypes differ ({shapes_str(avals)}). Primitives do not promote; "
                f"use the tenferro.{op} function (which promotes like NumPy) or .astype(...) first."
            )
    return a0


def require_inexact(op: str, a) -> None:
    if not is_inexact(a.dtype):
        raise DTypeError(
            f"{op}: expected a float or complex operand, got {fmt_aval(a)}; "
            f"convert it with .astype(tenferro.float64)."
        )


def require_real(op: str, a) -> None:
    if is_complex(a.dtype):
        raise DTypeError(
            f"{op}: complex operands are not ordered ({fmt_aval(a)}); apply it to .real, "
            f".imag or abs(...) instead."
        )


def require_bool(op: str, a) -> None:
    if a.dtype.kind != "b":
        raise DTypeError(f"{op}: expected a bool operand, got {fmt_aval(a)}.")


def check_axes(op: str, axes, ndim: int) -> None:
    for ax in axes:
        if not (0 <= ax < ndim):
            raise ShapeError(f"{op}: axis {ax} is out of range for an operand of rank {ndim}.")
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: repeated axis in {tuple(axes)}.")
