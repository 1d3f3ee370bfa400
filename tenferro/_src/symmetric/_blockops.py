"""The handful of block operations the structural code needs, for two kinds of blocks.

Public symmetric tensors hold tenferro tensors (so every operation is differentiable, eager
or traced). Forward-only algorithms (``symmetric.dmrg``) may hold raw backend arrays (NumPy,
CuPy, array API) instead: the same plans, fusions and contractions then run straight on the
array namespace, without the per-operation cost of the eager tape (a DMRG step runs hundreds
of small block operations).
"""

from __future__ import annotations

import numpy as np

from .. import lax, ops
from ..core.tensor import Tensor


class _TensorOps:
    @staticmethod
    def tensordot(a, b, axes):
        if a.dtype == b.dtype:  # the primitive directly: tensordot would only promote
            return lax.dot_general(a, b, dimension_numbers=(axes, ((), ())))
        return ops.tensordot(a, b, axes)

    transpose = staticmethod(ops.transpose)
    reshape = staticmethod(ops.reshape)
    conj = staticmethod(ops.conj)

    @staticmethod
    def zeros(shape, like):
        return ops.zeros(shape, dtype=like.dtype, device=like.device)

    @staticmethod
    def concatenate(xs, axis):
        return ops.concatenate(xs, axis=axis)


class _ArrayOps:
    def __init__(self, xp):
        self.xp = xp

    def tensordot(self, a, b, axes):
        return self.xp.tensordot(a, b, axes=axes)

    def transpose(self, a, perm):
        return self.xp.permute_dims(a, tuple(perm)) if hasattr(self.xp, "permute_dims") \
            else self.xp.transpose(a, perm)

    def reshape(self, a, shape):
        return self.xp.reshape(a, tuple(shape))

    def conj(self, a):
        return self.xp.conj(a)

    def zeros(self, shape, like):
        return self.xp.zeros(tuple(shape), dtype=like.dtype)

    def concatenate(self, xs, axis):
        return self.xp.concat(xs, axis=axis) if hasattr(self.xp, "concat") \
            else self.xp.concatenate(xs, axis=axis)


TENSOR_OPS = _TensorOps()
_NUMPY_OPS = _ArrayOps(np)


def ops_for(block):
    """The operations for this kind of block."""
    if isinstance(block, Tensor):
        return TENSOR_OPS
    if isinstance(block, np.ndarray):
        return _NUMPY_OPS
    return _ArrayOps(block.__array_namespace__())


def ops_of(blocks: dict):
    for b in blocks.values():
        return ops_for(b)
    return TENSOR_OPS
