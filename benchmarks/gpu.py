"""GPU speed ([gpu]): tenferro on CuPy side by side with PyTorch CUDA and JAX GPU, one run.

Rows (median wall time, ms; every library synchronised before the clock stops):
* TRG for the 2D Ising model, chi = 32, 64, 96 (20 steps), ln Z and d lnZ/d beta
  (forward+backward; the peers run the same program as benchmarks/trg.py, with the same
  Lorentzian-broadened SVD backward);
* the MPS "sandwich" einsum ``E[a,b] A[a,s,c] conj(A)[b,s,d] -> [c,d]`` at chi = 1024, d = 2;
* SVD, eigh and QR of n x n float64 matrices at n = 1024 and 4096 (forward);
* a batch of 512 SVDs of 32 x 32 matrices (forward).

The TRG chi=64 row also runs tenferro on one CPU core: the target is GPU time <= 1.0x PyTorch
CUDA and >= 10x faster than one core.

Run on a GPU machine:   python benchmarks/gpu.py [--repeat 5]
Dry run without a GPU:  python benchmarks/gpu.py --device cpu --quick   (small sizes, to check
the script; peers then run on the CPU too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from trg import BETA, jax_trg, torch_trg  # noqa: E402

STEPS = 20


def timed(fn, sync, repeat):
    """Median seconds of ``fn(); sync()`` after one warm-up call."""
    sync(fn())
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sync(fn())
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


# ------------------------------------------------------------------------------ tenferro
class Tenferro:
    name = "tenferro"

    def __init__(self, device):
        import tenferro as tf

        self.tf, self.device = tf, device

    def sync(self, out):
        # the only host transfer: one scalar (or a tiny slice) per measured call
        leaves = out if isinstance(out, (tuple, list)) else (out,)
        for t in leaves:
            np.asarray(self.tf.stop_gradient(t).reshape(-1)[:1].to("cpu").numpy())

    def put(self, a):
        return self.tf.asarray(a, device=self.device)

    def trg(self, chi):
        tf = self.tf
        from tenferro.tn import ising_tensor, trg

        def run():
            with tf.default_device(self.device):
                b = tf.tensor(BETA, device=self.device, requires_grad=True)
                lnz = trg(ising_tensor(b), chi, STEPS, progress=False)
                lnz.backward()
                return lnz, b.grad

        return run

    def sandwich(self, e, a):
        e, a = self.put(e), self.put(a)
        return lambda: self.tf.einsum("ab,asc,bsd->cd", e, a, self.tf.conj(a))

    def decomp(self, kind, m):
        m, la = self.put(m), self.tf.linalg
        return {"svd": lambda: la.svd(m), "eigh": lambda: la.eigh(m),
                "qr": lambda: la.qr(m)}[kind]


# ------------------------------------------------------------------------------- PyTorch
class Torch:
    name = "torch"

    def __init__(self, device):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.device = "cuda" if device.startswith("cuda") else "cpu"

    def sync(self, out):
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def put(self, a):
        return self.torch.as_tensor(a, device=self.device)

    def trg(self, chi):
        torch, dev = self.torch, self.device
        f = torch_trg(chi, STEPS, dev)

        def run():
            b = torch.tensor(BETA, dtype=torch.float64, device=dev, requires_grad=True)
            lnz = f(b)
            lnz.backward()
            return lnz, b.grad

        return run

    def sandwich(self, e, a):
        e, a = self.put(e), self.put(a)
        return lambda: self.torch.einsum("ab,asc,bsd->cd", e, a, a.conj())

    def decomp(self, kind, m):
        m, la = self.put(m), self.torch.linalg
        return {"svd": lambda: la.svd(m, full_matrices=False), "eigh": lambda: la.eigh(m),
                "qr": lambda: la.qr(m)}[kind]


# ----------------------------------------------------------------------------------- JAX
class Jax:
    name = "jax"

    def __init__(self, device):
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        plat = "gpu" if device.startswith("cuda") else "cpu"
        self.dev = jax.devices(plat)[0]

    def sync(self, out):
        self.jax.block_until_ready(out)

    def put(self, a):
        return self.jax.device_put(a, self.dev)

    def trg(self, chi):
        with self.jax.default_device(self.dev):
            f = self.jax.jit(self.jax.value_and_grad(jax_trg(chi, STEPS)))
        b = self.put(np.float64(BETA))
        return lambda: f(b)

    def sandwich(self, e, a):
        jnp = self.jax.numpy
        f = self.jax.jit(lambda e, a: jnp.einsum("ab,asc,bsd->cd", e, a, a.conj()))
        e, a = self.put(e), self.put(a)
        return lambda: f(e, a)

    def decomp(self, kind, m):
        jnp = self.jax.numpy
        fn = {"svd": lambda x: jnp.linalg.svd(x, full_matrices=False),
              "eigh": jnp.linalg.eigh, "qr": jnp.linalg.qr}[kind]
        f, m = self.jax.jit(fn), self.put(m)
        return lambda: f(m)


# --------------------------------------------------------------------------------- driver
def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", help="tenferro device (cuda, cpu, strict:1)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes (a dry run on a CPU)")
    args = ap.parse_args()

    chis = [8, 16] if args.quick else [32, 64, 96]
    mps_chi = 128 if args.quick else 1024
    ns_ = [128, 256] if args.quick else [1024, 4096]
    batch = (64, 16) if args.quick else (512, 32)

    libs = [Tenferro(args.device)]
    for cls in (Torch, Jax):
        try:
            libs.append(cls(args.device))
        except Exception as exc:  # an optional peer that is missing or has no GPU
            print(f"# {cls.name}: not run ({type(exc).__name__}: {exc})")
    rng = np.random.default_rng(0)
    rows = []

    def race(label, make):
        times = {}
        for lib in libs:
            try:
                times[lib.name] = timed(make(lib), lib.sync, args.repeat)
            except Exception as exc:
                print(f"# {label} / {lib.name}: failed ({type(exc).__name__}: {exc})")
        rows.append((label, times))
        print(fmt(label, times), flush=True)

    print(f"# tenferro device: {args.device}; median of {args.repeat}; ms")
    print(header())
    for chi in chis:
        race(f"TRG chi={chi} fwd+bwd", lambda lib, chi=chi: lib.trg(chi))
    one = [c for c in chis if c == 64] or chis[-1:]
    if args.device != "cpu":  # the CPU reference for the 10x target
        cpu = Tenferro("cpu")
        t = timed(cpu.trg(one[0]), cpu.sync, max(1, args.repeat // 2))
        print(f"# TRG chi={one[0]}: tenferro on one CPU core {1e3 * t:.1f} ms")
    e = rng.standard_normal((mps_chi, mps_chi))
    a = rng.standard_normal((mps_chi, 2, mps_chi))
    race(f"MPS sandwich chi={mps_chi}", lambda lib: lib.sandwich(e, a))
    for n in ns_:
        m = rng.standard_normal((n, n))
        sym = (m + m.T) / 2
        for kind in ("svd", "eigh", "qr"):
            race(f"{kind} n={n}", lambda lib, k=kind: lib.decomp(k, sym if k == "eigh" else m))
    bm = rng.standard_normal((batch[0], batch[1], batch[1]))
    race(f"svd batch {batch[0]}x{batch[1]}^2", lambda lib: lib.decomp("svd", bm))


def header():
    cols = f"{'tenferro':>10s} {'torch':>10s} {'jax':>10s} {'tf/torch':>9s} {'tf/jax':>7s}"
    return f"{'case':28s} {cols}"


def fmt(label, t):
    def ms(k):
        return f"{1e3 * t[k]:10.2f}" if k in t else f"{'-':>10s}"

    def ratio(k):
        return f"{t['tenferro'] / t[k]:9.2f}" if k in t and "tenferro" in t else f"{'-':>9s}"

    times = f"{ms('tenferro')} {ms('torch')} {ms('jax')}"
    return f"{label:28s} {times} {ratio('torch')} {ratio('jax')[2:]}"


if __name__ == "__main__":
    main()
