"""Two-site DMRG, open Heisenberg chain (S=1/2): U(1)-symmetric tenferro
(``tenferro.symmetric.dmrg``, sector S_z = 0) against dense tenferro (``tenferro.tn.dmrg``) and
quimb's DMRG2, same schedule (8, 16, 32, 64, 128 capped at D), same SVD cutoff (1e-10), each
run in its own process, alternating, BLAS pinned to one thread and one core; median wall time
of ``--repeat`` runs.

Target ([symmetric]): the U(1) energy equals the dense one to 1e-9, in at least 3x less time
than dense tenferro and than quimb.
Run: python benchmarks/symmetric.py [--L 64] [--D 128] [--repeat 3]
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
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
os.environ.setdefault("TENFERRO_PROGRESS", "0")
# this checkout's tenferro, also in the worker processes
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCHEDULE = [8, 16, 32, 64, 128]
CUTOFF = 1e-10
LIBS = ("quimb", "dense", "u1")


def _schedule(D):
    return sorted({min(d, D) for d in SCHEDULE})


def run_dense(L, D):
    import tenferro as tf
    import tenferro.tn  # noqa: F401
    from tenferro.tn import mpo

    H = mpo.heisenberg_mpo(L)
    t0, c0 = time.perf_counter(), time.process_time()
    r = tf.tn.dmrg(H, D, schedule=_schedule(D), cutoff=CUTOFF, tol=1e-10, progress=False)
    return {"time": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "energy": r.energy, "sweeps": r.sweeps}


def run_u1(L, D):
    import tenferro.symmetric as S
    import tenferro.tn  # noqa: F401
    from tenferro.tn import mpo

    H = S.mpo_from_dense(mpo.heisenberg_mpo(L), [1, -1])  # 2 S_z of (up, down)
    t0, c0 = time.perf_counter(), time.process_time()
    r = S.dmrg(H, D, schedule=_schedule(D), cutoff=CUTOFF, tol=1e-10, progress=False)
    return {"time": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "energy": r.energy, "sweeps": r.sweeps}


def run_quimb(L, D):
    import quimb.tensor as qtn

    H = qtn.MPO_ham_heis(L, cyclic=False)
    t0, c0 = time.perf_counter(), time.process_time()
    d = qtn.DMRG2(H, bond_dims=_schedule(D), cutoffs=CUTOFF)
    d.solve(tol=1e-9, verbosity=0, max_sweeps=20)
    return {"time": time.perf_counter() - t0, "cpu": time.process_time() - c0,
            "energy": float(d.energy), "sweeps": len(d.energies)}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--L", type=int, default=64)
    p.add_argument("--D", type=int, default=128)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--libs", default=",".join(LIBS))
    p.add_argument("--worker", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        fn = {"dense": run_dense, "u1": run_u1, "quimb": run_quimb}[args.worker]
        print(json.dumps(fn(args.L, args.D)))
        return 0
    libs = args.libs.split(",")
    res = alternate_workers(__file__, libs, args.repeat, ("--L", args.L, "--D", args.D))
    print(f"DMRG2, Heisenberg L={args.L}, D={args.D}, schedule {_schedule(args.D)}, "
          f"cutoff {CUTOFF}, {args.repeat} runs each")
    print("wall: elapsed time; cpu: this process's CPU time (on a loaded machine the fairer "
          "measure)")
    print(f"{'library':16} {'median wall':>12} {'median cpu':>11} {'all walls':>20} "
          f"{'energy':>20} {'sweeps':>7}")
    names = {"dense": "tenferro dense", "u1": "tenferro U(1)", "quimb": "quimb DMRG2"}
    med, cpu = {}, {}
    for lib, rows in res.items():
        if not rows:
            continue
        med[lib] = statistics.median(r["time"] for r in rows)
        cpu[lib] = statistics.median(r["cpu"] for r in rows)
        times = " ".join(f"{r['time']:.1f}" for r in rows)
        print(f"{names[lib]:16} {med[lib]:11.2f}s {cpu[lib]:10.2f}s {times:>20} "
              f"{rows[-1]['energy']:20.12f} {rows[-1]['sweeps']:7d}")
    if "u1" in med:
        for other in ("dense", "quimb"):
            if other in med:
                de = abs(res["u1"][-1]["energy"] - res[other][-1]["energy"])
                print(f"{names[other]} / U(1): wall {med[other] / med['u1']:.2f}x, cpu "
                      f"{cpu[other] / cpu['u1']:.2f}x; |E_U(1) - E_{other}| = {de:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
