"""Indexing with NumPy semantics: basic (ints, slices, None, ...), integer arrays, and boolean
masks (eager only: the result size depends on the values). Assignment is functional
(``setitem`` returns a new tensor; ``x[idx] = v`` rebinds ``x``)."""

from __future__ import annotations

import operator

import numpy as np

from chainrules import primitives as P
from chainrules.primitives.indexing import _basic_index_shape, checked_indices
from chainrules.symbolic import Sym, decide, floordiv, same_shape, size_of, sym_max, sym_min

from ..caches import BoundedCache
from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor, index_view
from ..errors import (
    ConcretizationError,
    DTypeError,
    IndexShapeError,
    ShapeError,
    named_argument_errors,
)
from ._base import astype, broadcast_shapes_of, broadcast_to, normalize_axis, operands, tensor_of
from .elementwise import add, multiply, where
from .searching import nonzero
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


def _is_bool_scalar(i) -> bool:
    """A Python/NumPy bool or a 0-d boolean array/tensor (NumPy: a new axis, kept or emptied)."""
    if isinstance(i, (bool, np.bool_)):
        return True
    return isinstance(i, (Tensor, np.ndarray)) and i.dtype.kind == "b" and i.ndim == 0


def _bool_scalars(idx, x):
    """``x[True]`` is ``x[None]`` and ``x[False]`` is ``x[None][:0]`` in NumPy (a bool is not
    the integer 1 here). Returns the index with bools replaced by ``None``, and whether any
    was False."""
    out, empty = [], False
    for i in idx:
        if _is_bool_scalar(i):
            try:
                empty = empty or not bool(i)
            except ConcretizationError as e:
                raise ConcretizationError(
                    "indexing with a traced 0-d boolean gives a data-dependent shape; use "
                    "tenferro.where(cond, x, 0) instead."
                ) from e
            i = None
        out.append(i)
    return tuple(out), empty


def _check_mask(mask_shape, x, idx, k):
    """NumPy's rule: a boolean mask must have exactly the shape of the axes it indexes."""
    before = idx[:k]
    if any(i is Ellipsis for i in before):  # count the axes after it instead
        after = sum(_consumed(i) for i in idx[k:])
        axis = x.ndim - after
    else:
        axis = sum(_consumed(i) for i in before)
    dims = tuple(x.shape[axis:axis + len(mask_shape)])
    # each mask size is the axis size, or 0 (an empty mask selects nothing; NumPy accepts a 0
    # along any axis, but no other mismatch)
    if len(dims) != len(mask_shape) or any(
            d.__class__ is int and d != m and not (m.__class__ is int and m == 0)
            for d, m in zip(dims, mask_shape)):
        raise IndexShapeError(
            f"indexing: a boolean mask of shape {tuple(mask_shape)} does not match the indexed "
            f"axes {axis}..{axis + len(mask_shape) - 1} of a tensor of shape {tuple(x.shape)} "
            f"(sizes {dims}); a mask must have exactly the shape of the axes it selects from "
            f"(or size 0 along any of them)."
        )


def _is_mask(i) -> bool:
    if isinstance(i, (Tensor, np.ndarray)):
        return i.dtype.kind == "b"
    return isinstance(i, list) and np.asarray(i).dtype.kind == "b"


def _consumed(i) -> int:
    """How many axes of the indexed tensor an index item uses."""
    if i is None or i is Ellipsis:
        return 0
    return np.ndim(i) if _is_mask(i) and not isinstance(i, Tensor) else (
        i.ndim if _is_mask(i) else 1)


def _expand_bool(idx, x):
    """Replace boolean masks with the integer arrays of their True positions (in traced code
    index tensors whose length is a run-time size, see ``searching.nonzero``)."""
    out = []
    for k, i in enumerate(idx):
        if _is_mask(i):
            _check_mask(np.shape(i) if not isinstance(i, Tensor) else i.shape, x, idx, k)
        if isinstance(i, Tensor) and i.dtype.kind == "b":
            try:
                arr = np.asarray(i)
            except ConcretizationError:  # traced: positions with a run-time length
                out.extend(nonzero(i))
                continue
            i = arr
        if isinstance(i, (np.ndarray, list)) and np.asarray(i).dtype.kind == "b":
            out.extend(np.nonzero(np.asarray(i)))
        else:
            out.append(i)
    return tuple(out)


