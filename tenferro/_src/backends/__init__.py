"""Array backends and devices.

All array work goes through a *namespace* object ``xp``: the array API standard functions of
the backend plus a few extensions primitives need (``constant``, ``scatter_add``, linalg
drivers). One ``Backend`` exists per device; tensors hold their backend, and an operation whose
operands live on different backends raises ``DeviceError``.

Devices: ``"cpu"`` (NumPy, or ``array_api_strict`` when selected as the CPU backend),
``"cuda"``/``"cuda:N"`` (CuPy), and ``"strict"``/``"strict:N"`` (``array_api_strict``'s
CPU device and its two fake devices, N = 1, 2, which exist to test device handling without a GPU).
"""

from __future__ import annotations

import collections
import os
import threading

import numpy as np

from ..errors import DeviceError
from . import cupy_backend, numpy_backend, strict
from .base import Backend, count_host_reads, host_reads  # noqa: F401  (re-exported)

_lock = threading.Lock()
_backends: dict[str, Backend] = {}
_cpu_backend_name = os.environ.get("TENFERRO_BACKEND", "numpy")


def _make(device: str) -> Backend:
    kind, _, idx = device.partition(":")
    if kind == "cpu":
        if _cpu_backend_name == "array_api_strict":
            return strict.make_backend(0, device="cpu")
        if _cpu_backend_name != "numpy":
            raise DeviceError(
                f"unknown CPU backend {_cpu_backend_name!r} (TENFERRO_BACKEND); "
                f"use 'numpy' or 'array_api_strict'."
            )
        return numpy_backend.make_backend()
    if kind == "strict":
        return strict.make_backend(int(idx or 0), device=f"strict:{int(idx or 0)}")
    if kind in ("cuda", "gpu"):
        return cupy_backend.make_backend(int(idx or 0))
    raise DeviceError(
        f"unknown device {device!r}; use 'cpu', 'cuda' / 'cuda:N' (CuPy) or 'strict' / "
        f"'strict:N' (array_api_strict)."
    )


def canonical_device(device) -> str:
    if device is None:
        return "cpu"
    if isinstance(device, Backend):
        return device.device
    d = str(device).lower()
    if d in ("cuda", "gpu"):
        return "cuda:0"
    if d == "strict":
        return "strict:0"
    return d


def get_backend(device=None) -> Backend:
    """The backend for ``device`` (default ``"cpu"``), created on first use."""
    if isinstance(device, Backend):
        return device
    d = canonical_device(device)
    b = _backends.get(d)
    if b is None:
        with _lock:
            b = _backends.get(d)
            if b is None:
                b = _make(d)
                b.xp.transfer = lambda x, dev, _src=b: _transfer(_src, x, dev)
                _backends[d] = b
    return b


def _transfer(src: Backend, x, device):
    """Move a raw array of ``src`` to ``device`` (through host memory)."""
    dst = get_backend(device)
    if dst is src:
        return x
    return dst.asarray(src.to_numpy(x))


def set_cpu_backend(name: str) -> None:
    """Choose what ``"cpu"`` means: ``"numpy"`` (default) or ``"array_api_strict"``.

    Tensors created before the switch keep their backend.
    """
    global _cpu_backend_name
    if name not in ("numpy", "array_api_strict"):
        raise DeviceError(f"unknown CPU backend {name!r}; use 'numpy' or 'array_api_strict'.")
    with _lock:
        _cpu_backend_name = name
        _backends.pop("cpu", None)


def backend_of_array(arr) -> Backend | None:
    """Which backend owns a raw array (NumPy, array_api_strict or CuPy), if any."""
    mod = type(arr).__module__
    if isinstance(arr, (np.ndarray, np.generic)):
        return get_backend("cpu") if _cpu_backend_name == "numpy" else None
    if mod.startswith("array_api_strict"):
        i = strict.device_index(arr.device)
        return get_backend("cpu") if (i == 0 and _cpu_backend_name != "numpy") else get_backend(
            f"strict:{i}"
        )
    if mod.startswith("cupy"):
        return get_backend(f"cuda:{arr.device.id}")
    return None
