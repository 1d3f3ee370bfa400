"""Stacking, splitting, tiling and rearranging (NumPy names and semantics).

Everything here is a composition of ``reshape``, ``concatenate``, ``slice``, ``flip``,
``transpose``, ``broadcast_in_dim`` and ``gather``: linear maps whose transposes the
primitives already know, so every function is differentiable in every mode. Sizes and counts
(``repeats``, ``shift``, split points) are static Python values.
"""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import ShapeError, named_argument_errors
from ._base import as_int, concrete_array, normalize_axes, normalize_axis, sequence_of, tensor_of
from .shape import concatenate, flip, reshape, slice_axis, swapaxes

__all__ = [
    "append",
    "array_split",
    "atleast_2d",
    "atleast_3d",
    "column_stack",
    "dsplit",
    "dstack",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "repeat",
    "roll",
    "rot90",
    "tile",
    "vsplit",
    "vstack",
]


# ---------------------------------------------------------------------- at least n-d
def _one_or_tuple(out):
    return out[0] if len(out) == 1 else tuple(out)


def atleast_2d(*arys):
    """Views with at least two axes: a scalar becomes (1, 1), a vector (N,) becomes (1, N).
    One argument gives a tensor, several a tuple (as NumPy)."""
    out = []
    for a in arys:
        x = tensor_of(a)
        if x.ndim == 0:
            x = reshape(x, (1, 1))
        elif x.ndim == 1:
            x = reshape(x, (1, x.shape[0]))
        out.append(x)
    return _one_or_tuple(out)


def atleast_3d(*arys):
    """Views with at least three axes: () -> (1, 1, 1), (N,) -> (1, N, 1), (M, N) -> (M, N, 1).
    One argument gives a tensor, several a tuple (as NumPy)."""
    out = []
    for a in arys:
        x = tensor_of(a)
        if x.ndim == 0:
            x = reshape(x, (1, 1, 1))
        elif x.ndim == 1:
            x = reshape(x, (1, x.shape[0], 1))
        elif x.ndim == 2:
            x = reshape(x, x.shape + (1,))
        out.append(x)
    return _one_or_tuple(out)


def _atleast_1d_all(tup):
    return [reshape(x, (1,)) if x.ndim == 0 else x for x in (tensor_of(t) for t in tup)]


def _need_some(op, tup):
    tup = sequence_of(op, tup)
    if not tup:
        raise ShapeError(f"{op}: need at least one array to stack.")
    return tup


# -------------------------------------------------------------------------- stacking
def vstack(tup) -> Tensor:
    """Stack row-wise: 1-D inputs (N,) become rows (1, N); joins along axis 0."""
    xs = atleast_2d(*_need_some("vstack", tup))
    return concatenate(xs if isinstance(xs, tuple) else [xs], 0)


def hstack(tup) -> Tensor:
    """Stack column-wise: along axis 1, or axis 0 for 1-D inputs."""
    xs = _atleast_1d_all(_need_some("hstack", tup))
    return concatenate(xs, 0 if xs[0].ndim == 1 else 1)


def dstack(tup) -> Tensor:
    """Stack depth-wise along axis 2 (inputs made at least 3-D as ``atleast_3d``)."""
    xs = atleast_3d(*_need_some("dstack", tup))
    return concatenate(xs if isinstance(xs, tuple) else [xs], 2)


def column_stack(tup) -> Tensor:
    """Stack 1-D inputs as columns of a 2-D array (2-D inputs are joined as they are)."""
    xs = []
    for t in _need_some("column_stack", tup):
        x = tensor_of(t)
        if x.ndim < 2:
            x = reshape(x, (-1, 1))
        xs.append(x)
    return concatenate(xs, 1)


