"""``tenferro.from_dlpack``: tensors from any DLPack producer (PyTorch, JAX, NumPy, CuPy,
array_api_strict, another tenferro tensor). The export side is ``EagerTensor.__dlpack__``
(``core/dlpack.py``)."""

from __future__ import annotations

import numpy as np

from ..backends import canonical_device, get_backend
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor
from ..errors import DeviceError, DTypeError
from .misc import to_device

# DLPack's device types (dlpack.h, DLDeviceType) that tenferro's devices can hold
_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED = 1, 2, 3, 13


def from_dlpack(x, /, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor from an object with ``__dlpack__`` and ``__dlpack_device__``: a PyTorch
    tensor, a JAX array, a NumPy or CuPy array... (the array API standard's ``from_dlpack``).

    Zero-copy where the producer allows: the tensor then *shares* the producer's memory, as
    DLPack intends, and a write into the producer's array afterwards shows in the tensor
    (``copy=True`` gives an independent buffer; ``asarray``/``tensor`` always copy).
    ``copy=False`` never copies (``BufferError`` where the producer would have to).
    ``device``: the tensor's device ("cpu", "cuda:N"); by default the producer's. The result is
    a new leaf that does not require grad (a producer's autograd history does not cross:
    PyTorch refuses to export a tensor that requires grad, as tenferro does)."""
    if copy is not None and not isinstance(copy, (bool, np.bool_)):
        raise DTypeError(f"from_dlpack: copy must be True, False or None, got {copy!r:.40}.")
    if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
        raise DTypeError(
            f"from_dlpack: expected an object with __dlpack__ and __dlpack_device__ (a "
            f"PyTorch tensor, a JAX, NumPy or CuPy array...), got {type(x).__name__}; "
            f"tenferro.asarray converts nested lists and other array-likes.")
    if isinstance(x, EagerTensor):  # one of ours: a new leaf for the same values
        x._check_leaves_tape("from_dlpack", "x.detach()")
        source, backend = x.device, x._backend
        arr = backend.asarray_owned(x._value) if copy else x._value
    else:
        kind, index = (int(v) for v in x.__dlpack_device__())
        source = _device_of(kind, index)
        backend = get_backend(source)
        arr = _import(backend, x, copy)
    target = source if device is None else canonical_device(device)
    if target != source and copy is False:
        raise BufferError(f"from_dlpack: the data is on {source}; moving it to {target} "
                          f"needs a copy, and copy=False forbids one.")
    if np.dtype(backend.canonical_dtype(arr.dtype)).kind not in "biufc":
        raise DTypeError(f"from_dlpack: dtype {arr.dtype} is not one tenferro holds (bool, "
                         f"integer, float or complex).")
    out = _wrap(arr, backend)
    if target != source:
        out = to_device(out, target)
    return out


def _device_of(kind: int, index: int) -> str:
    """tenferro's device for a DLPack device: the CPU backend for host memory (also CUDA
    host-pinned memory), ``cuda:N`` for CUDA memory."""
    if kind in (_KDL_CPU, _KDL_CUDA_HOST):
        return "cpu"
    if kind in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        return f"cuda:{index}"
    raise DeviceError(f"from_dlpack: the data is on DLPack device type {kind} (index "
                      f"{index}); tenferro holds host (CPU) and CUDA memory.")


def _import(backend, x, copy):
    """The producer's buffer as an array of ``backend``, through the array library's own
    ``from_dlpack`` (NumPy's, array_api_strict's or CuPy's)."""
    xp_from = getattr(backend.xp, "from_dlpack", None)
    if xp_from is None:  # pragma: no cover - every backend's namespace has it
        raise DeviceError(f"from_dlpack: the {backend.name} backend cannot import DLPack.")
    if copy is None:
        return xp_from(x)
    try:
        return xp_from(x, copy=copy)
    except TypeError:  # an older library without copy=: copy after a zero-copy import
        if copy is False:
            raise BufferError("from_dlpack: this array library cannot promise copy=False."
                              ) from None
        return backend.asarray_owned(xp_from(x))
