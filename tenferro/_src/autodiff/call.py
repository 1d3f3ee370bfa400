"""Calling a user's function inside a transformation's trace: the step ``vjp`` and ``jvp``
share. The function runs on this trace's tracers; its outputs are lifted into the trace (a
constant output becomes a tracer with a zero derivative), and with ``has_aux`` its second
output is auxiliary data, returned as plain values (this trace's tracers replaced by their
primals), as in JAX."""

from __future__ import annotations

from collections.abc import Callable

from ..core.tracer import PrimalTracer
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_map, tree_unflatten
from .arguments import split_aux


def call_traced(op: str, f: Callable, trace, tree, tracers: list, has_aux: bool):
    """Run ``f`` on ``tracers`` (arranged by ``tree``) in ``trace``: returns ``(outputs as
    tracers of the trace, output tree, aux or None)``."""
    out = f(*tree_unflatten(tree, tracers))
    aux = None
    if has_aux:
        out, aux = split_aux(op, out)
    flat, out_tree = tree_flatten(out)
    outs = [trace.full_raise(tensor_of(o)) for o in flat]
    if has_aux:
        aux = tree_map(lambda x: x.primal if isinstance(x, PrimalTracer) and x._trace is trace
                       else x, aux)
    return outs, out_tree, aux
