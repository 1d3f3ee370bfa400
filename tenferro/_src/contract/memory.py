"""How much memory a lowered plan needs, and how much the machine has.

The model (built by ``Recorder`` while lowering): a value owns new memory unless its
primitive's NumPy impl returns a view (``transpose``, ``broadcast_in_dim``, ``diagonal``, a
``reshape`` of a contiguous value); memory is released when the last value living in it is
freed (plans free each value right after its last use); ``dot_general`` also holds the
copies its impl makes of operands that are not laid out for BLAS. Operands are not counted:
they exist before the contraction starts.
"""

from __future__ import annotations

import math
import os
from collections import Counter


def peak_elements(alloc, base, temps, instrs) -> int:
    """Peak elements held at once while running ``instrs`` (with their ``frees``)."""
    refs: Counter = Counter()
    live = peak = 0
    for (_, _, _, out, frees), temp in zip(instrs, temps, strict=True):
        b = base[out]
        if refs[b] <= 0:
            live += alloc[b]
        refs[b] += 1
        peak = max(peak, live + temp)
        for f in frees:
            bf = base[f]
            refs[bf] -= 1
            if refs[bf] == 0:
                live -= alloc[bf]
    return peak


def sliced_peak(slice_peak: int, out_size: int) -> int:
    """Peak of a sliced run: one slice's peak next to the running sum, and the add that
    makes the new sum while the old one and the slice's result are alive."""
    return out_size + max(slice_peak, 2 * out_size)


def physical_memory() -> int | None:
    """Bytes of RAM on this machine (``None`` where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def fmt_elements(n: int, itemsize: int | None = None) -> str:
    """``2^34 elements (128 GiB as float64)`` style."""

    exp = math.log2(n) if n > 0 else 0.0
    s = f"{n:.3g} elements (2^{exp:.1f})"
    if itemsize:
        s += f", {fmt_bytes(n * itemsize)} at {itemsize} bytes each"
    return s


def fmt_bytes(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if b < 1024 or unit == "PiB":
            return f"{b:.3g} {unit}"
        b /= 1024
    return f"{b:.3g} PiB"  # pragma: no cover
