"""Structural primitives: reshape, transpose, broadcast_in_dim, slice, pad, concatenate, flip,
diagonal / diag_embed and tril / triu. All are linear; their transposes are each other.

Sizes, offsets and slice bounds may be run-time sizes (``chainrules.symbolic``): the rules
compute with them symbolically (``k - 1``, ``k + 1``, ``min(2, k)``...) and check bounds by
``decide``; a bound that only the run could check is refused, never assumed."""

from __future__ import annotations

import operator

import numpy as np

from ..core import Primitive, ShapedArray, is_undefined, no_flops
from ..errors import DTypeError, ShapeError
from ..params import INDICES, INT, INTS, PADDING, SHAPE, SLICE_LIMITS
from ..symbolic import Sym, decide, is_one, size_of, sym_max, sym_min
from . import _batching
from ._checks import check_axes

_prod = size_of


def _holds(op: str, a, rel: str, b, x, ax, what: str) -> None:
    """Check the size relation ``a rel b`` for axis ``ax`` of ``x``; refuse it when false, or
    when only the run could tell (a run-time size on either side)."""
    r = decide(a, rel, b)
    if r is True:
        return
    what = f"axis {ax} of {x}: {what}"
    if r is None:
        raise ShapeError(
            f"{op}: cannot check {what} ({a} {rel} {b}) before run time: it involves a size "
            f"known only at run time (e.g. an SVD rank chosen by a cutoff). Use bounds that "
            f"hold for every rank (e.g. negative indices from the end), or pass max_rank= for "
            f"a static rank."
        )
    raise ShapeError(f"{op}: {what} does not hold ({a} {rel} {b}).")


def _nonneg_size(d) -> bool:
    return decide(d, ">=", 0) is True if isinstance(d, Sym) else isinstance(d, int) and d >= 0


# ------------------------------------------------------------------------ reshape
reshape_p = Primitive("reshape", linear=True, cost=no_flops, validate_eager=False,
                      params={"new_sizes": SHAPE})


@reshape_p.def_abstract_eval
def _reshape_aval(x, *, new_sizes):
    bad = any(not _nonneg_size(d) for d in new_sizes)
    if bad or decide(_prod(new_sizes), "==", _prod(x.shape)) is not True:
        raise ShapeError(
            f"reshape: cannot reshape {x} (size {_prod(x.shape)}) into shape {tuple(new_sizes)} "
            f"(size {_prod(new_sizes)}); the number of elements must match."
        )
    return ShapedArray(new_sizes, x.dtype)


reshape_p.def_impl(lambda xp, x, *, new_sizes: xp.reshape(x, new_sizes))
reshape_p.def_jvp(
    lambda b, p, t, *, new_sizes: (b.reshape(p[0], new_sizes), b.reshape(t[0], new_sizes))
)
reshape_p.def_transpose(lambda b, ct, x, *, new_sizes: (b.reshape(ct, x.shape),))


# ---------------------------------------------------------------------- transpose
transpose_p = Primitive("transpose", linear=True, cost=no_flops, validate_eager=False,
                        params={"permutation": INTS})


@transpose_p.def_abstract_eval
def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(
            f"transpose: {tuple(permutation)} is not a permutation of the {x.ndim} axes of {x}."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype)


def inverse_permutation(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


transpose_p.def_impl(lambda xp, x, *, permutation: xp.permute_dims(x, permutation))


@transpose_p.def_specialize
def _transpose_specialize(xp, in_avals, *, permutation):
    if tuple(permutation) == (1, 0):
        return operator.attrgetter("T")  # the same view as permute_dims, one C call
    permute_dims = xp.permute_dims
    return lambda x: permute_dims(x, permutation)

transpose_p.def_jvp(
    lambda b, p, t, *, permutation: (b.permute(p[0], permutation), b.permute(t[0], permutation))
)
transpose_p.def_transpose(
    lambda b, ct, x, *, permutation: (b.permute(ct, inverse_permutation(permutation)),)
)


# --------------------------------------------------------------- broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim", linear=True, cost=no_flops,
                               params={"shape": SHAPE, "broadcast_dimensions": INTS})


