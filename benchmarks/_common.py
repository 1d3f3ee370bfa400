"""Shared helpers for the benchmark scripts: thread pinning, timing, tables."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def pin_torch():
    try:
        import torch

        torch.set_num_threads(1)
        return torch
    except ImportError:
        return None


def try_import(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def median_time(fn, repeat=7, number=1, warmup=1):
    """Median wall time of ``fn()`` in seconds (``number`` calls per sample)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def interleaved_medians(fns, repeat):
    """Median time of each function of the dict ``fns``, the functions interleaved within
    every repetition so that background load (the sandbox is shared) affects all alike."""
    ts = {k: [] for k in fns}
    for _ in range(repeat):
        for k, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            ts[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in ts.items()}


def table(rows, headers):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(str(h).ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


def alternate_workers(script: str, libs, repeat: int, worker_args) -> dict:
    """Run ``script *worker_args --worker LIB`` for each library in turn, ``repeat`` rounds
    (alternating, so background load hits all alike); each worker prints one JSON line last.
    Returns ``{lib: [results]}``; a failed worker is reported and skipped."""
    res = {lib: [] for lib in libs}
    for _ in range(repeat):
        for lib in libs:
            cmd = [sys.executable, script, *map(str, worker_args), "--worker", lib]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                print(f"{lib} failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
                continue
            res[lib].append(json.loads(r.stdout.strip().splitlines()[-1]))
    return res
