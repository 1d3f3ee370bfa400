"""Running the slices of a plan on an executor: ``einsum(..., plan=plan, executor=ex)``.

The slices of a sliced plan are independent contractions whose results add up, so they are
grouped (``slices_per_task`` consecutive slice numbers per task), each group is contracted by
one task (``contract_group``: a local, eager tenferro contraction of those slices), and the
groups' results are summed. Any object with ``concurrent.futures``' ``submit`` works (thread or
process pools; results are summed here, in group order). A Dask ``Client`` (recognised by its
``scatter``/``gather`` methods) gets more: the operands and the plan are scattered to the
workers once, every task names them by reference, and the partial results are summed on the
workers by a pairwise tree of tasks, so only the final result comes back.

Gradients: when an operand requires one, the call is a ``custom_vjp`` function whose
backward pass runs one more round of tasks (``vjp_group``: each group's local VJP with the
incoming cotangent, its partial operand cotangents tree-summed like the values). For a scalar
result the forward round can also return each group's gradient for a unit cotangent
(``fuse_grad``): the VJP of a contraction is linear over the complex numbers in its cotangent,
so the backward pass is then a multiplication, with no second round. Tasks are pure functions
of (plan, slice numbers, operands): a task Dask reruns after losing a worker contributes once,
because each slice number belongs to exactly one group and each group to one leaf of the sum.

Only concrete (eager) values can be sent to an executor: inside ``jit``/``make_graph`` or forward
mode, or for second derivatives, the call raises ``ConcretizationError`` (drop ``executor=``
there: the sequential slices are staged and differentiated like any other einsum).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import threading

import numpy as np

from ..autodiff.custom import custom_vjp
from ..autodiff.reverse import vjp
from ..core.eager import EagerTensor, no_grad
from ..errors import ConcretizationError, ShapeError
from ..ops._base import tensor_of
from ..progress import Progress
from .execute import promote, run, run_sliced

# ------------------------------------------------------------------ worker-side tasks


def _run_group(plan, tensors, slices, grad: bool):
    low = plan.lowered(grad)
    if low.sliced:
        return run_sliced(low, tensors, grad, slices)
    return run(low, tensors)


def _tensors(arrays):
    return [tensor_of(a) for a in arrays]


def contract_group(plan, slices, *arrays) -> np.ndarray:
    """The sum of slices ``slices`` of ``plan`` on ``arrays`` (a task: NumPy in, NumPy out)."""
    with no_grad():
        out = _run_group(plan, _tensors(arrays), slices, False)
    return out.numpy()


def vjp_group(plan, slices, wrt, ct, *arrays):
    """``(value, cotangents)`` of the sum of slices ``slices``: the cotangents of the operands
    numbered in ``wrt`` for the output cotangent ``ct`` (``None``: ones, for a scalar result),
    from a local tenferro VJP in which each slice is checkpointed."""

    tensors = _tensors(arrays)

    def f(*xs):
        full = list(tensors)
        for k, x in zip(wrt, xs):
            full[k] = x
        return _run_group(plan, full, slices, True)

    out, vjp_fn = vjp(f, *[tensors[k] for k in wrt])
    value = out.numpy()
    seed = np.ones_like(value) if ct is None else ct
    grads = vjp_fn(seed)
    return value, tuple(g.numpy() for g in grads)


def add_parts(a, b):
    """Sum of two partial results: arrays, or (value, cotangents) pairs."""
    if isinstance(a, tuple):
        return a[0] + b[0], tuple(x + y for x, y in zip(a[1], b[1]))
    return a + b


# ------------------------------------------------------------------ driver side


def slice_groups(n_slices: int, slices_per_task: int | None, workers: int | None) -> list:
    """Consecutive slice numbers, ``slices_per_task`` per group (default: about four groups
    per worker, or one slice per group when the number of workers is unknown)."""
    if slices_per_task is None:
        groups = n_slices if not workers else min(n_slices, 4 * workers)
        slices_per_task = math.ceil(n_slices / groups)
    if not isinstance(slices_per_task, int) or isinstance(slices_per_task, bool) \
            or slices_per_task < 1:
        raise ShapeError(
            f"einsum: slices_per_task must be a positive int (or None), got "
            f"{slices_per_task!r}."
        )
    return [tuple(range(s, min(s + slices_per_task, n_slices)))
            for s in range(0, n_slices, slices_per_task)]


def is_dask_client(executor) -> bool:
    return all(hasattr(executor, m) for m in ("scatter", "gather", "submit"))


class FuturesRunner:
    """A ``concurrent.futures``-style executor: tasks by ``submit``, sums in this process."""

    def __init__(self, executor, progress):
        if not callable(getattr(executor, "submit", None)):
            raise ShapeError(
                f"einsum: executor= must have a concurrent.futures-style submit(fn, *args) "
                f"(a ThreadPoolExecutor, a ProcessPoolExecutor, a dask.distributed.Client), got "
                f"{type(executor).__name__}."
            )
        self.executor, self.progress = executor, progress
        self.workers = getattr(executor, "_max_workers", None)

    def share(self, plan, arrays):
        return plan, list(arrays)

    def run(self, fn, groups, args_of, n_slices):
        futs = [self.executor.submit(fn, *args_of(g)) for g in groups]
        total = None
        done = 0
        with _progress(n_slices, self.progress) as p:
            for g, f in zip(groups, futs):
                part = f.result()
                total = part if total is None else add_parts(total, part)
                done += len(g)
                p.update(done)
        return total


class DaskRunner:
    """A Dask ``Client``: scatter once, tasks by reference, a tree of sums on the workers."""

    def __init__(self, client, progress, retries: int = 0):
        self.client, self.progress, self.retries = client, progress, retries
        try:
            self.workers = len(client.scheduler_info().get("workers", {})) or None
        except Exception:  # a client without scheduler info: fall back to the default
            self.workers = None

    def share(self, plan, arrays):
        c = self.client
        # every worker needs every operand, and a copy on each is what lets a task lost with
        # a worker run elsewhere (scattered data has no task to recompute it from); fresh keys
        # per call (content-hashed keys could meet a previous call's, being released)
        shared = c.scatter([plan, *arrays], broadcast=True, hash=False)
        return shared[0], shared[1:]

    def run(self, fn, groups, args_of, n_slices):
        from distributed import as_completed

        c = self.client

        def add(a, b):
            return c.submit(add_parts, a, b, retries=self.retries, pure=True)

        # A pairwise tree of sums on the workers, submitted as soon as both halves exist
        # (a binary counter): Dask runs earlier submissions first, so each sum runs as soon
        # as its two parts are done and a worker does not hoard finished partial results.
        futs, stack = [], []  # stack: (height, future), heights strictly decreasing
        for g in groups:
            f = c.submit(fn, *args_of(g), retries=self.retries, pure=True)
            futs.append(f)
            node = (0, f)
            while stack and stack[-1][0] == node[0]:
                h, left = stack.pop()
                node = (h + 1, add(left, node[1]))
            stack.append(node)
        total = stack.pop()[1]
        while stack:
            total = add(stack.pop()[1], total)
        size = {f.key: len(g) for f, g in zip(futs, groups)}
        # hold no future of a group once it is done: a worker keeps a result in memory for as
        # long as the client holds a future of it, which would keep every partial result alive
        pending = as_completed(futs)
        del futs, f, node
        done = 0
        with _progress(n_slices, self.progress) as p:
            for f in pending:
                done += size[f.key]
                p.update(done)
                del f
        return total.result()


def runner_for(executor, progress, retries: int = 0):
    if is_dask_client(executor):
        return DaskRunner(executor, progress, retries)
    return FuturesRunner(executor, progress)


class _Quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, *a, **k):
        pass


def _progress(total, enabled):
    if enabled is False:
        return _Quiet()

    return Progress("einsum slices", total, enabled)


# ------------------------------------------------------------------ routing


class Route:
    """Where ``einsum(..., plan=plan)`` calls run inside ``tenferro.distributed.value_and_grad``
    (``calls`` counts them, so an ``f`` that never used the plan is reported)."""

    __slots__ = ("executor", "slices_per_task", "progress", "retries", "calls")

    def __init__(self, executor, slices_per_task, progress, retries):
        self.executor, self.slices_per_task = executor, slices_per_task
        self.progress, self.retries = progress, retries
        self.calls = 0


_ROUTES: contextvars.ContextVar = contextvars.ContextVar("tenferro_einsum_routes", default=None)


@contextlib.contextmanager
def routed(plan, route: Route):
    """Within the block, ``einsum(..., plan=plan)`` runs on ``route.executor``."""
    routes = dict(_ROUTES.get() or {})
    routes[id(plan)] = (plan, route)
    token = _ROUTES.set(routes)
    try:
        yield route
    finally:
        _ROUTES.reset(token)


def route_of(plan):
    routes = _ROUTES.get()
    if not routes:
        return None
    hit = routes.get(id(plan))
    return None if hit is None or hit[0] is not plan else hit[1]


# ------------------------------------------------------------------ einsum(executor=)


def _host(x) -> np.ndarray:
    if not isinstance(x, EagerTensor):
        raise ConcretizationError(
            f"einsum(executor=...): the operands must be concrete (eager) tensors, got a "
            f"{type(x).__name__} of shape {tuple(x.shape)} and dtype {x.dtype}: executors "
            f"run on values, so this cannot be traced (jit/make_graph), differentiated in forward "
            f"mode (jvp/hvp) or differentiated twice. Drop executor= there; the slices then "
            f"run one after the other in any mode."
        )
    return np.asarray(x.detach().numpy())


def run_parallel(plan, operands, grad: bool, executor, slices_per_task=None, progress=False,
                 fuse_grad: bool = False, retries: int = 0):
    """``einsum(..., executor=executor)``: the plan's slices as tasks on ``executor``."""
    ops = promote(operands)
    runner = runner_for(executor, progress, retries)
    groups = slice_groups(plan.n_slices, slices_per_task, runner.workers)
    if not grad:
        return _as_result(_forward(plan, runner, groups, [_host(x) for x in ops]), ops[0])
    return _differentiable(plan, runner, groups, fuse_grad)(*ops)


