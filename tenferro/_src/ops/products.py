"""Matrix and tensor products built on ``dot_general``."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..core.eager import EagerTensor
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError, named_argument_errors
from ._base import astype, broadcast_shapes_of, broadcast_to, normalize_axis, operands, tensor_of
from .elementwise import conj, logical_and
from .reductions import sum as sum_
from .shape import reshape


def _promote2(op, a, b):
    a, b = tensor_of(a), tensor_of(b)
    if a.dtype != b.dtype:
        dt = np.result_type(a.dtype, b.dtype)

        a, b = astype(a, dt), astype(b, dt)
    if a.dtype.kind == "b":
        a, b = astype(a, np.int64), astype(b, np.int64)
    return a, b


def broadcast_batch(op: str, a, b):
    """Broadcast the leading (batch) axes of two stacks of matrices against each other."""
    batch = broadcast_shapes_of(op, a.shape[:-2], b.shape[:-2])
    return broadcast_to(a, batch + a.shape[-2:]), broadcast_to(b, batch + b.shape[-2:])


_MATRIX_DN = (((1,), (0,)), ((), ()))


def matmul(a, b) -> Tensor:
    """NumPy ``matmul``: matrix products over the last two axes, broadcasting batch axes."""
    if type(a) is EagerTensor and type(b) is EagerTensor and a._backend is b._backend:
        va, vb = a._value, b._value  # hot path: two matrices of one dtype
        if (va.ndim == 2 and vb.ndim == 2 and va.dtype == vb.dtype
                and va.shape[1] == vb.shape[0] and a.dtype.kind in "fciu"):
            return bind(P.dot_general_p, a, b, dimension_numbers=_MATRIX_DN)
    a, b = _promote2("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul: operands must have at least one axis (use * for scalars).")
    va, vb = a.ndim == 1, b.ndim == 1
    if va:
        a = reshape(a, (1,) + a.shape)
    if vb:
        b = reshape(b, b.shape + (1,))
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(
            f"matmul: inner dimensions differ: {a.shape} @ {b.shape} "
            f"({a.shape[-1]} vs {b.shape[-2]})."
        )
    a, b = broadcast_batch("matmul", a, b)
    nb = a.ndim - 2
    bd = tuple(range(nb))
    out = bind(P.dot_general_p, a, b, dimension_numbers=(((nb + 1,), (nb,)), (bd, bd)))
    if va:
        out = reshape(out, out.shape[:-2] + out.shape[-1:])
    if vb:
        out = reshape(out, out.shape[:-1])
    return out


@named_argument_errors("tensordot")
def tensordot(a, b, axes=2) -> Tensor:
    """Contract ``axes`` of ``a`` with ``axes`` of ``b`` (NumPy conventions)."""
    a, b = _promote2("tensordot", a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n > a.ndim or n > b.ndim:
            raise ShapeError(f"tensordot: cannot contract {n} axes of shapes {a.shape}, {b.shape}.")
        la, lb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
    else:
        la, lb = axes
        la = (la,) if isinstance(la, (int, np.integer)) else tuple(la)
        lb = (lb,) if isinstance(lb, (int, np.integer)) else tuple(lb)
        if len(la) != len(lb):
            raise ShapeError(f"tensordot: axes {axes} pair {len(la)} with {len(lb)} axes.")
        la = tuple(normalize_axis("tensordot", x, a.ndim) for x in la)
        lb = tuple(normalize_axis("tensordot", x, b.ndim) for x in lb)
    for x, y in zip(la, lb):
        if a.shape[x] != b.shape[y]:
            raise ShapeError(
                f"tensordot: axis {x} of a (size {a.shape[x]}) does not match axis {y} of b "
                f"(size {b.shape[y]}); shapes {a.shape} and {b.shape}."
            )
    return bind(P.dot_general_p, a, b, dimension_numbers=((la, lb), ((), ())))


def dot(a, b) -> Tensor:
    """NumPy ``dot``."""
    a, b = tensor_of(a), tensor_of(b)
    if a.ndim == 0 or b.ndim == 0:
        a, b = operands("dot", a, b)
        return a * b
    return tensordot(a, b, ((a.ndim - 1,), (max(b.ndim - 2, 0),)))


def vdot(a, b) -> Tensor:
    """sum(conj(a) * b) over flattened inputs."""
    a, b = tensor_of(a), tensor_of(b)
    return tensordot(conj(reshape(a, (-1,))), reshape(b, (-1,)), 1)


def inner(a, b) -> Tensor:
    """Inner product over the last axes (NumPy's ``inner``; no conjugation). A 0-d operand
    multiplies the other (NumPy)."""
    a, b = tensor_of(a), tensor_of(b)
    if a.ndim == 0 or b.ndim == 0:
        a, b = operands("inner", a, b)
        return a * b
    if a.shape[-1] != b.shape[-1]:
        raise ShapeError(f"inner: the last axes must have one length; got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}.")
    return tensordot(a, b, ((a.ndim - 1,), (b.ndim - 1,)))


def outer(a, b) -> Tensor:
    """Outer product of two flattened tensors (NumPy's ``outer``): the products a_i b_j, each
    one exact (also the sign of a zero product, which a matrix product would lose)."""
    a, b = tensor_of(a), tensor_of(b)
    if a.dtype.kind == "b" and b.dtype.kind == "b":  # NumPy: bool products are logical and
        return logical_and(reshape(a, (-1, 1)), reshape(b, (1, -1)))
    return reshape(a, (-1, 1)) * reshape(b, (1, -1))


def kron(a, b) -> Tensor:
    """Kronecker product of tensors of any ranks (NumPy's ``kron``): the smaller rank is
    padded with leading size-1 axes, and the result's axis k has length a.shape[k] *
    b.shape[k], block (i, j) being a[i] * b. Bilinear: each product a_i b_j is exact."""
    a, b = tensor_of(a), tensor_of(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + tuple(a.shape)
    sb = (1,) * (nd - b.ndim) + tuple(b.shape)
    # interleave: a as (a1, 1, a2, 1, ...), b as (1, b1, 1, b2, ...); their product's
    # axes pair up as (a1, b1, a2, b2, ...)
    ai = reshape(a, tuple(d for n in sa for d in (n, 1)))
    bi = reshape(b, tuple(d for n in sb for d in (1, n)))
    if a.dtype.kind == "b" and b.dtype.kind == "b":  # NumPy: bool products are logical and
        t = logical_and(ai, bi)
    else:
        t = ai * bi
    return reshape(t, tuple(m * n for m, n in zip(sa, sb)))


def vecdot(x1, x2, /, axis: int = -1) -> Tensor:
    """The dot product sum(conj(x1) * x2) along ``axis`` (complex: the first operand
    conjugated), broadcasting the other axes (the array API's ``vecdot``). ``axis`` counts in
    the broadcast shape; the two operands must have the same length along it. Bilinear."""
    a, b = tensor_of(x1), tensor_of(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("vecdot: the operands need at least one axis.")
    nd = max(a.ndim, b.ndim)
    ax = normalize_axis("vecdot", axis, nd) - nd  # from the end: the same axis in both
    if -ax > a.ndim or -ax > b.ndim or a.shape[ax] != b.shape[ax]:
        raise ShapeError(
            f"vecdot: axis {axis} of the broadcast shape must exist in both operands with one "
            f"length; got shapes {tuple(a.shape)} and {tuple(b.shape)}."
        )
    a, b = operands("vecdot", a, b)
    if a.dtype.kind == "b":
        raise DTypeError("vecdot: bool operands; cast them to a numeric dtype first.")
    return sum_(conj(a) * b, ax, dtype=a.dtype)  # the operands' dtype, also for integers
