"""Planning effort benchmark: what ``optimize="auto"`` spends and finds, against greedy and
cotengra, on networks from milliseconds to minutes of contraction, on an idle or loaded
machine.

For each network: opt_einsum's greedy path (the bar the default must clear), ``--repeats``
default plans (wall and CPU seconds, FLOPs and largest intermediate relative to greedy's),
plans with each ``--max-times`` budget (wall seconds against the promised bound 1.2 t + 0.2 s),
and cotengra's ``HyperOptimizer`` with its default 128 trials (``--ref``). ``--busy N`` runs N
busy-loop processes in the background meanwhile (a ``stress``-like load). BLAS is pinned to one
thread; the planning itself is single-threaded.

Run: ``python benchmarks/planning.py [--networks ising12,rrg60] [--busy 2] [--ref]``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import benchmarks._common  # noqa: E402,F401 - pins BLAS threads
import tenferro as tf  # noqa: E402
from tests.einsum.load import busy_loops  # noqa: E402
from tests.einsum.networks import ising_lattice, peps_norm, random_regular  # noqa: E402

NETWORKS = {
    "ising12": lambda: ising_lattice(12),
    "rrg60": lambda: random_regular(60),
    "peps4-D4": lambda: peps_norm(4, 4),
    "ising20": lambda: ising_lattice(20),
    "peps6-D4": lambda: peps_norm(6, 4),
}


def interleaved(shapes, labels):
    args = []
    for s, lab in zip(shapes, labels):
        args += [s, list(lab)]
    return args + [[]]


def plan(shapes, labels, **kw):
    tf.einsum.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = tf.contract_path(*interleaved(shapes, labels), shapes=True, **kw)
    return p, time.perf_counter() - t0, time.process_time() - c0


def cotengra_128(shapes, labels):
    import cotengra as ctg

    from benchmarks.paths import symbolic

    inputs, size = symbolic(shapes, labels)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = ctg.HyperOptimizer(max_repeats=128, parallel=False).search(inputs, "", size)
    dt = time.perf_counter() - t0
    p, _, _ = plan(shapes, labels, optimize=tree.get_path(), max_memory=2**62)
    return p, dt


def width(n):
    return f"2^{math.log2(max(n, 1)):.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default="ising12,rrg60,peps4-D4,ising20")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-times", default="0.3,1,3")
    ap.add_argument("--busy", type=int, default=0, help="background busy-loop processes")
    ap.add_argument("--ref", action="store_true", help="also cotengra's 128 trials")
    args = ap.parse_args()
    budgets = [float(t) for t in args.max_times.split(",") if t]
    print(f"| network | planner | planning wall [s] | CPU [s] | FLOPs | vs greedy (FLOPs, "
          f"largest) | largest | note |   (busy loops: {args.busy})")
    print("|---|---|---|---|---|---|---|---|")
    worst = {}
    for key in args.networks.split(","):
        shapes, labels = NETWORKS[key]()
        g, tg, cg = plan(shapes, labels, optimize="greedy")

        def row(what, p, wall, cpu, note="", g=g, key=key):
            rf, rw = p.flops / g.flops, p.largest_intermediate / g.largest_intermediate
            worst[key] = max(worst.get(key, 0), rf)
            print(f"| {key} | {what} | {wall:.3f} | {cpu:.3f} | {p.flops:.3g} | {rf:.3g}, "
                  f"{rw:.3g} | {width(p.largest_intermediate)} | {note} |", flush=True)

        row("opt_einsum greedy", g, tg, cg)
        with busy_loops(args.busy):
            for r in range(args.repeats):
                p, wall, cpu = plan(shapes, labels)
                row(f"default #{r + 1}", p, wall, cpu, p.planner)
            for t in budgets:
                p, wall, cpu = plan(shapes, labels, max_time=t)
                bound = 1.2 * t + 0.2
                row(f"max_time={t:g}", p, wall, cpu,
                    f"bound {bound:.2f} s: {'met' if wall <= bound else 'MISSED'}")
        if args.ref:
            p, dt = cotengra_128(shapes, labels)
            row("cotengra 128 trials", p, dt, dt)
    print("\nworst FLOPs / greedy's:", ", ".join(f"{k} {v:.3g}" for k, v in worst.items()))


if __name__ == "__main__":
    main()
