"""Eager vs jit: (a) the 1000-op small-tensor chain of benchmarks/overhead.py, forward and
forward+backward; (b) a TRG-like loop (contraction + truncated SVD per step). Reports the time
per call after warm-up and the one-off trace+compile time.

Target ([traced]): jit at least 3x faster than eager on (a).   Run: python benchmarks/jit.py
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import time

import numpy as np
from _common import median_time, table

import tenferro as tf

X0 = np.random.default_rng(0).uniform(0.1, 0.5, (2, 2))


def chain(x, w):
    y = x
    for _ in range(250):
        y = tf.tanh(tf.sin(y * w) + w)
    return y


def loss(x, w):
    return tf.sum(chain(x, w))


def timed_first_call(make):
    t0 = time.perf_counter()
    f = make()
    return f, time.perf_counter() - t0


def bench_chain(rows):
    x, w = tf.tensor(X0), tf.tensor(X0)

    def eager_fb():
        xx = tf.tensor(X0, requires_grad=True)
        loss(xx, w).backward()

    t_ef = median_time(lambda: chain(x, w), repeat=9)
    t_eb = median_time(eager_fb, repeat=9)
    jf, jg = tf.jit(chain), tf.jit(tf.grad(loss))
    t0 = time.perf_counter()
    jf(x, w)
    c_f = time.perf_counter() - t0
    t0 = time.perf_counter()
    jg(x, w)
    c_g = time.perf_counter() - t0
    t_jf = median_time(lambda: jf(x, w), repeat=15)
    t_jg = median_time(lambda: jg(x, w), repeat=15)
    rows.append(("(a) 1000-op chain, forward", f"{t_ef * 1e3:.2f} ms", f"{t_jf * 1e3:.3f} ms",
                 f"{t_ef / t_jf:.1f}x", f"{c_f * 1e3:.0f} ms", jf.lower(x, w).num_nodes))
    rows.append(("(a) 1000-op chain, fwd+bwd", f"{t_eb * 1e3:.2f} ms", f"{t_jg * 1e3:.3f} ms",
                 f"{t_eb / t_jg:.1f}x", f"{c_g * 1e3:.0f} ms", jg.lower(x, w).num_nodes))
    return t_ef / t_jf, t_eb / t_jg


def trg_like(a, steps=6, chi=8):
    """A TRG-shaped loop: contract, matricise, truncated SVD, normalise in log space."""
    lnz = 0.0
    for _ in range(steps):
        m = tf.einsum("ijkl,klmn->ijmn", a, a)
        d = m.shape[0] * m.shape[1]
        u, s, vh = tf.linalg.svd(tf.reshape(m, (d, -1)), max_rank=chi)
        a = tf.einsum("ak,k,kb->ab", u, s, vh)
        k = int(np.sqrt(a.shape[0]))
        a = tf.reshape(a, (k, k, k, k))[:2, :2, :2, :2]
        n = tf.sum(tf.abs(a))
        lnz = lnz + tf.log(n)
        a = a / n
    return lnz


def bench_trg(rows):
    rng = np.random.default_rng(1)
    a = tf.tensor(rng.uniform(0.5, 1.0, (2, 2, 2, 2)))
    try:
        trg_like(a)
    except NotImplementedError:
        rows.append(("(b) TRG-like loop", "needs einsum/linalg", "", "", "", ""))
        return
    g = lambda t: tf.grad(trg_like)(t)  # noqa: E731
    t_e = median_time(lambda: g(a), repeat=5)
    jg = tf.jit(tf.grad(trg_like))
    t0 = time.perf_counter()
    jg(a)
    c = time.perf_counter() - t0
    t_j = median_time(lambda: jg(a), repeat=7)
    rows.append(("(b) TRG-like loop, grad", f"{t_e * 1e3:.2f} ms", f"{t_j * 1e3:.2f} ms",
                 f"{t_e / t_j:.1f}x", f"{c * 1e3:.0f} ms", jg.lower(a).num_nodes))


def main():
    rows = []
    fwd, fb = bench_chain(rows)
    bench_trg(rows)
    print(table(rows, ["workload", "eager", "jit", "speed-up", "trace+compile", "nodes"]))
    print(f"jit speed-up on (a): forward {fwd:.1f}x, forward+backward {fb:.1f}x (target >= 3x)")


if __name__ == "__main__":
    main()
