"""Shared helpers of the Krylov tests: random problems and finite differences."""

from __future__ import annotations

import numpy as np

import tenferro as tf
from tests.helpers import max_error, rand  # noqa: F401  (shared)

DTYPES = ("float64", "complex128")


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
    return max_error(a, b) <= tol
