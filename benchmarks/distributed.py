"""Sliced contraction on Dask workers: a network whose unsliced largest intermediate exceeds a
256 MB budget, contracted within that budget on 1 and 2 worker processes.

Network (``--D`` = bond dimension, default 90): four rank-3 tensors, every pair sharing one
bond (a tetrahedron: A[a,b,x] B[x,c,d] C[a,c,y] E[b,d,y] -> scalar, float64). Every path has
a D^4 intermediate (D=90: 65.6M elements, 525 MB) while the operands are D^3 (5.8 MB each).

Rows:

* local, unsliced: ``tenferro.einsum`` without a budget (the reference value and gradient);
* local, sliced: the plan of ``contract_path(..., max_memory="256MB")``, slices one after
  the other in this process;
* dask, 1 and 2 workers: ``einsum(..., plan=plan, executor=client)`` and
  ``tenferro.distributed.value_and_grad`` (value + gradient of all four tensors);
* cotengra's own slicing (``HyperOptimizer(slicing_opts={"target_size": budget})``),
  ``tree.contract`` in this process, and its slices submitted to the 2-worker cluster one task
  per slice (``client.submit(tree.contract_slice, arrays, i)``, summed here), as cotengra's
  documentation suggests.

Times are medians of ``--repeat`` runs after one warm-up. Peak memory is what NumPy allocated
at most during one run (``tracemalloc`` peak, operands included; in each worker process for
the Dask rows). BLAS uses one thread per process; the workers get one thread each.

Run: ``python benchmarks/distributed.py [--D 90] [--repeat 3] [--no-cotengra]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import sys  # noqa: E402

# this file is named like Dask's package: keep its folder off the import path
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
os.environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")  # workers

import tenferro as tf  # noqa: E402
import tenferro.distributed as td  # noqa: E402

EQ = "abx,xcd,acy,bdy->"
BUDGET = "256MB"
MB = 1e6


def operands(D, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((D, D, D)) / D for _ in range(4)]


def timed(fn, repeat):
    fn()  # warm-up (plans, worker imports, templates)
    samples, peaks = [], []
    for _ in range(repeat):
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
        peaks.append(tracemalloc.get_traced_memory()[1])
    return statistics.median(samples), max(peaks), out


def _worker_trace_start():
    import tracemalloc as tm

    if not tm.is_tracing():
        tm.start()
    tm.reset_peak()


def _worker_peak():
    import tracemalloc as tm

    return tm.get_traced_memory()[1]


def timed_on(client, fn, repeat):
    """Median time of ``fn()``, and the largest per-worker tracemalloc peak of one run."""
    fn()
    client.run(_worker_trace_start)
    samples, peaks = [], []
    for _ in range(repeat):
        client.run(_worker_trace_start)  # resets the peak
        t0 = time.perf_counter()
        out = fn()
        samples.append(time.perf_counter() - t0)
        peaks.append(max(client.run(_worker_peak).values()))
    return statistics.median(samples), max(peaks), out


def start_cluster(n):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=50, memory_limit=0)
    return cluster, Client(cluster)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--D", type=int, default=90)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-cotengra", action="store_true")
    args = ap.parse_args()
    D, repeat = args.D, args.repeat
    ops = operands(D)
    tensors = [tf.tensor(o) for o in ops]
    print(f"network: {EQ}, D={D}, float64; operands {ops[0].nbytes / MB:.1f} MB each; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    full = tf.contract_path(EQ, *ops)
    plan = tf.contract_path(EQ, *ops, max_memory=BUDGET)
    print(f"unsliced: largest intermediate {full.largest_intermediate * 8 / MB:.0f} MB, "
          f"{full.flops:.3g} FLOPs ({full.planner})")
    print(f"budget {BUDGET}: {plan.n_slices} slices over {plan.sliced}, largest intermediate "
          f"{plan.largest_intermediate * 8 / MB:.1f} MB, peak model "
          f"{plan.peak_memory * 8 / MB:.1f} MB, {plan.flops:.3g} FLOPs ({plan.planner})")
    if full.largest_intermediate * 8 <= 256 * 2**20:
        print("note: at this D the unsliced contraction fits the budget (use D >= 80)")

    def loss(ts, p):
        return tf.einsum(EQ, *ts, plan=p)

    rows = []
    tracemalloc.start()
    t, peak, ref = timed(lambda: tf.einsum(EQ, *tensors, plan=full).item(), repeat)
    rows.append(("local, unsliced", "value", t, peak, 0.0))
    tg, peakg, (_, ref_g) = timed(
        lambda: tf.value_and_grad(lambda ts: loss(ts, full))(tensors), repeat)
    rows.append(("local, unsliced", "value+grad", tg, peakg, 0.0))
    t, peak, v = timed(lambda: tf.einsum(EQ, *tensors, plan=plan).item(), repeat)
    rows.append(("local, sliced", "value", t, peak, abs(v - ref) / abs(ref)))
    tracemalloc.stop()

    def grad_err(g):
        return max(float(np.abs(a.numpy() - b.numpy()).max() / np.abs(b.numpy()).max())
                   for a, b in zip(g, ref_g))

    cluster2 = client2 = None
    for n in (1, 2):
        cluster, client = start_cluster(n)
        t, peak, v = timed_on(
            client, lambda c=client: tf.einsum(EQ, *ops, plan=plan, executor=c).item(), repeat)
        rows.append((f"dask, {n} worker(s)", "value", t, peak, abs(v - ref) / abs(ref)))
        t, peak, (v, g) = timed_on(
            client, lambda c=client: td.value_and_grad(lambda ts: loss(ts, plan), tensors, plan,
                                                       client=c, progress=False), repeat)
        rows.append((f"dask, {n} worker(s)", "value+grad", t, peak,
                     max(abs(v.item() - ref) / abs(ref), grad_err(g))))
        if n == 2:
            cluster2, client2 = cluster, client
        else:
            client.close()
            cluster.close()

    if not args.no_cotengra:
        try:
            import cotengra as ctg
        except ImportError:
            ctg = None
        if ctg is not None:
            inputs = [tuple(t) for t in EQ.split("->")[0].split(",")]
            size = dict.fromkeys("abcdxy", D)
            opt = ctg.HyperOptimizer(slicing_opts={"target_size": 256 * 2**20 // 8},
                                     max_repeats=16, parallel=False, progbar=False)
            tree = opt.search(inputs, (), size)
            print(f"cotengra: {tree.multiplicity} slices over {tuple(tree.sliced_inds)}, "
                  f"largest intermediate {tree.max_size() * 8 / MB:.1f} MB, "
                  f"{2 * tree.total_flops():.3g} FLOPs")
            tracemalloc.start()
            t, peak, v = timed(lambda: float(tree.contract(ops)), repeat)
            tracemalloc.stop()
            rows.append(("cotengra, local", "value", t, peak, abs(v - ref) / abs(ref)))
            shared = client2.scatter(ops, broadcast=True)

            def ctg_dask():
                futs = [client2.submit(tree.contract_slice, shared, i, pure=False)
                        for i in range(tree.multiplicity)]
                return float(sum(client2.gather(futs)))

            t, peak, v = timed_on(client2, ctg_dask, repeat)
            rows.append(("cotengra, dask 2 workers", "value", t, peak, abs(v - ref) / abs(ref)))
    client2.close()
    cluster2.close()

    base = {kind: t for name, kind, t, _, _ in rows if name == "local, unsliced"}
    print()
    print(f"{'run':<26} {'what':<11} {'time [s]':>9} {'vs unsliced':>11} "
          f"{'peak MB (per worker)':>21} {'rel. error':>10}")
    for name, kind, t, peak, err in rows:
        print(f"{name:<26} {kind:<11} {t:9.2f} {t / base[kind]:11.2f} {peak / MB:21.1f} "
              f"{err:10.1e}")


if __name__ == "__main__":
    main()
