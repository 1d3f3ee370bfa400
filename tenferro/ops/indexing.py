"""Indexing with NumPy semantics: basic (ints, slices, None, ...), integer arrays, and boolean
masks (eager only: the result size depends on the values). Assignment is functional
(``setitem`` returns a new tensor; ``x[idx] = v`` rebinds ``x``)."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..errors import ConcretizationError, DTypeError, ShapeError
from ._base import broadcast_shapes, broadcast_to, normalize_axis, operands, tensor_of
from .elementwise import add, less, multiply, where
from .shape import flip, reshape, transpose


def _is_array_index(i) -> bool:
    if isinstance(i, Tensor):
        return True
    if isinstance(i, (list, np.ndarray)):
        return True
    return False


def _as_index_tensor(i, like):
    if isinstance(i, Tensor):
        return i
    arr = np.asarray(i)
    if arr.dtype.kind == "b":
        return arr
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            arr = arr.astype(np.int64)
        else:
            raise DTypeError(f"indexing: index arrays must be integers or bools, got {arr.dtype}.")
    return tensor_of(arr.astype(np.int64), like=like)


def _expand_bool(idx, x):
    """Replace boolean masks with the integer arrays of their True positions (eager only)."""
    out = []
    for i in idx:
        if isinstance(i, Tensor) and i.dtype.kind == "b":
            try:
                arr = np.asarray(i)
            except ConcretizationError as e:
                raise ConcretizationError(
                    "indexing with a boolean mask gives a data-dependent shape, which traced "
                    "mode cannot represent; use tenferro.where(mask, x, 0) instead."
                ) from e
            i = arr
        if isinstance(i, (np.ndarray, list)) and np.asarray(i).dtype.kind == "b":
            out.extend(np.nonzero(np.asarray(i)))
        else:
            out.append(i)
    return tuple(out)


def _normalize(idx, x):
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = _expand_bool(idx, x)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise ShapeError("indexing: an index can only have a single ellipsis ('...').")
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if consumed > x.ndim:
        raise ShapeError(f"indexing: too many indices ({consumed}) for a tensor of rank {x.ndim}.")
    if n_ell:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * (x.ndim - consumed) + idx[k + 1 :]
    else:
        idx = idx + (slice(None),) * (x.ndim - consumed)
    return idx


def getitem(x, idx) -> Tensor:
    x = tensor_of(x)
    idx = _normalize(idx, x)
    has_array = any(_is_array_index(i) for i in idx)
    # Pass 1: slices, None, and (without array indices) integers.
    starts, limits, strides, flips = [], [], [], []
    axis = 0
    out_spec = []
    for i in idx:
        if i is None:
            out_spec.append("new")
            continue
        d = x.shape[axis]
        if isinstance(i, slice) and i == slice(None):  # the whole axis (any size, even run-time)
            starts.append(0)
            limits.append(d)
            strides.append(1)
            out_spec.append("keep")
        elif isinstance(i, slice):
            s, e, st = i.indices(d)
            if st < 0:
                # reversed slice: take the forward range, then flip
                n = len(range(s, e, st))
                lo = s + (n - 1) * st if n else 0
                starts.append(lo)
                limits.append(lo + (n - 1) * (-st) + 1 if n else 0)
                strides.append(-st)
                flips.append(len(starts) - 1)
            else:
                starts.append(s)
                limits.append(max(s, e))
                strides.append(st)
            out_spec.append("keep")
        elif isinstance(i, (int, np.integer)) and not has_array:
            ii = int(i)
            if not -d <= ii < d:
                raise ShapeError(f"index {ii} is out of bounds for axis {axis} with size {d}.")
            ii %= d
            starts.append(ii)
            limits.append(ii + 1)
            strides.append(1)
            out_spec.append("drop")
        else:
            starts.append(0)
            limits.append(d)
            strides.append(1)
            out_spec.append(("adv", i))
        axis += 1
    y = x
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        y = bind(
            P.slice_p, y, start_indices=tuple(starts), limit_indices=tuple(limits),
            strides=tuple(strides),
        )
    if flips:
        y = flip(y, flips)
    # Pass 2: drop integer axes, insert new axes, apply array indices.
    shape, adv = [], []
    pos = 0
    for spec in out_spec:
        if spec == "new":
            shape.append(1)
        elif spec == "drop":
            pos += 1
        elif spec == "keep":
            shape.append(y.shape[pos])
            pos += 1
        else:
            adv.append((len(shape), pos, spec[1]))
            shape.append(y.shape[pos])
            pos += 1
    y = reshape(y, shape)
    if adv:
        y = _advanced(y, adv)
    return y


def _advanced(y, adv):
    """Integer-array indexing of axes ``adv`` = [(axis, _, index)], NumPy placement rules."""
    axes = [a for a, _, _ in adv]
    idx = [_as_index_tensor(i, y) for _, _, i in adv]
    idx = [tensor_of(int(i), like=y) if isinstance(i, (int, np.integer)) else i for i in idx]
    bshape = broadcast_shapes("indexing", *[i.shape for i in idx])
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    front = axes[0] if adjacent else 0
    rest = [a for a in range(y.ndim) if a not in axes]
    order = rest[:front] + axes + rest[front:]
    yt = transpose(y, order)
    dims = [y.shape[a] for a in axes]
    flat = None
    for k, (i, d) in enumerate(zip(idx, dims)):
        i = broadcast_to(i, bshape)
        i = _wrap_negative(i, d)
        stride = int(np.prod(dims[k + 1 :], dtype=np.int64))
        term = multiply(i, stride) if stride != 1 else i
        flat = term if flat is None else add(flat, term)
    lead = [yt.shape[a] for a in range(front)]
    tail = list(yt.shape[front + len(axes) :])
    merged = reshape(yt, lead + [int(np.prod(dims, dtype=np.int64))] + tail)
    return bind(P.gather_p, merged, flat, axis=front)


def _wrap_negative(i, d):
    if isinstance(i, EagerTensor):
        arr = np.asarray(i)
        if arr.size and (arr.min() < -d or arr.max() >= d):
            bad = arr[(arr < -d) | (arr >= d)].ravel()[0]
            raise ShapeError(f"index {bad} is out of bounds for an axis of size {d}.")
        if arr.size and arr.min() >= 0:
            return i
    return where(less(i, 0), add(i, d), i)


def _positions(x, idx):
    """Flat positions of ``x[idx]`` as an integer tensor (static for static indices)."""
    n = x.size
    base = tensor_of(np.arange(n, dtype=np.int64).reshape(x.shape))
    return getitem(base, idx)


def setitem(x, idx, value) -> Tensor:
    """A copy of ``x`` with ``x[idx] = value`` (functional). Repeated positions are an error."""
    x = tensor_of(x)
    pos = _positions(x, idx)
    if isinstance(pos, EagerTensor):
        p = np.asarray(pos)
        if p.size != np.unique(p).size:
            raise ShapeError(
                "setitem: the index selects some positions more than once, which makes "
                "assignment ambiguous; use x.at[idx].add(v) to accumulate."
            )
    v = tensor_of(value, like=x)
    if v.dtype != x.dtype:
        from ._base import astype

        v = astype(v, x.dtype)
    v = broadcast_to(v, pos.shape)
    flat_x = reshape(x, (-1,))
    flat_pos = reshape(pos, (-1,))
    zeros = bind(P.full_p, shape=(x.size,), value=0, dtype=x.dtype, device=x.device)
    placed = bind(P.scatter_add_p, zeros, flat_pos, reshape(v, (-1,)), axis=0)
    mask_src = bind(P.full_p, shape=(pos.size,), value=True, dtype=np.dtype(bool), device=x.device)
    mask = _scatter_mask(x.size, flat_pos, mask_src, x)
    return reshape(where(mask, placed, flat_x), x.shape)


def _scatter_mask(n, flat_pos, ones_bool, x):
    from ._base import astype

    z = bind(P.full_p, shape=(n,), value=0, dtype=np.dtype(np.int64), device=x.device)
    hits = bind(P.scatter_add_p, z, flat_pos, astype(ones_bool, np.int64), axis=0)
    return hits > 0


def index_add(x, idx, value) -> Tensor:
    """A copy of ``x`` with ``value`` added at ``x[idx]``; repeated positions accumulate."""
    x = tensor_of(x)
    pos = reshape(_positions(x, idx), (-1,))
    v = tensor_of(value, like=x)
    if v.dtype != x.dtype:
        from ._base import astype

        v = astype(v, x.dtype)
    v = reshape(broadcast_to(v, _positions(x, idx).shape), (-1,))
    return reshape(bind(P.scatter_add_p, reshape(x, (-1,)), pos, v, axis=0), x.shape)


class _At:
    """``x.at[idx].set(v) / .add(v) / .get()``: functional updates, JAX style."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtIndex(self.x, idx)


