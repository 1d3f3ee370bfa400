"""``einsum`` and ``contract_path``: parse, look the plan up in the cache (or build it), run it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import opt_einsum as oe

from ..core.dispatch import state
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops._base import as_dim
from .execute import as_tensors, promote, run
from .parse import parse_string, split_interleaved
from .plan import CACHE, CacheInfo, PathInfo, Plan, build_plan, normalize_optimize

Optimize = str | bool | None | Sequence[Sequence[int]] | oe.paths.PathOptimizer
"""What ``optimize=`` accepts: an optimizer name, True/None ("auto"), False (left to right),
an explicit path, or an opt_einsum ``PathOptimizer``."""


def _describe_interleaved(terms, out) -> str:
    body = ", ".join(repr(list(t)).replace("Ellipsis", "...") for t in terms)
    if out is None:
        return f"sublists {body}"
    return f"sublists {body} -> {repr(list(out)).replace('Ellipsis', '...')}"


def _interleaved_key(op, args):
    """Operands and a hashable cache key of the interleaved form, cheaply: the sublists are
    validated in detail (``split_interleaved``) only when a plan has to be built."""
    n = len(args)
    subs = args[1 : n - (n % 2) : 2]
    out = args[-1] if n % 2 else None
    if n >= 2 and all(type(sl) in (list, tuple) for sl in subs) and (
        out is None or type(out) in (list, tuple)
    ):
        key = (tuple(map(tuple, subs)), None if out is None else tuple(out))
        try:
            hash(key)
        except TypeError:
            pass
        else:
            return list(args[0 : n - (n % 2) : 2]), key
    operands, terms, out = split_interleaved(op, args)  # raises the precise error
    return operands, (tuple(terms), out)


def _may_differentiate(t) -> bool:
    """Whether the reverse pass may run through an op on ``t``: eager tensors that require
    grad (with grad mode on) and every tracer (transformations, traced graphs)."""
    if type(t) is EagerTensor:
        return t._node is not None and state.grad_enabled
    return isinstance(t, Tensor)


def get_plan(op: str, args, optimize, memory_limit, mode: str = "tensors"):
    """``(plan, operands)`` for an einsum call in either form. ``mode``: "tensors" (operands
    become tensors), "arrays" (only their shapes are read) or "shapes" (operands are shapes).
    The plan comes from the cache when possible."""
    if not args:
        raise ShapeError(f"{op}: needs subscripts and at least one operand.")
    if isinstance(args[0], str):
        subscripts = args[0]
        operands = args[1:]
        form_key = subscripts
    else:
        subscripts = None
        operands, form_key = _interleaved_key(op, args)
    if not operands:
        raise ShapeError(f"{op}: needs at least one operand after the subscripts.")
    if mode == "shapes":
        shapes = tuple(tuple(as_dim(d) for d in s) for s in operands)
    elif mode == "arrays":
        shapes = tuple(tuple(x.shape) if hasattr(x, "shape") else np.shape(x) for x in operands)
    else:
        operands = as_tensors(operands)
        shapes = tuple(t.shape for t in operands)
    grad = mode == "tensors" and any(_may_differentiate(t) for t in operands)
    kind, opt, opt_key = normalize_optimize(op, optimize)
    key = (form_key, shapes, opt_key, memory_limit, grad)
    plan = CACHE.get(key) if opt_key is not None else None
    if plan is None:
        if subscripts is not None:
            terms, out = parse_string(op, subscripts)
            text = repr(subscripts)
        else:
            _, terms, out = split_interleaved(op, args)
            text = _describe_interleaved(terms, out)
        plan = build_plan(op, terms, out, shapes, kind, opt, memory_limit, text, grad)
        if opt_key is not None:
            CACHE.put(key, plan)
    return plan, operands


def einsum(*args, optimize: Optimize = "auto", memory_limit: int | str | None = None) -> Tensor:
    """Einstein summation over any number of operands, differentiable in every mode.

    Forms::

        einsum("ij,jk->ik", a, b)              # explicit output
        einsum("ij,jk", a, b)                  # implicit: labels used once, sorted
        einsum("...ij,...jk->...ik", a, b)     # broadcast dimensions
        einsum("ii->i", a); einsum("ii", a)    # diagonal; trace
        einsum("ij,ik,il->jkl", a, b, c)       # hyper-edge i shared by three operands
        einsum(a, [0, 1], b, [1, 2], [0, 2])   # interleaved: any hashable labels, no limit

    ``optimize``: ``"auto"`` (default), ``"greedy"``, ``"optimal"``, ``"dp"``,
    ``"random-greedy"`` or any other opt_einsum optimizer name or ``PathOptimizer``; an explicit
    path in opt_einsum's format (e.g. ``[(1, 2), (0, 1)]``, as returned by ``contract_path``);
    or ``False`` (contract left to right, no planning). ``memory_limit`` caps the largest
    intermediate opt_einsum may plan (elements, or ``"max_input"``).

    Plans are cached by (subscripts, shapes, optimize, memory_limit): repeated calls pay no
    planning cost (``einsum.cache_info()``). Operands are promoted like NumPy (bool counts as
    int64). The contraction is lowered to ``dot_general`` / ``transpose`` / ``diagonal`` /
    ``reduce_sum`` / ``mul``, so it runs eagerly, in traced graphs, and under every
    transformation (grad, jvp, hvp, nested) with no rule of its own.
    """
    plan, operands = get_plan("einsum", args, optimize, memory_limit)
    return run(plan, promote(operands))


def contract_path(
    *args, optimize: Optimize = "auto", memory_limit: int | str | None = None, shapes: bool = False
) -> tuple[list, PathInfo]:
    """``(path, info)`` for an einsum call, without contracting anything.

    Takes the same arguments as ``einsum`` (with ``shapes=True`` the operands are shapes).
    ``path`` is in opt_einsum's format and can be passed back as ``optimize=``; ``info`` is a
    ``PathInfo`` with ``flops`` (multiply-adds count 2), ``largest_intermediate`` (elements),
    ``naive_flops``, ``speedup``, the per-step breakdown ``steps``, and a printable summary.
    The plan is the one ``einsum`` would run (same cache).
    """
    mode = "shapes" if shapes else "arrays"
    plan, _ = get_plan("contract_path", args, optimize, memory_limit, mode)
    return list(plan.info.path), plan.info


def cache_info() -> CacheInfo:
    """Hits, misses and size of the plan cache shared by einsum, contract_path and ncon."""
    return CACHE.info()


def cache_clear() -> None:
    CACHE.clear()


einsum.cache_info = cache_info
einsum.cache_clear = cache_clear

__all__ = ["einsum", "contract_path", "cache_info", "cache_clear", "PathInfo", "Plan"]