# ------------------------------------------------------------------------- splitting
@named_argument_errors("array_split")
def array_split(ary, indices_or_sections, axis: int = 0) -> list:
    """Split into pieces along ``axis``: ``indices_or_sections`` an int N gives N pieces
    whose sizes differ by at most one (the first ``size % N`` one larger), a sequence gives
    the split points. Returns a list, as NumPy."""
    x = tensor_of(ary)
    ax = normalize_axis("array_split", axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0:
            raise ShapeError(f"array_split: the number of sections must be > 0, got {k}.")
        q, r = divmod(n, k)
        sizes = [q + 1] * r + [q] * (k - r)
        bounds = [0]
        for s in sizes:
            bounds.append(bounds[-1] + s)
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo_c = min(max(lo + n if lo < 0 else lo, 0), n)
        hi_c = min(max(hi + n if hi < 0 else hi, 0), n)
        out.append(slice_axis(x, ax, lo_c, max(lo_c, hi_c)))
    return out


def _split(op, ary, indices_or_sections, axis):
    x = tensor_of(ary)
    if isinstance(indices_or_sections, (int, np.integer)):
        n = x.shape[axis]
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ShapeError(
                f"{op}: an axis of size {n} does not divide into {k} equal parts; use "
                f"array_split for unequal pieces."
            )
    return array_split(x, indices_or_sections, axis)


def vsplit(ary, indices_or_sections) -> list:
    """Split along axis 0 into equal pieces (or at the given points); needs >= 2 axes."""
    x = tensor_of(ary)
    if x.ndim < 2:
        raise ShapeError(f"vsplit: needs an array with at least 2 axes, got shape {x.shape}.")
    return _split("vsplit", x, indices_or_sections, 0)


def hsplit(ary, indices_or_sections) -> list:
    """Split along axis 1 (axis 0 for 1-D input) into equal pieces or at the given points."""
    x = tensor_of(ary)
    if x.ndim == 0:
        raise ShapeError("hsplit: needs an array with at least 1 axis, got a scalar.")
    return _split("hsplit", x, indices_or_sections, 1 if x.ndim > 1 else 0)


def dsplit(ary, indices_or_sections) -> list:
    """Split along axis 2 into equal pieces (or at the given points); needs >= 3 axes."""
    x = tensor_of(ary)
    if x.ndim < 3:
        raise ShapeError(f"dsplit: needs an array with at least 3 axes, got shape {x.shape}.")
    return _split("dsplit", x, indices_or_sections, 2)


# ------------------------------------------------------------------ repeat and tile
def _static_ints(op, what, v):
    arr = concrete_array(op, what, v, "decides the output shape, so it must be a concrete value "
                         "(Python ints or an eager tensor), not a traced one.")
    if arr.dtype.kind not in "iub":
        raise ShapeError(f"{op}: {what} must be integers, got {arr.dtype}.")
    return arr.astype(np.int64)


def repeat(a, repeats, axis: int | None = None) -> Tensor:
    """Repeat each element ``repeats`` times along ``axis`` (the flattened array for
    ``axis=None``); ``repeats`` an int or one count per element (concrete values). Linear:
    the cotangents of the copies are summed."""
    x = tensor_of(a)
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        ax = normalize_axis("repeat", axis, x.ndim)
    n = x.shape[ax]
    reps = _static_ints("repeat", "repeats", repeats)
    if (reps < 0).any():
        raise ShapeError(f"repeat: repeats must be non-negative, got {reps.tolist()}.")
    if reps.ndim == 0 or reps.size == 1:
        k = int(reps.reshape(()))
        shape = x.shape[: ax + 1] + (k,) + x.shape[ax + 1 :]
        dims = tuple(i for i in range(x.ndim + 1) if i != ax + 1)
        y = bind(P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims)
        return reshape(y, x.shape[:ax] + (n * k,) + x.shape[ax + 1 :])
    if reps.shape != (n,):
        raise ShapeError(
            f"repeat: repeats of shape {reps.shape} must be a single count or one per "
            f"element of the axis (length {n})."
        )
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    return bind(P.gather_p, x, tensor_of(idx, like=x), axis=ax)


def tile(A, reps) -> Tensor:
    """Repeat the whole array ``reps`` times along each axis (``reps`` an int or a tuple;
    the shorter of ``A.ndim`` and ``len(reps)`` is padded with leading ones, as NumPy).
    Linear: the cotangents of the copies are summed."""
    x = tensor_of(A)
    reps = tuple(int(r) for r in np.atleast_1d(_static_ints("tile", "reps", reps)))
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: reps must be non-negative, got {reps}.")
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    x = reshape(x, (1,) * (nd - x.ndim) + x.shape)
    if all(r == 1 for r in reps):
        return x
    # (r0, d0, r1, d1, ...) then merge each pair
    shape = tuple(v for r, d in zip(reps, x.shape) for v in (r, d))
    dims = tuple(2 * i + 1 for i in range(nd))
    y = bind(P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=dims)
    return reshape(y, tuple(r * d for r, d in zip(reps, x.shape)))


# ------------------------------------------------------------------------ roll etc.
@named_argument_errors("roll")
def roll(a, shift=None, axis=None, *, shifts=None, dims=None) -> Tensor:
    """Shift elements cyclically by ``shift`` along ``axis`` (the flattened array, reshaped
    back, for ``axis=None``); ``shift`` and ``axis`` may be tuples (broadcast together).
    PyTorch's keywords ``shifts``/``dims`` mean the same."""
    if shifts is not None:
        if shift is not None:
            raise TypeError("roll: give shift or shifts, not both.")
        shift = shifts
    if dims is not None:
        if axis is not None:
            raise TypeError("roll: give axis or dims, not both.")
        axis = dims
    if shift is None:
        raise TypeError("roll: missing the shift.")
    x = tensor_of(a)
    if axis is None:
        flat = roll(reshape(x, (-1,)), shift, 0)
        return reshape(flat, x.shape)
    shifts = np.atleast_1d(_static_ints("roll", "shift", shift))
    axes = np.atleast_1d(np.asarray(axis))
    shifts, axes = np.broadcast_arrays(shifts, axes)
    total = {}
    for s, ax in zip(shifts.tolist(), axes.tolist()):
        ax = normalize_axis("roll", ax, x.ndim)
        total[ax] = total.get(ax, 0) + int(s)
    for ax, s in total.items():
        n = x.shape[ax]
        if n == 0:
            continue
        s %= n
        if s:
            x = concatenate([slice_axis(x, ax, n - s, n), slice_axis(x, ax, 0, n - s)], ax)
    return x


def append(arr, values, axis: int | None = None) -> Tensor:
    """``values`` appended to ``arr`` along ``axis`` (both flattened for ``axis=None``)."""
    x = tensor_of(arr)
    v = tensor_of(values, like=x)
    if axis is None:
        return concatenate([reshape(x, (-1,)), reshape(v, (-1,))], 0)
    return concatenate([x, v], axis)


def flipud(m) -> Tensor:
    """Reverse the order along axis 0 (needs at least one axis)."""
    x = tensor_of(m)
    if x.ndim < 1:
        raise ShapeError("flipud: needs an array with at least 1 axis, got a scalar.")
    return flip(x, 0)


def fliplr(m) -> Tensor:
    """Reverse the order along axis 1 (needs at least two axes)."""
    x = tensor_of(m)
    if x.ndim < 2:
        raise ShapeError(f"fliplr: needs an array with at least 2 axes, got shape {x.shape}.")
    return flip(x, 1)


def rot90(m, k: int = 1, axes=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes``, from the first axis
    towards the second (NumPy's direction)."""
    x = tensor_of(m)
    axes = tuple(sequence_of("rot90", axes))
    if len(axes) != 2:
        raise ShapeError(f"rot90: axes must be a pair of axes, got {axes}.")
    a0, a1 = normalize_axes("rot90", axes, x.ndim)
    k = as_int("rot90", "k", k) % 4
    if k == 0:
        return x
    if k == 2:
        return flip(x, (a0, a1))
    if k == 1:
        return swapaxes(flip(x, a1), a0, a1)
    return flip(swapaxes(x, a0, a1), a1)

