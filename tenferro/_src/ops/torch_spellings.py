"""PyTorch's spellings of functions tenferro already has, where they do not clash with NumPy's.

Ported PyTorch code calls ``torch.cat``, ``torch.gather``, ``torch.topk``...; these are the same
compositions of tenferro's functions under PyTorch's names and argument conventions (``dim``,
not ``axis``). Each one is differentiable where its PyTorch original is, with the same
convention at non-differentiable points. The tensor methods of the same names are in
``tenferro/core/tensor.py``; design/numpy-surface.md lists the rules for names both libraries
use differently (``repeat``, ``transpose``, ``size``, ``flatten``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ._base import as_int, astype, normalize_axis, sequence_of, tensor_of
from .creation import _check_not_traced, _from_host, _rng, tensor, zeros_like
from .elementwise import less_equal, where
from .indexing import getitem, take_named
from .products import matmul
from .shape import concatenate, flip, reshape
from .sorting import _take_along as take_along_sorted
from .sorting import argsort, take_along_axis_named

int64 = np.dtype("int64")

TopK = namedtuple("TopK", ["values", "indices"])
"""``topk``'s result: ``values`` and their ``indices`` (PyTorch's ``torch.return_types``)."""


def cat(tensors, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """PyTorch's ``torch.cat``: ``concatenate(tensors, axis=dim)``. Linear: the cotangent is
    split back to the pieces."""
    return concatenate(tensors, dim if axis is None else axis)


def masked_fill(input, mask, value) -> Tensor:
    """``input`` with ``value`` where the boolean ``mask`` (broadcast to ``input``) is true
    (PyTorch's ``masked_fill``). Gradient: zero for ``input`` where filled, one elsewhere; a
    tensor ``value`` receives the sum of the cotangent over the filled entries. The mask has no
    derivative."""
    x = tensor_of(input)
    m = tensor_of(mask, like=x)
    if m.dtype != np.dtype(bool):
        raise DTypeError(
            f"masked_fill: mask must be boolean, got {m.dtype}; compare first (x > 0)."
        )
    v = tensor_of(value, like=x)
    if v.ndim:
        raise ShapeError(
            f"masked_fill: value must be a scalar or a 0-d tensor, got shape {v.shape}; "
            f"use tenferro.where(mask, values, x) for elementwise values."
        )
    out = where(m, v.astype(x.dtype) if v.dtype != x.dtype else v, x)
    if out.shape != x.shape:
        raise ShapeError(
            f"masked_fill: mask of shape {m.shape} broadcasts the input {x.shape} to "
            f"{out.shape}; the mask must broadcast to the input's shape."
        )
    return out


def index_select(input, dim: int, index) -> Tensor:
    """Entries of ``input`` at the 1-D integer ``index`` along ``dim`` (PyTorch's
    ``index_select``; ``take(input, index, axis=dim)``). Linear: cotangents of repeated indices
    accumulate."""
    x = tensor_of(input)
    i = tensor_of(index, like=x)
    if i.ndim != 1 or i.dtype.kind not in "iu":
        raise ShapeError(
            f"index_select: index must be a 1-D integer tensor, got {i.dtype} of shape "
            f"{i.shape}; use take or take_along_axis for other index shapes."
        )
    return take_named("index_select", x, i, axis=dim)


def gather(input, dim: int, index) -> Tensor:
    """PyTorch's ``gather``: ``out[i][j][k] = input[index[i][j][k]][j][k]`` for ``dim=0`` and
    so on. ``index`` has ``input``'s rank and may be smaller than it on the other axes (those
    entries of ``input`` are not read); nothing broadcasts. Linear: cotangents of repeated
    indices accumulate (``scatter_add``). Indices as in ``take_along_axis``: ``-n <= i < n``,
    negative ones counting from the end (PyTorch refuses negative ones); others raise
    ``IndexOutOfBoundsError``."""
    x = tensor_of(input)
    i = tensor_of(index, like=x)
    if i.dtype.kind not in "iu":
        raise DTypeError(f"gather: index must be an integer tensor, got {i.dtype}.")
    ax = normalize_axis("gather", dim, x.ndim)
    if i.ndim != x.ndim or any(
        a < b for d, (a, b) in enumerate(zip(x.shape, i.shape)) if d != ax
    ):
        raise ShapeError(
            f"gather: index of shape {i.shape} must have the rank of the input {x.shape} and "
            f"be no larger on every axis but dim={dim}."
        )
    if any(a != b for d, (a, b) in enumerate(zip(x.shape, i.shape)) if d != ax):
        x = getitem(x, tuple(slice(None) if d == ax else slice(0, n)
                             for d, n in enumerate(i.shape)))
    return take_along_axis_named("gather", x, i, ax)


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopK:
    """The ``k`` largest (``largest=False``: smallest) entries along ``dim`` and their indices,
    as PyTorch's ``topk`` (a named pair ``values, indices``). Values are ordered from the
    extreme inwards (``sorted=False`` gives the same order). Gradient: the cotangent of each
    value goes to the entry it came from. At ties the entry with the lower index is taken first
    (PyTorch leaves the order at ties unspecified); NaN counts as larger than every number (as
    in PyTorch's ``topk`` and in ``sort``); complex input raises (no order)."""
    x = tensor_of(input)
    if x.dtype.kind == "c":
        raise DTypeError(f"topk: complex input ({x.dtype}) has no order; use abs(x) or x.real.")
    if x.ndim == 0:
        x = reshape(x, (1,))
        scalar = True
    else:
        scalar = False
    ax = normalize_axis("topk", dim, x.ndim)
    n = x.shape[ax]
    if not 0 <= k <= n:
        raise ShapeError(f"topk: k={k} is out of range for dimension {dim} of size {n}.")
    key = x.detach()
    if key.dtype.kind == "b":
        key = astype(key, np.uint8)
    if largest:
        # descending, stably: the ascending order of the reversed entries, reversed (no
        # negation: it would wrap unsigned integers and put NaN, sorted last, at the end)
        order = (n - 1) - flip(argsort(flip(key, ax), axis=ax, stable=True), ax)
    else:
        order = argsort(key, axis=ax, stable=True)
    idx = getitem(order, (slice(None),) * ax + (slice(0, k),))
    vals = take_along_sorted(x, idx, ax)
    if scalar:
        vals, idx = reshape(vals, ()), reshape(idx, ())
    return TopK(vals, idx)


def bmm(input, mat2) -> Tensor:
    """Batched matrix product of two 3-D tensors ``(b, n, m) @ (b, m, p)`` (PyTorch's ``bmm``;
    no broadcasting, unlike ``matmul``)."""
    a, b = tensor_of(input), tensor_of(mat2)
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise ShapeError(
            f"bmm: expected (b, n, m) and (b, m, p) tensors, got {a.shape} and {b.shape}; use "
            f"matmul for broadcasting batch dimensions."
        )
    return matmul(a, b)


def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The axes ``start_dim..end_dim`` (inclusive) merged into one (PyTorch's ``flatten``; a
    0-d tensor becomes 1-D). A reshape: linear."""
    x = tensor_of(input)
    if x.ndim == 0:
        return reshape(x, (1,))
    s = normalize_axis("flatten", start_dim, x.ndim)
    e = normalize_axis("flatten", end_dim, x.ndim)
    if s > e:
        raise ShapeError(f"flatten: start_dim={start_dim} comes after end_dim={end_dim}.")
    return reshape(x, tuple(x.shape[:s]) + (-1,) + tuple(x.shape[e + 1:]))


def relu(input) -> Tensor:
    """max(x, 0), PyTorch's ``relu``. Derivative at 0: 0 (PyTorch's convention; not
    ``maximum``'s tie split). NaN stays NaN, as in PyTorch (its derivative there is 1)."""
    x = tensor_of(input)
    return where(less_equal(x, 0), zeros_like(x), x)


def complex(real, imag) -> Tensor:
    """PyTorch's ``torch.complex``: ``real + 1j * imag`` from two real tensors of one floating
    dtype (float32 -> complex64, float64 -> complex128), broadcast together. Linear in both:
    the gradient of a real loss is the cotangent's real part for ``real`` and its imaginary
    part for ``imag`` (tenferro's convention, dL/dRe z + i dL/dIm z)."""
    re, im = tensor_of(real), tensor_of(imag, like=real)
    if re.dtype != im.dtype or re.dtype.kind != "f":
        raise DTypeError(
            f"complex: real and imag must share a floating dtype, got {re.dtype} and "
            f"{im.dtype}; cast them first (x.astype(tenferro.float64)).")
    return astype(re, _COMPLEX_OF[re.dtype]) + 1j * im


_COMPLEX_OF = {np.dtype("float32"): np.dtype("complex64"),
               np.dtype("float64"): np.dtype("complex128")}


def numel(input) -> int:
    """The number of elements (PyTorch's ``numel``; NumPy's ``size``)."""
    return tensor_of(input).size


def is_complex(input) -> bool:
    """Whether the dtype is complex (PyTorch's ``is_complex``)."""
    return tensor_of(input).dtype.kind == "c"


def from_numpy(ndarray) -> Tensor:
    """A tensor holding a copy of a NumPy array (PyTorch's ``from_numpy`` shares the memory;
    tenferro tensors are values, and writes through a shared array would bypass the version
    counter that protects pending backward passes)."""

    if not isinstance(ndarray, np.ndarray):
        raise DTypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}.")
    return tensor(ndarray)


