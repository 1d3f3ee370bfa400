"""``einsum`` and ``contract_path``: parse, look the plan up in the cache (or build it), run it."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import opt_einsum as oe

from ..core.dispatch import state
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops._base import as_dim
from .cache import CACHE, CacheInfo
from .execute import as_tensors, promote, run
from .options import memory_elements, normalize_memory, normalize_optimize, normalize_time
from .parallel import route_of, run_parallel
from .parse import describe_interleaved, parse_string, split_interleaved
from .plan import ContractionPlan, make_plan
from .problem import Problem

Optimize = str | bool | None | Sequence[Sequence[int]] | oe.paths.PathOptimizer
"""What ``optimize=`` accepts: an optimizer name ("auto" is tenferro's own), True/None
("auto"), False (left to right), an explicit path, or a ``PathOptimizer`` (opt_einsum's, or a
cotengra ``HyperOptimizer``)."""

Memory = int | str | None
"""What ``max_memory=`` accepts: elements (int), bytes with a unit ("8GB", "512 MiB"), or
"max_input"."""


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


def _itemsize(op, operands, mode, dtype) -> int:
    """Bytes per element of the contraction (the widest operand; bool counts as int64)."""
    if dtype is not None:
        try:
            return np.dtype(dtype).itemsize
        except TypeError:
            raise ShapeError(f"{op}: dtype={dtype!r} is not a dtype.") from None
    if mode == "shapes":
        return 8
    size = 1
    for x in operands:
        dt = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
        size = max(size, 8 if dt.kind == "b" else dt.itemsize)
    return size


def get_plan(op: str, args, optimize="auto", max_memory=None, memory_limit=None,
             max_time=None, mode: str = "tensors", cache_dir=None, dtype=None, plan=None):
    """``(plan, operands, grad)`` for an einsum call in either form. ``mode``: "tensors"
    (operands become tensors), "arrays" (only their shapes are read) or "shapes" (operands
    are shapes). ``grad``: whether the reverse pass may run through the call. The plan comes
    from the cache when possible."""
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
    if plan is not None:
        return _given_plan(op, plan, form_key, shapes, optimize, max_memory, memory_limit,
                           max_time), operands, grad
    kind, opt, opt_key = normalize_optimize(op, optimize)
    if max_memory is None and memory_limit is None and max_time is None:
        mem = t = None  # the common case: no validation, no dtype look-up
    else:
        mem = normalize_memory(op, max_memory, memory_limit)
        t = normalize_time(op, max_time)
        if mem is not None and mem[0] == "bytes":  # bytes -> elements needs the itemsize
            mem = mem + (_itemsize(op, operands, mode, dtype),)
    key = (form_key, shapes, opt_key, mem, t)
    found = CACHE.get(key) if opt_key is not None else None
    if found is None:
        # also sizes the memory guard (for the dtype of the call that made the plan)
        itemsize = mem[2] if mem is not None and mem[0] == "bytes" else _itemsize(
            op, operands, mode, dtype)
        if subscripts is not None:
            terms, out = parse_string(op, subscripts)
            text = repr(subscripts)
        else:
            _, terms, out = split_interleaved(op, args)
            text = describe_interleaved(terms, out)
        prob = Problem(op, terms, out, shapes, text)
        limit = memory_elements(mem, itemsize, prob.input_sizes())
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise ShapeError(
                f"{op}: cache_dir must be a directory path (str or os.PathLike), got "
                f"{type(cache_dir).__name__}."
            )
        found = make_plan(prob, kind, opt, opt_key, limit, t, (form_key, shapes), itemsize,
                          cache_dir)
        if opt_key is not None:
            CACHE.put(key, found)
    return found, operands, grad


def _short(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 4] + " ..."


def _given_plan(op, plan, form_key, shapes, optimize, max_memory, memory_limit, max_time):
    if not isinstance(plan, ContractionPlan):
        raise ShapeError(
            f"{op}: plan= must be a ContractionPlan from tenferro.contract_path(...), got "
            f"{type(plan).__name__}."
        )
    if (optimize not in ("auto", True, None) or max_memory is not None
            or memory_limit is not None or max_time is not None):
        raise ShapeError(
            f"{op}: pass either plan= or the planning options (optimize, max_memory, "
            f"max_time), not both: the plan already fixes the path and the slices."
        )
    if plan._key != (form_key, shapes):
        want_form, want_shapes = plan._key
        raise ShapeError(
            f"{op}: the plan was made for {_short(plan.subscripts)} with shapes "
            f"{', '.join(str(tuple(s)) for s in want_shapes)}, but this call has shapes "
            f"{', '.join(str(tuple(s)) for s in shapes)}"
            + ("" if want_form == form_key else " and other subscripts")
            + "; make a plan for these operands with tenferro.contract_path."
        )
    return plan


def einsum(*args, optimize: Optimize = "auto", max_memory: Memory = None,
           memory_limit: Memory = None, max_time: float | None = None,
           plan: ContractionPlan | None = None, cache_dir=None, executor=None,
           slices_per_task: int | None = None, progress: bool | None = False) -> Tensor:
    """Einstein summation over any number of operands, differentiable in every mode.

    Like ``numpy.einsum``/``torch.einsum`` with a contraction-path planner built in:
    the order of pairwise contractions is optimised (and cached), each step is a BLAS-friendly
    ``dot_general``, and very large networks can be sliced to bound memory and run as tasks
    on an executor.

    Forms::

        einsum("ij,jk->ik", a, b)              # explicit output
        einsum("ij,jk", a, b)                  # implicit: labels used once, sorted
        einsum("...ij,...jk->...ik", a, b)     # broadcast dimensions
        einsum("ii->i", a); einsum("ii", a)    # diagonal; trace
        einsum("ij,ik,il->jkl", a, b, c)       # hyper-edge i shared by three operands
        einsum(a, [0, 1], b, [1, 2], [0, 2])   # interleaved: any hashable labels, no limit

    Parameters
    ----------
    *args : str and tensors, or interleaved tensors and label lists
        The subscripts followed by the operands, or NumPy's interleaved form (operand,
        labels, operand, labels, ..., [output labels]). Operands may be tensors, arrays or
        numbers; they are promoted like NumPy (bool counts as int64).
    optimize : str, PathOptimizer, list or False, optional
        The path search: ``"auto"`` (default: effort scaled with the network, exact for small
        ones, cotengra's hyper-optimizer for large ones when installed; design/einsum.md),
        ``"greedy"``, ``"optimal"``, ``"dp"``, ``"random-greedy"`` or any other opt_einsum
        optimizer name; a ``PathOptimizer`` (e.g. ``cotengra.HyperOptimizer()``); an explicit
        path in opt_einsum's format (e.g. ``[(1, 2), (0, 1)]``); or ``False`` (left to right).
    max_memory : int or str, optional
        The most the contraction may hold at once, operands not counted: elements (int), bytes
        (``"8GB"``, ``"512 MiB"``) or ``"max_input"``. The contraction is then *sliced*: some
        summed indices are fixed to one value at a time, each slice contracted separately and
        the slices added; gradients flow through every slice (each slice is checkpointed, so
        the reverse pass also holds one slice at a time).
    memory_limit : int or str, optional
        Alias of ``max_memory`` (opt_einsum's name).
    max_time : float, optional
        A bound on the planning time of ``"auto"`` in wall-clock seconds (met to within
        ~20%). Without it the search may spend 10 s of CPU time, capped at 60 s of wall-clock
        time; in both cases it stops once the best path found would contract faster than the
        planning so far took (small networks plan in milliseconds), and the path returned
        never has more FLOPs or a larger intermediate than opt_einsum's greedy path.
    plan : ContractionPlan, optional
        A plan from ``tenferro.contract_path`` for these operands (no planning then).
    cache_dir : str or Path, optional
        Also keep plans in this directory, across processes.
    executor : concurrent.futures.Executor-like, optional
        Run the slices as tasks on any executor with ``submit`` (a ``ThreadPoolExecutor``, a
        ``dask.distributed.Client``: operands and plan are then scattered once and the
        partial sums added on the workers). Eager values only; gradients work through
        ``backward``/``grad`` (one more round of tasks). See design/distributed.md.
    slices_per_task : int, optional
        Consecutive slices per task (default: about four tasks per worker).
    progress : bool or None, optional
        Report slices done (``None``: the global ``tenferro.tn.set_progress`` setting).

    Returns
    -------
    Tensor
        The contraction, with the output labels' axes in order; its dtype is the operands'
        promoted dtype.

    Raises
    ------
    tenferro.errors.ShapeError
        Malformed subscripts (more or fewer terms than operands, more than one ``->`` or
        ellipsis, an output label in no input), a term whose length differs from its
        operand's rank, or one index with different sizes (size 1 broadcasts); the message
        names the index, the operands, the axes and the shapes.

    Notes
    -----
    The contraction is lowered to ``dot_general`` / ``transpose`` / ``diagonal`` /
    ``reduce_sum`` / ``mul`` (and ``slice`` / ``add`` when sliced), so it runs eagerly, in
    traced graphs, and under every transformation (grad, jvp, hvp, vmap, nested) with no
    rule of its own: its derivatives are contractions again, and it is smooth everywhere
    (multilinear). Complex operands are not conjugated (``einsum("i,i", a, b)`` is
    ``sum(a * b)``): conjugate explicitly for inner products; gradients follow ``grad``'s
    convention. Plans are cached by (subscripts, shapes, options): repeated calls pay no
    planning cost (``einsum.cache_info()``).

    Examples
    --------
    >>> import tenferro as tf
    >>> a = tf.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> tf.einsum("ij,jk->ik", a, a)
    tensor([[ 7., 10.],
            [15., 22.]])
    >>> tf.einsum("ii", a)
    tensor(5.)
    >>> tf.einsum(a, [0, 1], a, [0, 1], [])
    tensor(30.)
    >>> tf.grad(lambda a: tf.einsum("ij,ij->", a, a))(a)
    tensor([[2., 4.],
            [6., 8.]])

    Mismatched sizes name the index:

    >>> tf.einsum("ij,jk->ik", tf.ones((2, 3)), tf.ones((4, 2)))
    Traceback (most recent call last):
        ...
    tenferro.errors.ShapeError: einsum: index 'j' has size 3 in operand 0 (axis 1) but size 4 ...
    """
    p, operands, grad = get_plan("einsum", args, optimize, max_memory, memory_limit, max_time,
                                 cache_dir=cache_dir, plan=plan)
    if executor is not None:
        return run_parallel(p, operands, grad, executor, slices_per_task, progress)
    if plan is not None:
        route = route_of(plan)  # inside tenferro.distributed.value_and_grad
        if route is not None:
            route.calls += 1
            return run_parallel(p, operands, grad, route.executor, route.slices_per_task,
                                route.progress, fuse_grad=True, retries=route.retries)
    return run(p.lowered(grad), promote(operands), grad)


def contract_path(*args, optimize: Optimize = "auto", max_memory: Memory = None,
                  memory_limit: Memory = None, max_time: float | None = None,
                  shapes: bool = False, dtype=None, cache_dir=None) -> ContractionPlan:
    """The ``ContractionPlan`` einsum would use for these arguments, without contracting.

    Takes einsum's arguments (with ``shapes=True`` the operands are shapes, and ``dtype``,
    default float64, sizes a ``max_memory`` given in bytes). The plan reports ``flops``,
    ``largest_intermediate``, ``peak_memory``, ``n_slices``, ``planner``, ``planning_time``,
    ``predicted_time`` and ``path`` (opt_einsum's format); ``print(plan)`` shows a summary.
    Pass it back as ``einsum(..., plan=plan)``. It is the same object einsum caches: calling
    einsum with the same subscripts, shapes and options afterwards plans nothing.
    """
    mode = "shapes" if shapes else "arrays"
    plan, _, _ = get_plan("contract_path", args, optimize, max_memory, memory_limit, max_time,
                          mode, cache_dir, dtype)
    return plan


def cache_info() -> CacheInfo:
    """Hits, misses and size of the plan cache shared by einsum, contract_path and ncon."""
    return CACHE.info()


def cache_clear() -> None:
    CACHE.clear()


einsum.cache_info = cache_info
einsum.cache_clear = cache_clear

__all__ = ["einsum", "contract_path", "cache_info", "cache_clear", "ContractionPlan"]
