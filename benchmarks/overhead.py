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

On a shared machine one run is noisy: ``--runs N`` repeats the whole script N times in fresh
processes and prints the median ratio per row; ``--baseline DIR`` alternates those runs with
another checkout of tenferro (e.g. a worktree of main), so both see the same load.
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads and the core before NumPy loads)

# isort: split

import argparse
import builtins
import json
import os
import statistics
import subprocess
import sys
import time

# measure the checkout this script lives in (an editable install may point elsewhere), or
# the one --baseline names (TENFERRO_BENCH_ROOT, set by the --runs driver)
sys.path.insert(0, os.environ.get("TENFERRO_BENCH_ROOT")
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np
from _common import median_time, pin_torch, table

import tenferro as tf

HERE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(0)
A22, B22 = RNG.uniform(0.1, 0.9, (2, 2)), RNG.uniform(0.1, 0.9, (2, 2))
A44 = RNG.standard_normal((4, 4))
S44 = A44 + A44.T


def _linalg(lib):
    return lib.linalg


def _fn(lib):
    return lib.nn.functional


X48, W48, W4 = RNG.standard_normal((4, 8)), RNG.standard_normal((4, 8)), RNG.standard_normal(4)


def _fwd_bwd(f):
    """``f`` then backward through a weighted sum (``y`` weights the output): the cost of a
    training step's share of the op."""
    return lambda L, x, y: (f(L, x) * y).sum().backward()


def _assign_float(L, x, y):
    x[1, 0] = 0.5


def _assign_tensor(L, x, y):
    x[1, 0] = y[0, 1]


_SOFTMAX = {
    "softmax": lambda L, x: L.softmax(x, -1),
    "log_softmax": lambda L, x: L.log_softmax(x, -1),
    "logsumexp": lambda L, x: L.logsumexp(x, -1),
    "layer_norm": lambda L, x: _fn(L).layer_norm(x, (8,)),
    "std": lambda L, x: L.std(x, -1, correction=1),
    "var": lambda L, x: L.var(x, -1, correction=1),
}


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
    ("indexing", "x[[1, 0]]", lambda L, x, y: x[[1, 0]], (A22, B22)),
    ("activations", "relu(x)", lambda L, x, y: L.relu(x), (A22, B22)),
    ("activations", "logaddexp(x, y)", lambda L, x, y: L.logaddexp(x, y), (A22, B22)),
    ("reductions", "logsumexp(x, 0)", lambda L, x, y: L.logsumexp(x, 0), (A22, B22)),
    ("transpose/reshape", "x.T", lambda L, x, y: x.T, (A22, B22)),
    ("transpose/reshape", "x.reshape(4)", lambda L, x, y: x.reshape(4), (A22, B22)),
    ("einsum", "einsum(ij,jk->ik)", lambda L, x, y: L.einsum("ij,jk->ik", x, y), (A22, B22)),
    ("decompositions", "svd 4x4", lambda L, x, y: _linalg(L).svd(x)[1], (A44, A44)),
    ("decompositions", "qr 4x4", lambda L, x, y: _linalg(L).qr(x)[1], (A44, A44)),
    ("decompositions", "eigh 4x4", lambda L, x, y: _linalg(L).eigh(x)[0], (S44, S44)),
    # [surface-2]: (4, 8) inputs, over the last axis; "+bwd": forward and backward
    *((fam, f"{name} 4x8" + suffix, op, (X48, W4 if name in ("logsumexp", "std", "var")
                                              else W48))
      for name, fam in (("softmax", "softmax"), ("log_softmax", "softmax"),
                        ("logsumexp", "softmax"), ("layer_norm", "normalisation"),
                        ("std", "moments"), ("var", "moments"))
      for suffix, op in (("", (lambda f: lambda L, x, y: f(L, x))(_SOFTMAX[name])),
                         (" +bwd", _fwd_bwd(_SOFTMAX[name])))),
    # element assignment on tensors without history (REINFORCE's returns loop)
    ("setitem", "x[1, 0] = 0.5", _assign_float, (A22, B22), False),
    ("setitem", "x[1, 0] = y[0, 1]", _assign_tensor, (A22, B22), False),
]


def per_call(fn, number, repeat=7):
    """Median seconds per call of ``fn`` (``number`` calls per sample)."""
    return median_time(fn, repeat=repeat, number=number)


