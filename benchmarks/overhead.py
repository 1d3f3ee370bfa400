"""Per-op overhead of the eager tape: a chain of 1000 elementwise ops on (2, 2) tensors,
then backward. Median microseconds per op, side by side with plain NumPy (no AD), PyTorch
(requires_grad + backward) and HIPS autograd when installed.

Target ([core]): forward+backward per op at most 2x PyTorch's and below HIPS autograd's.
Run: python benchmarks/overhead.py
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import time

import numpy as np
from _common import median_time, pin_torch, table, try_import

N = 1000  # ops per chain (4 kinds, 250 rounds)
X0 = np.random.default_rng(0).uniform(0.1, 0.5, (2, 2))


def chain(x, w, sin, tanh):
    y = x
    for _ in range(N // 4):
        y = y * w
        y = sin(y)
        y = y + w
        y = tanh(y)
    return y


def bench_tape(lib):
    """Forward and backward time of the chain with a PyTorch-style tape (tenferro or torch:
    the same ``tensor(requires_grad=)``, ``sin``, ``tanh``, ``backward()`` spelling)."""

    def fwd_bwd():
        x = lib.tensor(X0, requires_grad=True)
        w = lib.tensor(X0)
        t0 = time.perf_counter()
        y = chain(x, w, lib.sin, lib.tanh).sum()
        t1 = time.perf_counter()
        y.backward()
        return t1 - t0, time.perf_counter() - t1

    return _split(fwd_bwd)


def bench_autograd(ag):
    import autograd.numpy as anp

    def f(x):
        return anp.sum(chain(x, X0, anp.sin, anp.tanh))

    g = ag.grad(f)

    total = median_time(lambda: g(X0), repeat=7)
    return None, None, total


def _split(fn, repeat=9):
    fn()
    fs, bs = [], []
    for _ in range(repeat):
        f, b = fn()
        fs.append(f)
        bs.append(b)
    fs.sort()
    bs.sort()
    f, b = fs[len(fs) // 2], bs[len(bs) // 2]
    return f, b, f + b


def main():
    us = 1e6 / N
    rows = []
    t_np = median_time(lambda: chain(X0, X0, np.sin, np.tanh), repeat=9)
    rows.append(("numpy (no AD)", f"{t_np * us:.2f}", "-", f"{t_np * us:.2f}"))
    import tenferro

    f, b, tot = bench_tape(tenferro)
    results = {"tenferro": tot}
    rows.append(("tenferro", f"{f * us:.2f}", f"{b * us:.2f}", f"{tot * us:.2f}"))
    torch = pin_torch()
    if torch is not None:
        f2, b2, tot2 = bench_tape(torch)
        results["torch"] = tot2
        rows.append((f"torch {torch.__version__}", f"{f2 * us:.2f}", f"{b2 * us:.2f}",
                     f"{tot2 * us:.2f}"))
    ag = try_import("autograd")
    if ag is not None:
        _, _, tot3 = bench_autograd(ag)
        results["autograd"] = tot3
        rows.append(("HIPS autograd", "-", "-", f"{tot3 * us:.2f}"))
    print(f"chain of {N} elementwise ops on (2,2) float64, median us per op")
    print(table(rows, ["library", "forward", "backward", "fwd+bwd"]))
    for peer in ("torch", "autograd"):
        if peer in results:
            print(f"tenferro / {peer} (fwd+bwd): {results['tenferro'] / results[peer]:.2f}x")


if __name__ == "__main__":
    main()