def _slice_bound(v):
    """A slice bound as an int (0-d integer tensors and NumPy integers via ``__index__``; a
    traced one raises ``ConcretizationError``), ``None`` or a run-time size."""
    if v is None or v.__class__ is int or isinstance(v, Sym):
        return v
    return operator.index(v)


def _plain_slices(idx):
    """Slices whose bounds are tensors or NumPy integers with Python-int bounds instead."""
    return tuple(slice(_slice_bound(i.start), _slice_bound(i.stop), _slice_bound(i.step))
                 if isinstance(i, slice) else i for i in idx)


def _normalize(idx, x):
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = _plain_slices(idx)
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


_STATIC_HINT = (
    "Index from the end (negative indices), or pass max_rank= to the decomposition for a "
    "static rank."
)


def _sign(v, op="indexing") -> bool:
    """Whether an index bound is negative (Python's from-the-end convention)."""
    r = decide(v, "<", 0)
    if r is None:
        raise ShapeError(f"{op}: cannot tell whether the index bound {v} is negative.")
    return r


def slice_indices(i: slice, d):
    """``slice.indices(d)`` for a size ``d`` that may be known only at run time: the same
    ``(start, stop, step)`` for ints; symbolic bounds (``k - 1``, ``min(2, k)``) otherwise."""
    if d.__class__ is int and all(v is None or v.__class__ is int for v in
                                  (i.start, i.stop, i.step)):
        return i.indices(d)  # the eager fast path
    st = 1 if i.step is None else i.step
    if isinstance(st, Sym) or not isinstance(st, (int, np.integer)):
        raise ShapeError(f"indexing: slice steps must be static ints, got {i.step!r}.")
    st = int(st)
    if st == 0:
        raise ValueError("slice step cannot be zero")
    lower, upper = (-1, d - 1) if st < 0 else (0, d)

    def clamp(v, default):
        if v is None:
            return default
        v = v if isinstance(v, Sym) else int(v)
        return sym_max(v + d, lower) if _sign(v) else sym_min(v, upper)

    start = clamp(i.start, upper if st < 0 else lower)
    stop = clamp(i.stop, lower if st < 0 else upper)
    return start, stop, st


def _index(ii, d, axis):
    """A static integer index into an axis of size ``d`` (maybe run-time), from 0."""
    if d.__class__ is int and ii.__class__ is int:  # the eager fast path
        if not -d <= ii < d:
            raise ShapeError(f"index {ii} is out of bounds for axis {axis} with size {d}.")
        return ii % d
    ok = decide(ii, ">=", -d), decide(ii, "<", d)
    if False in ok:
        raise ShapeError(f"index {ii} is out of bounds for axis {axis} with size {d}.")
    if None in ok:
        raise ShapeError(
            f"indexing: index {ii} into axis {axis}, of a size known only at run time ({d}, "
            f"e.g. an SVD rank chosen by a cutoff), may be out of bounds. {_STATIC_HINT}"
        )
    return ii + d if ii < 0 else ii


_BASIC_SPECS = BoundedCache("basic index specs", 4096)
_WHOLE = object()  # a cached spec meaning "selects all of x": x[:] is x itself


def _index_key(idx):
    """A hashable form of a basic index (ints, slices of ints, None, ...), or None."""
    key = []
    for i in idx if type(idx) is tuple else (idx,):
        t = type(i)
        if t is int:
            key.append(i)
        elif t is slice:
            a, b, c = i.start, i.stop, i.step
            if ((a is not None and a.__class__ is not int)
                    or (b is not None and b.__class__ is not int)
                    or (c is not None and c.__class__ is not int)):
                return None
            key.append((a, b, c))
        elif i is None:
            key.append("new")
        elif i is Ellipsis:
            key.append("...")
        else:  # tensors, arrays, lists, bools, NumPy integers: the general path
            return None
    return tuple(key)


