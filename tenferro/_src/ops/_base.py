"""Shared plumbing of the user-facing functions: coercion, NumPy promotion, broadcasting."""

from __future__ import annotations

import functools
import operator
import warnings

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import inexact_dtype
from chainrules.symbolic import Sym, decide, is_one, same_shape

from ..caches import BoundedCache
from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap, as_eager
from ..core.tensor import Tensor, mark_view
from ..errors import AxisError, ComplexWarning, ConcretizationError, DTypeError, ShapeError

Scalar = (int, float, complex, bool, np.number, np.bool_)


def is_scalar(x) -> bool:
    return isinstance(x, Scalar)


def tensor_of(x, like: Tensor | None = None, dtype=None) -> Tensor:
    """Any array-like as a tensor: tensors pass through; scalars, lists and NumPy arrays
    become constants (on ``like``'s device); a list or tuple holding tensors is stacked, so
    their derivatives are kept (``[x, 2 * x]`` is differentiable in ``x``)."""
    if isinstance(x, Tensor):
        return x if dtype is None else astype(x, dtype)
    if isinstance(x, Sym):
        dt = np.dtype(dtype) if dtype is not None else (
            np.result_type(like.dtype, 0) if like is not None else np.dtype(np.int64))
        return size_tensor(x, dt, like.device if like is not None else None)
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
    """Cast to ``dtype``; ``x`` itself when it has that dtype already. Complex -> real keeps
    the real part and warns (``ComplexWarning``, as NumPy and PyTorch): take ``x.real`` first
    to drop the imaginary part on purpose. Complex -> bool is ``x != 0`` (both parts count, as
    NumPy). The library's cast; the public ``tenferro.astype`` (``ops.misc``) adds the array
    API's ``copy``/``device``."""
    dtype = dtype if dtype.__class__ is np.dtype else dtype_arg("astype", dtype)
    x = x if isinstance(x, Tensor) else tensor_of(x)
    if x.dtype == dtype:
        return x
    if dtype.kind in "iuf" and x.dtype.kind == "c":
        warn_complex_cast("astype", x.dtype, dtype)
    return bind(P.convert_element_type_p, x, new_dtype=dtype)


def warn_complex_cast(op: str, src, dst) -> None:
    """The warning of a cast that drops an imaginary part (NumPy's ``ComplexWarning``)."""
    warnings.warn(
        f"{op}: casting {src} to {dst} discards the imaginary part; take x.real first to "
        f"drop it explicitly (or abs(x) for the magnitude).", ComplexWarning, stacklevel=3)


def to_inexact(x: Tensor) -> Tensor:
    """Integers and bools become float64, as NumPy's ufuncs do."""
    d = x.dtype
    return x if d.kind in "fc" else astype(x, inexact_dtype(d))


def broadcast_shapes(*shapes) -> tuple:
    """The shape ``shapes`` broadcast together (NumPy's ``broadcast_shapes``); raises a
    ``ShapeError`` naming the axis that cannot broadcast, or a negative size."""
    if not shapes:
        return ()
    shapes = [(as_dim(s),) if isinstance(s, (int, np.integer)) else tuple(
        as_dim(d) for d in sequence_of("broadcast_shapes", s)) for s in shapes]
    for s in shapes:
        if any(d.__class__ is int and d < 0 for d in s):
            raise ShapeError(f"broadcast_shapes: the shape {s} has a negative size; sizes are "
                             f"integers >= 0.")
    return broadcast_shapes_of("broadcast_shapes", *shapes)


def broadcast_shapes_of(op: str, *shapes) -> tuple:
    """NumPy broadcasting, errors naming ``op``. A run-time size broadcasts only against 1 or
    a size known to be equal: traced code cannot depend on whether it turns out to be 1."""
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(-nd, 0):
        size = 1
        for s in shapes:
            if -i <= len(s):
                d = s[i]
                if d.__class__ is int and size.__class__ is int:  # static: the common case
                    if d != 1:
                        if size != 1 and d != size:
                            _not_broadcastable(op, shapes, i, size, d)
                        size = d
                    continue
                if not is_one(d):
                    if not is_one(size) and decide(d, "==", size) is not True:
                        _not_broadcastable(op, shapes, i, size, d)
                    size = d
        out.append(size)
    return tuple(out)


def _not_broadcastable(op, shapes, i, size, d):
    desc = " and ".join(str(tuple(s)) for s in shapes)
    dyn = isinstance(d, Sym) or isinstance(size, Sym)
    raise ShapeError(
        f"{op}: shapes {desc} cannot be broadcast together (axis {i}: {size} vs {d}). Reshape "
        f"or expand_dims one operand so the trailing axes match." + (
            " A size known only at run time (e.g. an SVD rank chosen by a cutoff) broadcasts "
            "only against 1 or the same size, even if it might be 1 at run time; pass "
            "max_rank= for a static rank." if dyn else "")
    )


