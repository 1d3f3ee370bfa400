"""quimb's TNOptimizer with each autodiff backend, side by side in one run.

The task quimb users run: the ground state of the 10-site Heisenberg chain as an MPS (D = 8)
by 60 L-BFGS steps of <psi|H|psi>/<psi|psi> (MPO, real float64). For each backend: the whole
optimisation end to end (the number users wait for; the first run, which pays for tracing and
compilation, is reported apart) and one warm value-and-gradient evaluation (median).
Backends: tenferro with and without ``jit`` (``tenferro.interop.quimb.register()``), PyTorch,
JAX (x64) when installed. Threads are pinned to one core (benchmarks/_common.py).

    python benchmarks/quimb_optimizer.py [--steps 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import median_time, pin_torch, try_import

import tenferro as tf


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import quimb.tensor as qtn

    tf.interop.quimb.register()
    torch = pin_torch()
    if torch is not None:
        torch.set_default_dtype(torch.float64)
    jax = try_import("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    H = qtn.MPO_ham_heis(10)
    psi0 = qtn.MPS_rand_state(10, 8, seed=0, dtype="float64")

    def norm_fn(psi):
        return psi / (psi.H @ psi) ** 0.5

    def loss_fn(psi, H):
        return qtn.expec_TN_1D(psi.H, H, psi)

    def make(backend, **opts):
        return qtn.TNOptimizer(psi0, loss_fn=loss_fn, norm_fn=norm_fn,
                               loss_constants={"H": H}, autodiff_backend=backend,
                               optimizer="L-BFGS-B", progbar=False, **opts)

    runs = [("tenferro + jit", "tenferro", {}), ("tenferro eager", "tenferro",
                                                 {"jit_fn": False})]
    if torch is not None:
        runs.append(("torch", "torch", {"device": "cpu"}))
    if jax is not None:
        runs.append(("jax (jit)", "jax", {}))
    rows = []
    for label, backend, opts in runs:
        totals, loss = [], None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            opt = make(backend, **opts)
            opt.optimize(args.steps)
            totals.append(time.perf_counter() - t0)
            loss = opt.loss
        x = opt.vectorizer.vector.copy()
        warm = median_time(lambda: opt.vectorized_value_and_grad(x), repeat=21)
        rows.append((label, totals[0], statistics.median(totals[1:] or totals), warm, loss))
    base_first, base_total, base_warm = rows[0][1:4]
    print(f"quimb TNOptimizer: 10-site Heisenberg MPS, D=8, {args.steps} L-BFGS steps "
          f"(median of {args.repeat})")
    print("first run: compilation included (a fresh process); again: the same optimisation "
          "once more (compiled code cached)")
    print(f"{'backend':16s} {'first run s':>11s} {'ratio':>6s} {'again s':>8s} {'ratio':>6s} "
          f"{'warm eval ms':>12s} {'ratio':>6s}  final loss")
    for label, first, total, warm, loss in rows:
        print(f"{label:16s} {first:11.3f} {first / base_first:6.2f} {total:8.3f} "
              f"{total / base_total:6.2f} {warm * 1e3:12.3f} {warm / base_warm:6.2f}  "
              f"{loss:.10f}")


if __name__ == "__main__":
    main()
