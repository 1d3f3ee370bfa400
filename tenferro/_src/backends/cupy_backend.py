"""The CuPy backend (``"cuda:N"`` devices). Imported only when a CUDA device is requested."""

from __future__ import annotations

import numpy as np

from ..errors import DeviceError
from .base import Backend, count_host_reads
from .eig import fix_eig_gauge, host_eig
from .linalg_ext import ArrayAPILinalg
from .namespace import Namespace, copy_public
from .special import cupy_special


def make_backend(index: int) -> Backend:  # pragma: no cover - needs a GPU
    try:
        import cupy
        import cupyx
    except ImportError as e:
        raise DeviceError(
            f"device cuda:{index} needs CuPy (pip install 'tenferro[gpu]' with a CUDA-matched "
            f"cupy wheel)."
        ) from e
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise DeviceError(f"device cuda:{index}: no usable CUDA device ({e}).") from e
    if not 0 <= index < n:
        raise DeviceError(f"device cuda:{index}: only {n} CUDA device(s) present.")
    dev = cupy.cuda.Device(index)
    ns = Namespace()
    copy_public(ns, cupy)
    # Array-API spellings older CuPy releases lack.
    for std, old in (("concat", "concatenate"), ("permute_dims", "transpose"), ("pow", "power"),
                     ("atan", "arctan"), ("atan2", "arctan2")):
        if not hasattr(ns, std):
            setattr(ns, std, getattr(cupy, old))
    if not hasattr(ns, "astype"):
        ns.astype = lambda x, dtype, copy=True: x.astype(dtype, copy=copy)
    if not hasattr(ns, "isdtype"):
        ns.isdtype = lambda d, kind: np.isdtype(np.dtype(d), kind)
    if not hasattr(ns, "cumulative_sum"):
        ns.cumulative_sum = lambda x, axis=None, dtype=None: cupy.cumsum(x, axis=axis, dtype=dtype)

    def on_dev(f):
        def g(*a, **k):
            with dev:
                return f(*a, **k)

        return g

    ns.asarray = on_dev(cupy.asarray)
    ns.asarray_owned = on_dev(lambda data, dtype=None: cupy.array(data, dtype=dtype, copy=True))
    ns.constant = on_dev(lambda shape, value, dtype: cupy.broadcast_to(
        cupy.asarray(value, dtype=dtype), shape))

    def scatter_add(operand, indices, updates, axis):
        out = operand.copy()
        cupyx.scatter_add(out, (slice(None),) * axis + (indices,), updates)
        return out

    ns.scatter_add = scatter_add
    ns.np_dtype = lambda d: np.dtype(d)
    ns.to_numpy = lambda a: cupy.asnumpy(a)
    count_host_reads(ns, f"cuda:{index}")
    ns.is_native = lambda a: isinstance(a, cupy.ndarray)
    ns.linalg = cupy.linalg
    ns.linalg_ext = ArrayAPILinalg(ns)
    ns.special = cupy_special()
    if hasattr(cupy.linalg, "eig"):
        ns.eig = lambda a: _cupy_eig(cupy, a)
    else:
        ns.eig = host_eig(ns)
    ns.fix_eig_gauge = lambda w, v: fix_eig_gauge(ns, w, v)
    return Backend("cupy", f"cuda:{index}", ns, native_device=dev)


def _cupy_eig(cupy, a):  # pragma: no cover - needs a GPU
    c = cupy.complex64 if a.dtype in (cupy.float32, cupy.complex64) else cupy.complex128
    w, v = cupy.linalg.eig(a)
    return w.astype(c, copy=False), v.astype(c, copy=False)
