"""``tenferro.distributed.value_and_grad``."""

from __future__ import annotations

from ..autodiff.reverse import value_and_grad as _local_value_and_grad
from ..contract.parallel import Route, routed
from ..contract.plan import ContractionPlan
from ..errors import ShapeError, TenferroError
from ._client import resolve_client


def value_and_grad(f, params, plan: ContractionPlan, client=None,
                   slices_per_task: int | None = None, progress: bool | None = None,
                   retries: int = 2):
    """``(f(params), gradient of f at params)`` with the sliced contraction ``plan`` run on a
    cluster.

    ``f(params)`` returns a real scalar and calls ``tenferro.einsum(..., plan=plan)``; those
    calls run their slices on ``client`` (a ``dask.distributed.Client``; ``None``: the current
    one; any ``concurrent.futures``-style executor also works, without scatter or tree sums):
    the operands and the plan are scattered once, each task takes ``slices_per_task``
    consecutive slices (default: about four tasks per worker) and returns their value and
    gradient from a local tenferro VJP, and the partial results are summed on the workers in
    a tree. Everything else in ``f`` runs here under tenferro's reverse mode, so ``f`` may
    build the operands from ``params`` and transform the contraction's value (a log, a
    ratio): the result equals the unsliced local ``tenferro.value_and_grad(f)(params)``.
    A contraction with a scalar result needs one round of tasks; a tensor-valued one a
    second round for its gradient.

    ``params``: a pytree of arrays/tensors (real or complex; complex gradients follow
    tenferro's convention dL/dRe z + i dL/dIm z). ``progress``: report slices done (``None``:
    the global ``tenferro.tn.set_progress`` setting). ``retries``: Dask retries of a task that
    raised; tasks lost with a worker are recomputed by Dask anyway, and every slice is counted
    exactly once (each belongs to one task, each task to one leaf of the sum).
    """
    if not isinstance(plan, ContractionPlan):
        raise ShapeError(
            f"tenferro.distributed.value_and_grad: plan must be a ContractionPlan from "
            f"tenferro.contract_path(..., max_memory=...), got {type(plan).__name__}."
        )
    if not callable(f):
        raise TypeError(f"tenferro.distributed.value_and_grad: f must be callable, got "
                        f"{type(f).__name__}.")
    client = resolve_client(client)
    route = Route(client, slices_per_task, progress, retries)
    with routed(plan, route):
        value, grads = _local_value_and_grad(f)(params)
    if route.calls == 0:
        raise TenferroError(
            f"tenferro.distributed.value_and_grad: f never called tenferro.einsum(..., "
            f"plan=plan) with this plan ({plan!r}), so nothing ran on the cluster. Pass the "
            f"same plan object to the einsum inside f."
        )
    return value, grads
