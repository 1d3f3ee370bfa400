"""The classical 2D Ising model as a tensor network.

Z = sum over spins of prod_<ij> exp(beta J s_i s_j) prod_i exp(beta h s_i). Each bond's
Boltzmann matrix B = exp(beta J s s') factors as W W^T with
W = [[sqrt(cosh bJ), sqrt(sinh bJ)], [sqrt(cosh bJ), -sqrt(sinh bJ)]] (rows: spin up/down), so
putting one W on each half-bond gives the site tensor
T[l, u, r, d] = sum_s exp(beta h s) W[s, l] W[s, u] W[s, r] W[s, d].
Everything is built from tenferro operations on ``beta``, so lnZ differentiates to any order.
Ferromagnetic J > 0 assumed (sinh(beta J) >= 0).
"""

from __future__ import annotations

import numpy as np

import tenferro as tf

__all__ = ["BETA_C", "ising_tensor"]

BETA_C = float(np.log(1 + np.sqrt(2)) / 2)  # critical inverse temperature for J = 1


def ising_tensor(beta, h=0.0, J: float = 1.0):
    """The 2D Ising site tensor ``T[left, up, right, down]`` (bond dimension 2)."""
    beta = tf.asarray(beta) if not isinstance(beta, tf.Tensor) else beta
    if beta.dtype.kind not in "fc":
        beta = beta.astype(tf.float64)
    c = tf.sqrt(tf.cosh(beta * J))
    s = tf.sqrt(tf.sinh(beta * J))
    W = tf.stack([tf.stack([c, s]), tf.stack([c, -s])])  # W[spin, bond]
    field = tf.exp(beta * h * tf.tensor([1.0, -1.0], dtype=beta.dtype))
    return tf.einsum("s,sl,su,sr,sd->lurd", field, W, W, W, W)


def normalize(t):
    """``(t / n, ln n)`` with n the Frobenius norm: RG steps carry their scale in log space."""
    n = tf.norm(t)
    return t / n, tf.log(n)


def trace_torus(t):
    """Z of a single tensor on a 1x1 torus: sum_{l,u} T[l, u, l, u]."""
    return tf.einsum("abab->", t)
