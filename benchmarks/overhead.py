"""Eager per-op overhead, family by family, and two whole programs, side by side with PyTorch.

Each row times one operation on small float64 tensors that require grad (so the tape records
it: the cost every eager program pays per op), as the median over many calls, one BLAS thread
on one core, tenferro and PyTorch in the same process. The "no grad" column is the same op on
tensors that do not require grad, and "numpy" the bare NumPy call it dispatches to.
"backward" is the cost per recorded node of ``backward()`` through a 1000-op chain.

Whole programs: one SGD step of a 2-layer MLP (batch 64, 16 -> 64 -> 1, tanh, MSE, manual
update under no_grad), and the energy gradient of a D=2 C4v iPEPS with chi=8 CTMRG (30
iterations, the algorithm of benchmarks/ctmrg.py).

Targets ([eager-speed]): every row at most 2.0x PyTorch; the two whole programs at most 1.0x.
Run: python benchmarks/overhead.py [--quick]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads and the core before NumPy loads)

# isort: split

import argparse
import os
import statistics
import sys
import time

# measure the checkout this script lives in (an editable install may point elsewhere)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from _common import median_time, pin_torch, table

import tenferro as tf

RNG = np.random.default_rng(0)
A22, B22 = RNG.uniform(0.1, 0.9, (2, 2)), RNG.uniform(0.1, 0.9, (2, 2))
A44 = RNG.standard_normal((4, 4))
S44 = A44 + A44.T


def _linalg(lib):
    return lib.linalg


OPS = [
    # family, label, op(lib, x, y), inputs (numpy arrays)
    ("elementwise", "x * y", lambda L, x, y: x * y, (A22, B22)),
    ("elementwise", "exp(x)", lambda L, x, y: L.exp(x), (A22, B22)),
    ("scalar operand", "x + 1.0", lambda L, x, y: x + 1.0, (A22, B22)),
    ("scalar operand", "2.0 * x", lambda L, x, y: 2.0 * x, (A22, B22)),
    ("matmul", "x @ y", lambda L, x, y: x @ y, (A22, B22)),
    ("reductions", "x.sum(0)", lambda L, x, y: x.sum(0), (A22, B22)),
    ("reductions", "x.mean()", lambda L, x, y: x.mean(), (A22, B22)),
    ("indexing", "x[0]", lambda L, x, y: x[0], (A22, B22)),
    ("indexing", "x[:, 1:]", lambda L, x, y: x[:, 1:], (A22, B22)),
    ("transpose/reshape", "x.T", lambda L, x, y: x.T, (A22, B22)),
    ("transpose/reshape", "x.reshape(4)", lambda L, x, y: x.reshape(4), (A22, B22)),
    ("einsum", "einsum(ij,jk->ik)", lambda L, x, y: L.einsum("ij,jk->ik", x, y), (A22, B22)),
    ("decompositions", "svd 4x4", lambda L, x, y: _linalg(L).svd(x)[1], (A44, A44)),
    ("decompositions", "qr 4x4", lambda L, x, y: _linalg(L).qr(x)[1], (A44, A44)),
    ("decompositions", "eigh 4x4", lambda L, x, y: _linalg(L).eigh(x)[0], (S44, S44)),
]


def per_call(fn, number, repeat=7):
    """Median seconds per call of ``fn`` (``number`` calls per sample)."""
    return median_time(fn, repeat=repeat, number=number)


def time_op(lib, op, arrays, grad, number):
    if lib is tf:
        x, y = (tf.tensor(a, requires_grad=grad) for a in arrays)
    else:
        x, y = (lib.tensor(a, dtype=lib.float64, requires_grad=grad) for a in arrays)
    return per_call(lambda: op(lib, x, y), number)


def time_numpy(label, arrays, number):
    x, y = arrays
    calls = {
        "x * y": lambda: x * y, "exp(x)": lambda: np.exp(x), "x + 1.0": lambda: x + 1.0,
        "2.0 * x": lambda: 2.0 * x, "x @ y": lambda: x @ y, "x.sum(0)": lambda: x.sum(0),
        "x.mean()": lambda: x.mean(), "x[0]": lambda: x[0], "x[:, 1:]": lambda: x[:, 1:],
        "x.T": lambda: x.T, "x.reshape(4)": lambda: x.reshape(4),
        "einsum(ij,jk->ik)": lambda: np.einsum("ij,jk->ik", x, y),
        "svd 4x4": lambda: np.linalg.svd(x), "qr 4x4": lambda: np.linalg.qr(x),
        "eigh 4x4": lambda: np.linalg.eigh(x),
    }
    return per_call(calls[label], number)


def backward_per_node(lib, n=1000):
    """Seconds per node of backward() through a chain of n mixed elementwise ops."""

    def run():
        x = (tf.tensor(A22, requires_grad=True) if lib is tf
             else lib.tensor(A22, requires_grad=True))
        w = tf.tensor(B22) if lib is tf else lib.tensor(B22)
        y = x
        for _ in range(n // 4):
            y = lib.tanh(lib.sin(y * w) + w)
        y = y.sum()
        t0 = time.perf_counter()
        y.backward()
        return time.perf_counter() - t0

    run()
    return statistics.median(run() for _ in range(7)) / n


# ------------------------------------------------------------------ whole programs
def mlp_step(lib, number):
    """One SGD step of a 2-layer MLP, written once for both libraries."""
    t = tf.tensor if lib is tf else (lambda a, **k: lib.tensor(a, dtype=lib.float64, **k))
    rng = np.random.default_rng(1)
    X, Y = t(rng.standard_normal((64, 16))), t(rng.standard_normal((64, 1)))
    W1 = t(rng.standard_normal((16, 64)) * 0.1, requires_grad=True)
    b1 = t(np.zeros(64), requires_grad=True)
    W2 = t(rng.standard_normal((64, 1)) * 0.1, requires_grad=True)
    b2 = t(np.zeros(1), requires_grad=True)
    params = [W1, b1, W2, b2]

    def step():
        h = lib.tanh(X @ W1 + b1)
        loss = ((h @ W2 + b2 - Y) ** 2).mean()
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None

    return per_call(step, number)


def ctmrg_grad(lib, number):
    """Energy gradient of a D=2 C4v iPEPS, chi=8 CTMRG with 30 iterations (no tolerance)."""
    import ctmrg  # the peer program of benchmarks/ctmrg.py

    from tenferro.tn import peps

    chi, iters = 8, 30
    A = np.asarray(peps.random_c4v_peps(2, seed=3, noise=1.0))
    if lib is tf:
        def f():
            a = tf.tensor(A, requires_grad=True)
            e = peps.heisenberg_energy(a, chi, tol=None, max_iter=iters, progress=False,
                                       check_symmetry=False)
            e.backward()
            return a.grad
    else:
        ctmrg.HP["torch"] = lib.tensor(ctmrg.H)
        energy = ctmrg.make_peer("torch", lib.einsum,
                                 lambda m: lib.linalg.svd(m, full_matrices=False),
                                 lib.linalg.norm)

        def f():
            a = lib.tensor(A, requires_grad=True)
            energy(a, chi, iters).backward()
            return a.grad

    return per_call(f, number, repeat=5)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer calls per sample")
    args = p.parse_args(argv)
    number = 200 if args.quick else 2000
    torch = pin_torch()
    if torch is not None:
        torch.set_default_dtype(torch.float64)
    rows, ratios = [], {}

    def fmt(s):
        return f"{s * 1e6:.2f}"

    for family, label, op, arrays in OPS:
        n = number // 10 if family == "decompositions" else number
        t_tf = time_op(tf, op, arrays, True, n)
        t_tf0 = time_op(tf, op, arrays, False, n)
        t_np = time_numpy(label, arrays, n)
        row = [family, label, fmt(t_tf), fmt(t_tf0), fmt(t_np)]
        if torch is not None:
            t_pt = time_op(torch, op, arrays, True, n)
            row += [fmt(t_pt), f"{t_tf / t_pt:.2f}"]
            ratios[label] = t_tf / t_pt
        rows.append(row)
    b_tf = backward_per_node(tf)
    row = ["backward", "per node", fmt(b_tf), "-", "-"]
    if torch is not None:
        b_pt = backward_per_node(torch)
        row += [fmt(b_pt), f"{b_tf / b_pt:.2f}"]
        ratios["backward"] = b_tf / b_pt
    rows.append(row)
    headers = ["family", "op", "tenferro us", "no grad us", "numpy us"]
    if torch is not None:
        headers += [f"torch {torch.__version__} us", "ratio"]
    print("Small float64 tensors that require grad: median us per op (one core, one thread)")
    print(table(rows, headers))
    print()
    rows = []
    for name, fn, k in (("MLP SGD step", mlp_step, max(20, number // 20)),
                        ("CTMRG D=2 chi=8 gradient", ctmrg_grad, 2)):
        t_tf = fn(tf, k)
        row = [name, f"{t_tf * 1e3:.2f}"]
        if torch is not None:
            t_pt = fn(torch, k)
            row += [f"{t_pt * 1e3:.2f}", f"{t_tf / t_pt:.2f}"]
            ratios[name] = t_tf / t_pt
        rows.append(row)
    headers = ["program", "tenferro ms"] + (["torch ms", "ratio"] if torch is not None else [])
    print(table(rows, headers))
    if ratios:
        worst = max(ratios, key=ratios.get)
        print(f"\nworst ratio: {worst} {ratios[worst]:.2f}x (targets: ops <= 2.0x, programs "
              f"<= 1.0x)")


if __name__ == "__main__":
    main()