@broadcast_in_dim_p.def_abstract_eval
def _bid_aval(x, *, shape, broadcast_dimensions):
    bd = broadcast_dimensions
    ok = len(bd) == x.ndim and all(0 <= d < len(shape) for d in bd)
    ok = ok and all(bd[i] < bd[i + 1] for i in range(len(bd) - 1))
    ok = ok and all(
        is_one(x.shape[i]) or decide(x.shape[i], "==", shape[d]) is True for i, d in enumerate(bd)
    )
    if not ok:
        raise ShapeError(
            f"broadcast_in_dim: cannot broadcast {x} to shape {tuple(shape)} with operand axes "
            f"mapped to {tuple(bd)}; each operand axis must be 1 or match its target axis."
        )
    return ShapedArray(shape, x.dtype)


@broadcast_in_dim_p.def_impl
def _bid_impl(xp, x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    if type(x) is np.ndarray and x.size <= _SMALL_BROADCAST:
        n = 1
        for d in shape:
            n *= d
        if n <= _SMALL_BROADCAST:  # a small copy: np.broadcast_to costs ~2 us of Python here
            out = np.empty(shape, x.dtype)
            out[...] = x.reshape(tuple(expanded))
            return out
    return xp.broadcast_to(xp.reshape(x, tuple(expanded)), shape)


# Up to this many elements broadcast_in_dim fills a new array (cheaper than building a
# broadcast view on small operands, such as the cotangent of a sum in a backward pass); larger
# results stay read-only views (no allocation).
_SMALL_BROADCAST = 4096


@broadcast_in_dim_p.def_specialize
def _bid_specialize(xp, in_avals, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = in_avals[0].shape[i]
    expanded, shape = tuple(expanded), tuple(shape)
    broadcast_to, reshape = xp.broadcast_to, xp.reshape
    return lambda x: broadcast_to(reshape(x, expanded), shape)


broadcast_in_dim_p.def_jvp(
    lambda b, p, t, *, shape, broadcast_dimensions: (
        b.broadcast_in_dim(p[0], shape, broadcast_dimensions),
        b.broadcast_in_dim(t[0], shape, broadcast_dimensions),
    )
)


@broadcast_in_dim_p.def_transpose
def _bid_transpose(b, ct, x, *, shape, broadcast_dimensions):
    bd = broadcast_dimensions
    summed = [d for d in range(len(shape)) if d not in bd]
    summed += [d for i, d in enumerate(bd) if is_one(x.shape[i]) and not is_one(shape[d])]
    return (b.reshape(b.reduce_sum(ct, tuple(sorted(summed))), x.shape),)


# -------------------------------------------------------------------------- slice
slice_p = Primitive("slice", linear=True, cost=no_flops, params={
    "start_indices": INDICES, "limit_indices": SLICE_LIMITS, "strides": INDICES})


def _slice_len(start, limit, stride):
    return (limit - start + stride - 1) // stride  # limit >= start is checked first


@slice_p.def_abstract_eval
def _slice_aval(x, *, start_indices, limit_indices, strides):
    n = x.ndim
    if not (len(start_indices) == len(limit_indices) == len(strides) == n):
        raise ShapeError(
            f"slice: need {n} start/limit/stride entries for {x}, got "
            f"{start_indices}, {limit_indices}, {strides}."
        )
    for ax, (s, lim, st, d) in enumerate(zip(start_indices, limit_indices, strides, x.shape)):
        if isinstance(st, Sym) or st < 1:
            raise ShapeError(f"slice: axis {ax} of {x}: stride ({st}) must be a static int >= 1.")
        if s.__class__ is int and lim.__class__ is int and d.__class__ is int and (
                0 <= s <= lim <= d):
            continue  # static and fine: the common case
        _holds("slice", s, ">=", 0, x, ax, "start >= 0")
        _holds("slice", s, "<=", lim, x, ax, "start <= limit")
        _holds("slice", lim, "<=", d, x, ax, "limit <= size")
    out = tuple(_slice_len(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(out, x.dtype)


slice_p.def_impl(
    lambda xp, x, *, start_indices, limit_indices, strides: x[
        tuple(slice(s, lim, st) for s, lim, st in zip(start_indices, limit_indices, strides))
    ]
)
slice_p.def_jvp(
    lambda b, p, t, **kw: (
        b.slice(p[0], kw["start_indices"], kw["limit_indices"], kw["strides"]),
        b.slice(t[0], kw["start_indices"], kw["limit_indices"], kw["strides"]),
    )
)


@slice_p.def_transpose
def _slice_transpose(b, ct, x, *, start_indices, limit_indices, strides):
    cfg = []
    for s, n_out, st, d in zip(start_indices, ct.shape, strides, x.shape):
        cfg.append((s, d - _window_limit(s, n_out, st - 1), st - 1))
    return (b.pad(ct, 0, tuple(cfg)),)


# ---------------------------------------------------------------------------- pad
pad_p = Primitive("pad", linear=True, cost=no_flops, params={"padding_config": PADDING})


def _padded_len(n, lo, hi, interior):
    return lo + hi + n + (sym_max(n - 1, 0) * interior if interior else 0)


def _window_limit(lo, n, interior):
    """One past the last padded position holding one of the ``n`` operand entries."""
    if not interior:
        return lo + n
    return lo + sym_max(n - 1, 0) * (interior + 1) + sym_min(n, 1)


@pad_p.def_abstract_eval
def _pad_aval(x, padding_value, *, padding_config):
    if padding_value.shape != () or padding_value.dtype != x.dtype:
        raise ShapeError(
            f"pad: padding value must be a scalar of the operand dtype; got {padding_value} "
            f"for operand {x}."
        )
    if len(padding_config) != x.ndim or any(
        len(c) != 3 or not all(_nonneg_size(v) for v in c) or isinstance(c[2], Sym)
        for c in padding_config
    ):
        raise ShapeError(
            f"pad: need one non-negative (low, high, interior) triple per axis of {x}; got "
            f"{padding_config}. Use slicing to crop."
        )
    return ShapedArray(
        tuple(_padded_len(n, *c) for n, c in zip(x.shape, padding_config)), x.dtype
    )


def _pad_window(x_shape, padding_config):
    return tuple(
        slice(lo, lo + max(n - 1, 0) * (i + 1) + 1 if n else lo, i + 1)
        for n, (lo, hi, i) in zip(x_shape, padding_config)
    )


@pad_p.def_impl
def _pad_impl(xp, x, padding_value, *, padding_config):
    shape = tuple(_padded_len(n, *c) for n, c in zip(x.shape, padding_config))
    out = xp.zeros(shape, dtype=x.dtype) + padding_value
    out[_pad_window(x.shape, padding_config)] = x
    return out


pad_p.def_jvp(
    lambda b, p, t, *, padding_config: (
        b.pad(p[0], p[1], padding_config),
        b.pad(t[0], t[1], padding_config),
    )
)


@pad_p.def_transpose
def _pad_transpose(b, ct, x, padding_value, *, padding_config):
    n = x.shape
    starts = tuple(lo for lo, _, _ in padding_config)
    limits = tuple(_window_limit(lo, d, i) for d, (lo, _, i) in zip(n, padding_config))
    strides = tuple(i + 1 for _, _, i in padding_config)
    ct_x = b.slice(ct, starts, limits, strides)
    ct_pv = None
    if is_undefined(padding_value):
        ct_pv = b.sub(b.sum_all(ct), b.sum_all(ct_x))
    return (ct_x if is_undefined(x) else None), ct_pv


# -------------------------------------------------------------------- concatenate
concatenate_p = Primitive("concatenate", linear=True, cost=no_flops, params={"dimension": INT})


@concatenate_p.def_abstract_eval
def _concat_aval(*xs, dimension):
    x0 = xs[0]
    if not 0 <= dimension < max(x0.ndim, 1):
        raise ShapeError(f"concatenate: axis {dimension} out of range for {x0}.")
    for x in xs[1:]:
        if x.dtype != x0.dtype:
            raise DTypeError(
                f"concatenate: operand dtypes differ ({', '.join(map(str, xs))}); use "
                f"tenferro.concatenate (which promotes) or .astype first."
            )
        if x.ndim != x0.ndim or any(
            decide(a, "==", c) is not True
            for i, (a, c) in enumerate(zip(x.shape, x0.shape)) if i != dimension
        ):
            raise ShapeError(
                f"concatenate: shapes {', '.join(map(str, xs))} differ outside axis {dimension}."
            )
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, x0.dtype)


concatenate_p.def_impl(lambda xp, *xs, dimension: xp.concat(xs, axis=dimension))
concatenate_p.def_jvp(
    lambda b, p, t, *, dimension: (
        b.concatenate(p, dimension),
        b.concatenate(t, dimension),
    )
)


@concatenate_p.def_transpose
def _concat_transpose(b, ct, *xs, dimension):
    out, offset = [], 0
    for x in xs:
        n = x.shape[dimension]
        if is_undefined(x):
            start = [0] * ct.ndim
            limit = list(ct.shape)
            start[dimension], limit[dimension] = offset, offset + n
            out.append(b.slice(ct, start, limit))
        else:
            out.append(None)
        offset += n
    return tuple(out)


# --------------------------------------------------------------------------- flip
flip_p = Primitive("flip", linear=True, cost=no_flops, params={"axes": INTS})


@flip_p.def_abstract_eval
def _flip_aval(x, *, axes):
    check_axes("flip", axes, x.ndim)
    return x


flip_p.def_impl(lambda xp, x, *, axes: xp.flip(x, axis=axes))
flip_p.def_jvp(lambda b, p, t, *, axes: (b.flip(p[0], axes), b.flip(t[0], axes)))
flip_p.def_transpose(lambda b, ct, x, *, axes: (b.flip(ct, axes),))


# ------------------------------------------------------ diagonal and its embedding
diagonal_p = Primitive("diagonal", linear=True, cost=no_flops, params={"offset": INT})
diagonal_p.__doc__ = "The ``offset`` diagonal of the last two axes, appended as the last axis."


def diag_len(m, n, offset):
    if offset >= 0:
        return sym_max(0, sym_min(m, n - offset))
    return sym_max(0, sym_min(m + offset, n))


@diagonal_p.def_abstract_eval
def _diagonal_aval(x, *, offset):
    if x.ndim < 2:
        raise ShapeError(f"diagonal: need an operand of rank >= 2, got {x}.")
    m, n = x.shape[-2:]
    return ShapedArray(x.shape[:-2] + (diag_len(m, n, offset),), x.dtype)


diagonal_p.def_impl(lambda xp, x, *, offset: xp.linalg.diagonal(x, offset=offset))
diagonal_p.def_jvp(
    lambda b, p, t, *, offset: (b.diagonal(p[0], offset), b.diagonal(t[0], offset))
)
diagonal_p.def_transpose(
    lambda b, ct, x, *, offset: (b.diag_embed(ct, offset, tuple(x.shape[-2:])),)
)

diag_embed_p = Primitive("diag_embed", linear=True, cost=no_flops,
                         params={"offset": INT, "dims": SHAPE})
diag_embed_p.__doc__ = "Place the last axis on the ``offset`` diagonal of (..., m, n) zeros."


@diag_embed_p.def_abstract_eval
def _diag_embed_aval(x, *, offset, dims):
    m, n = dims
    if x.ndim < 1 or decide(x.shape[-1], "==", diag_len(m, n, offset)) is not True:
        raise ShapeError(
            f"diag_embed: operand {x} does not fill diagonal {offset} of a {m}x{n} matrix "
            f"(length {diag_len(m, n, offset)})."
        )
    return ShapedArray(x.shape[:-1] + (m, n), x.dtype)


@diag_embed_p.def_impl
def _diag_embed_impl(xp, x, *, offset, dims):
    # write the diagonal through a strided slice of the flattened matrices: O(L) work
    m, n = dims
    L = x.shape[-1]
    lead = tuple(x.shape[:-1])
    out = xp.zeros(lead + (m * n,), dtype=x.dtype)
    if L:
        start = max(0, -offset) * n + max(0, offset)
        out[..., start : start + (L - 1) * (n + 1) + 1 : n + 1] = x
    return xp.reshape(out, lead + (m, n))


diag_embed_p.def_jvp(
    lambda b, p, t, *, offset, dims: (
        b.diag_embed(p[0], offset, dims),
        b.diag_embed(t[0], offset, dims),
    )
)
diag_embed_p.def_transpose(lambda b, ct, x, *, offset, dims: (b.diagonal(ct, offset),))


def _tri(name, fn):
    p = Primitive(name, linear=True, cost=no_flops, params={"k": INT})

    @p.def_abstract_eval
    def aval(x, *, k):
        if x.ndim < 2:
            raise ShapeError(f"{name}: need an operand of rank >= 2, got {x}.")
        return x

    p.def_impl(lambda xp, x, *, k: getattr(xp, fn)(x, k=k))
    p.def_jvp(lambda b, pr, t, *, k: (getattr(b, fn)(pr[0], k), getattr(b, fn)(t[0], k)))
    p.def_transpose(lambda b, ct, x, *, k: (getattr(b, fn)(ct, k),))
    return p


tril_p = _tri("tril", "tril")
triu_p = _tri("triu", "triu")


# ----------------------------------------------------------------------- batching
# The batch becomes a new leading axis; each rule shifts its axis parameters past it.
@reshape_p.def_batch
def _reshape_batch(b, args, dims, *, new_sizes):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    return [b.reshape(x, (x.shape[0],) + tuple(new_sizes))], [0]


@transpose_p.def_batch
def _transpose_batch(b, args, dims, *, permutation):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    return [b.permute(x, (0,) + tuple(p + 1 for p in permutation))], [0]


@broadcast_in_dim_p.def_batch
def _bid_batch(b, args, dims, *, shape, broadcast_dimensions):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    bd = (0,) + tuple(d + 1 for d in broadcast_dimensions)
    return [b.broadcast_in_dim(x, (x.shape[0],) + tuple(shape), bd)], [0]


@slice_p.def_batch
def _slice_batch(b, args, dims, *, start_indices, limit_indices, strides):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    return [b.slice(x, (0,) + tuple(start_indices), (x.shape[0],) + tuple(limit_indices),
                    (1,) + tuple(strides))], [0]


@pad_p.def_batch
def _pad_batch(b, args, dims, *, padding_config):
    """A per-member padding value: pad with zero, then add the value times the padding mask
    (both terms linear, so the rule differentiates like ``pad`` itself)."""
    (x, pv), (dx, dpv) = args, dims
    n = _batching.batch_size(args, dims)
    x = _batching.with_batch(b, x, dx, n)
    cfg = ((0, 0, 0),) + tuple(tuple(c) for c in padding_config)
    if dpv is None:
        return [b.pad(x, pv, cfg)], [0]
    zero = b.full((), 0, x.dtype)
    padded = b.pad(x, zero, cfg)
    mask = b.pad(b.zeros_like(x), b.full((), 1, x.dtype), cfg)
    pv = b.broadcast_in_dim(_batching.move_axis(b, pv, dpv, 0), padded.shape, (0,))
    return [b.add(padded, b.mul(mask, pv))], [0]


@concatenate_p.def_batch
def _concat_batch(b, args, dims, *, dimension):
    return [b.concatenate(_batching.all_at_front(b, args, dims), dimension + 1)], [0]


_batching.axis_shift(flip_p, "axes")
for _p in (diagonal_p, diag_embed_p, tril_p, triu_p):  # act on the last two axes
    _batching.leading(_p)
del _p
