"""Shared helpers of the linalg tests: random (structured) matrices and finite differences."""

from __future__ import annotations

import numpy as np

import tenferro as tf
from tests.helpers import rand  # noqa: F401  (shared)

DTYPES = ("float64", "complex128")
SHAPES = ((6, 4), (4, 6), (5, 5))  # tall, wide, square
SHAPE_IDS = ("tall", "wide", "square")


def haar(rng, n, dtype):
    """A random unitary (orthogonal) n x n matrix."""
    q, r = np.linalg.qr(rand(rng, (n, n), dtype))
    d = np.diag(r)
    return q * (d / np.abs(d))


def with_singular_values(rng, m, n, svals, dtype):
    """An m x n matrix with exactly the given singular values (random singular vectors)."""
    k = min(m, n)
    u = haar(rng, m, dtype)[:, :k]
    v = haar(rng, n, dtype)[:, :k]
    return (u * np.asarray(svals, dtype=float)) @ v.conj().T


def hermitian(rng, n, dtype, eigenvalues=None):
    if eigenvalues is None:
        a = rand(rng, (n, n), dtype)
        return (a + a.conj().T) / 2
    v = haar(rng, n, dtype)
    return (v * np.asarray(eigenvalues, dtype=float)) @ v.conj().T


def T(a):
    """A tenferro tensor of a NumPy array (on the current CPU backend)."""
    return tf.tensor(np.asarray(a))


def fd_gradient(loss, a, h=1e-6):
    """Central finite-difference gradient of a real scalar ``loss`` at the NumPy array ``a``,
    in tenferro's convention (dL/dRe + i dL/dIm for complex ``a``)."""
    a = np.asarray(a)
    g = np.zeros(a.shape, dtype=a.dtype)
    dirs = ((1.0, 1.0), (1j, 1j)) if a.dtype.kind == "c" else ((1.0, 1.0),)
    for idx in np.ndindex(a.shape):
        for unit, weight in dirs:
            e = np.zeros_like(a)
            e[idx] = unit
            d = (float(loss(T(a + h * e))) - float(loss(T(a - h * e)))) / (2 * h)
            g[idx] += weight * d
    return g


def rel_err(got, want) -> float:
    got, want = np.asarray(got), np.asarray(want)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-300))


def herm_form(psi, h):
    """Re psi^H H psi for a vector psi (a tensor) and a NumPy Hermitian H."""
    return tf.real(tf.sum(tf.conj(psi) * (T(h) @ psi)))


def fd_gradient_extrapolated(loss, a, h=1e-4):
    """``fd_gradient`` at steps h and h/2, Richardson-extrapolated: error O(h^4) instead of
    O(h^2), so a step well above any near-degenerate split (1e-4) is still accurate."""
    g1 = fd_gradient(loss, a, h)
    g2 = fd_gradient(loss, a, h / 2)
    return (4 * g2 - g1) / 3


def split_pair(svals, i, split):
    """A copy of ``svals`` with entry ``i`` raised by ``split`` (a near-degenerate pair)."""
    out = [float(v) for v in svals]
    out[i] += split
    return out
