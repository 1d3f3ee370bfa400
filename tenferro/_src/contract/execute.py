"""Running a plan: promote the operands, then bind the recorded primitives in order.

Binding (rather than calling impls) is what makes einsum need no AD rule of its own: each
primitive is recorded by whatever trace is active (the eager tape, a transformation, a graph
being traced), and its derivative comes from the primitive's rules. A sliced plan runs slice
by slice (``run_sliced``) through ``bind`` too; when gradients may flow, each slice is wrapped
in ``tenferro.checkpoint`` so the reverse pass, too, holds one slice's intermediates at a time.
"""

from __future__ import annotations

import itertools

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import int64

from ..autodiff.checkpoint import checkpoint
from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..ops._base import is_scalar, tensor_of


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
    last use. A sliced plan runs slice by slice (``run_sliced``), each slice
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


def slice_index(axes, flat: int) -> tuple:
    """The value of every sliced index in slice number ``flat`` (row-major over ``axes``)."""
    index = []
    for size, _ in reversed(axes):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def run_sliced(sliced_plan, operands, differentiable: bool, slices=None):
    """Contract every slice of ``operands`` with the one-slice program and add them up
    (only the slices numbered in ``slices``, when given: how a group of slices runs on a
    worker)."""
    axes = sliced_plan.axes  # [(size, [(operand, axis), ...]), ...]
    sub = sliced_plan.sub
    shapes = [tuple(t.shape) for t in operands]

    def one_slice(index, *xs):
        starts = [[0] * len(s) for s in shapes]
        limits = [list(s) for s in shapes]
        touched = set()
        for i, (_, where) in zip(index, axes):
            for k, ax in where:
                starts[k][ax], limits[k][ax] = i, i + 1
                touched.add(k)
        parts = [
            bind(P.slice_p, x, start_indices=tuple(starts[k]), limit_indices=tuple(limits[k]),
                 strides=(1,) * len(shapes[k]))
            if k in touched else x
            for k, x in enumerate(xs)
        ]
        return run(sub, parts)

    if slices is None:
        indices = itertools.product(*[range(size) for size, _ in axes])
    else:
        indices = [slice_index(axes, k) for k in slices]
    total = None
    for index in indices:
        f = _partial(one_slice, index)
        if differentiable:
            f = checkpoint(f)
        part = f(*operands)
        total = part if total is None else bind(P.add_p, total, part)
    return total


def _partial(fn, index):
    def call(*xs):
        return fn(index, *xs)

    return call
