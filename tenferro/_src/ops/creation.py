"""Creating tensors: from data, constants, ranges, identity matrices, random numbers."""

from __future__ import annotations

import os
import threading

import numpy as np

from chainrules import primitives as P
from chainrules.symbolic import Sym, floordiv, sym_max

from ..backends import backend_of_array, canonical_device, get_backend
from ..core.dispatch import bind, state
from ..core.eager import EVAL_TRACE, EagerTensor, _wrap
from ..core.tensor import Tensor
from ..errors import DTypeError, GraphError, ShapeError, named_argument_errors
from ._base import as_dim, as_int, astype, broadcast_to, dtype_arg, first_tensor, tensor_of
from .elementwise import where
from .misc import copy, to_device

_copy = copy  # asarray's keyword argument ``copy`` hides the function there

float64 = np.dtype("float64")


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (array-like, scalar, tensor, or a nested list
    mixing tensors and numbers).

    Tensors inside ``data`` keep their derivative (``tensor([x, 2 * x])`` is differentiable in
    ``x``, in every mode), as in JAX; PyTorch's ``torch.tensor`` would cut it. With
    ``requires_grad=True`` the result is a new leaf holding the values instead."""
    if isinstance(data, Tensor) or first_tensor(data) is not None:
        out = copy(tensor_of(data))
        if dtype is not None:
            out = astype(out, dtype)
        if device is not None:
            out = to_device(out, device)
        if requires_grad:
            out = out.detach().requires_grad_()
        return out
    backend = get_backend(device if device is not None else state.default_device)
    dt = None if dtype is None else _dtype_arg("tensor", dtype)
    try:
        arr = np.array(data, dtype=dt, copy=True)
    except (TypeError, ValueError, OverflowError) as e:
        raise DTypeError(f"tensor: cannot convert the {type(data).__name__} to a "
                         f"{dt or 'numeric'} array ({e}); give a rectangular array of numbers."
                         ) from None
    if arr.dtype == object:
        raise DTypeError("tensor: data is ragged or not numeric; give a rectangular array.")
    if arr.dtype.kind not in "biufc":
        raise DTypeError(f"tensor: data of dtype {arr.dtype} is not numeric; tensors hold bool, "
                         f"integer, float or complex numbers.")
    t = _wrap(backend.asarray(arr), backend)
    if requires_grad:
        t.requires_grad_()
    return t


def asarray(data, dtype=None, device=None, *, copy: bool | None = None) -> Tensor:
    """``data`` (a tensor, an array of any backend, a scalar, or nested lists that may hold
    tensors) as a tensor, converted to ``dtype`` and moved to ``device`` when given.

    ``copy`` (the array API standard's): ``True`` always returns a new tensor; ``None`` reuses
    a tensor that needs no conversion; ``False`` never copies and raises ``ValueError`` when a
    conversion would need one. Host data (NumPy arrays, lists) is always copied, so ``copy=False``
    refuses it: tenferro tensors own their buffers, and a buffer shared with a NumPy array
    could be written by its owner after a gradient recorded its values (``from_numpy`` copies
    too). Tensors inside a list keep their derivative (``asarray([x, 2 * x])``)."""
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise DTypeError(f"asarray: copy must be True, False or None, got {copy!r:.40}.")
    if isinstance(data, Tensor) or first_tensor(data) is not None:
        out = tensor_of(data)
        if copy is False and out is not data:
            raise ShapeError("asarray(copy=False): a list of tensors is stacked into a new "
                             "tensor, which is a copy; pass copy=None.")
        converted = out
        if dtype is not None:
            out = astype(out, dtype)
        if device is not None and getattr(out, "device", None) != canonical_device(device):
            out = to_device(out, device)
        if out is not converted and copy is False:
            raise ShapeError(f"asarray(copy=False): converting the {converted.dtype} tensor on "
                             f"{converted.device} to dtype={dtype}, device={device} needs a "
                             f"copy; pass copy=None.")
        if copy and out is data:
            out = _copy(out)
        return out
    if copy is False:
        raise ShapeError(
            f"asarray(copy=False): a {type(data).__name__} cannot become a tenferro tensor "
            f"without a copy (tensors own their buffers, so that no outside write can change a "
            f"value a gradient was recorded with); pass copy=None or copy=True."
        )
    if device is not None:
        backend = get_backend(device)
    elif isinstance(data, (np.ndarray, np.generic)) and state.default_device is not None:
        backend = get_backend(state.default_device)  # host data goes to the default device
    else:
        backend = backend_of_array(data) or get_backend(state.default_device)
    dt = None if dtype is None else dtype_arg("asarray", dtype)
    if data is None or isinstance(data, (str, bytes, dict, set, type, np.dtype)):
        raise DTypeError(f"asarray: cannot convert {type(data).__name__} {data!r:.40} to a "
                         f"tensor; give a number or an array of numbers.")
    try:
        arr = backend.asarray_owned(data, dtype=dt)  # never the caller's buffer
    except (TypeError, ValueError, OverflowError) as e:
        raise DTypeError(f"asarray: cannot convert the {type(data).__name__} to a tensor "
                         f"({type(e).__name__}: {e}); give a rectangular array of numbers."
                         ) from None
    if getattr(arr.dtype, "kind", "f") not in "biufc":
        raise DTypeError(f"asarray: data of dtype {arr.dtype} is not numeric.")
    return _wrap(arr, backend)


def _fresh(arr, dtype):
    """A copy of a host or device array that no one else holds (cast to ``dtype``)."""
    b = backend_of_array(arr)
    if b is None or isinstance(arr, (np.ndarray, np.generic)):
        return np.array(arr, dtype=dtype, copy=True)
    xp = b.xp
    return xp.asarray(arr, copy=True) if dtype is None else xp.astype(arr, dtype, copy=True)


def full(shape, fill_value, dtype=None, device=None, *, requires_grad: bool = False) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value``; without ``dtype`` the value decides it
    (bool, int64, float64 or complex128, the default dtypes). A constant: no gradient
    (``requires_grad=True``, PyTorch's keyword: a new leaf)."""
    _check_fill("full", fill_value)
    dtype = _fill_dtype(fill_value) if dtype is None else _dtype_arg("full", dtype)
    shape = checked_shape("full", shape, dtype)
    return _maybe_leaf(bind(P.full_p, shape=shape, value=fill_value, dtype=dtype,
                            device=device), requires_grad)


def _fill_dtype(value) -> np.dtype:
    """The default dtype of a fill value: a Python bool, int, float or complex gives bool,
    int64, float64 or complex128; a NumPy scalar keeps its own."""
    if isinstance(value, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(value, np.generic):
        return value.dtype
    if isinstance(value, Tensor):
        return value.dtype
    if isinstance(value, int):
        return np.dtype(np.int64)
    if isinstance(value, complex):
        return np.dtype(np.complex128)
    return float64


def _check_fill(op, value):
    if isinstance(value, Tensor):
        return
    if not isinstance(value, (int, float, complex, np.number, np.bool_)) and not (
            isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc"):
        raise DTypeError(
            f"{op}: the fill value must be a number or a bool, got {type(value).__name__} "
            f"{value!r:.40}."
        )


def _dtype_arg(op, dtype) -> np.dtype:
    return dtype_arg(op, dtype)


_MEMORY = []


def _memory_bytes() -> int:
    """This machine's physical memory (cached; a generous default where it cannot be read)."""
    if not _MEMORY:
        try:
            _MEMORY.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):
            _MEMORY.append(1 << 46)
    return _MEMORY[0]


def checked_shape(op: str, shape, dtype) -> tuple:
    """``shape`` as a tuple of sizes, each a non-negative int (or a run-time size), whose
    buffer fits in memory: a huge shape would otherwise succeed as a broadcast view and fail
    (or run for hours) in whichever operation first materialises it."""
    dims = (shape,) if isinstance(shape, (int, np.integer, Sym)) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        raise ShapeError(f"{op}: the shape must be an int or a sequence of ints, got "
                         f"{type(shape).__name__} {shape!r:.40}.") from None
    out = []
    for d in dims:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer, Sym)):
            raise ShapeError(f"{op}: the shape {shape!r:.60} holds {d!r:.20} "
                             f"({type(d).__name__}); sizes must be ints.")
        d = as_dim(d)
        if d.__class__ is int and d < 0:
            raise ShapeError(f"{op}: the shape {tuple(dims)} has a negative size; sizes must be "
                             f">= 0.")
        out.append(d)
    static = [d for d in out if d.__class__ is int]
    n = 1
    for d in static:
        n *= d
    nbytes = n * np.dtype(dtype).itemsize
    if nbytes > _memory_bytes():
        raise ShapeError(
            f"{op}: a {np.dtype(dtype).name} tensor of shape {tuple(out)} needs "
            f"{nbytes / 2**30:.3g} GiB, more than this machine's {_memory_bytes() / 2**30:.3g} "
            f"GiB of memory; reduce the shape (or split the work into slices)."
        )
    return tuple(out)