def _basic_spec(key, shape):
    """``basic_index``'s spec for a basic index on a static shape (see chainrules)."""
    n_ell = key.count("...")
    if n_ell > 1:
        raise ShapeError("indexing: an index can only have a single ellipsis ('...').")
    consumed = sum(k != "new" and k != "..." for k in key)
    if consumed > len(shape):
        raise ShapeError(f"indexing: too many indices ({consumed}) for a tensor of rank "
                         f"{len(shape)}.")
    fill = ((None, None, None),) * (len(shape) - consumed)
    if n_ell:
        k = key.index("...")
        key = key[:k] + fill + key[k + 1:]
    else:
        key = key + fill
    spec, axis = [], 0
    for k in key:
        if k == "new":
            spec.append(None)
            continue
        d = shape[axis]
        if type(k) is int:
            if not -d <= k < d:
                raise ShapeError(f"indexing: index {k} is out of bounds for axis {axis} with "
                                 f"size {d}.")
            spec.append(k % d)
        else:
            if k[2] == 0:
                raise ShapeError("indexing: slice step cannot be zero.")
            a, b, c = slice(*k).indices(d)
            spec.append((a, None if b < 0 else b, c))
        axis += 1
    return tuple(spec)


def getitem(x, idx) -> Tensor:
    """``x[idx]`` with NumPy semantics (basic and advanced indexing, ``None``, ``...``,
    negative indices, boolean masks). A basic-indexing result is a view for in-place updates:
    they write through to ``x`` (see ``Tensor._update``)."""
    if not isinstance(x, Tensor):
        x = tensor_of(x)
    raw_idx = idx
    key = (idx,) if idx.__class__ is int else _index_key(idx)
    if key is not None:
        # static shape, basic index: one primitive, the parsed index cached per signature
        # (only static shapes are stored, so a hit proves the shape static)
        shape = x.shape
        spec = _BASIC_SPECS.get((key, shape))
        if spec is None and all(d.__class__ is int for d in shape):
            spec = _basic_spec(key, shape)
            if len(spec) == len(shape) and all(e == (0, d, 1) for e, d in zip(spec, shape)):
                spec = _WHOLE
            _BASIC_SPECS.put((key, shape), spec)
        if spec is _WHOLE:
            return x  # x[:] / x[...]: nothing selected away
        if spec is not None:
            out = bind(P.basic_index_p, x, spec=spec)
            out._view_of = (x, raw_idx)  # index_view(out, x, raw_idx): out is never x here
            return out
    if any(_is_bool_scalar(i) for i in (idx if type(idx) is tuple else (idx,))):
        return _getitem_bool_scalar(x, idx if type(idx) is tuple else (idx,))
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
            s, e, st = slice_indices(i, d)
            if st < 0:
                # reversed slice: take the forward range, then flip
                if s.__class__ is int and e.__class__ is int:
                    n = len(range(s, e, st))
                    nonempty = n >= 1
                else:
                    n = sym_max(0, floordiv(s - e - st - 1, -st))
                    nonempty = decide(n, ">=", 1)
                if nonempty is None:
                    raise ShapeError(
                        f"indexing: the reversed slice {i} of axis {axis} (size {d}) may be "
                        f"empty or not depending on a size known only at run time. "
                        f"{_STATIC_HINT}"
                    )
                starts.append(s + (n - 1) * st if nonempty else 0)
                limits.append(s + 1 if nonempty else 0)
                strides.append(-st)
                flips.append(len(starts) - 1)
            else:
                starts.append(s)
                limits.append(sym_max(s, e))
                strides.append(st)
            out_spec.append("keep")
        elif isinstance(i, (int, np.integer, Sym)) and not has_array:
            ii = _index(i if isinstance(i, Sym) else int(i), d, axis)
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
    if starts != [0] * x.ndim or not same_shape(limits, x.shape) or strides != [1] * x.ndim:
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
    if adv:  # advanced indexing copies (NumPy too): in-place updates of it are fine
        return _advanced(y, adv)
    return index_view(y, x, raw_idx)


def _getitem_bool_scalar(x, idx):
    """``x[..., True, ...]``: a new axis of size 1 (0 for False), as in NumPy."""
    idx2, empty = _bool_scalars(idx, x)
    y = getitem(x, idx2)
    if not empty:
        return y
    if any(_is_array_index(i) for i in idx2):
        raise ShapeError(
            f"indexing: a False index combined with index arrays (tensor of shape "
            f"{tuple(x.shape)}) is not supported; select with a boolean mask instead.")
    first = next(k for k, i in enumerate(idx) if _is_bool_scalar(i) and not bool(i))
    pos = 0
    for i in idx2[:first]:
        if i is Ellipsis:
            pos += x.ndim - sum(_consumed(j) for j in idx2)
        elif i is None or isinstance(i, slice):
            pos += 1
    return getitem(y, (slice(None),) * pos + (slice(0, 0),))


