"""Searching: ``nonzero``, ``count_nonzero``, ``searchsorted`` (the array API's searching
functions; ``argmax``/``argmin``/``where`` live with the reductions and elementwise functions).

``nonzero`` has a data-dependent output length. On concrete values (eager tensors, the values
of ``grad``/``jvp``) the backend's ``nonzero`` computes it. In traced code (``jit``,
``make_graph``) the length is a size known only at run time (design/symbolic-sizes.md): the
count of true entries becomes a size through one ``truncation_indices`` node, and the
positions are the first ``count`` entries of a stable ``argsort`` of the mask, so the graph
adapts to each run's count (0 included). ``vmap`` refuses it (members could disagree).
"""

from __future__ import annotations

from chainrules import primitives as P
from chainrules.dtypes import int64, result_type
from chainrules.symbolic import Sym, bound_of

from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor
from ..core.tracer import Tracer
from ..errors import ConcretizationError, DTypeError, ShapeError
from ._base import astype, tensor_of
from .elementwise import logical_not, not_equal, where
from .reductions import sum as _sum

__all__ = ["count_nonzero", "nonzero", "searchsorted"]


def concrete_or_none(x):
    """The eager value under ``x``, or ``None`` when it has none (traced or batched)."""
    if type(x) is EagerTensor:
        return x
    try:
        return x._concrete("a data-dependent shape") if isinstance(x, Tracer) else None
    except ConcretizationError:
        return None


def true_positions(mask, op: str = "nonzero") -> Tensor:
    """The positions of the true entries of a 1-D bool tensor, ascending, int64: a length
    known only at run time in traced code (see the module note); ``op`` names the caller in
    the error ``vmap`` raises."""
    v = concrete_or_none(mask)
    if v is not None:
        b = v._backend
        return _wrap(b.xp.astype(b.xp.nonzero(v._value)[0], int64), b)
    n = mask.shape[0]
    count = _sum(astype(mask, int64))
    # a descending vector with count + 1 entries >= 1: truncation by cutoff 1 keeps exactly
    # those, giving arange(k) with the run-time size k = count + 1 (>= 1); drop the extra one
    step = where(bind(P.iota_p, shape=(n + 1,), dimension=0, dtype=int64, device=mask.device)
                 <= count, 2.0, 0.0)
    try:
        keep = bind(P.truncation_indices_p, step, max_rank=None, cutoff=1.0,
                    relative_cutoff=None, size=Sym.new(bound_of(n) + 1))
    except ShapeError as e:
        if not str(e).startswith("vmap"):
            raise
        raise ShapeError(
            f"vmap: {op} has an output length that depends on the values of each batch "
            f"member (members could disagree), which a batch cannot hold. Use a shape-stable "
            f"form (tenferro.where(mask, x, 0), sums of masks) or loop over the batch."
        ) from None
    first = bind(P.argsort_p, astype(logical_not(mask), int64), axis=0)  # stable: true first
    return bind(P.gather_p, first, keep[:-1], axis=0)


def nonzero(x, /) -> tuple:
    """The indices of the nonzero (true) entries of ``x``, one int64 tensor per axis, in
    row-major order (NumPy's ``nonzero``). 0-d input raises, as the array API standard asks.
    Their length depends on the values: a run-time size in traced code (see the module note).
    No derivative (integer output)."""
    x = tensor_of(x)
    if x.ndim == 0:
        raise ShapeError("nonzero: 0-d input is not allowed (NumPy deprecated it); reshape "
                         "to (1,) or use bool(x).")
    v = concrete_or_none(x)
    if v is not None:
        b = v._backend
        xp = b.xp
        return tuple(_wrap(xp.astype(i, int64), b) for i in xp.nonzero(v._value))
    mask = x if x.dtype.kind == "b" else not_equal(x, 0)
    pos = true_positions(mask.reshape((-1,)), "nonzero (or boolean-mask indexing)")
    out, stride = [], 1
    for d in reversed(x.shape):  # row-major: the last axis varies fastest
        out.append(pos % d if stride == 1 else (pos // stride) % d)
        stride *= d
    return tuple(reversed(out))


def count_nonzero(x, /, axis=None, keepdims: bool = False) -> Tensor:
    """The number of nonzero (true) entries along ``axis`` (default all; NaN counts), int64.
    No derivative."""
    x = tensor_of(x)
    return _sum(astype(not_equal(x, 0), int64), axis, keepdims)


def searchsorted(x1, x2, /, side: str = "left", sorter=None) -> Tensor:
    """Indices into the ascending 1-D ``x1`` at which the entries of ``x2`` would be inserted
    to keep it sorted: before equal entries (``side="left"``) or after them (``"right"``);
    NaN sorts last. ``sorter``: indices that sort ``x1`` (``argsort(x1)``). The operands
    promote to a common dtype; the result (int64, the shape of ``x2``) has no derivative.
    Works in every mode (a primitive)."""
    if not isinstance(side, str) or side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right', got {side!r:.20}.")
    s = tensor_of(x1)
    if s.ndim != 1:
        raise ShapeError(f"searchsorted: x1 must be 1-D, got shape {tuple(s.shape)}.")
    if sorter is not None:  # argsort(x1): non-negative positions
        s = bind(P.gather_p, s, astype(tensor_of(sorter), int64), axis=0)
    v = tensor_of(x2, like=s)
    if s.dtype.kind == "c" or v.dtype.kind == "c":
        raise DTypeError("searchsorted: complex numbers have no order; search x.real or "
                         "abs(x).")
    if s.dtype != v.dtype:  # one dtype for the comparison (each keeps its shape)
        dt = result_type(s.dtype, v.dtype)
        s, v = astype(s, dt), astype(v, dt)
    return bind(P.searchsorted_p, s, v, side=side)
