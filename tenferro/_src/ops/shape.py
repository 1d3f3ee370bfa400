"""Shape manipulation: reshape, transpose, broadcasting, joins, flips, padding, diagonals."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.symbolic import Sym, decide, same_shape, same_size, sym_max

from ..caches import BoundedCache
from ..core.dispatch import bind
from ..core.tensor import RESHAPED, Tensor, mark_view
from ..errors import ShapeError, named_argument_errors
from ._base import (
    as_dim,
    as_int,
    astype,
    broadcast_shapes_of,
    broadcast_to,
    normalize_axes,
    normalize_axis,
    sequence_of,
    tensor_of,
)
from .misc import copy as copy_


def _as_shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer, Sym)):
        return (as_dim(shape),)
    return tuple(as_dim(d) for d in sequence_of("reshape", shape))


_RESHAPE_PLANS = BoundedCache("reshape plans", 4096)


def _int_shape_key(shape):
    """``shape`` as a tuple when it is a Python int or a tuple of Python ints (exactly
    ``int``: a float, bool or NumPy integer takes the checked path), else ``None``."""
    if shape.__class__ is int:
        return (shape,)
    if shape.__class__ is tuple:
        for d in shape:
            if d.__class__ is not int:
                return None
        return shape
    return None


def reshape(x, shape, *, copy: bool | None = None) -> Tensor:
    """Reshape; one entry may be -1. ``copy`` (the array API's): ``True`` returns a new
    tensor even for the same shape; ``None``/``False`` never copy (tenferro reshapes never
    need to: the result shares the values, and refuses in-place updates, as a view whose
    writes would not reach ``x``)."""
    if copy:
        return copy_(reshape(x, shape))
    if not isinstance(x, Tensor):
        x = tensor_of(x)
    key = _int_shape_key(shape)
    if key is not None:
        # a static request on a static shape: the resolved sizes cached per (request, shape)
        key = (key, x.shape)
        plan = _RESHAPE_PLANS.get(key)
        if plan is not None:
            if plan is _SAME:
                return x
            out = bind(P.reshape_p, x, new_sizes=plan)
            out._view_of = (x, RESHAPED)  # a view: in-place updates write through to x
            return out
    plan = _reshape_sizes(x, _as_shape(shape))
    if key is not None and all(d.__class__ is int for d in x.shape):
        _RESHAPE_PLANS.put(key, plan)
    if plan is _SAME:
        return x
    out = bind(P.reshape_p, x, new_sizes=plan)
    out._view_of = (x, RESHAPED)  # a view: in-place updates write through to x
    return out


_SAME = object()  # a reshape plan meaning "already this shape: return the input"


def _reshape_sizes(x, shape):
    """The sizes ``x`` reshapes to (-1 resolved, errors named), or ``_SAME``."""
    if same_shape(shape, x.shape):
        return _SAME
    if shape.count(-1) > 1:  # structural comparisons (see chainrules.symbolic)
        raise ShapeError(f"reshape: only one -1 allowed, got {shape}.")
    if -1 in shape:
        hole = shape.index(-1)
        known = 1
        for i, d in enumerate(shape):
            if i != hole:
                known *= d
        if same_size(known, 0) or not _divides(known, x.size):
            dyn = (" (whether it divides is known only at run time; pass max_rank= for a "
                   "static rank)") if isinstance(
                x.size, Sym) or isinstance(known, Sym) else ""
            raise ShapeError(
                f"reshape: cannot reshape {x.shape} (size {x.size}) into {shape}{dyn}."
            )
        shape = tuple(x.size // known if i == hole else d for i, d in enumerate(shape))
    return shape


def _divides(known, size) -> bool:
    try:
        return decide(size % known, "==", 0) is True
    except ShapeError:  # a divisor that may be 0 at run time
        return False


def ravel(x) -> Tensor:
    """The tensor flattened to one axis."""
    return reshape(x, (-1,))


_PERMUTATIONS = BoundedCache("transpose permutations", 4096)


def transpose(x, axes=None) -> Tensor:
    """Permute axes (reverse them by default)."""
    if not isinstance(x, Tensor):
        x = tensor_of(x)
    ndim = x.ndim
    if axes is None:
        key = ndim  # the reversal of ndim axes
    else:
        key = None if axes.__class__ is int else _int_shape_key(
            tuple(axes) if axes.__class__ is list else axes)  # a bare int: no sequence
        if key is not None:
            key = (key, ndim)
    if key is None:  # axes that are not plain ints: validated every time
        perm = _permutation(axes, ndim)
    else:
        perm = _PERMUTATIONS.get(key)
        if perm is None:
            perm = _PERMUTATIONS.put(key, _permutation(axes, ndim))
    if perm is _SAME:
        return x
    out = bind(P.transpose_p, x, permutation=perm)
    out._view_of = "transpose"  # mark_view: out is never x here
    return out


def _permutation(axes, ndim):
    """The normalised permutation (errors named), or ``_SAME`` for the identity."""
    if axes is None:
        perm = tuple(range(ndim - 1, -1, -1))
    else:
        perm = tuple(normalize_axis("transpose", a, ndim) for a in sequence_of("transpose", axes))
        if sorted(perm) != list(range(ndim)):
            raise ShapeError(f"transpose: {tuple(axes)} is not a permutation of {ndim} axes.")
    return _SAME if perm == tuple(range(ndim)) else perm


permute_dims = transpose


def swapaxes(a, axis1, axis2) -> Tensor:
    """Exchange axes ``axis1`` and ``axis2`` (NumPy's signature)."""
    x = tensor_of(a)
    a, b = normalize_axis("swapaxes", axis1, x.ndim), normalize_axis("swapaxes", axis2, x.ndim)
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x, source, destination) -> Tensor:
    """Move axes ``source`` to positions ``destination`` (NumPy's ``moveaxis``)."""
    x = tensor_of(x)
    src = normalize_axes("moveaxis", source, x.ndim)
    dst = normalize_axes("moveaxis", destination, x.ndim)
    if len(src) != len(dst):
        raise ShapeError("moveaxis: source and destination need the same number of axes.")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(x, order)


def expand_dims(x, axis=0) -> Tensor:
    """Insert size-1 axes at ``axis`` (an int or a tuple; positions in the result, negative
    ones counted from its end), NumPy semantics. A repeated axis raises ``ShapeError``."""
    x = tensor_of(x)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(
        sequence_of("expand_dims", axis))
    nd = x.ndim + len(axes)
    axes = sorted(normalize_axis("expand_dims", a, nd) for a in axes)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"expand_dims: repeated axis in {tuple(axis)} for a result of rank "
                         f"{nd}.")
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x, axis=None) -> Tensor:
    """Drop size-1 axes (all of them, or ``axis``). A run-time size that may or may not be 1
    is refused rather than guessed: eager mode would drop it exactly when it is 1, so a
    traced result could not have eager's rank. Name the axes with ``axis=`` instead."""
    x = tensor_of(x)
    if axis is None:
        axes = [i for i, d in enumerate(x.shape) if d.__class__ is int and d == 1
                or isinstance(d, Sym) and _is_unit("squeeze", x, i, d, None)]
    else:
        axes = normalize_axes("squeeze", axis, x.ndim)
        for a in axes:
            if not _is_unit("squeeze", x, a, x.shape[a], axis):
                raise ShapeError(f"squeeze: axis {a} of shape {x.shape} is not of size 1.")
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def _is_unit(op, x, a, d, axis) -> bool:
    if not isinstance(d, Sym):
        return d == 1
    r = decide(d, "==", 1)
    if r is None:
        fix = ("pass axis= naming the axes to drop (sizes known only at run time are kept)"
               if axis is None else "drop axis= for this axis, or slice it: x[..., 0, ...]")
        raise ShapeError(
            f"{op}: axis {a} of shape {x.shape} has a size known only at run time ({d}, e.g. "
            f"an SVD rank chosen by a cutoff) that may or may not be 1, so the result's rank "
            f"would depend on the data; {fix}."
        )
    return r


