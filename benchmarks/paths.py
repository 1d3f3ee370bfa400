"""Contraction-path benchmark: tenferro's default planner on large networks.

Networks (all contracted to a scalar, float64):

* ``peps6-D4``: <psi|psi> for a 6x6 open-boundary PEPS, bond dimension 4, physical 2
  (72 tensors, 156 indices);
* ``peps8-D3``: the same for 8x8, bond dimension 3 (128 tensors, 288 indices);
* ``rrg60``: a random 3-regular graph of 60 tensors with bond dimension 2 (90 indices).

For each: FLOPs (a multiply-add counts 2) and the largest intermediate of the paths found by
``tenferro.contract_path`` with default settings, by opt_einsum's greedy and by cotengra's
``HyperOptimizer`` with its default 128 trials (the reference), with planning times; then the
contraction itself run once through ``tenferro.einsum`` on the default plan, and, for the 6x6
PEPS, the same contraction through quimb (its default optimizer) in the same process. Big
contractions run once, one after the other (memory). BLAS is pinned to one thread.

Run: ``python benchmarks/paths.py [--networks peps6-D4,rrg60] [--no-contract] [--no-ref]``.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import opt_einsum as oe  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tenferro as tf  # noqa: E402
from tests.einsum.networks import peps_norm, random_regular  # noqa: E402

# ------------------------------------------------------------------------- networks


NETWORKS = {
    "peps6-D4": lambda: peps_norm(6, 4),
    "peps8-D3": lambda: peps_norm(8, 3),
    "rrg60": lambda: random_regular(60),
}


def interleaved(shapes, labels, arrays=None):
    args = []
    for k, (s, lab) in enumerate(zip(shapes, labels)):
        args += [s if arrays is None else arrays[k], list(lab)]
    return args + [[]]


def random_tensors(shapes, seed=0):
    """Entries scaled so the norm stays within floating-point range."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) / math.sqrt(np.prod(s[1:]) ** 0.5) for s in shapes]


# ------------------------------------------------------------------------- planners


def plan_default(shapes, labels):
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = tf.contract_path(*interleaved(shapes, labels), shapes=True)
    dt = time.perf_counter() - t0
    return plan, dt, [str(w.message) for w in caught]


def cost_of(shapes, labels, path):
    """FLOPs and largest intermediate of ``path`` as tenferro reports them (unsliced: a
    limit no plan reaches keeps the memory guard out)."""
    plan = tf.contract_path(*interleaved(shapes, labels), shapes=True, optimize=list(path),
                            max_memory=2**62)
    return plan.flops, plan.largest_intermediate


def plan_greedy(shapes, labels):
    t0 = time.perf_counter()
    plan = tf.contract_path(*interleaved(shapes, labels), shapes=True, optimize="greedy",
                            max_memory=2**62)
    return plan.flops, plan.largest_intermediate, time.perf_counter() - t0


def symbolic(shapes, labels):
    """cotengra's input format: index-name lists and a size dict."""
    names = {}
    inputs = [[names.setdefault(lab, oe.get_symbol(len(names))) for lab in labs]
              for labs in labels]
    size = {}
    for term, s in zip(inputs, shapes):
        size.update(zip(term, s))
    return inputs, size


