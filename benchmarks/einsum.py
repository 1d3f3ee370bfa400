"""einsum benchmark: tenferro eager vs opt_einsum+NumPy (same path), torch and JAX.

Cases (all contracted to a scalar, float64):

* ``mps-chi64`` / ``mps-chi256``: <psi|H|psi> for an MPS of length 20 (physical dim 2, open
  boundaries, bond dim chi in the bulk) and an MPO of bond dim 5: 60 tensors, 103 labels
  (beyond einsum's 52 letters, so the interleaved form is used everywhere);
* ``grid6x6-D4``: a 6x6 square-lattice network of bond-4 tensors (60 labels).

For each: the path is planned once by ``tenferro.contract_path`` and *every* implementation
uses it, so the comparison is of execution only. Reported: median time, GFLOP/s computed from
the path's FLOP count, and the ratio to opt_einsum+NumPy. "fwd+bwd" = the contraction plus
the gradient with respect to every tensor. BLAS is pinned to one thread.

Run: ``python benchmarks/einsum.py [--quick] [--cases mps-chi64,grid6x6-D4]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import opt_einsum as oe  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tenferro as tf  # noqa: E402

# ------------------------------------------------------------------------- networks


def mps_sandwich(L=20, d=2, chi=64, D=5, seed=0):
    """<psi|W|psi>: ket A (a, s, a'), MPO W (w, t, s, w'), bra B (b, t, b')."""
    rng = np.random.default_rng(seed)
    lab = {}

    def idx(*key):
        return lab.setdefault(key, len(lab))

    def mps_bond(k):  # open boundaries: bond dims grow as d^k from the ends, capped at chi
        return min(chi, d**k, d ** (L - k))

    def mpo_bond(k):
        return 1 if k in (0, L) else D

    arrays, subs = [], []
    for k in range(L):
        shapes = [
            ((mps_bond(k), d, mps_bond(k + 1)), [idx("a", k), idx("s", k), idx("a", k + 1)]),
            ((mpo_bond(k), d, d, mpo_bond(k + 1)),
             [idx("w", k), idx("t", k), idx("s", k), idx("w", k + 1)]),
            ((mps_bond(k), d, mps_bond(k + 1)), [idx("b", k), idx("t", k), idx("b", k + 1)]),
        ]
        for shape, sub in shapes:
            a = rng.standard_normal(shape) / np.sqrt(np.prod(shape[:-1]))
            arrays.append(a)
            subs.append(sub)
    return arrays, subs, []


def grid(n=6, D=4, seed=0):
    """An n x n square-lattice network, open boundaries, bond dimension D, scalar output."""
    rng = np.random.default_rng(seed)
    lab = {}

    def idx(*key):
        return lab.setdefault(key, len(lab))

    arrays, subs = [], []
    for r in range(n):
        for c in range(n):
            sub = []
            if r > 0:
                sub.append(idx("v", r - 1, c))
            if c > 0:
                sub.append(idx("h", r, c - 1))
            if r < n - 1:
                sub.append(idx("v", r, c))
            if c < n - 1:
                sub.append(idx("h", r, c))
            shape = (D,) * len(sub)
            arrays.append(rng.uniform(0.5, 1.0, shape) / D)
            subs.append(sub)
    return arrays, subs, []


CASES = {
    "mps-chi64": lambda: mps_sandwich(chi=64),
    "mps-chi256": lambda: mps_sandwich(chi=256),
    "grid6x6-D4": lambda: grid(6, 4),
}

PLANNERS = {
    # the MPS sandwich is timed on the zipper order (left to right: the order DMRG codes use,
    # and deterministic); the others are printed for comparison
    "mps-chi64": (False, "auto", "random-greedy-128"),
    "mps-chi256": (False, "auto", "random-greedy-128"),
    # the grid: the cheapest of the candidates
    "grid6x6-D4": ("auto", "random-greedy-128", False),
}


def interleave(ops, subs, out):
    args = []
    for o, s in zip(ops, subs, strict=True):
        args += [o, s]
    return args + [out]


# ------------------------------------------------------------------------- timing


def median_times(fns, min_reps=7, max_reps=60, budget=6.0):
    """Median wall time of each callable, measured round-robin (one call of each per round) so
    that load from other processes affects every implementation alike."""
    for fn in fns.values():
        fn()  # warm-up: plans, caches, JIT compilation
    times = {k: [] for k in fns}
    t_end = time.perf_counter() + budget
    rounds = 0
    while rounds < min_reps or (rounds < max_reps and time.perf_counter() < t_end):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
        rounds += 1
    return {k: statistics.median(v) for k, v in times.items()}


# ------------------------------------------------------------------------- implementations


def impl_tenferro(arrays, subs, out, path):
    ts = [tf.tensor(a) for a in arrays]

    def fwd():
        return tf.einsum(*interleave(ts, subs, out), optimize=path).item()

    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]

    def fwd_bwd():
        for x in leaves:
            x.grad = None
        r = tf.einsum(*interleave(leaves, subs, out), optimize=path)
        r.backward()
        return r.item()

    return fwd, fwd_bwd


