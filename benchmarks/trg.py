"""TRG for the 2D Ising model: ln Z and d lnZ/d beta at chi = 16 and 32, 20 RG steps.

Forward and forward+backward time (median) and peak memory, side by side with the same
algorithm written in PyTorch and in JAX (optional peers). Both peers need a custom SVD backward
with Lorentzian broadening, because their built-in SVD gradients are NaN on the exactly
degenerate spectra of the Ising tensor; the one used here is the standard real-square formula
(the same broadening tenferro uses by default). All three split the SVD with the same
zero-safe square root as ``tenferro.tn.trg`` (exactly zero singular values: derivative 0).
Each measurement runs in its own process so that peak memory (the increase of max RSS over the
process's baseline) is comparable across libraries. BLAS is pinned to one thread everywhere.

tenferro tunes glibc's allocator at import (tenferro/backends/malloc.py); the
"torch+malloc" row runs PyTorch with the same tuning, to show the allocator's share.

Target ([physics]): tenferro forward+backward at most 1.0x PyTorch's.
The "tenferro-partial" row splits with ``svd="partial"`` (tenferro.linalg.svds, block Krylov,
exact truncated pullback); target ([krylov]): at most 0.5x the full-SVD tenferro time, same
lnZ to 1e-8 and derivative to 1e-6.
Run: python benchmarks/trg.py [--chis 16 32] [--steps 20] [--repeat 3] [--clock process]
     [--modes fwd fwd+bwd] [--libs tenferro tenferro-partial ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                      "intra_op_parallelism_threads=1")

BETA = 0.44
EPS = 1e-10  # relative Lorentzian width (tenferro's default)


# ---------------------------------------------------------------------------- tenferro
def tenferro_case(chi, steps, backward, svd="full"):
    """The tape API, like the PyTorch version (requires_grad + backward())."""
    import tenferro as tf
    from tenferro.tn import ising_tensor, trg

    def f(b):
        return trg(ising_tensor(b), chi, steps, svd=svd, progress=False)

    def run():
        b = tf.tensor(BETA, requires_grad=backward)
        v = f(b)
        if backward:
            v.backward()
            return v, b.grad
        return v

    return run


def torch_tuned_case(chi, steps, backward):
    """PyTorch with the same glibc allocator tuning tenferro applies at import (for a
    like-for-like view of the allocator's share)."""
    from tenferro._src.backends.malloc import tune_glibc_malloc

    tune_glibc_malloc()
    return torch_case(chi, steps, backward)


# ------------------------------------------------------------- the peers' shared program
def trg_program(ns, chi, steps):
    """ln Z per site by TRG, written once for both peers against a NumPy-like namespace ``ns``
    (``ns.svd`` has the broadened backward below; ``ns.matrix2``, ``ns.permute`` and
    ``ns.stop_gradient`` paper over the libraries' spellings)."""

    def ising(beta):
        c, sh = ns.sqrt(ns.cosh(beta)), ns.sqrt(ns.sinh(beta))
        w = ns.matrix2(c, sh, c, -sh)
        return ns.einsum("sl,su,sr,sd->lurd", w, w, w, w)

    def split(m):
        u, s, vh = ns.svd(m)
        u, s, vh = u[:, :chi], s[:chi], vh[:chi, :]
        alive = s > ns.stop_gradient(s.max()) * 1e-14  # the same safe sqrt as tenferro.tn.trg
        r = ns.where(alive, ns.sqrt(ns.where(alive, s, 1.0)), 0.0)
        return u * r, r[:, None] * vh

    def step(t):
        L, U, R, D = t.shape
        a, b = split(t.reshape(L * U, R * D))
        k = a.shape[1]
        s1, s3 = a.reshape(L, U, k), b.reshape(k, R, D)
        t2 = ns.permute(t, (1, 2, 3, 0))
        c, d = split(t2.reshape(U * R, D * L))
        k2 = c.shape[1]
        s2, s4 = c.reshape(U, R, k2), d.reshape(k2, D, L)
        return ns.einsum("aim,bji,kjc,mkd->abcd", s3, s4, s1, s2)

    def f(beta):
        t = ising(beta)
        n = ns.norm(t)
        t, lnz = t / n, ns.log(n)
        for k in range(1, steps + 1):
            t = step(t)
            n = ns.norm(t)
            t, lnz = t / n, lnz + ns.log(n) / 2**k
        return lnz + ns.log(ns.einsum("abab->", t)) / 2**steps

    return f


def svd_backward(ns, u, s, vh, gu, gs, gvh):
    """The standard real-square SVD backward with Lorentzian broadening (width EPS s_max)."""
    v = vh.T
    w2 = (EPS * s[0]) ** 2
    d = s[None, :] ** 2 - s[:, None] ** 2  # s_j^2 - s_i^2
    f = d / (d**2 + w2) * (1 - ns.eye(s.shape[0]))
    j = f * (u.T @ gu)
    k = f * (v.T @ gvh.T)
    inner = (j + j.T) * s[None, :] + ns.diag(gs) + s[:, None] * (k + k.T)
    return u @ inner @ vh


# ----------------------------------------------------------------------------- PyTorch
def torch_trg(chi, steps, device="cpu"):
    """ln Z per site as a PyTorch function of beta (tensors on ``device``), with the
    broadened SVD backward."""
    import types

    import torch

    ns = types.SimpleNamespace(
        sqrt=torch.sqrt, cosh=torch.cosh, sinh=torch.sinh, einsum=torch.einsum,
        where=torch.where, log=torch.log, norm=torch.linalg.norm, diag=torch.diag,
        matrix2=lambda a, b, c, d: torch.stack([torch.stack([a, b]), torch.stack([c, d])]),
        permute=lambda t, axes: t.permute(*axes), stop_gradient=lambda x: x.detach(),
        eye=lambda n: torch.eye(n, dtype=torch.float64, device=device),
    )

    class SVD(torch.autograd.Function):
        """Thin SVD of a square real matrix with a Lorentzian-broadened backward."""

        @staticmethod
        def forward(ctx, a):
            u, s, vh = torch.linalg.svd(a, full_matrices=False)
            ctx.save_for_backward(u, s, vh)
            return u, s, vh

        @staticmethod
        def backward(ctx, gu, gs, gvh):
            return svd_backward(ns, *ctx.saved_tensors, gu, gs, gvh)

    ns.svd = SVD.apply
    return trg_program(ns, chi, steps)


def torch_case(chi, steps, backward):
    import torch

    torch.set_num_threads(1)
    f = torch_trg(chi, steps)

    def run():
        b = torch.tensor(BETA, dtype=torch.float64, requires_grad=backward)
        v = f(b)
        if backward:
            v.backward()
            return v, b.grad
        return v

    if not backward:
        def run_nograd():
            with torch.no_grad():
                return run()
        return run_nograd
    return run


# --------------------------------------------------------------------------------- JAX
def jax_trg(chi, steps):
    """ln Z per site as a JAX function of beta, with the broadened SVD backward."""
    import types

    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    ns = types.SimpleNamespace(
        sqrt=jnp.sqrt, cosh=jnp.cosh, sinh=jnp.sinh, einsum=jnp.einsum, where=jnp.where,
        log=jnp.log, norm=jnp.linalg.norm, diag=jnp.diag, eye=jnp.eye,
        matrix2=lambda a, b, c, d: jnp.array([[a, b], [c, d]]),
        permute=jnp.transpose, stop_gradient=jax.lax.stop_gradient,
    )

    @jax.custom_vjp
    def svd(a):
        return jnp.linalg.svd(a, full_matrices=False)

    def svd_fwd(a):
        out = svd(a)
        return out, out

    def svd_bwd(res, g):
        return (svd_backward(ns, *res, *g),)

    svd.defvjp(svd_fwd, svd_bwd)
    ns.svd = svd
    return trg_program(ns, chi, steps)


def jax_case(chi, steps, backward):
    import jax
    import jax.numpy as jnp

    f = jax_trg(chi, steps)
    g = jax.jit(jax.value_and_grad(f) if backward else f)
    b = jnp.asarray(BETA)
    return lambda: jax.block_until_ready(g(b))


def tenferro_partial_case(chi, steps, backward):
    return tenferro_case(chi, steps, backward, svd="partial")


CASES = {"tenferro": tenferro_case, "tenferro-partial": tenferro_partial_case,
         "torch": torch_case, "torch+malloc": torch_tuned_case, "jax": jax_case}


def worker(lib, chi, steps, backward, repeat, clock="wall"):
    fn = CASES[lib](chi, steps, backward)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = fn()  # warm-up (templates, plans, jit compilation)
    times = []
    # "process": CPU time of this (one-BLAS-thread) process, robust when other jobs share
    # the cores; "wall": elapsed time
    now = time.process_time if clock == "process" else time.perf_counter
    for _ in range(repeat):
        t0 = now()
        out = fn()
        times.append(now() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
    vals = out if isinstance(out, tuple) else (out,)
    vals = [float(v[0] if isinstance(v, tuple) else v) for v in vals]
    print(json.dumps({"time": statistics.median(times), "peak_mb": peak / 1024,
                      "values": vals}))


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chis", type=int, nargs="*", default=[16, 32])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--libs", nargs="*", default=list(CASES))
    p.add_argument("--clock", choices=("wall", "process"), default="wall",
                   help="wall time, or CPU time of the worker process (for a loaded machine)")
    p.add_argument("--modes", nargs="*", choices=("fwd", "fwd+bwd"), default=["fwd", "fwd+bwd"])
    p.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        lib, chi, steps, bwd = args.worker
        return worker(lib, int(chi), int(steps), bwd == "1", args.repeat, args.clock)
    rows = []
    results = {}
    print(f"clock: {args.clock}")
    for chi in args.chis:
        for lib in args.libs:
            for bwd in [int(m == "fwd+bwd") for m in args.modes]:
                cmd = [sys.executable, __file__, "--repeat", str(args.repeat), "--clock",
                       args.clock, "--worker", lib, str(chi), str(args.steps), str(bwd)]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    last = (r.stderr.strip().splitlines() or ["?"])[-1]
                    rows.append((chi, lib, "fwd+bwd" if bwd else "fwd", "failed", last, ""))
                    continue
                d = json.loads(r.stdout.strip().splitlines()[-1])
                results[(chi, lib, bwd)] = d
                rows.append((chi, lib, "fwd+bwd" if bwd else "fwd", f"{d['time']:.3f} s",
                             f"{d['peak_mb']:.0f} MB", " ".join(f"{v:.10f}" for v in d["values"])))
    w = [5, 13, 8, 10, 10, 30]
    head = ["chi", "library", "mode", "time", "peak mem", "lnZ/N (, dlnZ/dbeta)"]
    print("  ".join(h.ljust(x) for h, x in zip(head, w)))
    for r in rows:
        print("  ".join(str(c).ljust(x) for c, x in zip(r, w)))
    for chi in args.chis:
        for bwd in (0, 1):
            t = results.get((chi, "tenferro", bwd))
            q = results.get((chi, "tenferro-partial", bwd))
            if t and q:
                dv = [abs(a - b) for a, b in zip(q["values"], t["values"])]
                print(f"chi={chi} {'fwd+bwd' if bwd else 'fwd'}: tenferro svd='partial' / full "
                      f"time {q['time'] / t['time']:.2f}x; |value differences| "
                      f"{' '.join(f'{x:.1e}' for x in dv)}")
            for peer in ("torch", "torch+malloc", "jax"):
                q = results.get((chi, peer, bwd))
                if t and q:
                    mem = t["peak_mb"] / max(q["peak_mb"], 1)
                    print(f"chi={chi} {'fwd+bwd' if bwd else 'fwd'}: tenferro/{peer} time "
                          f"{t['time'] / q['time']:.2f}x, memory {mem:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
