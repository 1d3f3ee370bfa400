"""Shared plumbing of the user-facing functions: coercion, NumPy promotion, broadcasting."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import inexact_dtype
from chainrules.symbolic import Sym

from ..core.dispatch import bind
from ..core.eager import EagerTensor, as_eager
from ..core.tensor import Tensor
from ..errors import ShapeError

Scalar = (int, float, complex, bool, np.number, np.bool_)


def is_scalar(x) -> bool:
    return isinstance(x, Scalar)


def tensor_of(x, like: Tensor | None = None, dtype=None) -> Tensor:
    """Any array-like as a tensor: tensors pass through; scalars, lists and NumPy arrays
    become constants (on ``like``'s device); a list or tuple holding tensors is stacked, so
    their derivatives are kept (``[x, 2 * x]`` is differentiable in ``x``)."""
    if isinstance(x, Tensor):
        return x if dtype is None else astype(x, dtype)
    if like is not None and is_scalar(x):
        dt = np.dtype(dtype) if dtype is not None else np.result_type(like.dtype, x)
        return full((), x, dt, like.device)
    if isinstance(x, (list, tuple)):
        first = first_tensor(x)
        if first is not None:
            out = stack_nested(x, first)
            return out if dtype is None else astype(out, dtype)
    return as_eager(x, like=like if isinstance(like, EagerTensor) else None, dtype=dtype)


def first_tensor(x):
    """The first tensor inside a nested list/tuple, or ``None``."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (list, tuple)):
        for e in x:
            t = first_tensor(e)
            if t is not None:
                return t
    return None


def stack_nested(x, like: Tensor) -> Tensor:
    """A nested list/tuple of tensors and numbers as one tensor (new leading axes), built
    from ``reshape`` and ``concatenate`` so every element keeps its derivative. Elements are
    promoted to a common dtype as NumPy does; shapes must agree (no ragged nesting)."""
    if not isinstance(x, (list, tuple)):
        return x if isinstance(x, Tensor) else as_eager(
            x, like=like if isinstance(like, EagerTensor) else None)
    items = [stack_nested(e, like) for e in x]
    if not items:
        raise ShapeError("tensor: an empty list cannot be stacked with tensors next to it.")
    shapes = {tuple(t.shape) for t in items}
    if len(shapes) > 1:
        raise ShapeError(
            f"tensor: the nested sequence is ragged (element shapes {sorted(shapes)}); all "
            f"elements of a list must have the same shape."
        )
    dt = np.result_type(*[t.dtype for t in items])
    rows = [bind(P.reshape_p, astype(t, dt), new_sizes=(1,) + tuple(t.shape)) for t in items]
    return rows[0] if len(rows) == 1 else bind(P.concatenate_p, *rows, dimension=0)


def full(shape, value, dtype, device=None) -> Tensor:
    return bind(P.full_p, shape=tuple(shape), value=value, dtype=np.dtype(dtype), device=device)


def astype(x, dtype) -> Tensor:
    """Cast to ``dtype`` (complex -> real keeps the real part)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return bind(P.convert_element_type_p, x, new_dtype=dtype)


def to_inexact(x: Tensor) -> Tensor:
    """Integers and bools become float64, as NumPy's ufuncs do."""
    d = x.dtype
    return x if d.kind in "fc" else astype(x, inexact_dtype(d))


def broadcast_shapes(op: str, *shapes) -> tuple:
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(-nd, 0):
        size = 1
        for s in shapes:
            if -i <= len(s):
                d = s[i]
                if d != 1:
                    if size != 1 and d != size:
                        desc = " and ".join(str(tuple(s)) for s in shapes)
                        raise ShapeError(
                            f"{op}: shapes {desc} cannot be broadcast together (axis {i}: "
                            f"{size} vs {d}). Reshape or expand_dims one operand so the trailing "
                            f"axes match."
                        )
                    size = d
        out.append(size)
    return tuple(out)


def as_dim(d):
    """A dimension: a Python int, or a symbolic run-time size (kept as is)."""
    return d if isinstance(d, Sym) else int(d)


def broadcast_to(x, shape) -> Tensor:
    x = tensor_of(x)
    shape = tuple(as_dim(d) for d in shape)
    if x.shape == shape:
        return x
    nd = len(shape)
    if x.ndim > nd:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to fewer axes {shape}.")
    if broadcast_shapes("broadcast_to", x.shape, shape) != shape:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}.")
    return bind(
        P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=tuple(range(nd - x.ndim, nd))
    )


def operands(op: str, *xs):
    """Promote (NumPy rules, Python scalars weak) and broadcast operands to one shape/dtype."""
    tensors = [x for x in xs if isinstance(x, Tensor)]
    if not tensors:
        xs = tuple(tensor_of(x) for x in xs)
        tensors = list(xs)
    elif len(tensors) < len(xs):
        xs = tuple(
            x if isinstance(x, Tensor) or is_scalar(x) else tensor_of(x, like=tensors[0])
            for x in xs
        )
        tensors = [x for x in xs if isinstance(x, Tensor)]
    dt = tensors[0].dtype
    if any(t.dtype != dt for t in tensors[1:]) or len(tensors) < len(xs):
        dt = np.result_type(*[x.dtype if isinstance(x, Tensor) else x for x in xs])
    shape = tensors[0].shape
    if any(t.shape != shape for t in tensors[1:]):
        shape = broadcast_shapes(op, *[t.shape for t in tensors])
    out = []
    ref = tensors[0]
    for x in xs:
        if isinstance(x, Tensor):
            if x.dtype != dt:
                x = astype(x, dt)
            if x.shape != shape:
                x = broadcast_to(x, shape)
        else:
            if isinstance(x, (bool, np.bool_)) and dt.kind != "b":
                x = int(x)
            x = bind(P.full_p, shape=shape, value=x, dtype=dt, device=ref.device)
        out.append(x)
    return out


def normalize_axis(op: str, axis, ndim: int) -> int:
    a = int(axis)
    if not -ndim <= a < max(ndim, 1):
        raise ShapeError(f"{op}: axis {axis} is out of range for a tensor of rank {ndim}.")
    return a % ndim if ndim else 0


def normalize_axes(op: str, axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axes = tuple(normalize_axis(op, a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: repeated axis in {tuple(axis)}.")
    return axes
