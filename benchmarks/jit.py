"""``tenferro.jit`` against the compiled peers (``jax.jit`` with x64, ``torch.compile``) on five
workload classes, forward and value+gradient, in one process with one thread each:

* ``tiny``: a 200-op program on 3x3 matrices (matmul, transpose, sin, mul, add): per-op cost;
* ``ew``: an elementwise chain, 40 ops on 1e6 float64 (fusion, buffer reuse);
* ``mlp``: the loss of a 2-layer MLP (batch 64, 16 -> 64 -> 1, tanh, MSE) w.r.t. its 4 params;
* ``trg``: TRG of the 2D Ising model, chi=24, ln Z and d lnZ/d beta;
* ``ctmrg``: C4v CTMRG chi=16 + Heisenberg energy of a D=2 iPEPS and its gradient.

Prints per-call medians (calls interleaved, so background load hits every library alike), the
ratio of each peer's time to tenferro's (``> 1``: tenferro is faster) and every first-call
(trace + compile) time. torch.compile takes minutes on the TRG/CTMRG cases: ``--quick`` runs
fewer repetitions and shorter TRG/CTMRG loops, ``--peers jax`` leaves torch out.

Run: python benchmarks/jit.py [--quick] [--peers jax torch] [--cases tiny ew mlp trg ctmrg]
     [--modes fwd vg] [--repeat N]
TENFERRO_FUSION=off|numpy|torch picks the fusion engine; TENFERRO_BENCH_ROOT=<checkout> runs
another checkout's tenferro (the "before" numbers).
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import argparse
import os
import sys
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")
# this checkout's tenferro (not whichever the environment installed), or TENFERRO_BENCH_ROOT's
# (a baseline checkout, for before/after numbers)
sys.path.insert(0, os.environ.get("TENFERRO_BENCH_ROOT")
                or os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from _common import interleaved_medians, pin_torch, table, try_import  # noqa: E402

import tenferro as tf  # noqa: E402

torch = None
jax = jnp = None


def load_peers(peers):
    global torch, jax, jnp
    if "torch" in peers:
        torch = pin_torch()
    if "jax" in peers:
        jax = try_import("jax")
        if jax is not None:
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp_

            jnp = jnp_


# --------------------------------------------------------------- workloads (generic)
def tiny_program(ns):
    """200 ops on 3x3 matrices: 40 x (matmul, sin, transpose, mul, add), then a sum."""

    def f(x, w):
        y = x
        for _ in range(40):
            y = ns.sin(y @ w) + ns.T(y) * x
        return ns.sum(y)

    return f


def ew_program(ns):
    """40 elementwise ops on 1e6 float64: 8 x (mul, sin, add, tanh, mul), then a sum."""

    def f(x, w):
        y = x
        for _ in range(8):
            y = ns.tanh(ns.sin(y * w) + x) * 0.9
        return ns.sum(y)

    return f


def mlp_program(ns, X, Y):
    def f(W1, b1, W2, b2):
        h = ns.tanh(X @ W1 + b1)
        return ns.mean((h @ W2 + b2 - Y) ** 2)

    return f


class _NS:
    def __init__(self, mod, T, **kw):
        self.sin, self.tanh, self.sum, self.mean = mod.sin, mod.tanh, mod.sum, mod.mean
        self.T = T
        self.__dict__.update(kw)


def namespaces():
    out = {"tenferro": _NS(tf, lambda a: a.T)}
    if jnp is not None:
        out["jax"] = _NS(jnp, lambda a: a.T)
    if torch is not None:
        out["torch"] = _NS(torch, lambda a: a.T)
    return out


def as_lib(lib, a):
    if lib == "tenferro":
        return tf.tensor(a)
    if lib == "jax":
        return jnp.asarray(a)
    return torch.tensor(a, dtype=torch.float64)


# ------------------------------------------------------------------ compiled callables
def compile_for(lib, f, mode, nargs):
    """``f`` compiled by ``lib``: forward, or value and gradient w.r.t. every argument."""
    argnums = tuple(range(nargs))
    if lib == "tenferro":
        return tf.jit(f if mode == "fwd" else tf.value_and_grad(f, argnums=argnums))
    if lib == "jax":
        g = jax.jit(f if mode == "fwd" else jax.value_and_grad(f, argnums=argnums))
        return lambda *a: jax.block_until_ready(g(*a))
    if mode == "fwd":
        c = torch.compile(f)
        return lambda *a: c(*a)

    def vg(*a):
        a = [x.detach().requires_grad_(True) for x in a]
        v = f(*a)
        return v, torch.autograd.grad(v, a)

    return torch.compile(vg)


def case_inputs(name, lib, quick):
    rng = np.random.default_rng(0)
    if name == "tiny":
        return [as_lib(lib, rng.uniform(0.1, 0.5, (3, 3))) for _ in range(2)]
    if name == "ew":
        return [as_lib(lib, rng.uniform(0.1, 0.5, 10**6)) for _ in range(2)]
    if name == "mlp":
        return [as_lib(lib, a) for a in (rng.standard_normal((16, 64)) * 0.1, np.zeros(64),
                                          rng.standard_normal((64, 1)) * 0.1, np.zeros(1))]
    if name == "trg":
        return [as_lib(lib, np.float64(0.44))]
    if name == "ctmrg":
        from tenferro.tn import peps

        return [as_lib(lib, np.asarray(peps.random_c4v_peps(2, seed=3, noise=1.0)))]
    raise ValueError(name)


def case_program(name, lib, quick):
    ns = namespaces()[lib]
    if name == "tiny":
        return tiny_program(ns)
    if name == "ew":
        return ew_program(ns)
    if name == "mlp":
        rng = np.random.default_rng(1)
        X, Y = rng.standard_normal((64, 16)), rng.standard_normal((64, 1))
        return mlp_program(ns, as_lib(lib, X), as_lib(lib, Y))
    if name == "trg":
        steps = 3 if quick else 8
        if lib == "tenferro":
            from tenferro.tn import ising_tensor, trg

            return lambda b: trg(ising_tensor(b), 24, steps, progress=False)
        import trg as trg_bench

        return (trg_bench.jax_trg if lib == "jax" else trg_bench.torch_trg)(24, steps)
    if name == "ctmrg":
        iters = 5 if quick else 15
        if lib == "tenferro":
            from tenferro.tn import peps

            return lambda A: peps.heisenberg_energy(A, 16, tol=None, max_iter=iters,
                                                    progress=False, check_symmetry=False)
        import ctmrg as ctmrg_bench

        if lib == "jax":
            ctmrg_bench.HP["jax"] = jnp.asarray(ctmrg_bench.H)
            e = ctmrg_bench.make_peer("jax", jnp.einsum,
                                      lambda m: jnp.linalg.svd(m, full_matrices=False),
                                      jnp.linalg.norm)
        else:
            ctmrg_bench.HP["torch"] = torch.tensor(ctmrg_bench.H)
            e = ctmrg_bench.make_peer("torch", torch.einsum,
                                      lambda m: torch.linalg.svd(m, full_matrices=False),
                                      torch.linalg.norm)
        return lambda A: e(A, 16, iters)
    raise ValueError(name)


def first_value(out):
    v = out[0] if isinstance(out, tuple) else out
    return float(np.asarray(v.detach() if hasattr(v, "detach") else v))


def run_case(name, mode, libs, quick, repeat):
    fns, compile_s, values = {}, {}, {}
    for lib in libs:
        try:
            args = case_inputs(name, lib, quick)
            g = compile_for(lib, case_program(name, lib, quick), mode, len(args))
            t0 = time.perf_counter()
            values[lib] = first_value(g(*args))
            compile_s[lib] = time.perf_counter() - t0
            fns[lib] = (lambda g=g, args=args: g(*args))
        except Exception as e:  # a peer that cannot compile this case is reported, not fatal
            print(f"  {lib} {name} {mode}: {type(e).__name__}: {str(e)[:200]}")
    for fn in fns.values():  # warm-up beyond the first call (torch recompiles once, ...)
        fn()
    t = interleaved_medians(fns, repeat) if fns else {}
    return t, compile_s, values


def _fusion_engine():
    try:
        from tenferro._src.ir import fusion
    except ImportError:
        return "none (before [compiler])"
    return fusion.engine()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions, shorter loops")
    p.add_argument("--peers", nargs="*", default=["jax", "torch"], choices=["jax", "torch"])
    p.add_argument("--cases", nargs="*", default=["tiny", "ew", "mlp", "trg", "ctmrg"])
    p.add_argument("--modes", nargs="*", default=["fwd", "vg"], choices=["fwd", "vg"])
    p.add_argument("--repeat", type=int, default=None)
    a = p.parse_args(argv)
    load_peers(a.peers)
    print(f"tenferro from {os.path.dirname(tf.__file__)}; fusion engine: "
          f"{_fusion_engine()}", flush=True)
    libs = ["tenferro"] + [x for x in a.peers if (jax if x == "jax" else torch) is not None]
    peers = libs[1:]
    rows = []
    for name in a.cases:
        for mode in a.modes:
            rep = a.repeat or ({"tiny": 41, "ew": 7, "mlp": 41, "trg": 5, "ctmrg": 5}[name]
                               // (2 if a.quick else 1) or 1)
            t, c, v = run_case(name, mode, libs, a.quick, max(rep, 3))
            if "tenferro" not in t:
                continue
            base = t["tenferro"]
            row = [name, mode, f"{base * 1e3:.3f}"]
            for lib in peers:
                row += ([f"{t[lib] * 1e3:.3f}", f"{t[lib] / base:.2f}"] if lib in t
                        else ["-", "-"])
            row.append(" ".join(f"{lib[:5]} {c[lib]:.2f}" for lib in libs if lib in c))
            ref = v.get("tenferro")
            row.append(" ".join(f"{abs(v[lib] - ref):.0e}" for lib in peers if lib in v))
            rows.append(row)
            print("  ".join(map(str, row)), flush=True)
    hdr = ["case", "mode", "tenferro ms"]
    for lib in peers:
        hdr += [f"{lib} ms", f"{lib}/tf"]
    hdr += ["first call (s)", "|value - tf|"]
    print()
    print(table(rows, hdr))
    print("ratio = peer time / tenferro.jit time (> 1: tenferro faster); one thread each")


if __name__ == "__main__":
    main()