def as_dim(d):
    """A dimension: a Python int, or a symbolic run-time size (kept as is)."""
    if d.__class__ is int or isinstance(d, Sym):
        return d
    try:
        if isinstance(d, (bool, np.bool_)):
            raise TypeError
        return operator.index(d)
    except TypeError:
        raise ShapeError(f"a size must be an int, got {type(d).__name__} {d!r:.40} (a float, "
                         f"string or sequence is not a size).") from None


def as_int(op: str, what: str, v) -> int:
    """An integer argument (a diagonal offset, a count, ...): ints only, as NumPy."""
    try:
        if isinstance(v, (bool, np.bool_)):
            raise TypeError
        return operator.index(v)
    except TypeError:
        raise DTypeError(f"{op}: {what} must be an int, got {type(v).__name__} {v!r:.40}."
                         ) from None


def as_real(op: str, what: str, v, *, low=None, high=None, low_open: bool = False,
            high_open: bool = False) -> float:
    """A real-number argument (a learning rate, a loss's delta, a probability) as a float:
    ``DTypeError`` for anything that is not a real number (a bool, a string, a tensor),
    ``ShapeError`` for NaN or a value outside ``[low, high]`` (open ends as flagged)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                              np.floating)):
        raise DTypeError(f"{op}: {what} must be a real number, got {type(v).__name__} "
                         f"{v!r:.40}.")
    v = float(v)
    below = low is not None and (v <= low if low_open else v < low)
    above = high is not None and (v >= high if high_open else v > high)
    if v != v or below or above:
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        left = "(" if low_open or low is None else "["
        right = ")" if high_open or high is None else "]"
        rng = f"{left}{lo}, {hi}{right}"
        raise ShapeError(f"{op}: {what} must lie in {rng}, got {v!r}.")
    return v


def sequence_of(op: str, xs) -> list:
    """The tensors of a sequence argument (``concatenate([a, b])``) as a list."""
    if xs.__class__ is tuple or xs.__class__ is list:
        return list(xs)
    if isinstance(xs, (str, bytes, dict, set)) or xs is None or (
            isinstance(xs, Tensor) and xs.ndim == 0) or not hasattr(xs, "__iter__"):
        raise DTypeError(f"{op}: expected a sequence of tensors, got {type(xs).__name__} "
                         f"{xs!r:.40}.")
    return list(xs)


def dtype_arg(op: str, dtype) -> np.dtype:
    """A user-given dtype: NumPy's spelling of a bool, integer, float or complex type."""
    try:
        dt = np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise DTypeError(f"{op}: {dtype!r:.40} is not a dtype ({e}); use e.g. tenferro.float64."
                         ) from None
    if dt.kind not in "biufc":
        raise DTypeError(f"{op}: dtype {dt} is not supported; tensors hold bool, integer, float "
                         f"or complex numbers.")
    return dt


def size_tensor(n, dtype, device=None) -> Tensor:
    """A size as a 0-d tensor. A run-time size is counted at run time (the sum of ``n`` ones:
    no parameter of the graph then needs the value before it runs, so nothing folds it)."""
    if not isinstance(n, Sym):
        return full((), n, dtype, device)
    ones = full((n,), 1, dtype, device)
    return bind(P.reduce_sum_p, ones, axes=(0,))


def broadcast_to(x, shape) -> Tensor:
    """``x`` broadcast to ``shape`` (NumPy rules). Its transpose sums over the broadcast axes."""
    x = tensor_of(x)
    shape = (as_dim(shape),) if isinstance(shape, (int, np.integer)) else tuple(
        as_dim(d) for d in sequence_of("broadcast_to", shape))
    if same_shape(x.shape, shape):
        return x
    nd = len(shape)
    if x.ndim > nd:
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to fewer axes {shape}.")
    if not same_shape(broadcast_shapes_of("broadcast_to", x.shape, shape), shape):
        raise ShapeError(f"broadcast_to: cannot broadcast shape {x.shape} to {shape}.")
    out = bind(
        P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=tuple(range(nd - x.ndim, nd))
    )
    return mark_view(out, x, "broadcast_to")


def operands(op: str, *xs):
    """Promote (NumPy rules, Python scalars weak) and broadcast operands to one shape/dtype."""
    tensors = [x for x in xs if isinstance(x, Tensor)]
    if not tensors:
        xs = tuple(_operand(op, x, None) for x in xs)
        tensors = list(xs)
    elif len(tensors) < len(xs):
        xs = tuple(
            x if isinstance(x, (Tensor, Sym)) or is_scalar(x) else _operand(op, x, tensors[0])
            for x in xs
        )
        tensors = [x for x in xs if isinstance(x, Tensor)]
    dt = tensors[0].dtype
    if any(t.dtype != dt for t in tensors[1:]) or len(tensors) < len(xs):
        # a run-time size is a Python int to promotion (weak)
        dt = np.result_type(*[x.dtype if isinstance(x, Tensor) else 0 if isinstance(x, Sym)
                              else x for x in xs])
    shape = tensors[0].shape
    if any(not same_shape(t.shape, shape) for t in tensors[1:]):
        shape = broadcast_shapes_of(op, *[t.shape for t in tensors])
    out = []
    ref = tensors[0]
    for x in xs:
        if isinstance(x, Tensor):
            if x.dtype != dt:
                x = astype(x, dt)
            if not same_shape(x.shape, shape):
                x = broadcast_to(x, shape)
        elif isinstance(x, Sym):
            x = broadcast_to(size_tensor(x, dt, ref.device), shape)
        else:
            if isinstance(x, (bool, np.bool_)) and dt.kind != "b":
                x = int(x)
            x = bind(P.full_p, shape=shape, value=x, dtype=dt, device=ref.device)
        out.append(x)
    return out


