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

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import DialectError, DTypeError, ShapeError, named_argument_errors
from ._base import as_int, astype, normalize_axis, sequence_of, tensor_of, to_inexact
from .creation import _check_not_traced, _from_host, _rng, full_like, tensor, zeros_like
from .dialect import _torch_split
from .elementwise import abs, less_equal, log, where
from .indexing import getitem, setitem, take_named
from .indexing import index_add as _index_add_at
from .indexing import scatter_add as _scatter_add_along
from .products import matmul
from .reductions import _safe_pow, max, safe_sqrt, sum
from .shape import concatenate, expand_dims, flip, reshape
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
    re = tensor_of(real)
    im = tensor_of(imag, like=re)
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


@named_argument_errors("chunk")
def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """PyTorch's ``chunk``: at most ``chunks`` pieces along ``dim`` of ``ceil(n / chunks)``
    entries each (the last one shorter; fewer pieces when they run out). Linear (slices).
    NumPy's ``array_split`` always gives ``chunks`` pieces of near-equal length instead."""
    x = tensor_of(input)
    chunks = as_int("chunk", "chunks", chunks)
    if chunks < 1:
        raise ShapeError(f"chunk: chunks must be >= 1, got {chunks}.")
    if x.ndim == 0:
        raise ShapeError("chunk: a 0-d tensor has no axis to split; reshape it first.")
    ax = normalize_axis("chunk", dim, x.ndim)
    n = x.shape[ax]
    if n == 0:
        return tuple(x for _ in range(chunks))
    return _torch_split("chunk", x, -(-n // chunks), ax)


@named_argument_errors("cdist")
def cdist(x1, x2, p: float = 2.0, compute_mode=None) -> Tensor:
    """PyTorch's ``cdist``: the ``p``-norm distances between the rows of ``x1`` (``..., P,
    M``) and of ``x2`` (``..., R, M``), shape ``(..., P, R)``; batch axes broadcast.
    ``p`` = 0 counts differing entries, ``inf`` takes the largest. Derivative: that of the
    norm of the differences, 0 where two rows coincide (as PyTorch). Computed from the
    differences (no ``|a|^2 + |b|^2 - 2ab`` cancellation); ``compute_mode`` is accepted and
    ignored."""
    a, b = tensor_of(x1), tensor_of(x2)
    if a.ndim < 2 or b.ndim < 2 or a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"cdist: expected (..., P, M) and (..., R, M) tensors with the same "
                         f"M, got {a.shape} and {b.shape}.")
    if a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        raise DTypeError(f"cdist: expected floating tensors, got {a.dtype} and {b.dtype}.")
    p = float(p)
    if p < 0:
        raise ShapeError(f"cdist: p must be >= 0, got {p}.")
    d = abs(expand_dims(a, -2) - expand_dims(b, -3))
    if p == 2:
        return safe_sqrt(sum(d * d, -1))
    if p == 1:
        return sum(d, -1)
    if p == np.inf:
        return max(d, -1)
    if p == 0:
        return sum(astype(d != 0, d.dtype), -1)
    return _safe_pow(sum(d ** p if p >= 1 else _safe_pow(d, p), -1), 1.0 / p)


@named_argument_errors("logdet")
def logdet(input) -> Tensor:
    """PyTorch's ``logdet``: log det(A) of (batches of) square matrices: NaN where a real
    determinant is negative, -inf where it is 0, the complex logarithm for complex input.
    Derivative: that of log|det| (the inverse transposed), from ``slogdet``."""
    a = to_inexact(tensor_of(input))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"logdet: expected (batches of) square matrices, got shape {a.shape}.")
    sign, logabs = bind(P.slogdet_p, a)
    if a.dtype.kind == "c":
        return astype(logabs, a.dtype) + log(where(sign == 0, astype(1, a.dtype), sign))
    nan = full_like(logabs, np.nan)
    return where(sign > 0, logabs, where(sign == 0, full_like(logabs, -np.inf), nan))


_NO = object()


@named_argument_errors("index_add")
def index_add(input, a, b, c=_NO, *, alpha=1) -> Tensor:
    """PyTorch's ``index_add(input, dim, index, source, alpha=1)``: ``source`` (times
    ``alpha``) added into ``input`` along ``dim`` at the 1-D ``index``, repeated indices
    accumulating. With three arguments it is tenferro's ``index_add(x, idx, value)``:
    ``value`` added at ``x[idx]`` (any NumPy index; ``x.at[idx].add(value)``). Linear in
    ``input`` and ``source``."""
    if c is _NO:
        if alpha != 1:
            raise DTypeError("index_add: alpha belongs to PyTorch's index_add(input, dim, "
                            "index, source, alpha=).")
        return _index_add_at(input, a, b)
    x = tensor_of(input)
    i = tensor_of(b, like=x)
    if i.ndim != 1 or i.dtype.kind not in "iu":
        raise ShapeError(f"index_add: index must be a 1-D integer tensor, got {i.dtype} of "
                         f"shape {i.shape}.")
    src = tensor_of(c, like=x)
    ax = normalize_axis("index_add", a, x.ndim)
    want = tuple(x.shape[:ax]) + (i.shape[0],) + tuple(x.shape[ax + 1:])
    if tuple(src.shape) != want and not (x.ndim == 0 and src.ndim == 0):
        raise ShapeError(f"index_add: source of shape {src.shape} must have shape {want} "
                         f"(the input's, with dim {a} the index's length).")
    if alpha != 1:
        src = src * alpha
    return _scatter_add_along(x, i, src, ax)