def race(fns: dict, number: int, repeat: int, timed: bool = False) -> tuple[dict, float | None]:
    """Seconds per call of each function of ``fns`` ({"tenferro": f, "torch": g}), the
    functions' samples (``number`` calls each) interleaved so that background load hits them
    alike: (median per function, median of the per-sample ratios tenferro / torch).
    ``timed``: each function times itself and returns its seconds (one call per sample)."""
    for f in fns.values():
        f()
    samples = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            if timed:
                samples[k].append(f())
                continue
            t0 = time.perf_counter()
            for _ in range(number):
                f()
            samples[k].append((time.perf_counter() - t0) / number)
    med = {k: statistics.median(v) for k, v in samples.items()}
    ratio = (statistics.median(a / b for a, b in zip(samples["tenferro"], samples["torch"]))
             if "torch" in samples else None)
    return med, ratio


def make_op(lib, op, arrays, grad):
    """The row's operation as a function of nothing, on fresh tensors of ``lib``."""
    if lib is not tf:  # torch's ops print NumPy's dtype; copies: in-place rows write
        arrays = tuple(np.array(a) for a in arrays)
    if lib is tf:
        x, y = (tf.tensor(a, requires_grad=grad) for a in arrays)
    else:
        x, y = (lib.tensor(a, dtype=lib.float64, requires_grad=grad) for a in arrays)
    return lambda: op(lib, x, y)


def time_op(lib, op, arrays, grad, number):
    return per_call(make_op(lib, op, arrays, grad), number)


def time_numpy(label, arrays, number):
    x, y = arrays
    calls = {
        "x * y": lambda: x * y, "exp(x)": lambda: np.exp(x), "x + 1.0": lambda: x + 1.0,
        "2.0 * x": lambda: 2.0 * x, "x @ y": lambda: x @ y, "x.sum(0)": lambda: x.sum(0),
        "x.mean()": lambda: x.mean(), "x[0]": lambda: x[0], "x[:, 1:]": lambda: x[:, 1:],
        "x[[1, 0]]": lambda: x[[1, 0]], "relu(x)": lambda: np.maximum(x, 0),
        "logaddexp(x, y)": lambda: np.logaddexp(x, y),
        "logsumexp(x, 0)": lambda: np.log(np.exp(x).sum(0)),
        "x.T": lambda: x.T, "x.reshape(4)": lambda: x.reshape(4),
        "einsum(ij,jk->ik)": lambda: np.einsum("ij,jk->ik", x, y),
        "svd 4x4": lambda: np.linalg.svd(x), "qr 4x4": lambda: np.linalg.qr(x),
        "eigh 4x4": lambda: np.linalg.eigh(x),
        "x[1, 0] = 0.5": lambda: x.copy().__setitem__((1, 0), 0.5),
        "x[1, 0] = y[0, 1]": lambda: x.copy().__setitem__((1, 0), y[0, 1]),
    }
    if label not in calls:
        return None
    return per_call(calls[label], number)


def backward_per_node(lib, n=1000):
    """A function timing backward() through a chain of n mixed elementwise ops: it returns
    the seconds per node."""

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
        return (time.perf_counter() - t0) / n

    return run


# ------------------------------------------------------------------ whole programs
def mlp_step(lib):
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

    return step


def ctmrg_grad(lib):
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

    return f


