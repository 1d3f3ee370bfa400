"""Acceptance numbers of [krylov] that are not timings against a peer (those are dmrg.py and
trg.py): measured, printed side by side.

1. svds's exact truncated pullback against the full-SVD truncated gradient, 1024 x 1024
   truncated to 32 with discarded singular values far from zero (so the kept/discarded
   coupling matters: the textbook truncated-only adjoint is also shown), and the time of
   each gradient.
2. CTMRG (D=2 C4v iPEPS, Heisenberg energy): the implicit (fixed-point) gradient against the
   unrolled one, and the peak memory (tracemalloc) of a gradient for two iteration counts,
   implicit and unrolled.

BLAS pinned to one thread; times are medians of ``--repeat``.
Run: python benchmarks/krylov.py [--repeat 3] [--only svds|ctmrg]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro.tn import peps  # noqa: E402


def _median_time(f, repeat):
    ts, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def svds_case(repeat):
    rng = np.random.default_rng(0)
    n, k = 1024, 32
    s = 0.9 ** np.arange(n) + 0.05 * np.exp(-np.arange(n) / 300)
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    a = tf.tensor((u * s) @ v.T)
    cu, ca = tf.tensor(rng.standard_normal((n, n))), tf.tensor(rng.standard_normal((n, n)))

    def loss(res):  # gauge invariant; sensitive to U, V, S and the truncated matrix
        uu, ss, vh = res
        return (tf.sum(ss**3) + tf.sum((uu @ uu.T) * cu) + tf.sum((vh.T @ vh)[:5] ** 2)
                + tf.sum(((uu * ss) @ vh) * ca))

    t_p, gp = _median_time(lambda: tf.grad(lambda t: loss(tf.linalg.svds(t, k)))(a), repeat)
    t_f, gf = _median_time(
        lambda: tf.grad(lambda t: loss(tf.linalg.svd(t, max_rank=k)))(a), repeat)
    gp, gf = gp.numpy(), gf.numpy()
    # the truncated-only textbook adjoint (no coupling to the discarded space)
    U, S, Vh = (x.numpy() for x in tf.linalg.svd(a, max_rank=k))
    _, pull = tf.vjp(lambda x, y, z: loss((x, y, z)), *(tf.tensor(x) for x in (U, S, Vh)))
    gu, gs, gvh = (c.numpy() for c in pull(tf.tensor(1.0)))
    V, gv = Vh.T, gvh.T
    F = (1 - np.eye(k)) / (S[None, :] ** 2 - S[:, None] ** 2 + np.eye(k))
    J, K = F * (U.T @ gu - gu.T @ U), F * (V.T @ gv - gv.T @ V)
    inner = J * S[None, :] + S[:, None] * K + np.diag(gs)
    naive = (U @ inner @ Vh + (gu - U @ (U.T @ gu)) / S @ Vh
             + U @ ((gv - V @ (V.T @ gv)) / S).T)
    scale = np.abs(gf).max()
    print("svds truncated pullback, 1024 x 1024 -> 32 (discarded s_33 = "
          f"{s[32]:.3f} of s_1 = {s[0]:.3f})")
    print(f"  max|g_svds - g_fullsvd| / max|g_fullsvd|      = {np.abs(gp - gf).max() / scale:.1e}"
          "   (target 1e-8)")
    print(f"  max|g_textbook - g_fullsvd| / max|g_fullsvd|  = "
          f"{np.abs(naive - gf).max() / scale:.1e}   (the coupling term's size)")
    print(f"  gradient time: svds {t_p:.2f} s, full svd {t_f:.2f} s ({t_p / t_f:.2f}x)")


def _peak_grad(f, A):
    tracemalloc.start()
    g = tf.grad(f)(A)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak, g


def ctmrg_case(repeat):
    A = peps.symmetrize_c4v(peps.random_c4v_peps(2, seed=1, noise=0.5))
    chi = 20

    def energy(implicit, its=None, tol=None):
        def e(x):
            return peps.heisenberg_energy(x, chi, implicit=implicit, tol=tol,
                                          max_iter=1000 if implicit else its, progress=False)
        return e

    print(f"CTMRG gradient, D=2 random C4v iPEPS (seed 1), chi={chi}, Heisenberg energy")
    rows = []
    for tol in (1e-4, 1e-13):
        env = tf.tn.ctmrg(peps.double_layer(A / tf.norm(A)), chi, tol=tol, implicit=True,
                          progress=False)
        peak_i, gi = _peak_grad(energy(True, tol=tol), A)
        peak_u, gu = _peak_grad(energy(False, its=env.iterations), A)
        t_i, _ = _median_time(lambda: tf.grad(energy(True, tol=tol))(A), repeat)
        t_u, _ = _median_time(lambda: tf.grad(energy(False, its=env.iterations))(A), repeat)
        rows.append((tol, env.iterations, peak_i, peak_u, t_i, t_u, gi.numpy(), gu.numpy()))
    print(f"  {'tol':>6} {'CTM its':>7} {'peak implicit':>14} {'peak unrolled':>14} "
          f"{'t implicit':>10} {'t unrolled':>10}")
    for tol, its, pi, pu, ti, tu, _, _ in rows:
        print(f"  {tol:6.0e} {its:7d} {pi / 2**20:11.1f} MiB {pu / 2**20:11.1f} MiB "
              f"{ti:9.2f}s {tu:9.2f}s")
    (_, i1, pi1, pu1, *_), (_, i2, pi2, pu2, *_) = rows
    print(f"  iterations x{i2 / i1:.1f}: implicit peak x{pi2 / pi1:.2f}, unrolled peak "
          f"x{pu2 / pu1:.2f}")
    gi, gu = rows[-1][6], rows[-1][7]
    print(f"  converged (tol 1e-13, {rows[-1][1]} its): max|g_implicit - g_unrolled| / "
          f"max|g_unrolled| = {np.abs(gi - gu).max() / np.abs(gu).max():.1e}   (target 1e-8)")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--only", choices=("svds", "ctmrg"), default=None)
    args = p.parse_args()
    tf.tn.set_progress(False)
    if args.only in (None, "svds"):
        svds_case(args.repeat)
    if args.only in (None, "ctmrg"):
        ctmrg_case(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