class _AtIndex:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def set(self, v):
        return setitem(self.x, self.idx, v)

    def add(self, v):
        return index_add(self.x, self.idx, v)

    def get(self):
        return getitem(self.x, self.idx)


def take(x, indices, axis=None) -> Tensor:
    """Gather entries along ``axis`` (the flattened tensor by default); the embedding-table
    pattern: cotangents of repeated indices accumulate."""
    x = tensor_of(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = normalize_axis("take", axis, x.ndim)
    i = _as_index_tensor(indices, x)
    if isinstance(i, np.ndarray):
        raise DTypeError("take: indices must be integers.")
    i = _wrap_negative(i, x.shape[ax])
    return bind(P.gather_p, x, i, axis=ax)


def scatter_add(x, indices, updates, axis=0) -> Tensor:
    """``x`` with ``updates`` added at ``indices`` along ``axis`` (repeats accumulate)."""
    x = tensor_of(x)
    ax = normalize_axis("scatter_add", axis, x.ndim)
    i = _as_index_tensor(indices, x)
    i = _wrap_negative(i, x.shape[ax])
    u = tensor_of(updates, like=x)
    a, u = operands("scatter_add", x, u) if u.dtype != x.dtype else (x, u)
    want = tuple(x.shape[:ax]) + tuple(i.shape) + tuple(x.shape[ax + 1 :])
    return bind(P.scatter_add_p, a, i, broadcast_to(u, want), axis=ax)