def _torch_index(op, x, dim, index):
    """The full NumPy index of PyTorch's ``scatter``/``gather`` pattern: ``index`` on axis
    ``dim`` and the position itself on every other axis."""
    i = tensor_of(index, like=x)
    if i.dtype.kind not in "iu":
        raise DTypeError(f"{op}: index must be an integer tensor, got {i.dtype}.")
    ax = normalize_axis(op, dim, x.ndim)
    if i.ndim != x.ndim or any(a < b for d, (a, b) in enumerate(zip(x.shape, i.shape))
                               if d != ax):
        raise ShapeError(f"{op}: index of shape {i.shape} must have the rank of the input "
                         f"{x.shape} and be no larger on every axis but dim={dim}.")
    idx = []
    for d, n in enumerate(i.shape):
        if d == ax:
            idx.append(i)
        else:
            shape = [1] * i.ndim
            shape[d] = n
            idx.append(tensor(np.arange(n).reshape(shape)))
    return tuple(idx), i.shape


def _source(op, x, src, shape):
    """``src`` cut to the index's ``shape`` (PyTorch reads only that corner), or a number."""
    v = tensor_of(src, like=x)
    if v.ndim == 0:
        return v
    if v.ndim != len(shape) or any(a < b for a, b in zip(v.shape, shape)):
        raise ShapeError(f"{op}: src of shape {v.shape} must be at least as large as the "
                         f"index {shape} on every axis.")
    return getitem(v, tuple(slice(0, n) for n in shape))


@named_argument_errors("scatter_add")
def scatter_add(input, a=_NO, b=_NO, c=_NO, *, axis=None, dim=None, index=None,
                src=None) -> Tensor:
    """PyTorch's ``scatter_add(input, dim, index, src)``: ``input[..., index[i, j], ...] +=
    src[i, j]`` along ``dim`` (``index`` of ``input``'s rank; repeats accumulate). With an
    index tensor second it is tenferro's ``scatter_add(x, indices, updates, axis=0)``:
    ``updates`` added at ``indices`` along ``axis`` (the updates have ``x``'s shape with
    the axis replaced by the index's shape). Linear in ``input`` and the added values."""
    given = [v for v in (a, b, c) if v is not _NO]
    if dim is not None or index is not None or src is not None:  # PyTorch's keywords
        if axis is not None:
            raise DialectError("scatter_add: give NumPy-style axis= or PyTorch's dim=, not "
                               "both.")
        rest = iter(given)
        dim = next(rest) if dim is None else dim
        index = next(rest, None) if index is None else index
        src = next(rest, None) if src is None else src
        torch_form = True
    else:
        torch_form = (len(given) == 3 and axis is None and isinstance(a, (int, np.integer))
                      and not isinstance(c, (int, np.integer)))
        if torch_form:
            dim, index, src = given
    if torch_form:
        if index is None or src is None:
            raise DTypeError("scatter_add: PyTorch's form is scatter_add(input, dim, index, "
                            "src).")
        x = tensor_of(input)
        idx, shape = _torch_index("scatter_add", x, dim, index)
        return _index_add_at(x, idx, _source("scatter_add", x, src, shape))
    if len(given) < 2:
        raise DTypeError("scatter_add: takes (x, indices, updates, axis=0) or PyTorch's "
                        "(input, dim, index, src).")
    if c is not _NO and axis is not None:
        raise DTypeError("scatter_add: the axis is given twice.")
    return _scatter_add_along(input, a, b, c if c is not _NO else (axis or 0))


@named_argument_errors("scatter")
def scatter(input, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """PyTorch's ``scatter(input, dim, index, src)``: a copy of ``input`` with
    ``input[..., index[i, j], ...] = src[i, j]`` along ``dim`` (or the number ``value``).
    ``reduce='add'`` is ``scatter_add``, ``'multiply'`` is not supported. An index that
    writes one position twice raises (PyTorch leaves the result unspecified). Derivative:
    the cotangent of the written positions goes to ``src``, the rest to ``input``."""
    x = tensor_of(input)
    if (src is None) == (value is None):
        raise DTypeError("scatter: give src or value (exactly one).")
    idx, shape = _torch_index("scatter", x, dim, index)
    v = _source("scatter", x, src if value is None else value, shape)
    if reduce is None:
        return setitem(x, idx, v)
    if reduce == "add":
        return _index_add_at(x, idx, v)
    raise ShapeError(f"scatter: reduce={reduce!r} is not supported; use 'add' or None.")


__all__ = ["bmm", "cat", "cdist", "chunk", "complex", "flatten", "from_numpy", "gather",
           "index_add", "index_select", "is_complex", "logdet", "masked_fill", "numel", "randint",
           "randperm", "relu", "scatter", "scatter_add", "topk"]