def _as_result(value, like):
    return tensor_of(value, like=like)


def _forward(plan, runner, groups, arrays, state=None):
    shared_plan, shared = runner.share(plan, arrays)
    if state is not None:
        state["shared"] = (shared_plan, shared)
    return runner.run(contract_group, groups, lambda g: (shared_plan, g, *shared),
                      plan.n_slices)


def _differentiable(plan, runner, groups, fuse_grad):
    state: dict = {}
    lock = threading.Lock()

    def primal(*xs):
        return _as_result(_forward(plan, runner, groups, [_host(x) for x in xs]), xs[0])

    def fwd(*xs):
        arrays = [_host(x) for x in xs]
        if fuse_grad and _out_size(plan) == 1:
            shared_plan, shared = runner.share(plan, arrays)
            wrt = tuple(range(len(arrays)))
            value, grads = runner.run(
                vjp_group, groups, lambda g: (shared_plan, g, wrt, None, *shared),
                plan.n_slices)
            with lock:  # the cluster's copies are no longer needed: not kept
                state["unit_grads"] = grads
        else:
            value = _forward(plan, runner, groups, arrays, state)
        return _as_result(value, xs[0]), (xs[0],)

    def bwd(res, ct):
        if not isinstance(ct, EagerTensor):
            _host(ct)  # raises the named error
        like = res[0]
        unit = state.get("unit_grads")
        if unit is not None:
            c = ct.detach().numpy()
            return tuple(_as_result(c * g, like) for g in unit)
        shared_plan, shared = state["shared"]
        wrt = tuple(range(len(shared)))
        c = np.asarray(ct.detach().numpy())
        _, grads = runner.run(vjp_group, groups,
                              lambda g: (shared_plan, g, wrt, c, *shared), plan.n_slices)
        return tuple(_as_result(g, like) for g in grads)

    f = custom_vjp(primal)
    f.defvjp(fwd, bwd)
    return f


def _out_size(plan) -> int:
    prob = plan._prob
    n = 1
    for lab in prob.out:
        n *= prob.est[lab]
    return n
