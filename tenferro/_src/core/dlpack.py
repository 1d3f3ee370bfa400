"""DLPack export of an eager tensor's buffer (``EagerTensor.__dlpack__``); the import side is
``tenferro.from_dlpack`` (``ops/dlpack.py``).

The backend array's own ``__dlpack__`` (NumPy, CuPy, array_api_strict) does the work, with the
array API standard's arguments. One thing is added for NumPy buffers: tenferro never writes
into a buffer and a tensor's values must not change under it, so the buffer is exported
read-only to consumers that can be told (DLPack >= 1.0: ``max_version=(1, 0)`` or later;
NumPy then hands out a read-only array). A legacy consumer (no ``max_version``) cannot be told;
it gets the buffer itself, as DLPack's contract (consumers do not write into imported memory)
allows, except that a buffer that is already read-only (a broadcast constant) is copied when
``copy`` permits it.
"""

from __future__ import annotations

import numpy as np


def export_dlpack(value, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of the backend array ``value`` (see the module docstring)."""
    if (isinstance(value, np.ndarray) and max_version is not None
            and tuple(max_version) >= (1, 0) and copy is not True and value.flags.writeable):
        value = value.view()
        value.flags.writeable = False
    kwargs = {"stream": stream}
    for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy)):
        if v is not None:  # arrays predating DLPack 1.0 take only ``stream``
            kwargs[k] = v
    try:
        return value.__dlpack__(**kwargs)
    except BufferError:
        if copy is not None:
            raise
        # a legacy capsule cannot say "read-only" (a broadcast constant); copy=None permits a
        # copy where sharing is impossible
        kwargs["copy"] = True
        return value.__dlpack__(**kwargs)
