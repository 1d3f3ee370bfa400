"""Running a plan: promote the operands, then bind the recorded primitives in order.

Binding (rather than calling impls) is what makes einsum need no AD rule of its own: each
primitive is recorded by whatever trace is active (the eager tape, a transformation, a graph
being traced), and its derivative comes from the primitive's rules.
"""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import int64

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..ops._base import is_scalar, tensor_of
from .slicing import run_sliced


def as_tensors(operands) -> list:
    """Tensors pass through; arrays, lists and scalars become tensors (NumPy dtypes: a Python
    float is float64, as ``numpy.einsum`` treats it)."""
    ref = next((x for x in operands if isinstance(x, Tensor)), None)
    out = []
    for x in operands:
        if isinstance(x, Tensor):
            out.append(x)
        elif is_scalar(x) and ref is not None:
            out.append(tensor_of(x, like=ref, dtype=np.asarray(x).dtype))
        elif ref is not None:
            out.append(tensor_of(x, like=ref))
        else:
            out.append(tensor_of(np.asarray(x) if is_scalar(x) else x))
    return out


def promote(tensors) -> list:
    """Convert to the common NumPy result dtype (bool counts as int64: einsum sums)."""
    dts = [t.dtype for t in tensors]
    dt = dts[0]
    if any(d != dt for d in dts[1:]):
        dt = np.result_type(*dts)
    if dt.kind == "b":
        dt = int64
    return [
        t if t.dtype == dt else bind(P.convert_element_type_p, t, new_dtype=dt) for t in tensors
    ]


def run(plan, operands, differentiable: bool = False):
    """Execute a lowered ``plan`` on promoted operands; intermediates are released at their
    last use. A sliced plan runs slice by slice (``slicing.run_sliced``), each slice
    checkpointed when ``differentiable``."""
    if plan.sliced:

        return run_sliced(plan, operands, differentiable)
    vals = list(operands) + [None] * (plan.n_values - plan.n_inputs)
    for prim, ins, params, out, frees in plan.instrs:
        if len(ins) == 1:
            vals[out] = bind(prim, vals[ins[0]], **params)
        else:
            vals[out] = bind(prim, vals[ins[0]], vals[ins[1]], **params)
        for f in frees:
            vals[f] = None
    return vals[plan.result]
