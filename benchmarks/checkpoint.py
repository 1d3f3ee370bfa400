"""Peak memory and time with and without checkpointing:

(a) a 64-step elementwise loop on 512x512 float64 (checkpoint_loop, sqrt(n) segments);
(b) TRG for the 2D Ising model, 30 RG steps at chi=24, d lnZ/d beta (checkpoint per step).

Peak memory is tracemalloc's (NumPy allocations). Targets ([checkpoint]): (a) memory below
1/4 of the un-checkpointed run at most 2x the time. Run: python benchmarks/checkpoint.py
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import gc
import time
import tracemalloc

import numpy as np
from _common import table

import tenferro as tf


def measure(fn):
    fn()  # warm-up (templates, plans)
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, dt


def step(x):
    return tf.tanh(x * 1.1 + 0.1) * tf.sin(x) + 0.3 * x


def loop_case(rows):
    x0 = np.random.default_rng(0).standard_normal((512, 512))

    def run(ck):
        x = tf.tensor(x0, requires_grad=True)
        y = tf.checkpoint_loop(step, x, 64) if ck else x
        if not ck:
            for _ in range(64):
                y = step(y)
        tf.sum(y).backward()

    (p0, t0), (p1, t1) = measure(lambda: run(False)), measure(lambda: run(True))
    rows.append(("64-step loop 512x512", f"{p0 / 2**20:.0f} MB", f"{p1 / 2**20:.0f} MB",
                 f"{p1 / p0:.3f}", f"{t0:.2f} s", f"{t1:.2f} s", f"{t1 / t0:.2f}"))
    return p1 / p0, t1 / t0


def trg_case(rows):
    try:
        from tenferro.tn import ising_tensor, trg
    except ImportError:
        rows.append(("TRG chi=24, 30 steps", "needs tenferro.tn", "", "", "", "", ""))
        return None

    def run(ck):
        beta = tf.tensor(0.44, requires_grad=True)
        lnz = trg(ising_tensor(beta), chi=24, steps=30, checkpoint=ck, progress=False)
        lnz.backward()

    (p0, t0), (p1, t1) = measure(lambda: run(False)), measure(lambda: run(True))
    rows.append(("TRG chi=24, 30 steps", f"{p0 / 2**20:.1f} MB", f"{p1 / 2**20:.1f} MB",
                 f"{p1 / p0:.3f}", f"{t0:.2f} s", f"{t1:.2f} s", f"{t1 / t0:.2f}"))
    return p1 / p0, t1 / t0


def main():
    rows = []
    loop_case(rows)
    trg_case(rows)
    print(table(rows, ["workload", "peak plain", "peak ckpt", "mem ratio", "time plain",
                       "time ckpt", "time ratio"]))


if __name__ == "__main__":
    main()
