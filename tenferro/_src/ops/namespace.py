"""The array API standard's namespace hooks: ``__array_api_version__``,
``__array_namespace_info__()`` and ``Tensor.__array_namespace__``.

The top-level ``tenferro`` module *is* the namespace (design/array-api.md): every function,
constant and dtype of the standard (2024.12) and of its ``linalg`` and ``fft`` extensions is
there with the standard's signature, next to tenferro's NumPy and PyTorch extras. Devices are
tenferro's device strings ("cpu", "cuda:N"); dtypes are ``numpy.dtype`` objects.
"""

from __future__ import annotations

import sys

import numpy as np

from chainrules import dtypes as D

from ..backends import canonical_device
from ..core.dispatch import state
from ..errors import ShapeError

__all__ = ["__array_api_version__", "__array_namespace_info__", "array_namespace"]

__array_api_version__ = "2024.12"

_SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")

_KIND_DTYPES = {
    "bool": (D.bool_,),
    "signed integer": D.SIGNED,
    "unsigned integer": D.UNSIGNED,
    "integral": D.SIGNED + D.UNSIGNED,
    "real floating": D.REAL_FLOATING,
    "complex floating": D.COMPLEX_FLOATING,
    "numeric": D.SIGNED + D.UNSIGNED + D.REAL_FLOATING + D.COMPLEX_FLOATING,
}


def array_namespace(api_version: str | None = None):
    """The ``tenferro`` module, the namespace ``Tensor.__array_namespace__`` returns; an
    ``api_version`` other than a supported standard version raises ``ValueError``."""
    if api_version is not None and (not isinstance(api_version, str)
                                    or api_version not in _SUPPORTED_VERSIONS):
        raise ShapeError(
            f"__array_namespace__: api_version {api_version!r} is not supported; tenferro "
            f"implements the array API standard {__array_api_version__} (and accepts "
            f"{', '.join(_SUPPORTED_VERSIONS[:-1])}, which it contains)."
        )
    # the public package is the namespace; it is always imported before anything under it
    # (sys.modules: tenferro._src never imports the facade)
    return sys.modules[__name__.split(".", 1)[0]]


class ArrayNamespaceInfo:
    """What ``tenferro.__array_namespace_info__()`` returns: the namespace's capabilities,
    devices and dtypes (the array API standard's inspection API)."""

    __slots__ = ()

    def capabilities(self) -> dict:
        """``boolean indexing`` and ``data-dependent shapes``: True (``nonzero``, ``unique_*``,
        ``x[mask]``; in traced code their lengths are sizes known only at run time; ``vmap``
        refuses them); ``max dimensions``: 64."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> str:
        """The device new tensors go to (``tenferro.default_device`` changes it)."""
        return canonical_device(state.default_device)

    def devices(self) -> list:
        """The devices tensors can live on: "cpu", and "cuda:N" for each GPU CuPy sees."""
        out = ["cpu"]
        try:
            import cupy

            out += [f"cuda:{i}" for i in range(cupy.cuda.runtime.getDeviceCount())]
        except Exception:  # no CuPy, or no GPU: the host only
            pass
        return out

    def default_dtypes(self, *, device=None) -> dict:
        """The default dtypes (the same on every device): float64, complex128, int64 and
        int64 for indexing."""
        return {"real floating": D.float64, "complex floating": D.complex128,
                "integral": D.int64, "indexing": D.int64}

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The dtypes tensors can hold (every device holds all of them), by name; ``kind``
        (a kind name of ``isdtype`` or a tuple of them) selects some."""
        if kind is None:
            chosen = D.ALL
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            chosen = []
            for k in kinds:
                if not isinstance(k, str) or k not in _KIND_DTYPES:
                    raise ShapeError(f"dtypes: unknown kind {k!r}; use one of "
                                     f"{sorted(_KIND_DTYPES)}.")
                chosen += [d for d in _KIND_DTYPES[k] if d not in chosen]
        return {np.dtype(d).name: d for d in chosen}


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """The inspection object of the array API standard (devices, dtypes, capabilities)."""
    return ArrayNamespaceInfo()
