"""The general (non-Hermitian) eigendecomposition for the backend namespaces: ``xp.eig`` and
``xp.fix_eig_gauge``, read by ``chainrules.primitives.eig``.

LAPACK's ``geev`` (through NumPy) on the NumPy backend. The array API standard has no general
eigensolver (nor had CuPy for a long time), so ``array_api_strict`` and CuPy without
``cupy.linalg.eig`` compute it **on the host**, explicitly: the matrix is copied to NumPy, ``geev``
runs there, and the results are copied back to the matrix's device (what JAX does on GPUs
too). Outputs are always complex (``complex64`` for single precision input).

Gauge (``fix_eig_gauge``, written once against the array API): every eigenvector has unit
2-norm and its largest-magnitude entry is real and positive (``column_phases``, shared with
``svd`` and ``eigh``).
"""

from __future__ import annotations

import numpy as np

from .linalg_ext import column_phases


def _complex(dtype) -> np.dtype:
    return np.dtype(np.complex64) if np.dtype(dtype) in (np.float32, np.complex64) else np.dtype(
        np.complex128)


def numpy_eig(a):
    """Eigenvalues and right eigenvectors of (..., n, n) ``a``, as complex arrays."""
    c = _complex(a.dtype)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1], c), np.zeros(a.shape, c)
    w, v = np.linalg.eig(a)
    return w.astype(c, copy=False), v.astype(c, copy=False)


def host_eig(ns):
    """``eig`` for a namespace without one: through host NumPy, results back on the device."""

    def eig(a):
        w, v = numpy_eig(ns.to_numpy(a))
        return ns.asarray(w), ns.asarray(v)

    return eig


def fix_eig_gauge(xp, w, v):
    """Unit-norm eigenvectors whose largest-magnitude entry is real and positive."""
    if v.shape[-1] == 0:
        return w, v
    nrm = xp.sqrt(xp.sum(xp.real(v * xp.conj(v)), axis=-2, keepdims=True))
    nrm = xp.where(nrm > 0, nrm, xp.ones_like(nrm))
    v = v / xp.astype(nrm, v.dtype)
    ph = column_phases(xp, v)
    return w, v * xp.expand_dims(xp.conj(ph), axis=-2)