def plan_cotengra_128(shapes, labels):
    import cotengra as ctg

    inputs, size = symbolic(shapes, labels)
    t0 = time.perf_counter()
    opt = ctg.HyperOptimizer(max_repeats=128, parallel=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = opt.search(inputs, "", size)
    dt = time.perf_counter() - t0
    flops, largest = cost_of(shapes, labels, tree.get_path())
    return flops, largest, dt


# ------------------------------------------------------------------------- contraction


def contract_tenferro(shapes, labels, arrays, plan):
    gc.collect()
    ts = [tf.tensor(a) for a in arrays]
    t0 = time.perf_counter()
    out = tf.einsum(*interleaved(shapes, labels, ts), plan=plan)
    dt = time.perf_counter() - t0
    return out.item(), dt


def available_memory() -> int:
    """MemAvailable from /proc/meminfo, in bytes (0 where unknown)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def contract_quimb(shapes, labels, arrays, plan):
    """The same network through quimb: with its default optimizer (planned, and run if its
    path fits in memory), with cotengra's 'auto-hq' preset, and on tenferro's path (execution
    only). Returns rows ``(what, flops, largest, planning s, contraction s or None, value)``."""
    import cotengra as ctg
    import quimb.tensor as qtn

    inputs, size = symbolic(shapes, labels)
    tn = qtn.TensorNetwork([qtn.Tensor(a, inds=inds) for a, inds in zip(arrays, inputs)])
    rows = []
    for what, optimize in (("quimb default", None), ("quimb 'auto-hq'", "auto-hq"),
                           ("quimb on tenferro's path", "tenferro")):
        gc.collect()
        t0 = time.perf_counter()
        if optimize == "tenferro":
            tree = ctg.ContractionTree.from_path(inputs, "", size, path=plan.path)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = tn.contraction_tree(output_inds=(), optimize=optimize)
        t_plan = time.perf_counter() - t0 if optimize != "tenferro" else 0.0
        flops, largest = cost_of(shapes, labels, tree.get_path())
        need = 4 * largest * 8  # a few intermediates at once
        if need > 0.7 * available_memory():
            print(f"{what}: largest intermediate {fmt_width(largest)} needs ~"
                  f"{need / 2**30:.0f} GiB, more than this machine has free: not run", flush=True)
            rows.append((what, flops, largest, t_plan, None, None))
            continue
        # on the same path, alternate with tenferro and keep each one's best of two (the
        # machine is shared: load changes over minutes)
        reps = 2 if optimize == "tenferro" else 1
        t_run = t_tf = float("inf")
        for _ in range(reps):
            gc.collect()
            t0 = time.perf_counter()
            value = float(np.real(tn.contract(all, output_inds=(), optimize=tree)))
            t_run = min(t_run, time.perf_counter() - t0)
            if optimize == "tenferro":
                t_tf = min(t_tf, contract_tenferro(shapes, labels, arrays, plan)[1])
        print(f"{what}: planning {t_plan:.2f} s, contraction {t_run:.2f} s (flops {flops:.3e}, "
              f"largest {fmt_width(largest)}, value {value:.6e})", flush=True)
        if optimize == "tenferro":
            print(f"  alternating with tenferro on the same path: tenferro {t_tf:.2f} s, quimb "
                  f"{t_run:.2f} s, ratio {t_tf / t_run:.2f}", flush=True)
        rows.append((what, flops, largest, t_plan, t_run, value))
    return rows


# ------------------------------------------------------------------------- main


def fmt_width(n):
    return f"2^{math.log2(n):.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--networks", default=",".join(NETWORKS))
    ap.add_argument("--no-contract", action="store_true", help="plan only")
    ap.add_argument("--no-ref", action="store_true", help="skip cotengra's 128-trial reference")
    ap.add_argument("--quimb", default="peps6-D4", help="networks also run through quimb")
    ap.add_argument("--repeats", type=int, default=1,
                    help="plan this many times with the default (the search is randomised)")
    ap.add_argument("--no-cotengra", action="store_true",
                    help="also plan as if cotengra were not installed")
    args = ap.parse_args()
    rows = []
    for key in args.networks.split(","):
        shapes, labels = NETWORKS[key]()
        tf.einsum.cache_clear()
        plan, t_default, warns = plan_default(shapes, labels)
        print(f"\n=== {key}: {len(shapes)} tensors, "
              f"{len({x for lab in labels for x in lab})} indices", flush=True)
        print("\n".join(str(plan).split("\n")[:11]))  # the summary, not the step table
        for w in warns:
            print("warning:", w)
        g_flops, g_width, t_greedy = plan_greedy(shapes, labels)
        row = {"network": key, "default": (plan.flops, plan.largest_intermediate, t_default),
               "greedy": (g_flops, g_width, t_greedy), "planner": plan.planner}
        for r in range(1, args.repeats):
            tf.einsum.cache_clear()
            again, t_again, _ = plan_default(shapes, labels)
            row[f"default#{r + 1}"] = (again.flops, again.largest_intermediate, t_again)
        if args.no_cotengra:
            from tenferro._src.contract import search

            saved, search._COTENGRA[:] = list(search._COTENGRA), [False]
            try:
                tf.einsum.cache_clear()
                fb, t_fb, _ = plan_default(shapes, labels)
            finally:
                search._COTENGRA[:] = saved
            row["fallback"] = (fb.flops, fb.largest_intermediate, t_fb)
            tf.einsum.cache_clear()
        if not args.no_ref:
            row["ref"] = plan_cotengra_128(shapes, labels)
            f, w, t = row["ref"]
            print(f"cotengra 128 trials: flops {f:.3e}, largest {fmt_width(w)}, {t:.1f} s "
                  f"-> default/ref flops {plan.flops / f:.2f}, "
                  f"width {plan.largest_intermediate / w:.2f}", flush=True)
        if not args.no_contract:
            arrays = random_tensors(shapes)
            free = available_memory()
            if plan.peak_memory * 8 * 1.3 > 0.7 * free:  # float64 would not fit: float32
                arrays = [a.astype(np.float32) for a in arrays]
                print(f"float64 needs ~{plan.peak_memory * 8 / 2**30:.1f} GiB, "
                      f"{free / 2**30:.1f} GiB free: contracting in float32", flush=True)
            if plan.peak_memory * arrays[0].itemsize * 1.3 > 0.7 * free:
                print("not run: does not fit in the free memory", flush=True)
                rows.append(row)
                continue
            value, t_run = contract_tenferro(shapes, labels, arrays, plan)
            row["run"] = t_run
            row["dtype"] = arrays[0].dtype.name
            print(f"tenferro contraction ({row['dtype']}): {t_run:.3g} s (value {value:.6e}, "
                  f"predicted {plan.predicted_time:.2f} s)", flush=True)
            if key in args.quimb.split(","):
                try:
                    row["quimb"] = contract_quimb(shapes, labels, arrays, plan)
                except ImportError:
                    print("quimb not installed: skipped")
                else:
                    for what, *_, t_q, v_q in row["quimb"]:
                        if v_q is not None:
                            assert abs(v_q - value) <= 1e-8 * abs(value), (what, v_q, value)
                            print(f"tenferro / {what} contraction time: {t_run / t_q:.2f}")
            del arrays
            gc.collect()
        rows.append(row)

    print("\n| network | planner | FLOPs | largest | planning [s] | vs cotengra-128 "
          "(FLOPs, largest) | contraction [s] |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        names = ["default"] + [k for k in r if k.startswith("default#")]
        for name in names + ["fallback", "greedy", "ref"]:
            if name not in r:
                continue
            f, w, t = r[name]
            label = {"default": "tenferro default", "greedy": "opt_einsum greedy",
                     "ref": "cotengra 128 trials",
                     "fallback": "tenferro default without cotengra"}.get(
                         name, f"tenferro default, run {name[8:]}")
            vs = "-"
            if "ref" in r:
                vs = f"{f / r['ref'][0]:.2f}, {w / r['ref'][1]:.2f}"
            run = (f"{r['run']:.3g} ({r['dtype']})" if name == "default" and "run" in r
                   else "-")
            print(f"| {r['network']} | {label} | {f:.2e} | {fmt_width(w)} | {t:.2f} | {vs} "
                  f"| {run} |")
        for what, f, w, t_plan, t_run, _ in r.get("quimb", ()):
            vs = f"{f / r['ref'][0]:.2f}, {w / r['ref'][1]:.2f}" if "ref" in r else "-"
            run = "not run (memory)" if t_run is None else (
                f"{t_run:.2f} (tenferro/quimb {r['run'] / t_run:.2f})")
            print(f"| {r['network']} | {what} | {f:.2e} | {fmt_width(w)} | {t_plan:.2f} | {vs} "
                  f"| {run} |")


if __name__ == "__main__":
    main()