def concrete_array(op: str, what: str, v, why: str) -> np.ndarray:
    """``v`` as a NumPy array when its value decides something static (a shape, a spacing);
    a traced value raises a ``ConcretizationError`` saying ``{op}: {what} {why}``."""
    if isinstance(v, Tensor):
        try:
            v = np.asarray(v.detach())
        except ConcretizationError as e:
            raise ConcretizationError(f"{op}: {what} {why}") from e
    return np.asarray(v)


def _operand(op, x, like):
    """``x`` as an operand of ``op``; ``None`` and strings are mistakes (NumPy would compute
    NaN from ``None``)."""
    if x is None or isinstance(x, (str, bytes, dict, set, type, np.dtype)):
        desc = "" if like is None else (
            f" next to a {like.dtype} tensor of shape {tuple(like.shape)}")
        raise DTypeError(f"{op}: got the operand {x!r:.40} ({type(x).__name__}){desc}; "
                         f"operands must be tensors, arrays or numbers.")
    return tensor_of(x, like=like)


def normalize_axis(op: str, axis, ndim: int) -> int:
    try:
        a = operator.index(axis)
    except TypeError:
        raise ShapeError(f"{op}: axis {axis!r:.40} ({type(axis).__name__}) is not an integer; "
                         f"axes are ints (or tuples of ints) in [-{ndim}, {ndim}).") from None
    if not -ndim <= a < max(ndim, 1):
        raise AxisError(f"{op}: axis {axis} is out of range for a tensor of rank {ndim}.")
    return a % ndim if ndim else 0


def reduction_axes(op: str, axis, ndim: int) -> tuple:
    """``normalize_axes`` sorted, cached per (op, axis, ndim): reductions call it per op."""
    if isinstance(axis, list):
        axis = tuple(axis)
    if _plain_axes(axis):
        return _reduction_axes(op, axis, ndim)
    # anything else (floats, bools, NumPy integers, unhashables) is checked on every call: a
    # cache keyed by value would let 1.0 or True hit the entry of 1
    return tuple(sorted(normalize_axes(op, axis, ndim)))


def _plain_axes(axis) -> bool:
    """``None``, a Python ``int`` or a tuple of them (exactly ``int``, not ``bool``)."""
    if axis is None or axis.__class__ is int:
        return True
    if axis.__class__ is not tuple:
        return False
    for a in axis:
        if a.__class__ is not int:
            return False
    return True


@functools.lru_cache(maxsize=1024)
def _reduction_axes(op, axis, ndim):
    return tuple(sorted(normalize_axes(op, axis, ndim)))


_SCALAR_CONSTANTS = BoundedCache("scalar operand constants", 4096)
PY_SCALARS = (float, int, complex)


def scalar_constant(like: EagerTensor, value):
    """A Python number as a constant tensor of ``like``'s dtype, shape and device, when
    NumPy's weak-scalar promotion keeps ``like``'s dtype (else ``None``): the operand of
    ``x + 1.0`` without a dispatch per call. Cached by value (bounded); zero and NaN, whose
    values a dict cannot tell apart, are not cached."""
    v = like._value
    dt = like.dtype  # NumPy's dtype object (the backend's may differ, e.g. array_api_strict)
    kind, t = dt.kind, type(value)
    if not (kind in "fc" if t is float else kind == "c" if t is complex
            else (kind in "fc" or (kind in "iu" and dt.itemsize == 8)) if t is int else False):
        return None
    b = like._backend
    if t is int and not -(1 << 63) <= value < (1 << 63):
        return None  # does not fit: the general path names the overflow
    if value != value or value == 0:
        return _wrap(b.xp.constant(v.shape, value, dt), b)
    key = (t, value, dt, v.shape, b)
    c = _SCALAR_CONSTANTS.get(key)
    if c is None:
        c = _SCALAR_CONSTANTS.put(key, _wrap(b.xp.constant(v.shape, value, dt), b))
    return c


def normalize_axes(op: str, axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        axis = (axis,)
    elif not isinstance(axis, (tuple, list)):
        normalize_axis(op, axis, ndim)  # raises the clear error for a non-integer axis
        axis = (axis,)
    axes = tuple(normalize_axis(op, a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: repeated axis in {tuple(axis)}.")
    return axes