def randint(low, high=None, size=None, *, dtype=int64, device=None) -> Tensor:
    """Uniform integers in ``[low, high)`` of shape ``size`` from tenferro's generator (seeded
    by ``manual_seed``), PyTorch's ``randint(low=0, high, size)``: ``randint(10, (3,))`` draws
    from ``[0, 10)``. Eager only. No derivative."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise DTypeError("randint: give a size, as in randint(high, size) or "
                             "randint(low, high, size).")
        low, high, size = 0, low, high
    low, high = as_int("randint", "low", low), as_int("randint", "high", high)
    if isinstance(size, (int, np.integer)):
        size = (size,)
    size = tuple(as_int("randint", "size", d) for d in sequence_of("randint", size))
    if high <= low or any(d < 0 for d in size):
        raise ShapeError(f"randint: needs low < high and sizes >= 0, got low={low}, "
                         f"high={high}, size={size}.")
    _check_not_traced()
    return _from_host(_rng.gen.integers(low, high, size), dtype, device)


def randperm(n: int, *, dtype=int64, device=None) -> Tensor:
    """A random permutation of ``0..n-1`` from tenferro's generator (PyTorch's ``randperm``).
    Eager only."""
    n = as_int("randperm", "n", n)
    if n < 0:
        raise ShapeError(f"randperm: n must be >= 0, got {n}.")
    _check_not_traced()
    return _from_host(_rng.gen.permutation(n), dtype, device)


__all__ = ["bmm", "cat", "complex", "flatten", "from_numpy", "gather", "index_select", "is_complex",
           "masked_fill", "numel", "randint", "randperm", "relu", "topk"]