def impl_opt_einsum(arrays, subs, out, path):
    def fwd():
        return float(oe.contract(*interleave(arrays, subs, out), optimize=path))

    return fwd, None


def impl_torch(arrays, subs, out, path):
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    ts = [torch.from_numpy(a) for a in arrays]
    leaves = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]

    # torch.einsum's sublist form only takes labels < 52; opt_einsum drives torch instead,
    # with the same path (pairwise torch.tensordot / torch.einsum).
    def fwd():
        with torch.no_grad():
            return float(oe.contract(*interleave(ts, subs, out), optimize=path, backend="torch"))

    def fwd_bwd():
        for x in leaves:
            x.grad = None
        r = oe.contract(*interleave(leaves, subs, out), optimize=path, backend="torch")
        r.backward()
        return float(r)

    return fwd, fwd_bwd


def impl_jax(arrays, subs, out, path):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    cpu = jax.devices("cpu")[0]
    xs = [jax.device_put(a, cpu) for a in arrays]

    def f(*ops):
        return jnp.einsum(*interleave(ops, subs, out), optimize=path)

    jf = jax.jit(f)
    jg = jax.jit(jax.value_and_grad(f, argnums=tuple(range(len(xs)))))

    def fwd():
        return float(jf(*xs).block_until_ready())

    def fwd_bwd():
        v, g = jg(*xs)
        jax.block_until_ready(g)
        return float(v)

    return fwd, fwd_bwd


IMPLS = [
    ("tenferro (eager)", impl_tenferro),
    ("opt_einsum+numpy", impl_opt_einsum),
    ("torch (oe path)", impl_torch),
    ("jax.jit einsum", impl_jax),
]


def choose_path(name, args):
    """Plan with every candidate planner of the case; MPS cases use the first (the zipper),
    others the cheapest."""
    found = []
    for opt in PLANNERS[name]:
        t0 = time.perf_counter()
        info = tf.contract_path(*args, optimize=opt)
        path = info.path
        ms = (time.perf_counter() - t0) * 1e3
        found.append((info.flops, str(opt), ms, path, info))
        print(f"  planner {str(opt):<18} FLOPs {info.flops:.3e}  largest intermediate "
              f"{info.largest_intermediate:.3e}  planning {ms:.1f} ms")
    if name.startswith("mps"):
        return found[0]
    return min(found, key=lambda f: f[0])


def run_case(name, quick=False):
    arrays, subs, out = CASES[name]()
    args = interleave(arrays, subs, out)
    print(f"\n== {name}: {len(arrays)} tensors")
    flops, planner, _, path, info = choose_path(name, args)
    t0 = time.perf_counter()
    tf.contract_path(*args, optimize=planner if planner != "False" else False)
    cached_us = (time.perf_counter() - t0) * 1e6
    ref = oe.contract(*args, optimize=path)
    print(f"  using the {planner!r} path ({flops:.3e} FLOPs); cached plan lookup "
          f"{cached_us:.0f} us")
    fns = {}
    for label, make in IMPLS:
        impls = make(arrays, subs, out, path)
        if impls is None:
            continue
        fwd, fwd_bwd = impls
        val = fwd()
        if not np.isclose(val, ref, rtol=1e-8):
            print(f"  !! {label}: value {val} differs from opt_einsum {ref}")
        fns[(label, "fwd")] = fwd
        if fwd_bwd is not None:
            fns[(label, "fwd+bwd")] = fwd_bwd
    t = median_times(fns, budget=3.0 if quick else 8.0)
    rows = {}
    for label, kind in fns:
        rows.setdefault(label, [None, None])[kind == "fwd+bwd"] = t[(label, kind)]
    base = rows["opt_einsum+numpy"][0]
    print(f"  {'implementation':<20} {'fwd [ms]':>10} {'GFLOP/s':>8} {'vs oe':>7} "
          f"{'fwd+bwd [ms]':>13} {'bwd/fwd':>8}")
    for label, (tf_, tb) in rows.items():
        tb_s = f"{tb * 1e3:13.2f}" if tb is not None else f"{'-':>13}"
        ratio_b = f"{tb / tf_:8.2f}" if tb is not None else f"{'-':>8}"
        print(f"  {label:<20} {tf_ * 1e3:10.2f} {flops / tf_ / 1e9:8.2f} {tf_ / base:7.2f} "
              f"{tb_s} {ratio_b}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing budget")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}, opt_einsum {oe.__version__}, 1 BLAS thread")
    for name in args.cases.split(","):
        run_case(name, quick=args.quick)


if __name__ == "__main__":
    main()
