"""Set functions of the array API standard: ``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``.

The unique values are sorted (NaN last); every NaN is distinct (NaN != NaN), as the standard
asks. Their number depends on the data, so these run on concrete values (eager tensors and the
values of ``grad``/``jvp``; traced code and ``vmap`` raise ``ConcretizationError``). The values
are differentiable: each is gathered from the first occurrence in ``x``, so the derivative of a
unique value is that entry's derivative (duplicates after the first get none). Indices,
inverse indices and counts are integers (no derivative).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import int64

from ..core.dispatch import bind
from ..core.eager import _wrap
from ..core.tensor import Tensor
from ..errors import DTypeError
from ._base import astype, full, tensor_of
from .elementwise import not_equal
from .reductions import cumulative_sum
from .searching import concrete_or_none, true_positions
from .shape import concatenate

__all__ = ["unique_all", "unique_counts", "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    values: Tensor
    inverse_indices: Tensor


def _unique(op, x):
    """(values, first indices into the flattened ``x``, inverse indices of ``x``'s shape,
    counts): the values gathered from ``x`` (so they carry its derivative), the rest int64."""
    x = tensor_of(x)
    flat = x.reshape((-1,))
    v = concrete_or_none(x)
    if v is None:
        idx, inv, cnt = _unique_traced(op, flat)
    else:
        b = v._backend
        xp = b.xp
        f = getattr(xp, "unique_all", None)
        vflat = xp.reshape(v._value, (-1,))
        if f is not None:
            _, idx, inv, cnt = f(vflat)
        else:  # a backend without the standard's unique_all: NumPy on a host copy
            _, idx, inv, cnt = np.unique_all(b.to_numpy(vflat))
            idx, inv, cnt = (b.asarray(a) for a in (idx, inv, cnt))
        idx, inv, cnt = (_wrap(xp.astype(a, int64), b) for a in (idx, inv, cnt))
    values = bind(P.gather_p, flat, idx, axis=0)
    return values, idx, inv.reshape(tuple(x.shape)), cnt


def _unique_traced(op, flat):
    """Indices of first occurrences, inverse indices and counts from primitives: the runs of
    equal values in a stable sort (NaN != NaN: each NaN a run of its own; -0.0 == 0.0)."""
    if flat.dtype.kind in "cb":
        raise DTypeError(f"{op}: {flat.dtype} input in traced code (jit, make_graph) is not "
                         f"supported (no order to sort by); call it on eager values.")
    n = flat.shape[0]
    perm = bind(P.argsort_p, flat, axis=0)  # stable: the first of equal values first
    srt = bind(P.gather_p, flat, perm, axis=0)
    new = concatenate([full((1,), True, dtype=np.dtype(bool), device=flat.device),
                       not_equal(srt[1:], srt[:-1])]) if n else astype(srt, np.dtype(bool))
    starts = true_positions(new, op)  # a run-time count of values
    idx = bind(P.gather_p, perm, starts, axis=0)
    run = cumulative_sum(astype(new, int64)) - 1  # the value each sorted entry belongs to
    inv = bind(P.gather_p, run, bind(P.argsort_p, perm, axis=0), axis=0)
    # counts: each sorted entry adds one to its value's count (the run-time length of starts)
    zeros = full(tuple(starts.shape), 0, int64, flat.device)
    ones = full((n,), 1, int64, flat.device)
    cnt = bind(P.scatter_add_p, zeros, run, ones, axis=0)
    return idx, inv, cnt


def unique_all(x, /) -> UniqueAllResult:
    """The unique values of ``x`` (sorted, NaNs distinct), the index of each one's first
    occurrence in the flattened ``x``, the inverse indices (``values[inverse_indices]`` is
    ``x``) and the counts."""
    return UniqueAllResult(*_unique("unique_all", x))


def unique_counts(x, /) -> UniqueCountsResult:
    """The unique values of ``x`` and how often each occurs."""
    values, _, _, counts = _unique("unique_counts", x)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /) -> UniqueInverseResult:
    """The unique values of ``x`` and the inverse indices (of ``x``'s shape) that rebuild
    ``x`` from them."""
    values, _, inv, _ = _unique("unique_inverse", x)
    return UniqueInverseResult(values, inv)


def unique_values(x, /) -> Tensor:
    """The unique values of ``x``, sorted (NaNs distinct, last)."""
    return _unique("unique_values", x)[0]