def atleast_1d(x) -> Tensor:
    """The tensor with at least one axis (a 0-d tensor becomes shape (1,))."""
    x = tensor_of(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def concatenate(xs, axis=0) -> Tensor:
    """Join along an existing axis (dtypes promote like NumPy); ``axis=None`` joins the
    flattened tensors."""
    xs = [tensor_of(x) for x in sequence_of("concatenate", xs)]
    if not xs:
        raise ShapeError("concatenate: need at least one tensor.")
    if axis is None:
        xs, axis = [reshape(x, (-1,)) for x in xs], 0
    if xs[0].ndim == 0:
        raise ShapeError("concatenate: zero-dimensional tensors cannot be concatenated; use stack.")
    dt = np.result_type(*[x.dtype for x in xs])
    xs = [astype(x, dt) for x in xs]
    ax = normalize_axis("concatenate", axis, xs[0].ndim)
    if len(xs) == 1:
        return xs[0]
    return bind(P.concatenate_p, *xs, dimension=ax)


concat = concatenate


def stack(xs, axis=0) -> Tensor:
    """Join tensors of equal shape along a new axis ``axis`` (promoting dtypes as NumPy does)."""
    xs = [tensor_of(x) for x in sequence_of("stack", xs)]
    if not xs:
        raise ShapeError("stack: need at least one tensor.")
    if any(not same_shape(x.shape, xs[0].shape) for x in xs[1:]):
        shapes = ", ".join(str(x.shape) for x in xs)
        raise ShapeError(f"stack: all tensors need the same shape, got {shapes}.")
    ax = normalize_axis("stack", axis, xs[0].ndim + 1)
    xs = [expand_dims(x, ax) for x in xs]
    return xs[0] if len(xs) == 1 else concatenate(xs, ax)


def broadcast_arrays(*arrays) -> list:
    """The tensors broadcast against each other (NumPy rules); each keeps its dtype. Linear:
    cotangents are summed back over the broadcast axes."""
    xs = [tensor_of(x) for x in arrays]
    if not xs:
        return []
    shape = broadcast_shapes_of("broadcast_arrays", *[x.shape for x in xs])
    return [broadcast_to(x, shape) for x in xs]


def unstack(x, /, axis: int = 0) -> tuple:
    """The slices of ``x`` along ``axis``, as a tuple (the inverse of ``stack``). Linear."""
    x = tensor_of(x)
    if x.ndim == 0:
        raise ShapeError("unstack: a 0-d tensor has no axis to unstack along.")
    ax = normalize_axis("unstack", axis, x.ndim)
    rest = tuple(d for i, d in enumerate(x.shape) if i != ax)
    return tuple(reshape(slice_axis(x, ax, i, i + 1), rest) for i in range(x.shape[ax]))


def matrix_transpose(x, /) -> Tensor:
    """The last two axes swapped (``x.mT``); the input needs at least two axes. Linear."""
    x = tensor_of(x)
    if x.ndim < 2:
        raise ShapeError(f"matrix_transpose: a tensor of shape {tuple(x.shape)} has fewer than "
                         f"two axes; use x.T or reshape to a matrix first.")
    return swapaxes(x, -1, -2)


@named_argument_errors("split")
def split(x, indices_or_sections, axis=0) -> list:
    """Split along ``axis`` into equal sections (an int) or at the given indices (NumPy's
    ``split``); returns a list."""
    x = tensor_of(x)
    ax = normalize_axis("split", axis, x.ndim)
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if n % k:
            raise ShapeError(f"split: axis of size {n} does not divide into {k} equal parts.")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        out.append(slice_axis(x, ax, lo, hi))
    return out


def slice_axis(x, axis, start, stop, step=1) -> Tensor:
    start_i = [0] * x.ndim
    limit = list(x.shape)
    strides = [1] * x.ndim
    start_i[axis], limit[axis], strides[axis] = start, sym_max(start, stop), step
    return bind(
        P.slice_p, x, start_indices=tuple(start_i), limit_indices=tuple(limit),
        strides=tuple(strides),
    )


def flip(x, axis=None) -> Tensor:
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    x = tensor_of(x)
    axes = normalize_axes("flip", axis, x.ndim)
    return bind(P.flip_p, x, axes=tuple(sorted(axes))) if axes else x


@named_argument_errors("pad")
def pad(x, pad_width, constant_values=0) -> Tensor:
    """Constant padding, NumPy's ``pad_width`` convention."""
    x = tensor_of(x)
    pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if (pw < 0).any():
        raise ShapeError(f"pad: negative pad widths {pad_width}; slice to crop instead.")
    cfg = tuple((int(lo), int(hi), 0) for lo, hi in pw)
    pv = tensor_of(constant_values, like=x, dtype=x.dtype)
    return bind(P.pad_p, x, pv, padding_config=cfg)


def diagonal(x, offset=0, axis1=0, axis2=1) -> Tensor:
    """Diagonal of the (axis1, axis2) planes, appended as the last axis (NumPy semantics)."""
    x = tensor_of(x)
    a1 = normalize_axis("diagonal", axis1, x.ndim)
    a2 = normalize_axis("diagonal", axis2, x.ndim)
    if a1 == a2:
        raise ShapeError("diagonal: axis1 and axis2 must differ.")
    rest = [i for i in range(x.ndim) if i not in (a1, a2)]
    return mark_view(bind(P.diagonal_p, transpose(x, rest + [a1, a2]), offset=int(offset)), x,
                     "diagonal")


def diag_embed(x, offset=0) -> Tensor:
    """Place the last axis on diagonal ``offset`` of new square trailing matrices."""
    x = tensor_of(x)
    offset = as_int("diag_embed", "offset", offset)
    if x.ndim == 0:
        raise ShapeError("diag_embed: expected a tensor with at least one axis, got a 0-d tensor.")
    k = x.shape[-1] + abs(offset)
    return bind(P.diag_embed_p, x, offset=offset, dims=(k, k))


def diag(x, k=0) -> Tensor:
    """NumPy ``diag``: build a diagonal matrix from a vector, or extract a diagonal."""
    x = tensor_of(x)
    if x.ndim == 1:
        return diag_embed(x, k)
    if x.ndim == 2:
        return bind(P.diagonal_p, x, offset=as_int("diag", "k", k))
    raise ShapeError(f"diag: expected a 1-D or 2-D tensor, got shape {x.shape}.")


def tril(x, /, k=0) -> Tensor:
    """The lower triangle (on and below diagonal ``k``) of the last two axes; zeros elsewhere."""
    return bind(P.tril_p, tensor_of(x), k=as_int("tril", "k", k))


def triu(x, /, k=0) -> Tensor:
    """The upper triangle (on and above diagonal ``k``) of the last two axes; zeros elsewhere."""
    return bind(P.triu_p, tensor_of(x), k=as_int("triu", "k", k))

