"""tenferro as an einops backend: ``einops.rearrange/reduce/repeat/einsum`` take tenferro
tensors and keep the tape, traced values and ``vmap``'s batching (every method is a tenferro
operation). einops finds a backend by subclassing its ``AbstractBackend`` with the framework's
module name, which must be in ``sys.modules``; defining the class is all it takes."""

from __future__ import annotations

from einops._backends import AbstractBackend

from .. import ops
from ..contract import einsum
from ..core.tensor import Tensor


class TenferroBackend(AbstractBackend):
    framework_name = "tenferro"

    def is_appropriate_type(self, tensor) -> bool:
        return isinstance(tensor, Tensor)

    def from_numpy(self, x):
        return ops.asarray(x)

    def to_numpy(self, x):
        return x.numpy()

    def arange(self, start, stop):
        return ops.arange(start, stop)

    def shape(self, x):
        return tuple(x.shape)

    def reshape(self, x, shape):
        return ops.reshape(x, tuple(shape))

    def transpose(self, x, axes):
        return ops.transpose(x, tuple(axes))

    def reduce(self, x, operation, axes):
        fn = {"sum": ops.sum, "mean": ops.mean, "prod": ops.prod, "min": ops.min,
              "max": ops.max}.get(operation)
        if fn is None:  # einops names its reductions; anything else it checks itself
            raise NotImplementedError(f"einops reduction {operation!r} on tenferro tensors")
        return fn(x, axis=tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list):
        return ops.stack(list(tensors), axis=0)

    def add_axis(self, x, new_position):
        return ops.expand_dims(x, new_position)

    def tile(self, x, repeats):
        return ops.tile(x, tuple(repeats))

    def concat(self, tensors, axis: int):
        return ops.concatenate(list(tensors), axis=axis)

    def is_float_type(self, x) -> bool:
        return x.dtype.kind in "fc"

    def einsum(self, pattern, *x):
        return einsum(pattern, *x)
