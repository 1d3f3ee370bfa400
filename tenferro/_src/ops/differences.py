"""Finite differences: ``diff`` and ``gradient`` (NumPy semantics).

Both are linear in the array (slices, subtractions and products with constant coefficients),
so their derivatives are exact. Spacings and coordinates are constants: they must be concrete
values (numbers, NumPy arrays or eager tensors) and are not differentiated.
"""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ._base import (
    as_int,
    broadcast_to,
    concrete_array,
    normalize_axes,
    normalize_axis,
    tensor_of,
    to_inexact,
)
from .elementwise import not_equal, subtract
from .shape import concatenate, slice_axis

__all__ = ["diff", "gradient"]


def _edge(x, ax, value):
    """``value`` broadcast to ``x``'s shape with axis ``ax`` of length 1 (or kept if it
    already has ``x``'s rank)."""
    v = tensor_of(value, like=x)
    if v.dtype != x.dtype:
        v = v.astype(np.result_type(v.dtype, x.dtype))
    if v.ndim == 0:
        shape = tuple(1 if i == ax else d for i, d in enumerate(x.shape))
        return broadcast_to(v, shape)
    return v


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]``, repeated ``n``
    times, after joining ``prepend``/``append`` (scalars are broadcast) to ``a``. Boolean input
    gives ``a[1:] != a[:-1]``, as NumPy. Linear in ``a``."""
    x = tensor_of(a)
    n = as_int("diff", "n", n)
    if n < 0:
        raise ShapeError(f"diff: the order n must be non-negative, got {n}.")
    if x.ndim == 0:
        raise ShapeError("diff: needs an array with at least 1 axis, got a scalar.")
    ax = normalize_axis("diff", axis, x.ndim)
    if n == 0:
        return x
    parts = []
    if prepend is not None:
        parts.append(_edge(x, ax, prepend))
    parts.append(x)
    if append is not None:
        parts.append(_edge(x, ax, append))
    if len(parts) > 1:
        x = concatenate(parts, ax)
    for _ in range(n):
        m = x.shape[ax]
        hi, lo = slice_axis(x, ax, 1, m), slice_axis(x, ax, 0, max(m - 1, 0))
        x = not_equal(hi, lo) if x.dtype.kind == "b" else subtract(hi, lo)
    return x


def _constant(op, what, v):
    v = concrete_array(op, what, v, "must be a concrete value (a number, NumPy array or eager "
                       "tensor); spacings are constants, not traced values.")
    return np.asarray(v, dtype=np.float64) if np.asarray(v).dtype.kind != "c" else np.asarray(v)


def _along(coef, ax, ndim, like):
    """A 1-D coefficient array (or a number) shaped to broadcast along axis ``ax``."""
    c = np.asarray(coef)
    if c.ndim == 0:
        return float(c) if c.dtype.kind != "c" else complex(c)
    shape = [1] * ndim
    shape[ax] = c.shape[0]
    return tensor_of(c.reshape(shape).astype(np.result_type(c.dtype, like.dtype)), like=like)


def _gradient_1axis(f, ax, spacing, edge_order):
    n = f.shape[ax]
    if n < edge_order + 1:
        raise ShapeError(
            f"gradient: axis {ax} has {n} points; edge_order={edge_order} needs at least "
            f"{edge_order + 1}."
        )

    def sl(lo, hi):
        return slice_axis(f, ax, lo % n if lo < 0 else lo, hi % n if hi < 0 else hi)

    nd = f.ndim
    if spacing.ndim == 0:
        h = float(spacing)
        interior = (sl(2, n) - sl(0, n - 2)) * (1 / (2 * h))
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) * (1 / h)
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) * (1 / h)
        else:
            first = (sl(0, 1) * -1.5 + sl(1, 2) * 2.0 - sl(2, 3) * 0.5) * (1 / h)
            last = (sl(n - 3, n - 2) * 0.5 - sl(n - 2, n - 1) * 2.0 + sl(n - 1, n) * 1.5) * (
                1 / h)
    else:
        if spacing.shape != (n,):
            raise ShapeError(
                f"gradient: the coordinates for axis {ax} must have length {n} (the axis), got "
                f"shape {spacing.shape}."
            )
        dx = np.diff(spacing)
        d1, d2 = dx[:-1], dx[1:]
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        interior = (sl(0, n - 2) * _along(a, ax, nd, f) + sl(1, n - 1) * _along(b, ax, nd, f)
                    + sl(2, n) * _along(c, ax, nd, f))
        if edge_order == 1:
            first = (sl(1, 2) - sl(0, 1)) * (1 / dx[0])
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) * (1 / dx[-1])
        else:
            e1, e2 = dx[0], dx[1]
            first = (sl(0, 1) * (-(2 * e1 + e2) / (e1 * (e1 + e2)))
                     + sl(1, 2) * ((e1 + e2) / (e1 * e2))
                     + sl(2, 3) * (-e1 / (e2 * (e1 + e2))))
            e1, e2 = dx[-2], dx[-1]
            last = (sl(n - 3, n - 2) * (e2 / (e1 * (e1 + e2)))
                    + sl(n - 2, n - 1) * (-(e1 + e2) / (e1 * e2))
                    + sl(n - 1, n) * ((2 * e2 + e1) / (e2 * (e1 + e2))))
    return concatenate([first, interior, last], ax)


def gradient(f, *varargs, axis=None, edge_order: int = 1):
    """The gradient of sampled values by central differences in the interior and one-sided
    differences (of order ``edge_order``, 1 or 2) at the boundaries, as NumPy.

    ``varargs``: nothing (unit spacing), one spacing for all axes, or one per axis, each a
    number or the coordinates along that axis. Returns one tensor per axis (a tuple), or a
    tensor when there is one axis. Linear in ``f``; spacings are constants."""
    x = to_inexact(tensor_of(f))
    axes = normalize_axes("gradient", axis, x.ndim)
    if edge_order not in (1, 2):
        raise ShapeError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}.")
    if not varargs:
        spacings = [np.asarray(1.0)] * len(axes)
    elif len(varargs) == 1 and np.ndim(_constant("gradient", "the spacing", varargs[0])) == 0:
        spacings = [_constant("gradient", "the spacing", varargs[0])] * len(axes)
    elif len(varargs) == len(axes):
        spacings = [_constant("gradient", "the spacing", v) for v in varargs]
    else:
        raise ShapeError(
            f"gradient: give no spacing, one for all axes, or one per axis ({len(axes)}); got "
            f"{len(varargs)}."
        )
    out = []
    for ax, h in zip(axes, spacings):
        if h.ndim > 1:
            raise ShapeError(f"gradient: coordinates must be 1-D, got shape {h.shape}.")
        if h.ndim == 1 and h.shape[0] > 1 and np.all(np.diff(h) == np.diff(h)[0]):
            h = np.asarray(np.diff(h)[0])  # uniform coordinates: the cheaper formula
        out.append(_gradient_1axis(x, ax, h, edge_order))
    return out[0] if len(out) == 1 else tuple(out)

