"""Shared helpers of the Krylov tests: random problems and finite differences."""

from __future__ import annotations

import numpy as np

import tenferro as tf

DTYPES = ("float64", "complex128")


def rand(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def herm(b):
    """The Hermitian part of a tenferro matrix (a differentiable map)."""
    return (b + tf.conj(b.T)) / 2


def fd_directional(f, x, d, h=1e-6):
    """Central difference of the real scalar f along d (complex x: Re<grad, d>)."""
    xp, xm = tf.tensor(x + h * d), tf.tensor(x - h * d)
    return (float(f(xp)) - float(f(xm))) / (2 * h)


def grad_dot(g, d) -> float:
    """<g, d> = Re sum conj(g) d: what a finite difference along d measures."""
    return float(np.real(np.vdot(np.asarray(g), d)))


def close(a, b, tol):
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.abs(b).max(), 1e-300)
    return np.abs(a - b).max() <= tol * scale