def repeated(runs: int, quick: bool, baseline: str | None, only: str | None = None) -> None:
    """Run this script ``runs`` times in fresh processes (alternating with ``baseline``'s
    tenferro when given) and print the median of the per-run ratios of every row."""
    roots = {"this": HERE_ROOT}
    if baseline:
        roots["baseline"] = os.path.abspath(baseline)
    got = {k: {} for k in roots}
    for r in range(runs):
        for name, root in roots.items():
            cmd = [sys.executable, os.path.abspath(__file__), "--json"] + (
                ["--quick"] if quick else []) + (["--only", only] if only else [])
            env = dict(os.environ, TENFERRO_BENCH_ROOT=root)
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode:
                print(f"run {r} of {name} failed:\n{out.stderr[-2000:]}")
                continue
            res = json.loads(out.stdout.strip().splitlines()[-1])
            for label, row in res["rows"].items():
                got[name].setdefault(label, []).append(row)
            print(f"run {r + 1}/{runs} {name}: {res['tenferro']}", flush=True)
    def med(values, scale=1.0, fmt=".2f"):
        values = [v for v in values if v is not None]
        return format(statistics.median(values) * scale, fmt) if values else "-"

    rows = []
    for label, this in got["this"].items():
        row = [label]
        if baseline:
            base = got["baseline"].get(label, [])
            row.append(med(b[2] for b in base))
            # this checkout's time over the baseline's, run by run (alternated: same load)
            row.append(med(t[0] / b[0] for t, b in zip(this, base)))
        row += [med((t[0] for t in this), 1e6), med((t[1] for t in this), 1e6),
                med(t[2] for t in this),
                " ".join("-" if t[2] is None else f"{t[2]:.2f}" for t in this)]
        rows.append(row)
    headers = ["row"] + (["baseline ratio", "this / baseline"] if baseline else []) + [
        "tenferro us", "torch us", "ratio", "per-run ratios"]
    print(f"\nmedians of {runs} runs (whole programs in us too)")
    print(table(rows, headers))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer calls per sample")
    p.add_argument("--runs", type=int, default=0,
                   help="repeat the script this many times (fresh processes): median ratios")
    p.add_argument("--baseline", help="another tenferro checkout, alternated with this one")
    p.add_argument("--only", help="run only the rows whose label contains one of these "
                   "comma-separated words (and skip the backward chain and whole programs)")
    p.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.runs:
        return repeated(args.runs, args.quick, args.baseline, args.only)
    number = 200 if args.quick else 2000
    torch = pin_torch()
    if torch is not None:
        torch.set_default_dtype(torch.float64)
    rows, ratios, raw = [], {}, {}

    def fmt(s):
        return f"{s * 1e6:.2f}"

    repeat = 9 if args.quick else 15
    only = [w for w in (args.only or "").split(",") if w]
    for family, label, op, arrays, *grad in OPS:
        if only and not builtins.any(w in label for w in only):
            continue
        grad = grad[0] if grad else True
        n = number // 10 if family in ("decompositions", "softmax", "normalisation",
                                        "moments") else number
        fns = {"tenferro": make_op(tf, op, arrays, grad)}
        if torch is not None:
            fns["torch"] = make_op(torch, op, arrays, grad)
        med, ratio = race(fns, n, repeat)
        t_tf = med["tenferro"]
        t_tf0 = time_op(tf, op, arrays, False, n) if "bwd" not in label else None
        t_np = time_numpy(label, arrays, n)
        row = [family, label, fmt(t_tf), "-" if t_tf0 is None else fmt(t_tf0),
               "-" if t_np is None else fmt(t_np)]
        raw[label] = (t_tf, None, None)
        if torch is not None:
            row += [fmt(med["torch"]), f"{ratio:.2f}"]
            ratios[label] = ratio
            raw[label] = (t_tf, med["torch"], ratio)
        rows.append(row)
    if only:
        return _finish(rows, ratios, raw, torch, args)
    fns = {"tenferro": backward_per_node(tf)}
    if torch is not None:
        fns["torch"] = backward_per_node(torch)
    med, ratio = race(fns, 1, repeat, timed=True)
    row = ["backward", "per node", fmt(med["tenferro"]), "-", "-"]
    raw["backward per node"] = (med["tenferro"], None, None)
    if torch is not None:
        row += [fmt(med["torch"]), f"{ratio:.2f}"]
        ratios["backward"] = ratio
        raw["backward per node"] = (med["tenferro"], med["torch"], ratio)
    rows.append(row)
    _finish(rows, ratios, raw, torch, args, programs=True)


def _finish(rows, ratios, raw, torch, args, programs=False):
    number = 200 if args.quick else 2000
    repeat = 9 if args.quick else 15
    headers = ["family", "op", "tenferro us", "no grad us", "numpy us"]
    if torch is not None:
        headers += [f"torch {torch.__version__} us", "ratio"]
    print("Small float64 tensors that require grad: median us per op (one core, one thread; "
          "ratio: median of interleaved samples' ratios)")
    print(table(rows, headers))
    print()
    rows = []
    programs = (("MLP SGD step", mlp_step, max(10, number // 20), repeat),
                ("CTMRG D=2 chi=8 gradient", ctmrg_grad, 1, 5)) if programs else ()
    for name, make, k, rep in programs:
        fns = {"tenferro": make(tf)}
        if torch is not None:
            fns["torch"] = make(torch)
        med, ratio = race(fns, k, rep)
        row = [name, f"{med['tenferro'] * 1e3:.2f}"]
        raw[name] = (med["tenferro"], None, None)
        if torch is not None:
            row += [f"{med['torch'] * 1e3:.2f}", f"{ratio:.2f}"]
            ratios[name] = ratio
            raw[name] = (med["tenferro"], med["torch"], ratio)
        rows.append(row)
    headers = ["program", "tenferro ms"] + (["torch ms", "ratio"] if torch is not None else [])
    if rows:
        print(table(rows, headers))
    if ratios:
        worst = max(ratios, key=ratios.get)
        print(f"\nworst ratio: {worst} {ratios[worst]:.2f}x (targets: ops <= 2.0x, programs "
              f"<= 1.0x)")
    if args.json:
        print(json.dumps({"tenferro": os.path.dirname(tf.__file__), "rows": raw}))


if __name__ == "__main__":
    main()
