"""Casts, copies, device transfers and gradient stopping."""

from __future__ import annotations

from chainrules import primitives as P

from ..backends import canonical_device, get_backend
from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor
from ._base import astype, tensor_of

__all__ = ["astype", "copy", "stop_gradient", "to_device"]


def copy(x) -> Tensor:
    """A copy that is differentiable (the identity as a function)."""
    return bind(P.copy_p, tensor_of(x))


def stop_gradient(x) -> Tensor:
    """The same value, treated as a constant by every differentiation."""
    x = tensor_of(x)
    if type(x) is EagerTensor:
        return _wrap(x._value, x._backend)
    return bind(P.stop_gradient_p, x)


def to_device(x, device) -> Tensor:
    """Move to ``device``; differentiable (the cotangent travels back)."""
    x = tensor_of(x)
    dst = canonical_device(device)
    get_backend(dst)  # fail early for unavailable devices
    src = x.device
    if src == dst or src is None and dst == "cpu":
        return x
    return bind(P.device_put_p, x, device=dst, src=src)

