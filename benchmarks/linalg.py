"""Forward and forward+backward time of svd / qr / eigh: tenferro vs PyTorch vs JAX.

Single-threaded BLAS (pinned below before NumPy is imported), float64 (or --dtype complex128),
n x n random inputs.
"fwd" is the decomposition alone; "fwd+bwd" is the decomposition plus the reverse pass of a
loss that reads every output (sum of each output times a fixed random matrix, so all
cotangents are non-zero and no peer can skip a branch). Medians of several runs; the last
column is tenferro's time divided by the fastest peer's.

Run: python benchmarks/linalg.py [--sizes 256 1024] [--repeat 5]

Before/after a change, in the same conditions: ``--against DIR`` (DIR another checkout of
tenferro, e.g. ``git worktree add /tmp/base main``) times tenferro alone, alternating fresh
processes of this tree and of DIR for ``--rounds`` rounds (so load on a shared machine hits
both alike), and prints the medians and their ratio (this tree / DIR).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro import linalg as tla  # noqa: E402

torch = jax = None
if not os.environ.get("TENFERRO_BENCH_ALONE"):  # optional peers
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover
        torch = None
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
    except ImportError:  # pragma: no cover
        jax = None


CLOCK = time.perf_counter  # --clock process: CPU time of this (single-threaded) process


def median_times(fns: dict, repeat: int, budget: float = 0.4) -> dict:
    """Median time of each function. The functions are interleaved within every
    repetition, so background load on the machine affects all of them alike; quick cases are
    repeated until each has ~``budget`` seconds of samples (at least ``repeat``)."""
    slowest = 0.0
    for fn in fns.values():
        fn()  # warm-up (JIT compilation, template caches, allocator)
        t0 = CLOCK()
        fn()
        slowest = max(slowest, CLOCK() - t0)
    repeat = max(repeat, min(200, int(budget / max(slowest, 1e-6))))
    ts = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = CLOCK()
            fn()
            ts[k].append(CLOCK() - t0)
    return {k: statistics.median(v) for k, v in ts.items()}


DEGENERATE = False  # --degenerate: every singular value / eigenvalue exactly 2-fold


def inputs(op, n, rng, dtype):
    a = rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal((n, n))
    if op == "eigh":
        a = a + a.conj().T
    if DEGENERATE:  # same vectors, values paired: the degeneracy check inspects every pair
        if op == "eigh":
            w, v = np.linalg.eigh(a)
            w = np.repeat(w[::2], 2)[:n]
            a = (v * w) @ v.conj().T
        else:
            u, s, vh = np.linalg.svd(a)
            s = np.repeat(s[::2], 2)[:n]
            a = (u * s) @ vh
    return a.astype(dtype)


def weigh(o, w, abs2):
    """The benchmark loss term of one output: sum(o * w), or sum(|o|^2 w) for complex inputs
    (invariant under the phase freedom of singular/eigen vectors, which torch insists on)."""
    return (abs(o) ** 2 * w).sum() if abs2 else (o * w).sum()


# Each case: op -> (tenferro forward, outputs), weights are applied to every output.
def tf_cases(op):
    if op == "svd":
        return lambda a: tuple(tla.svd(a))
    if op == "qr":
        return lambda a: tuple(tla.qr(a))
    return lambda a: tuple(tla.eigh(a))


def torch_cases(op):
    if op == "svd":
        return lambda a: tuple(torch.linalg.svd(a, full_matrices=False))
    if op == "qr":
        return lambda a: tuple(torch.linalg.qr(a))
    return lambda a: tuple(torch.linalg.eigh(a))


def jax_cases(op):
    if op == "svd":
        return lambda a: tuple(jnp.linalg.svd(a, full_matrices=False))
    if op == "qr":
        return lambda a: tuple(jnp.linalg.qr(a))
    return lambda a: tuple(jnp.linalg.eigh(a))


def bench(op, n, repeat, rng, dtype):
    a_np = inputs(op, n, rng, dtype)
    cplx = np.dtype(dtype).kind == "c"
    f = tf_cases(op)
    outs = f(tf.tensor(a_np))
    weights = [rng.standard_normal(o.shape) for o in outs]

    # ---- tenferro (eager tape, NumPy/SciPy backend)
    a_tf = tf.tensor(a_np)
    w_tf = [tf.tensor(w) for w in weights]

    def tf_fwd():
        f(a_tf)

    def tf_bwd():
        x = tf.tensor(a_np, requires_grad=True)
        loss = sum(tf.sum(tf.abs2(o) * w) if cplx else tf.sum(o * w)
                   for o, w in zip(f(x), w_tf, strict=True))
        loss.backward()
        return x.grad

    fwd, bwd = {"tenferro": tf_fwd}, {"tenferro": tf_bwd}
    g_ref = tf_bwd().numpy()

    if torch is not None:
        ft = torch_cases(op)
        a_t = torch.tensor(a_np)
        w_t = [torch.tensor(w) for w in weights]

        def t_fwd():
            ft(a_t)

        def t_bwd():
            x = a_t.clone().requires_grad_()
            loss = sum(weigh(o, w, cplx) for o, w in zip(ft(x), w_t, strict=True))
            loss.backward()
            return x.grad

        fwd["torch"], bwd["torch"] = t_fwd, t_bwd
        if op != "eigh":  # torch's eigh gradient is not symmetrised: compare only svd/qr
            # the losses read U and V, so they depend on the gauge (the sign of each singular
            # pair), which tenferro fixes and LAPACK leaves arbitrary: give torch's loss the
            # weights that make it the same function of the same factors
            w_cmp = list(w_t)
            if op == "svd" and not cplx:
                u_t = ft(a_t)[0].numpy()
                sgn = np.sign(np.sum(u_t * outs[0].numpy(), axis=0))
                w_cmp = [w_t[0] * torch.tensor(sgn[None, :]), w_t[1],
                         w_t[2] * torch.tensor(sgn[:, None])]
            x = a_t.clone().requires_grad_()
            sum(weigh(o, w, cplx) for o, w in zip(ft(x), w_cmp, strict=True)).backward()
            g = x.grad.numpy()
            err = np.abs(g - g_ref).max() / np.abs(g).max()
            if err > 1e-6:
                print(f"  warning: {op} {n}: tenferro and torch gradients differ ({err:.1e})")

    if jax is not None:
        fj = jax_cases(op)
        a_j = jnp.asarray(a_np)
        w_j = [jnp.asarray(w) for w in weights]
        fwd_j = jax.jit(fj)

        def loss_j(x):
            return sum(weigh(o, w, cplx) for o, w in zip(fj(x), w_j, strict=True))

        grad_j = jax.jit(jax.grad(loss_j))

        def j_fwd():
            jax.block_until_ready(fwd_j(a_j))

        def j_bwd():
            return jax.block_until_ready(grad_j(a_j))

        fwd["jax"], bwd["jax"] = j_fwd, j_bwd
    tf_, tb_ = median_times(fwd, repeat), median_times(bwd, repeat)
    return {k: (tf_[k], tb_[k]) for k in fwd}


def against(args):
    """Alternate fresh processes of this tree and of ``args.against``; medians per case."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    here = str(Path(__file__).resolve().parents[1])
    trees = {"this": here, "base": str(Path(args.against).resolve())}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--json", "--repeat",
           str(args.repeat), "--dtype", args.dtype, "--clock", args.clock, "--ops", *args.ops,
           "--sizes", *map(str, args.sizes)] + (["--degenerate"] if args.degenerate else [])
    runs = {k: [] for k in trees}
    for _ in range(args.rounds):
        for name, root in trees.items():
            env = dict(os.environ, PYTHONPATH=root, TENFERRO_BENCH_ALONE="1")
            out = subprocess.run(cmd, env=env, cwd=root, capture_output=True, text=True,
                                 check=True).stdout
            runs[name].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'op':5} {'n':>5} {'mode':8} {'this':>10} {'base':>10} {'ratio':>7}")
    for key in runs["this"][0]:
        for i, mode in enumerate(("fwd", "fwd+bwd")):
            t = statistics.median(r[key][i] for r in runs["this"])
            b = statistics.median(r[key][i] for r in runs["base"])
            op, n = key.split(":")
            print(f"{op:5} {int(n):5d} {mode:8} {t * 1e3:9.2f}m {b * 1e3:9.2f}m {t / b:7.3f}")
    spectra = "exactly 2-fold degenerate spectra; " if args.degenerate else ""
    print(f"{args.dtype}; {spectra}tenferro alone; {args.clock} time; medians over {args.rounds} "
          f"alternating rounds of medians of >= {args.repeat} runs; ratio = this tree / "
          f"{args.against}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 1024])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--ops", nargs="+", default=["svd", "qr", "eigh"])
    ap.add_argument("--dtype", default="float64", choices=["float64", "complex128"])
    ap.add_argument("--against", default=None, help="another tenferro checkout to compare with")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clock", default="wall", choices=["wall", "process"],
                    help="process: CPU time of the benchmark process (BLAS is single-threaded), "
                    "robust to other jobs on a shared machine")
    ap.add_argument("--degenerate", action="store_true",
                    help="exactly 2-fold degenerate spectra (the cost of the degeneracy check; "
                    "its warnings are silenced)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.degenerate:
        import warnings

        global DEGENERATE
        DEGENERATE = True
        warnings.simplefilter("ignore")
    if args.clock == "process":
        global CLOCK
        CLOCK = time.process_time
    if args.against:
        return against(args)
    rng = np.random.default_rng(0)
    if args.json:  # one line of {"op:n": [fwd, fwd+bwd]} for against()
        import json

        res = {f"{op}:{n}": bench(op, n, args.repeat, rng, args.dtype)["tenferro"]
               for op in args.ops for n in args.sizes}
        print(json.dumps(res))
        return
    peers = [p for p, mod in (("torch", torch), ("jax", jax)) if mod is not None]
    head = f"{'op':5} {'n':>5} {'mode':8} {'tenferro':>10}" + "".join(f" {p:>10}" for p in peers)
    print(head + f" {'ratio':>7}")
    print("-" * len(head + "        "))
    for op in args.ops:
        for n in args.sizes:
            res = bench(op, n, args.repeat, rng, args.dtype)
            for i, mode in enumerate(("fwd", "fwd+bwd")):
                mine = res["tenferro"][i]
                best = min(res[p][i] for p in peers) if peers else float("nan")
                cols = "".join(f" {res[p][i] * 1e3:9.1f}m" for p in peers)
                print(f"{op:5} {n:5d} {mode:8} {mine * 1e3:9.1f}m{cols} {mine / best:7.2f}")
    print(f"{args.dtype}; times in milliseconds (median of >= {args.repeat} interleaved runs); "
          f"ratio = tenferro / fastest peer")


if __name__ == "__main__":
    main()
