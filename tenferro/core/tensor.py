"""``Tensor``: the user-facing surface shared by eager tensors, traced tensors and tracers.

Operators and methods forward to the functions in ``tenferro.ops``; subclasses provide
``shape``, ``dtype``, ``device`` and (for in-place methods) ``_assign``. User code written
against this surface runs unchanged in eager mode, traced mode and under every transformation.
"""

from __future__ import annotations

import numpy as np

from ..errors import GradientError

_ops = None  # tenferro.ops, set when it is imported (it needs this module first)


class Tensor:
    """The surface shared by eager tensors, traced tensors and the values of transformations:
    NumPy/PyTorch-style operators and methods, forwarding to ``tenferro``'s functions."""

    __slots__ = ()
    __array_ufunc__ = None  # make NumPy defer to our reflected operators
    __array_priority__ = 1000

    # ----------------------------------------------------------- abstract surface
    @property
    def shape(self) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = object.__hash__

    # ------------------------------------------------------------------ operators
    def __add__(self, o):
        return _ops.add(self, o)

    def __radd__(self, o):
        return _ops.add(o, self)

    def __sub__(self, o):
        return _ops.subtract(self, o)

    def __rsub__(self, o):
        return _ops.subtract(o, self)

    def __mul__(self, o):
        return _ops.multiply(self, o)

    def __rmul__(self, o):
        return _ops.multiply(o, self)

    def __truediv__(self, o):
        return _ops.divide(self, o)

    def __rtruediv__(self, o):
        return _ops.divide(o, self)

    def __floordiv__(self, o):
        return _ops.floor_divide(self, o)

    def __rfloordiv__(self, o):
        return _ops.floor_divide(o, self)

    def __mod__(self, o):
        return _ops.remainder(self, o)

    def __rmod__(self, o):
        return _ops.remainder(o, self)

    def __pow__(self, o):
        return _ops.power(self, o)

    def __rpow__(self, o):
        return _ops.power(o, self)

    def __matmul__(self, o):
        return _ops.matmul(self, o)

    def __rmatmul__(self, o):
        return _ops.matmul(o, self)

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.abs(self)

    def __eq__(self, o):  # elementwise, like NumPy/PyTorch
        return _ops.equal(self, o)

    def __ne__(self, o):
        return _ops.not_equal(self, o)

    def __lt__(self, o):
        return _ops.less(self, o)

    def __le__(self, o):
        return _ops.less_equal(self, o)

    def __gt__(self, o):
        return _ops.greater(self, o)

    def __ge__(self, o):
        return _ops.greater_equal(self, o)

    def __and__(self, o):
        return _ops.logical_and(self, o)

    def __or__(self, o):
        return _ops.logical_or(self, o)

    def __invert__(self):
        return _ops.logical_not(self)

    def __getitem__(self, idx):
        return _ops.getitem(self, idx)

    def __setitem__(self, idx, value):
        self._update(_ops.setitem(self, idx, value))

    # in-place operators (rebinding this object; see ``_assign``)
    def __iadd__(self, o):
        self._update(_ops.add(self, o))
        return self

    def __isub__(self, o):
        self._update(_ops.subtract(self, o))
        return self

    def __imul__(self, o):
        self._update(_ops.multiply(self, o))
        return self

    def __itruediv__(self, o):
        self._update(_ops.divide(self, o))
        return self

    def add_(self, o, alpha=1):
        self._update(_ops.add(self, o if alpha == 1 else _ops.multiply(o, alpha)))
        return self

    def sub_(self, o, alpha=1):
        self._update(_ops.subtract(self, o if alpha == 1 else _ops.multiply(o, alpha)))
        return self

    def mul_(self, o):
        self._update(_ops.multiply(self, o))
        return self

    def div_(self, o):
        self._update(_ops.divide(self, o))
        return self

    def zero_(self):
        self._update(_ops.zeros_like(self))
        return self

    def fill_(self, value):
        self._update(_ops.full_like(self, value))
        return self

    def copy_(self, src):
        self._update(_ops.broadcast_to(_ops.astype(src, self.dtype), self.shape))
        return self

    def clamp_(self, min=None, max=None):
        self._update(_ops.clip(self, min, max))
        return self

    def _update(self, new):
        """Every in-place operation ends here. Tensors are values, they share no memory, so
        views are emulated where it is sound: a basic-indexing result (``x[0]``, ``x[1:, 2]``)
        remembers its base and index, and updating it writes through (``x[0].zero_()``,
        ``row = x[0]; row += 1`` change ``x``, as in NumPy and PyTorch). The results of other
        view-like operations (reshape, transpose, broadcast_to, diagonal, real/imag, detach)
        refuse in-place updates rather than silently not changing their base. (When such an
        operation changes nothing it returns the tensor itself, which updates normally.)"""
        what = getattr(self, "_view_of", None)
        if type(what) is IndexView:
            base = what.base
            base._update(_ops.setitem(base, what.index, new))  # views of views: recursive
            self._assign(new)
            return
        if what is not None:
            raise GradientError(
                f"in-place operation on the result of {what}, which would be a view of another "
                f"tensor in NumPy or PyTorch: tenferro tensors do not share memory, so it would "
                f"not change that tensor. Update the original directly (x[i] = v, or "
                f"x = x.at[i].set(v)), or copy first if an independent tensor is intended "
                f"(y = ...clone())."
            )
        self._assign(new)

    def _assign(self, new):  # pragma: no cover - overridden
        raise TypeError(f"{type(self).__name__} does not support in-place operations")

    # -------------------------------------------------------------------- methods
    def reshape(self, *shape):
        return _ops.reshape(self, shape[0] if len(shape) == 1 and not isinstance(
            shape[0], int) else shape)

    view = reshape

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        if len(axes) == 2 and self.ndim != 2:  # torch-style swap of two axes
            return _ops.swapaxes(self, *axes)
        return _ops.transpose(self, axes or None)

    def permute(self, *axes):
        return _ops.transpose(self, axes[0] if len(axes) == 1 else axes)

    @property
    def T(self):
        return _ops.transpose(self)

    @property
    def mT(self):
        return _ops.swapaxes(self, -1, -2)

    @property
    def mH(self):
        return _ops.conj(_ops.swapaxes(self, -1, -2))

    def swapaxes(self, a, b):
        return _ops.swapaxes(self, a, b)

    def flatten(self):
        return _ops.reshape(self, (-1,))

    def ravel(self):
        return _ops.reshape(self, (-1,))

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def unsqueeze(self, axis):
        return _ops.expand_dims(self, axis)

    def expand_dims(self, axis):
        return _ops.expand_dims(self, axis)

    def broadcast_to(self, shape):
        return _ops.broadcast_to(self, shape)

    def sum(self, axis=None, keepdims=False, dim=None):
        return _ops.sum(self, axis if dim is None else dim, keepdims=keepdims)

    def mean(self, axis=None, keepdims=False, dim=None):
        return _ops.mean(self, axis if dim is None else dim, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False):
        return _ops.prod(self, axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return _ops.max(self, axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _ops.min(self, axis, keepdims=keepdims)

    def argmax(self, axis=None):
        return _ops.argmax(self, axis)

    def argmin(self, axis=None):
        return _ops.argmin(self, axis)

    def cumsum(self, axis=None):
        return _ops.cumsum(self, axis)

    def norm(self, ord=None, axis=None, keepdims=False):
        from ..linalg import norm  # linalg sits above ops; methods may reach up (see design)

        return norm(self, ord, axis, keepdims)

    def trace(self, offset=0, axis1=0, axis2=1):
        return _ops.matrix_trace(self, offset, axis1, axis2)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _ops.diagonal(self, offset, axis1, axis2)

    def conj(self):
        return _ops.conj(self)

    @property
    def real(self):
        return _ops.real(self)

    @property
    def imag(self):
        return _ops.imag(self)

    def abs(self):
        return _ops.abs(self)

    def exp(self):
        return _ops.exp(self)

    def log(self):
        return _ops.log(self)

    def sqrt(self):
        return _ops.sqrt(self)

    def sin(self):
        return _ops.sin(self)

    def cos(self):
        return _ops.cos(self)

    def tanh(self):
        return _ops.tanh(self)

    def square(self):
        return _ops.square(self)

    def clip(self, min=None, max=None):
        return _ops.clip(self, min, max)

    clamp = clip

    def astype(self, dtype):
        return _ops.astype(self, dtype)

    def to(self, *args, dtype=None, device=None):
        """``to(device)``, ``to(dtype)``, or both. Device transfers are differentiable."""
        for a in args:
            if _is_device_name(a):
                device = a
            else:
                dtype = a
        out = self
        if dtype is not None:
            out = _ops.astype(out, dtype)
        if device is not None:
            out = _ops.to_device(out, device)
        return out

    def cpu(self):
        return self.to("cpu")

    def dot(self, o):
        return _ops.dot(self, o)

    def matmul(self, o):
        return _ops.matmul(self, o)

    # ------------------------------------------------------ autograd (tape) surface
    @property
    def requires_grad(self) -> bool:
        return False

    def detach(self):
        return mark_view(_ops.stop_gradient(self), self, "detach()")

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        raise GradientError(
            f"backward() is for eager tensors; this is a {type(self).__name__}. Inside "
            f"transformations use tenferro.grad / vjp instead."
        )


class IndexView:
    """What a basic-indexing result is a view of: in-place updates write through."""

    __slots__ = ("base", "index")

    def __init__(self, base, index):
        self.base, self.index = base, index

    def __str__(self):
        return "indexing x[...]"


def mark_view(out, base, what):
    """Mark ``out`` as the result of a view-like operation on ``base`` (see ``_update``);
    ``base`` itself (nothing changed) stays an ordinary tensor."""
    if out is not base:
        out._view_of = what
    return out


def _is_device_name(a) -> bool:
    return isinstance(a, str) and a.split(":")[0].lower() in ("cpu", "cuda", "gpu", "strict")
