"""Two-site DMRG, Heisenberg chain L=64 (open, S=1/2), bond dimension 64: tenferro.tn.dmrg
against quimb's DMRG2, same schedule (8, 16, 32, 64), same SVD cutoff (1e-10), each in its own
process, alternating, BLAS pinned to one thread; median wall time of ``--repeat`` runs.

Target ([krylov]): tenferro reaches quimb's energy to 1e-8 in no more time.
Run: python benchmarks/dmrg.py [--L 64] [--D 64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from _common import alternate_workers

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
if hasattr(os, "sched_setaffinity"):  # one core for both libraries: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

SCHEDULE = [8, 16, 32, 64]
E_REF_L64 = -28.17542480  # quimb's DMRG2 energy at L=64, D=64 (the accuracy target)
CUTOFF = 1e-10


def run_tenferro(L, D):
    import tenferro as tf
    from tenferro.tn import mpo

    H = mpo.heisenberg_mpo(L)
    t0 = time.perf_counter()
    r = tf.tn.dmrg(H, D, schedule=[min(d, D) for d in SCHEDULE], cutoff=CUTOFF, tol=1e-10,
                   progress=False)
    return {"time": time.perf_counter() - t0, "energy": r.energy, "sweeps": r.sweeps}


def run_quimb(L, D):
    import quimb.tensor as qtn

    H = qtn.MPO_ham_heis(L, cyclic=False)
    t0 = time.perf_counter()
    d = qtn.DMRG2(H, bond_dims=[min(x, D) for x in SCHEDULE], cutoffs=CUTOFF)
    d.solve(tol=1e-9, verbosity=0, max_sweeps=20)
    return {"time": time.perf_counter() - t0, "energy": float(d.energy),
            "sweeps": len(d.energies)}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--L", type=int, default=64)
    p.add_argument("--D", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        fn = run_tenferro if args.worker == "tenferro" else run_quimb
        print(json.dumps(fn(args.L, args.D)))
        return 0
    res = alternate_workers(__file__, ("quimb", "tenferro"), args.repeat,
                            ("--L", args.L, "--D", args.D))
    print(f"DMRG2, Heisenberg L={args.L}, D={args.D}, schedule {SCHEDULE}, cutoff {CUTOFF}")
    print(f"{'library':10} {'median time':>12} {'all times':>24} {'energy':>18} {'sweeps':>7}")
    med = {}
    for lib, rows in res.items():
        if not rows:
            continue
        med[lib] = statistics.median(r["time"] for r in rows)
        times = " ".join(f"{r['time']:.1f}" for r in rows)
        print(f"{lib:10} {med[lib]:11.2f}s {times:>24} {rows[-1]['energy']:18.10f} "
              f"{rows[-1]['sweeps']:7d}")
    if len(med) == 2:
        de = abs(res["tenferro"][-1]["energy"] - res["quimb"][-1]["energy"])
        print(f"tenferro / quimb time: {med['tenferro'] / med['quimb']:.2f}x; "
              f"|E_tenferro - E_quimb| = {de:.1e}")
    if args.L == 64 and "tenferro" in med:
        de = abs(res["tenferro"][-1]["energy"] - E_REF_L64)
        print(f"|E_tenferro - ({E_REF_L64})| = {de:.1e} (target 1e-8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
