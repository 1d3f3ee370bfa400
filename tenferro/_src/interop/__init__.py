"""Registrations with consumer libraries that discover array types by their own mechanism
rather than by the array API standard (``__array_namespace__`` already serves array_api_compat,
SciPy, scikit-learn and ``einops.array_api``). Each runs when tenferro is imported and the
consumer is installed, so users write no shim (design/interop.md)."""

from __future__ import annotations

import importlib.util

__all__: list[str] = []

if importlib.util.find_spec("einops") is not None:  # ~10 ms, only where einops is installed
    from . import einops_backend  # noqa: F401
