"""Casts, copies, device transfers and gradient stopping."""

from __future__ import annotations

from chainrules import primitives as P

from ..backends import canonical_device, get_backend
from ..core.dispatch import bind
from ..core.eager import EagerTensor, _wrap
from ..core.tensor import Tensor
from ._base import astype as _cast
from ._base import tensor_of

__all__ = ["astype", "copy", "stop_gradient", "to_device"]


def astype(x, dtype, /, *, copy: bool = True, device=None) -> Tensor:
    """Cast to ``dtype`` (complex -> real keeps the real part; differentiable between float and
    complex dtypes), and move to ``device`` when given. ``copy`` (the array API's and NumPy's):
    ``True``, the default, always returns a new tensor, so an in-place update of the result
    never reaches ``x``; ``False`` returns ``x`` itself when nothing changes."""
    if not isinstance(x, Tensor):
        x = tensor_of(x)
    out = _cast(x, dtype)
    if device is not None:
        out = to_device(out, device)
    if copy and out is x:
        out = bind(P.copy_p, x)
    return out


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

