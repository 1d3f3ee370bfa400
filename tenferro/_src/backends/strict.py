"""The ``array_api_strict`` backend: a CPU stand-in for GPU arrays.

It only offers the array API standard, so any code path that would silently fall back to NumPy
fails here; it also has fake devices, which lets the device checks run without a GPU.
"""

from __future__ import annotations

import functools

import numpy as np

from ..errors import DeviceError, DTypeError
from .base import Backend, count_host_reads
from .eig import fix_eig_gauge, host_eig
from .linalg_ext import ArrayAPILinalg
from .namespace import Namespace, copy_public, generic_scatter_add
from .special import HostSpecial

_DEVICE_NAMES = ("CPU_DEVICE", "device1", "device2")


def _xp():
    try:
        import array_api_strict
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise DeviceError(
            "the 'strict' backend needs array_api_strict: pip install array-api-strict"
        ) from e
    return array_api_strict


def device_index(dev) -> int:
    name = repr(dev).split("'")[1] if "'" in repr(dev) else str(dev)
    return _DEVICE_NAMES.index(name)


def make_backend(index: int, device: str) -> Backend:
    xp = _xp()
    if not 0 <= index < len(_DEVICE_NAMES):
        raise DeviceError(f"array_api_strict has devices strict:0..2, not strict:{index}.")
    dev = xp.Device(_DEVICE_NAMES[index])
    to_native = {np.dtype(n): getattr(xp, n) for n in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64", "complex64", "complex128")}
    to_np = {v: k for k, v in to_native.items()}

    def nd(d):
        if d is None:
            return None
        if isinstance(d, np.dtype) or isinstance(d, type):
            native = to_native.get(np.dtype(d))
            if native is None:
                raise DTypeError(
                    f"the array_api_strict backend has no {np.dtype(d).name} dtype; use "
                    f"float32/float64/complex64/complex128 or an integer/bool dtype."
                )
            return native
        return d

    ns = Namespace()
    copy_public(ns, xp)
    Array = type(xp.asarray(0.0))

    def with_dtype(f):
        @functools.wraps(f)
        def g(*args, dtype=None, **kw):
            return f(*args, dtype=nd(dtype), **kw)

        return g

    def creation(f):
        @functools.wraps(f)
        def g(*args, dtype=None, device=None, **kw):
            return f(*args, dtype=nd(dtype), device=dev, **kw)

        return g

    for name in ("zeros", "ones", "empty", "arange", "eye", "linspace"):
        setattr(ns, name, creation(getattr(xp, name)))
    ns.full = lambda shape, fill_value, dtype=None: xp.full(
        shape, fill_value, dtype=nd(dtype), device=dev
    )
    for name in ("sum", "prod", "cumulative_sum", "cumulative_prod", "zeros_like", "ones_like",
                 "empty_like", "full_like"):
        setattr(ns, name, with_dtype(getattr(xp, name)))
    ns.astype = lambda x, dtype, copy=True: xp.astype(x, nd(dtype), copy=copy)

    def asarray(data, dtype=None, copy=None):
        if isinstance(data, Array) and data.device != dev:
            raise DeviceError(f"array on {data.device} given to backend strict:{index}")
        if isinstance(data, np.ndarray) and dtype is None:
            dtype = data.dtype
        return xp.asarray(data, dtype=nd(dtype), device=dev, copy=copy)

    ns.asarray = asarray
    ns.asarray_owned = lambda data, dtype=None: asarray(data, dtype, copy=True)
    ns.constant = lambda shape, value, dtype: xp.broadcast_to(
        xp.asarray(value, dtype=nd(dtype), device=dev), shape
    )
    ns.scatter_add = functools.partial(generic_scatter_add, ns)
    ns.np_dtype = lambda d: to_np[d]
    ns.to_numpy = lambda a: np.asarray(xp.asarray(a, device=xp.Device("CPU_DEVICE")))
    if index:  # the fake devices stand in for a GPU: count their host reads
        count_host_reads(ns, device)
    ns.is_native = lambda a: isinstance(a, Array)
    ns.linalg = xp.linalg
    ns.linalg_ext = ArrayAPILinalg(ns)
    # xp.fft is the standard's fft extension; special functions and the general eigensolver
    # are not in the standard: they run on the host, explicitly (see .special and .eig)
    ns.fft = xp.fft  # an extension module: not among the namespace's public names
    ns.special = HostSpecial(ns)
    ns.eig = host_eig(ns)
    ns.fix_eig_gauge = functools.partial(fix_eig_gauge, ns)
    return Backend("array_api_strict", device, ns, native_device=dev)