def _advanced(y, adv):
    """Integer-array indexing of axes ``adv`` = [(axis, _, index)], NumPy placement rules."""
    axes = [a for a, _, _ in adv]
    idx = [_as_index_tensor(i, y) for _, _, i in adv]
    idx = [tensor_of(int(i), like=y) if isinstance(i, (int, np.integer)) else i for i in idx]
    bshape = broadcast_shapes_of("indexing", *[i.shape for i in idx])
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    front = axes[0] if adjacent else 0
    rest = [a for a in range(y.ndim) if a not in axes]
    order = rest[:front] + axes + rest[front:]
    yt = transpose(y, order)
    dims = [y.shape[a] for a in axes]
    flat = None
    for k, (i, d) in enumerate(zip(idx, dims)):
        i = checked_index(f"indexing (axis {axes[k]})", broadcast_to(i, bshape), d)
        stride = size_of(dims[k + 1 :])
        term = i if isinstance(stride, int) and stride == 1 else multiply(i, stride)
        flat = term if flat is None else add(flat, term)
    lead = [yt.shape[a] for a in range(front)]
    tail = list(yt.shape[front + len(axes) :])
    merged = reshape(yt, lead + [size_of(dims)] + tail)
    return bind(P.gather_p, merged, flat, axis=front)


def checked_index(op: str, i, size, *, wrap: bool = True, what: str = "index",
                  hint: str = "") -> Tensor:
    """Index data ``i`` for an axis of ``size``, every value checked to lie in
    ``[-size, size)`` and negative ones wrapped (``wrap=False``: ``[0, size)``, the rule for
    class indices); out-of-range values raise ``IndexOutOfBoundsError`` naming ``op``.

    The one check every gather from user index data goes through (``check_index``): two
    reductions over the indices. Eager values are checked at once (no dispatch); traced and
    transformed ones when the graph runs, since indices are data there."""
    if type(i) is EagerTensor and size.__class__ is int:  # the eager fast path
        v = i._value
        out = checked_indices(i._backend.xp, v, size, wrap, op, what, hint)
        return i if out is v else _wrap(out, i._backend)
    return bind(P.check_index_p, i, size=size, wrap=wrap, op=op, what=what, hint=hint)


def _positions(x, idx):
    """Flat positions of ``x[idx]`` as an integer tensor (static for static indices)."""
    n = x.size
    if isinstance(n, Sym):  # counted at run time (no constant can have a run-time size)
        base = bind(P.iota_p, shape=(n,), dimension=0, dtype=np.dtype(np.int64),
                    device=x.device)
        return getitem(reshape(base, x.shape), idx)
    base = tensor_of(np.arange(n, dtype=np.int64).reshape(x.shape))
    return getitem(base, idx)


_SETITEM_PLANS = BoundedCache("basic setitem plans", 4096)


def _basic_setitem_plan(x, idx):
    """``(spec, region shape)`` of a basic index (ints, slices, None, ...) on ``x``'s static
    shape, cached per (index, shape); ``None`` for any other index (the general path)."""
    key = (idx,) if idx.__class__ is int else _index_key(idx)
    if key is None:
        return None
    shape = x.shape
    plan = _SETITEM_PLANS.get((key, shape))
    if plan is None:
        if not all(d.__class__ is int for d in shape):
            return None
        spec = _basic_spec(key, shape)  # raises the named error for a bad index
        plan = _SETITEM_PLANS.put((key, shape), (spec, _basic_index_shape(shape, spec)))
    return plan


