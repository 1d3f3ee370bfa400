"""Small tensor networks for the planner and slicing tests (interleaved einsum arguments)."""

from __future__ import annotations

import random

import numpy as np


def peps_norm(L, D, d=2):
    """``(shapes, label lists)`` of <psi|psi> on an LxL open-boundary PEPS (ket and bra
    layers sharing the physical index of each site)."""
    shapes, labels = [], []
    for layer in ("ket", "bra"):
        for i in range(L):
            for j in range(L):
                labs = [("p", i, j)]
                if j > 0:
                    labs.append((layer, "h", i, j - 1))
                if i > 0:
                    labs.append((layer, "v", i - 1, j))
                if j < L - 1:
                    labs.append((layer, "h", i, j))
                if i < L - 1:
                    labs.append((layer, "v", i, j))
                shapes.append((d,) + (D,) * (len(labs) - 1))
                labels.append(labs)
    return shapes, labels


def ising_lattice(L, bond=2):
    """``(shapes, label lists)`` of the partition function of an LxL open Ising lattice: one
    tensor per site with one bond per neighbour (corners 2, edges 3, bulk 4)."""
    shapes, labels = [], []
    for i in range(L):
        for j in range(L):
            labs = []
            if j > 0:
                labs.append(("h", i, j - 1))
            if i > 0:
                labs.append(("v", i - 1, j))
            if j < L - 1:
                labs.append(("h", i, j))
            if i < L - 1:
                labs.append(("v", i, j))
            shapes.append((bond,) * len(labs))
            labels.append(labs)
    return shapes, labels


def random_regular(n, degree=3, bond=2, seed=0):
    """One tensor per vertex of a random ``degree``-regular graph, one index per edge."""
    rng = random.Random(seed)
    while True:
        stubs = [v for v in range(n) for _ in range(degree)]
        rng.shuffle(stubs)
        edges = set()
        for a, b in zip(stubs[::2], stubs[1::2]):
            e = (min(a, b), max(a, b))
            if a == b or e in edges:
                break
            edges.add(e)
        else:
            break
    legs = {v: [] for v in range(n)}
    for e in sorted(edges):
        legs[e[0]].append(e)
        legs[e[1]].append(e)
    return [(bond,) * degree for _ in range(n)], [legs[v] for v in range(n)]


def interleaved(operands, labels, out=()):
    args = []
    for x, lab in zip(operands, labels, strict=True):
        args += [x, list(lab)]
    return args + [list(out)]


def arrays_for(shapes, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    out = []
    for s in shapes:
        a = rng.standard_normal(s)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(s)
        out.append(np.asarray(a / np.sqrt(np.prod(s)) ** 0.5, dtype=dtype))
    return out