def _sizes(op: str, shape, args, dtype, device):
    """``(shape, dtype, device)`` from NumPy's ``(shape, dtype, device)`` or PyTorch's varargs
    ``(*size, dtype=, device=)``: ``zeros(2, 3)`` is PyTorch's (NumPy would read the 3 as a
    dtype and refuse it)."""
    if args and isinstance(shape, (int, np.integer)) and all(
            isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
        return (shape, *args), dtype, device
    if len(args) > 2:
        raise DTypeError(f"{op}: takes (shape, dtype, device) or PyTorch's (*size, dtype=, "
                         f"device=); got {1 + len(args)} positional arguments.")
    if args:
        if dtype is not None:
            raise DTypeError(f"{op}: the dtype is given twice.")
        dtype = args[0]
    if len(args) == 2:
        if device is not None:
            raise DTypeError(f"{op}: the device is given twice.")
        device = args[1]
    return shape, dtype, device


def _maybe_leaf(out, requires_grad: bool):
    """PyTorch's ``requires_grad=`` of the creation functions: the result is a leaf that
    records its uses."""
    return out.requires_grad_() if requires_grad else out


def zeros(shape, *args, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (``dtype`` ``None``: the default floating dtype, float64). The shape
    is one tuple (NumPy) or separate sizes (PyTorch's ``zeros(2, 3)``)."""
    shape, dtype, device = _sizes("zeros", shape, args, dtype, device)
    return _maybe_leaf(full(shape, 0, float64 if dtype is None else dtype, device),
                       requires_grad)


def ones(shape, *args, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (``dtype`` ``None``: the default floating dtype, float64); the shape
    as a tuple or as separate sizes."""
    shape, dtype, device = _sizes("ones", shape, args, dtype, device)
    return _maybe_leaf(full(shape, 1, float64 if dtype is None else dtype, device),
                       requires_grad)


def empty(shape, *args, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``shape`` (a tuple or separate sizes) whose values are unspecified by the
    standard; tenferro fills it with zeros (a constant, so its values never depend on memory
    left behind)."""
    shape, dtype, device = _sizes("empty", shape, args, dtype, device)
    return zeros(shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(x, /, fill_value, dtype=None, device=None) -> Tensor:
    """A tensor filled with ``fill_value`` with ``x``'s shape and (by default) dtype and
    device."""
    x = x if isinstance(x, Tensor) else asarray(x)
    return full(x.shape, fill_value, x.dtype if dtype is None else dtype,
                x.device if device is None else device)


def zeros_like(x, /, dtype=None, device=None) -> Tensor:
    """Zeros with ``x``'s shape and (by default) dtype and device."""
    return full_like(x, 0, dtype, device)


def ones_like(x, /, dtype=None, device=None) -> Tensor:
    """Ones with ``x``'s shape and (by default) dtype and device."""
    return full_like(x, 1, dtype, device)


def empty_like(x, /, dtype=None, device=None) -> Tensor:
    """``empty`` with ``x``'s shape and (by default) dtype and device: zeros."""
    return full_like(x, 0, dtype, device)


@named_argument_errors("arange")
def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    """Evenly spaced values in [start, stop) (NumPy's ``arange``). ``stop`` may be a size
    known only at run time (e.g. ``arange(s.shape[0])`` under ``jit``) when start and step are
    integers."""
    if stop is None:
        start, stop = 0, start
    if isinstance(start, Sym) or isinstance(stop, Sym):
        if not all(isinstance(v, (int, np.integer, Sym)) for v in (start, stop, step)):
            raise ShapeError("arange: with a run-time size, start, stop and step must be integers.")
        step = int(step)
        if step <= 0:
            raise ShapeError("arange: with a run-time size the step must be positive.")
        n = sym_max(0, floordiv(stop - start + (step - 1), step))
    else:
        n = max(0, int(np.ceil((stop - start) / step)))
    if dtype is None:
        if isinstance(n, Sym):  # all integers (checked above)
            dtype = np.dtype(np.int64)
        else:
            dtype = np.result_type(start, stop, step)
            dtype = np.dtype(np.int64) if dtype.kind in "iu" else float64
    dtype = _dtype_arg("arange", dtype)
    checked_shape("arange", (n,), dtype)
    i = bind(P.iota_p, shape=(n,), dimension=0, dtype=dtype, device=device)
    if step != 1:
        i = i * step
    if start != 0:
        i = i + start
    return i


@named_argument_errors("linspace")
def linspace(start, stop, /, num=50, endpoint=True, dtype=None, device=None) -> Tensor:
    """``num`` evenly spaced values from ``start`` to ``stop`` (NumPy's ``linspace``); with
    ``endpoint`` the last value is ``stop`` exactly. ``dtype`` ``None``: float64, or complex128
    for a complex bound. Differentiable in tensor bounds."""
    cplx = any(isinstance(v, complex) or (isinstance(v, (Tensor, np.generic)) and
                                          v.dtype.kind == "c") for v in (start, stop))
    if dtype is None:  # tensor bounds keep their precision; numbers give the defaults
        ts = [v.dtype for v in (start, stop) if isinstance(v, Tensor) and v.dtype.kind in "fc"]
        dtype = np.result_type(*ts) if ts else np.dtype(np.complex128) if cplx else float64
        if cplx and dtype.kind != "c":
            dtype = np.dtype(np.complex128)
    dtype = _dtype_arg("linspace", dtype)
    num = checked_shape("linspace", (num,), dtype)[0]
    # array bounds (NumPy's): the samples run along a new first axis
    start, stop = (v if isinstance(v, Tensor) or np.ndim(v) == 0 else asarray(v)
                   for v in (start, stop))
    nd = max(np.ndim(v) if not isinstance(v, Tensor) else v.ndim for v in (start, stop))
    div = (num - 1) if endpoint else num
    step = (stop - start) / div if div > 0 else 0.0 * (stop - start)
    # computed in double precision (complex128 for complex bounds), then cast, as NumPy
    i = bind(P.iota_p, shape=(num,) + (1,) * nd, dimension=0, dtype=float64, device=device)
    out = i * step + start
    if endpoint and num.__class__ is int and num > 1:
        last = bind(P.iota_p, shape=(num,) + (1,) * nd, dimension=0,
                    dtype=np.dtype(np.int64), device=device) == num - 1
        out = where(last, stop, out)
    if out.dtype.kind == "c" and dtype.kind != "c":
        raise DTypeError(f"linspace: complex bounds {start!r:.20}, {stop!r:.20} do not fit "
                         f"dtype {dtype}.")
    return astype(out, dtype) if out.dtype != dtype else out


def eye(n_rows, n_cols=None, /, k=0, dtype=None, device=None) -> Tensor:
    """An ``n_rows x n_cols`` matrix with ones on diagonal ``k`` (NumPy's ``eye``; float64 by
    default)."""
    n, m = n_rows, n_rows if n_cols is None else n_cols
    dtype = float64 if dtype is None else _dtype_arg("eye", dtype)
    n, m = checked_shape("eye", (n, m), np.int64)
    k = as_int("eye", "k", k)
    if not -n < k < m:  # no diagonal inside the matrix (also a k beyond int64)
        return zeros((n, m), dtype, device)
    i = bind(P.iota_p, shape=(n, m), dimension=0, dtype=np.dtype(np.int64), device=device)
    j = bind(P.iota_p, shape=(n, m), dimension=1, dtype=np.dtype(np.int64), device=device)
    return astype((i + k) == j, dtype)


def meshgrid(*arrays, indexing: str = "xy") -> list:
    """Coordinate tensors from 1-D tensors (the array API's and NumPy's ``meshgrid``):
    ``indexing="xy"`` (Cartesian: the first two axes swapped) or ``"ij"`` (matrix). The
    inputs must share a dtype. Linear: each output is a broadcast of one input."""
    if not isinstance(indexing, str) or indexing not in ("xy", "ij"):
        raise ShapeError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r:.20}.")
    xs = [tensor_of(a) for a in arrays]
    for x in xs:
        if x.ndim != 1:
            raise ShapeError(f"meshgrid: the inputs must be 1-D, got shape {tuple(x.shape)}.")
    if len({x.dtype for x in xs}) > 1:
        raise DTypeError(f"meshgrid: the inputs must share a dtype, got "
                         f"{[x.dtype.name for x in xs]}; cast them first.")
    n = len(xs)
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and n >= 2 else i
        shape = [1] * n
        shape[axis] = x.shape[0]
        out.append(broadcast_to(x.reshape(tuple(shape)), tuple(sizes)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False, device=None):
    """NumPy's ``indices``: a grid of index tensors, stacked into shape ``(len(dimensions),
    *dimensions)`` (or, ``sparse=True``, a tuple of broadcastable ones). Integer (int64 by
    default), so without derivative."""
    if isinstance(dimensions, Tensor) or not hasattr(dimensions, "__iter__"):
        raise ShapeError(f"indices: dimensions must be a sequence of sizes such as (2, 3), "
                         f"got {type(dimensions).__name__} {dimensions!r:.40}.")
    dims = tuple(as_int("indices", "dimensions", d) for d in dimensions)
    if any(d < 0 for d in dims):
        raise ShapeError(f"indices: negative dimension in {dims}.")
    dt = np.dtype(np.int64) if dtype is None else _dtype_arg("indices", dtype)
    if sparse:
        return tuple(bind(P.iota_p, shape=tuple(n if a == axis else 1 for a in range(len(dims))),
                          dimension=axis, dtype=dt, device=device)
                     for axis, n in enumerate(dims))
    grids = [bind(P.iota_p, shape=(1, *dims), dimension=axis + 1, dtype=dt, device=device)
             for axis in range(len(dims))]
    if not grids:
        return zeros((0,), dt, device)
    return grids[0] if len(grids) == 1 else bind(P.concatenate_p, *grids, dimension=0)


# ------------------------------------------------------------------ random numbers
class _RNG(threading.local):
    def __init__(self):
        self.gen = np.random.default_rng()


_rng = _RNG()


def manual_seed(seed: int) -> None:
    """Seed this thread's generator (used by ``randn``/``rand``/``normal``/``uniform``)."""
    _rng.gen = np.random.default_rng(seed)


def get_rng_state():
    """The generator state; ``set_rng_state`` restores it (checkpointing replays with it)."""
    return _rng.gen.bit_generator.state


def set_rng_state(st) -> None:
    """Restore the random-number generator state saved by ``get_rng_state``."""
    _rng.gen.bit_generator.state = st


def _shape_args(shape):
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return checked_shape("random", shape, float64)


def _check_not_traced():
    if state.base is not None and state.base is not EVAL_TRACE:
        raise GraphError(
            "random numbers drawn inside traced code would be frozen into the graph at trace "
            "time; draw them outside and pass them in as arguments."
        )


def _from_host(arr, dtype, device):
    backend = get_backend(device if device is not None else state.default_device)
    return _wrap(backend.asarray(arr.astype(np.dtype(dtype), copy=False)), backend)


def randn(*shape, dtype=float64, device=None) -> EagerTensor:
    """Standard normal samples (complex dtypes: unit variance, independent real/imag parts)."""
    _check_not_traced()
    shape = _shape_args(shape)
    dt = np.dtype(dtype)
    g = _rng.gen
    if dt.kind == "c":
        arr = (g.standard_normal(shape) + 1j * g.standard_normal(shape)) / np.sqrt(2)
    else:
        arr = g.standard_normal(shape)
    return _from_host(arr, dt, device)


def rand(*shape, dtype=float64, device=None) -> EagerTensor:
    """Uniform samples in [0, 1)."""
    _check_not_traced()
    return _from_host(_rng.gen.random(_shape_args(shape)), dtype, device)


def randn_like(input, dtype=None, device=None, *, requires_grad: bool = False) -> EagerTensor:
    """Standard normal samples with ``input``'s shape and (by default) dtype and device
    (PyTorch's ``randn_like``); tenferro's generator, eager only."""
    x = input if isinstance(input, Tensor) else asarray(input)
    return _maybe_leaf(randn(*x.shape, dtype=x.dtype if dtype is None else dtype,
                             device=x.device if device is None else device), requires_grad)


def rand_like(input, dtype=None, device=None, *, requires_grad: bool = False) -> EagerTensor:
    """Uniform samples in [0, 1) with ``input``'s shape and (by default) dtype and device
    (PyTorch's ``rand_like``); eager only."""
    x = input if isinstance(input, Tensor) else asarray(input)
    return _maybe_leaf(rand(*x.shape, dtype=x.dtype if dtype is None else dtype,
                            device=x.device if device is None else device), requires_grad)


@named_argument_errors("normal")
def normal(mean=0.0, std=1.0, size=(), dtype=float64, device=None) -> EagerTensor:
    """Normally distributed samples (mean ``mean``, standard deviation ``std``) from tenferro's
    generator (seeded by ``manual_seed``). Eager only: random draws inside traced code are
    refused."""
    _check_not_traced()
    return _from_host(_rng.gen.normal(mean, std, size), dtype, device)


@named_argument_errors("uniform")
def uniform(low=0.0, high=1.0, size=(), dtype=float64, device=None) -> EagerTensor:
    """Uniform samples in [low, high) from tenferro's generator (seeded by ``manual_seed``).
    Eager only."""
    _check_not_traced()
    return _from_host(_rng.gen.uniform(low, high, size), dtype, device)