def setitem(x, idx, value) -> Tensor:
    """A copy of ``x`` with ``x[idx] = value`` (functional). Repeated positions are an error.
    A basic index (ints, slices, None, ...) is one ``basic_index_update``: ``G[t] = v`` in
    an eager loop costs one primitive call, not the general path's dozen."""
    x = tensor_of(x)
    plan = _basic_setitem_plan(x, idx)
    if plan is not None:
        spec, region = plan
        cls = value.__class__
        if (cls is float or cls is int) and type(x) is EagerTensor and x.dtype.kind in "fc":
            # a Python number into a float/complex tensor: the constant made directly (what
            # tensor_of and the cast would give: the number in x's dtype)
            b = x._backend
            v = _wrap(b.xp.constant((), value, x.dtype), b)
        else:
            v = _value_for("setitem", x, value)
        if tuple(v.shape) != region:
            v = broadcast_to(v, region)
        return bind(P.basic_index_update_p, x, v, spec=spec)
    pos = _positions(x, idx)
    if isinstance(pos, EagerTensor):
        p = np.asarray(pos)
        if p.size != np.unique(p).size:
            raise ShapeError(
                "setitem: the index selects some positions more than once, which makes "
                "assignment ambiguous; use x.at[idx].add(v) to accumulate."
            )
    v = _value_for("setitem", x, value)
    v = broadcast_to(v, pos.shape)
    flat_x = reshape(x, (-1,))
    flat_pos = reshape(pos, (-1,))
    zeros = bind(P.full_p, shape=(x.size,), value=0, dtype=x.dtype, device=x.device)
    placed = bind(P.scatter_add_p, zeros, flat_pos, reshape(v, (-1,)), axis=0)
    mask_src = bind(P.full_p, shape=(pos.size,), value=True, dtype=np.dtype(bool), device=x.device)
    mask = _scatter_mask(x.size, flat_pos, mask_src, x)
    return reshape(where(mask, placed, flat_x), x.shape)


def _scatter_mask(n, flat_pos, ones_bool, x):
    z = bind(P.full_p, shape=(n,), value=0, dtype=np.dtype(np.int64), device=x.device)
    hits = bind(P.scatter_add_p, z, flat_pos, astype(ones_bool, np.int64), axis=0)
    return hits > 0


def _value_for(op, x, value):
    """``value`` cast to ``x``'s dtype; a complex value never goes into a real tensor (NumPy
    raises too: the imaginary part would be dropped silently)."""
    v = tensor_of(value, like=x)
    if v.dtype != x.dtype:
        if v.dtype.kind == "c" and x.dtype.kind != "c":
            raise DTypeError(
                f"{op}: cannot store a {v.dtype} value (shape {tuple(v.shape)}) in a {x.dtype} "
                f"tensor of shape {tuple(x.shape)}: the imaginary part would be lost. Convert "
                f"the tensor first (x = x.astype(complex)) or store value.real explicitly."
            )

        v = astype(v, x.dtype)
    return v


def index_add(x, idx, value) -> Tensor:
    """A copy of ``x`` with ``value`` added at ``x[idx]``; repeated positions accumulate."""
    x = tensor_of(x)
    pos = reshape(_positions(x, idx), (-1,))
    v = _value_for("index_add", x, value)
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


@named_argument_errors("take")
def take(x, indices, axis=None) -> Tensor:
    """Gather entries along ``axis`` (the flattened tensor by default); the embedding-table
    pattern: cotangents of repeated indices accumulate.

    Indices follow NumPy: ``-n <= i < n`` for an axis of size ``n``, negative ones counting
    from the end; any other value raises ``IndexOutOfBoundsError`` (eager at once, under
    ``jit`` when the graph runs)."""
    return take_named("take", x, indices, axis)


def take_named(op: str, x, indices, axis, *, wrap: bool = True, what: str = "index",
               hint: str = "") -> Tensor:
    """``take`` whose index check names ``op`` (``index_select``, ``embedding``, ...);
    ``wrap=False`` refuses negative indices (PyTorch's rule for embeddings)."""
    x = tensor_of(x)
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = normalize_axis(op, axis, x.ndim)
    i = _as_index_tensor(indices, x)
    if isinstance(i, np.ndarray):
        raise DTypeError(f"{op}: indices must be integers.")
    i = checked_index(op, i, x.shape[ax], wrap=wrap, what=what, hint=hint)
    return bind(P.gather_p, x, i, axis=ax)


@named_argument_errors("scatter_add")
def scatter_add(x, indices, updates, axis=0) -> Tensor:
    """``x`` with ``updates`` added at ``indices`` along ``axis`` (repeats accumulate)."""
    x = tensor_of(x)
    ax = normalize_axis("scatter_add", axis, x.ndim)
    i = _as_index_tensor(indices, x)
    if isinstance(i, np.ndarray):
        raise DTypeError("scatter_add: indices must be integers.")
    i = checked_index("scatter_add", i, x.shape[ax])
    u = tensor_of(updates, like=x)
    a, u = operands("scatter_add", x, u) if u.dtype != x.dtype else (x, u)
    want = tuple(x.shape[:ax]) + tuple(i.shape) + tuple(x.shape[ax + 1 :])
    return bind(P.scatter_add_p, a, i, broadcast_to(u, want), axis=ax)

