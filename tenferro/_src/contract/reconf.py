"""Subtree reconfiguration: re-contract small subtrees of a contraction tree optimally.

A path is a binary tree; any node together with a frontier of a few descendants is itself a
small einsum (the frontier tensors' labels in, the node's labels out). Solving that small
problem exactly (opt_einsum's ``optimal``) and splicing the result back in can only lower the
cost, and repeating it over the most expensive nodes repairs most of what a greedy search
gets wrong. cotengra does this (and more) when it is installed; this is the fallback, applied
to the random-greedy result of ``search.auto_search`` when cotengra is not.
"""

from __future__ import annotations

from collections.abc import Callable

import opt_einsum as oe

from .costs import replay


def _step_flops(union, keep, size) -> int:
    n = 1
    for lab in union:
        n *= size[lab]
    return n * (2 if len(union) > len(keep) else 1)


def reconfigure(prob, path, stop: Callable[[], bool], subtree_size: int = 6):
    """A path at most as expensive as ``path`` (FLOPs), improved subtree by subtree until
    ``stop()`` says so or no subtree improves."""
    size = prob.size_dict
    n = prob.n
    records, root, sets = replay(prob.op, [set(t) for t in prob.terms], set(prob.output), path)
    kids = {c: (a, b) for a, b, c, _ in records}
    keep = {i: frozenset(s) for i, s in enumerate(sets)}
    next_id = len(sets)

    def flops(v):
        a, b = kids[v]
        return _step_flops(keep[a] | keep[b], keep[v], size)

    improved = True
    while improved and not stop():
        improved = False
        for v in sorted(kids, key=flops, reverse=True):
            if v not in kids:
                continue  # replaced in this sweep
            if stop():
                break
            # grow a frontier below v, always opening its most expensive internal node
            frontier, inner = list(kids[v]), [v]
            while len(frontier) < subtree_size:
                internal = [f for f in frontier if f in kids]
                if not internal:
                    break
                f = max(internal, key=flops)
                frontier.remove(f)
                frontier.extend(kids[f])
                inner.append(f)
            if len(frontier) < 3:
                continue
            old = sum(flops(u) for u in inner)
            ins = [set(keep[f]) for f in frontier]
            sub = oe.paths.optimal(ins, set(keep[v]), size)
            sub_records, _, sub_sets = replay(prob.op, ins, set(keep[v]), sub)
            new = sum(_step_flops(sub_sets[a] | sub_sets[b], k, size)
                      for a, b, _, k in sub_records)
            if new >= old:
                continue
            for u in inner:
                del kids[u]
            ids = {i: f for i, f in enumerate(frontier)}
            for j, (a, b, c, k) in enumerate(sub_records):
                if j == len(sub_records) - 1:
                    ids[c] = v
                else:
                    ids[c] = next_id
                    next_id += 1
                    keep[ids[c]] = frozenset(k)
                kids[ids[c]] = (ids[a], ids[b])
            improved = True
    return _to_path(kids, root, n)


def _to_path(kids, root, n):
    """The tree as an opt_einsum (linear) path."""
    order, stack, seen = [], [root], set()
    while stack:  # post-order without recursion (trees of hundreds of nodes)
        v = stack[-1]
        if v in kids and v not in seen:
            seen.add(v)
            stack.extend(kids[v])
            continue
        stack.pop()
        if v in kids:
            order.append(v)
    ssa_id = {i: i for i in range(n)}
    ssa = []
    for k, v in enumerate(order):
        a, b = kids[v]
        ssa.append((ssa_id[a], ssa_id[b]))
        ssa_id[v] = n + k
    return [tuple(s) for s in oe.paths.ssa_to_linear(ssa)]
