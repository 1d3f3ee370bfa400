"""The ``Backend`` type (one array namespace bound to one device) and the count of
device-to-host copies; the registry of backends per device is ``backends/__init__.py``."""

from __future__ import annotations

import collections

import numpy as np

# Device-to-host copies per device (not counted for "cpu"): transfers are explicit, so a
# computation that needs no value on the host (e.g. truncation by ``max_rank`` alone) must
# leave this unchanged; tests check it on the "strict:N" stand-in devices.
host_reads: collections.Counter = collections.Counter()


def count_host_reads(ns, device: str):
    """Wrap ``ns.to_numpy`` so that every device-to-host copy is counted in ``host_reads``."""
    to_numpy = ns.to_numpy

    def counted(a):
        host_reads[device] += 1
        return to_numpy(a)

    ns.to_numpy = counted


class Backend:
    """An array namespace bound to one device."""

    def __init__(self, name: str, device: str, xp, native_device=None):
        self.name = name
        self.device = device
        self.xp = xp
        self.native_device = native_device

    def __repr__(self):
        return f"Backend({self.name!r}, device={self.device!r})"

    # conversions at the boundary --------------------------------------------------
    def asarray(self, data, dtype=None):
        return self.xp.asarray(data, dtype=dtype)

    def asarray_owned(self, data, dtype=None):
        """``data`` from outside tenferro (a NumPy or device array, a list, a number) as an
        array of this backend in a buffer nobody else holds. tenferro never writes into its
        buffers, so a buffer shared with a caller's array could still change under a recorded
        gradient when the caller writes into it; a copy at the boundary rules that out
        (design/interop.md, "Aliasing")."""
        return self.xp.asarray_owned(data, dtype)

    def to_numpy(self, arr) -> np.ndarray:
        return self.xp.to_numpy(arr)

    def canonical_dtype(self, native) -> np.dtype:
        return self.xp.np_dtype(native)

    def is_native(self, arr) -> bool:
        return self.xp.is_native(arr)
