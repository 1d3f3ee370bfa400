"""``Tensor``: the user-facing surface shared by eager tensors, traced tensors and tracers.

Operators and methods forward to the functions in ``tenferro.ops``; subclasses provide
``shape``, ``dtype``, ``device`` and (for in-place methods) ``_assign``. User code written
against this surface runs unchanged in eager mode, traced mode and under every transformation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import DialectError, DTypeError, GradientError, GraphError, ShapeError

_ops = None  # tenferro.ops, set when it is imported (it needs this module first)
_numpy = None  # ops.numpy_protocols (NumPy's override protocols), set the same way


class Tensor:
    """The surface shared by eager tensors, traced tensors and the values of transformations:
    NumPy/PyTorch-style operators and methods, forwarding to ``tenferro``'s functions."""

    __slots__ = ()
    __array_priority__ = 1000

    # NumPy's override protocols: NumPy calls on tensors run tenferro's functions (ops/
    # numpy_protocols.py; ``x + y`` on tensors never gets here)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NEP 13: ``np.sin(t)``, ``a + t`` for a NumPy ``a``, ``np.add.reduce(t)`` run the
        tenferro function (recorded, traceable); see ``tenferro._src.ops.numpy_protocols``."""
        return _numpy.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """NEP 18: ``np.sum(t)``, ``np.linalg.svd(t)``, ``np.concatenate([t, a])`` run the
        tenferro function of the same name; a function tenferro lacks runs NumPy's on the
        values unless that would drop a gradient or needs a traced value (then it raises)."""
        return _numpy.array_function(func, types, args, kwargs)

    if TYPE_CHECKING:  # each subclass converts in its own way (an eager tensor reads its
        # value, a tracer refuses or concretizes); declared here so that type checkers accept
        # float(loss), int(n), complex(z) and bool(flag) on a Tensor
        def __float__(self) -> float: ...
        def __int__(self) -> int: ...
        def __complex__(self) -> complex: ...
        def __bool__(self) -> bool: ...

    # ----------------------------------------------------------- abstract surface
    @property
    def shape(self) -> tuple:  # pragma: no cover - overridden
        """The shape, a tuple of sizes (symbolic where only known at run time)."""
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:  # pragma: no cover - overridden
        """The NumPy dtype of the entries."""
        raise NotImplementedError

    @property
    def ndim(self) -> int:
        """The number of axes (PyTorch's ``dim()``)."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements (NumPy's ``x.size``). The value is also callable as PyTorch's
        ``x.size()`` (the shape) and ``x.size(d)`` (one dimension); see ``Size``."""
        n = 1
        for d in self.shape:
            n *= d
        return Size(n, self.shape) if type(n) is int else n

    def numel(self) -> int:
        """The number of elements (PyTorch's ``numel()``; NumPy's ``size``)."""
        return int(self.size)

    def dim(self) -> int:
        """The number of axes (PyTorch's ``dim()``; NumPy's ``ndim``)."""
        return len(self.shape)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = object.__hash__

    # ------------------------------------------------------- the array API standard
    def __array_namespace__(self, /, *, api_version: str | None = None):
        """The array API namespace of this tensor: the ``tenferro`` module itself."""
        return _ops.array_namespace(api_version)

    def to_device(self, device, /, *, stream=None):
        """A copy on ``device`` (the array API's ``to_device``; ``x.to(device)``), or the
        tensor itself when it is there already. Differentiable: the cotangent travels back.
        ``stream`` is accepted for the standard's signature; transfers are synchronous."""
        del stream
        return _ops.to_device(self, device)

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

    # bitwise, as NumPy: logical for bools, bitwise for integers, an error for floats
    def __and__(self, o):
        return _ops.bitwise_and(self, o)

    def __rand__(self, o):
        return _ops.bitwise_and(o, self)

    def __or__(self, o):
        return _ops.bitwise_or(self, o)

    def __ror__(self, o):
        return _ops.bitwise_or(o, self)

    def __xor__(self, o):
        return _ops.bitwise_xor(self, o)

    def __rxor__(self, o):
        return _ops.bitwise_xor(o, self)

    def __lshift__(self, o):
        return _ops.bitwise_left_shift(self, o)

    def __rlshift__(self, o):
        return _ops.bitwise_left_shift(o, self)

    def __rshift__(self, o):
        return _ops.bitwise_right_shift(self, o)

    def __rrshift__(self, o):
        return _ops.bitwise_right_shift(o, self)

    def __invert__(self):
        return _ops.bitwise_invert(self)

    def __getitem__(self, idx):
        return _ops.getitem(self, idx)

    # in-place operators (rebinding this object; see ``_assign`` and ``_inplace``)
    def __setitem__(self, idx, value):
        self._inplace(lambda: _ops.setitem(self, idx, value), value)

    def __iadd__(self, o):
        self._inplace(lambda: _ops.add(self, o), o)
        return self

    def __isub__(self, o):
        self._inplace(lambda: _ops.subtract(self, o), o)
        return self

    def __imul__(self, o):
        self._inplace(lambda: _ops.multiply(self, o), o)
        return self

    def __itruediv__(self, o):
        self._inplace(lambda: _ops.divide(self, o), o)
        return self

    # the other in-place operators of the array API standard: the result must keep this
    # tensor's dtype and shape (``_assign`` checks), as the standard requires
    def __ifloordiv__(self, o):
        self._inplace(lambda: _ops.floor_divide(self, o), o)
        return self

    def __imod__(self, o):
        self._inplace(lambda: _ops.remainder(self, o), o)
        return self

    def __ipow__(self, o):
        self._inplace(lambda: _ops.power(self, o), o)
        return self

    def __imatmul__(self, o):
        self._inplace(lambda: _ops.matmul(self, o), o)
        return self

    def __iand__(self, o):
        self._inplace(lambda: _ops.bitwise_and(self, o), o)
        return self

    def __ior__(self, o):
        self._inplace(lambda: _ops.bitwise_or(self, o), o)
        return self

    def __ixor__(self, o):
        self._inplace(lambda: _ops.bitwise_xor(self, o), o)
        return self

    def __ilshift__(self, o):
        self._inplace(lambda: _ops.bitwise_left_shift(self, o), o)
        return self

    def __irshift__(self, o):
        self._inplace(lambda: _ops.bitwise_right_shift(self, o), o)
        return self

    def add_(self, o, alpha=1):
        """In place ``x += alpha * o`` (PyTorch's ``add_``; see ``_inplace`` for the tape rules)."""
        self._inplace(lambda: _ops.add(self, o if alpha == 1 else _ops.multiply(o, alpha)), o)
        return self

    def sub_(self, o, alpha=1):
        """In place ``x -= alpha * o``."""
        self._inplace(
            lambda: _ops.subtract(self, o if alpha == 1 else _ops.multiply(o, alpha)), o)
        return self

    def mul_(self, o):
        """In place ``x *= o``."""
        self._inplace(lambda: _ops.multiply(self, o), o)
        return self

    def div_(self, o):
        """In place ``x /= o``."""
        self._inplace(lambda: _ops.divide(self, o), o)
        return self

    def pow_(self, o):
        """In place ``x = x ** o``."""
        self._inplace(lambda: _ops.power(self, o), o)
        return self

    def zero_(self):
        """In place: set every entry to 0 (no gradient flows to the old value)."""
        self._inplace(lambda: _ops.zeros_like(self))
        return self

    def fill_(self, value):
        """In place: set every entry to ``value``."""
        self._inplace(lambda: _ops.full_like(self, value), value)
        return self

    def copy_(self, src):
        """In place: take the values of ``src`` (cast and broadcast to this tensor); the
        gradient flows to ``src``."""
        self._inplace(lambda: _ops.broadcast_to(_ops.cast(src, self.dtype), self.shape), src)
        return self

    def clamp_(self, min=None, max=None):
        """In place ``clip(x, min, max)`` (gradient strictly inside the interval, as ``clip``)."""
        self._inplace(lambda: _ops.clip(self, min, max), min, max)
        return self

    def masked_fill_(self, mask, value):
        """In place ``masked_fill(x, mask, value)``."""
        self._inplace(lambda: _ops.masked_fill(self, mask, value), value)
        return self

    def _inplace(self, compute, *others):
        """Run an in-place operation: ``compute()`` makes the new value from this tensor (and
        ``others``), which then replaces it (``_update``).

        PyTorch's rule: an in-place operation on a tensor some pending backward still needs
        raises at that backward, but the operation's own need for the old value is met (PyTorch
        saves a copy of it). Here the old buffer is never overwritten, so meeting that need is
        free: the version is advanced before ``compute`` runs, so what the operation's own
        nodes save is told apart from what earlier consumers saved, and after the update those
        saved entries are pointed at a tensor holding the old buffer and history. Earlier
        consumers still see the version change and raise."""
        # traced values and tracers: nothing is saved by version (EagerTensor overrides this)
        self._update(compute())

    def _update(self, new):
        """Every in-place operation ends here. Tensors are values, they share no memory, so
        views are emulated where it is sound: a basic-indexing result (``x[0]``, ``x[1:, 2]``)
        and a reshape remember their base, and updating them writes through (``x[0].zero_()``,
        ``row = x[0]; row += 1``, ``y = x.reshape(-1); y[0] = 5`` change ``x``, as in NumPy and
        PyTorch). The results of other view-like operations (transpose, broadcast_to,
        diagonal, real/imag, detach) refuse in-place updates rather than silently not changing
        their base. (When such an operation changes nothing it returns the tensor itself,
        which updates normally.)"""
        what = getattr(self, "_view_of", None)
        if type(what) is DataView:
            what.base._set_data(new)
            self._assign(_ops.stop_gradient(new))
            return
        if type(what) is tuple:  # an index view (base, index) or a reshape (base, RESHAPED)
            base, index = what
            if index is RESHAPED:
                base._update(_ops.reshape(new, base.shape))
            else:
                base._update(_ops.setitem(base, index, new))  # views of views: recursive
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
        """``tenferro.reshape``; the shape as one tuple or as separate ints (one may be -1)."""
        return _ops.reshape(self, shape[0] if len(shape) == 1 and not isinstance(
            shape[0], int) else shape)

    def view(self, *shape):
        """PyTorch's ``view(*shape)``: ``reshape`` (tensors are values: no memory is shared).
        ``view(dtype)`` (NumPy's and PyTorch's reinterpretation of the bytes) raises."""
        if len(shape) == 1 and isinstance(shape[0], (type, np.dtype, str)):
            raise DTypeError(
                f"view({shape[0]!r}): reinterpreting the bytes as another dtype is not "
                f"supported (tenferro tensors have no byte layout); convert the values with "
                f"x.astype(dtype).")
        return self.reshape(*shape)

    def transpose(self, *axes):
        """NumPy's ``transpose(axes)`` (a permutation, given as one tuple or as separate ints;
        none reverses the axes) and PyTorch's ``transpose(dim0, dim1)`` (swap two axes).

        The rule: one tuple, or as many ints as axes, is a NumPy permutation; two separate
        ints are PyTorch's swap whenever NumPy would not accept them (any tensor that is not
        2-D, or a repeated axis). On a 2-D tensor, ``transpose(1, 0)`` means the same in both;
        ``transpose(0, 1)`` is the identity in NumPy and a swap in PyTorch, so it raises and
        asks for an unambiguous spelling (``x.T``, ``x.t()``, ``x.swapaxes(0, 1)``, or
        ``x.transpose((0, 1))`` for the identity)."""
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            return _ops.transpose(self, axes[0])
        if len(axes) == 2 and all(isinstance(a, (int, np.integer)) for a in axes):
            n = self.ndim
            if n != 2:
                return _ops.swapaxes(self, *axes)
            a, b = (int(a) + 2 if -2 <= a < 0 else int(a) for a in axes)
            if a == b:  # NumPy: repeated axis; PyTorch: swap an axis with itself
                return _ops.swapaxes(self, *axes)
            if (a, b) == (0, 1):
                raise DialectError(
                    f"transpose{tuple(axes)} on a 2-D tensor {tuple(self.shape)} is ambiguous: "
                    f"NumPy reads it as the identity permutation, PyTorch as a swap of the two "
                    f"axes. Write x.T, x.t() or x.swapaxes(0, 1) for the swap, or "
                    f"x.transpose((0, 1)) for the identity."
                )
        return _ops.transpose(self, axes or None)

    def t(self):
        """PyTorch's ``t()``: the transpose of a matrix; 0-d and 1-D tensors are returned as
        they are."""
        if self.ndim > 2:
            raise ShapeError(
                f"t() expects a tensor with at most 2 axes, got shape {tuple(self.shape)}; use "
                f"x.mT or x.swapaxes(-1, -2)."
            )
        return self if self.ndim < 2 else _ops.swapaxes(self, 0, 1)

    def permute(self, *axes):
        """Permute the axes (PyTorch's ``permute``; NumPy's ``transpose(axes)``)."""
        return _ops.transpose(self, axes[0] if len(axes) == 1 else axes)

    @property
    def T(self):
        """The axes reversed (NumPy's ``.T``; a matrix transpose for 2-D)."""
        return _ops.transpose(self)

    @property
    def mT(self):
        """The last two axes swapped (a batch of matrix transposes)."""
        return _ops.swapaxes(self, -1, -2)

    @property
    def mH(self):
        """The conjugate transpose of the last two axes."""
        return _ops.conj(_ops.swapaxes(self, -1, -2))

    def swapaxes(self, axis1, axis2):
        """Swap axes ``axis1`` and ``axis2`` (NumPy's names)."""
        return _ops.swapaxes(self, axis1, axis2)

    def flatten(self, start_dim=0, end_dim=-1):
        """PyTorch's ``flatten(start_dim=0, end_dim=-1)``: merge those axes (inclusive). With
        no arguments both libraries mean the same (a 1-D copy); NumPy's ``flatten('C')``
        order argument is accepted ('C' only)."""
        if isinstance(start_dim, str):
            if start_dim not in ("C", "A", "K"):
                raise ValueError(
                    f"flatten: only C order is supported, got {start_dim!r} (tenferro tensors "
                    f"have no memory layout; transpose first for Fortran order)."
                )
            return _ops.reshape(self, (-1,))
        return _ops.flatten(self, start_dim, end_dim)

    def ravel(self):
        """The entries as a 1-D tensor (C order)."""
        return _ops.reshape(self, (-1,))

    def squeeze(self, axis=None, *, dim=None):
        """NumPy's ``squeeze(axis)``: remove axes of length 1 (``axis``: only those, which must
        have length 1). PyTorch's ``dim=`` keyword keeps named axes whose length is not 1."""
        return _ops.squeeze(self, axis, dim=dim)

    def flip(self, *dims):
        """PyTorch's ``flip(dims)`` (ndarray has no ``flip`` method): reverse the given axes,
        as one tuple or separate ints."""
        if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)):
            dims = tuple(dims[0])
        if not dims:
            raise TypeError("flip: give the axes to reverse (PyTorch's flip(dims)); "
                            "tenferro.flip(x) reverses all of them.")
        return _ops.flip(self, dims)

    def roll(self, shifts, dims=None):
        """PyTorch's ``roll(shifts, dims=None)`` (``tenferro.roll``, which is NumPy's with the
        same meaning)."""
        return _ops.roll(self, shifts, dims)

    def unsqueeze(self, axis):
        """Insert an axis of length 1 at ``axis`` (PyTorch's name of ``expand_dims``)."""
        return _ops.expand_dims(self, axis)

    def expand_dims(self, axis):
        """Insert an axis of length 1 at ``axis``."""
        return _ops.expand_dims(self, axis)

    def broadcast_to(self, shape):
        """Broadcast to ``shape`` (NumPy rules); the cotangent is summed back."""
        return _ops.broadcast_to(self, shape)

    def expand(self, *sizes):
        """PyTorch's ``expand(*sizes)``: ``broadcast_to`` where -1 keeps an existing axis's
        length and new axes are added in front. Linear: cotangents are summed back."""
        if len(sizes) == 1 and not isinstance(sizes[0], (int, np.integer)):
            sizes = tuple(sizes[0])
        lead = len(sizes) - self.ndim
        if lead < 0:
            raise ShapeError(
                f"expand{tuple(sizes)}: give at least one size per axis of the tensor of "
                f"shape {tuple(self.shape)}."
            )
        shape = []
        for i, s in enumerate(sizes):
            if s == -1:
                if i < lead:
                    raise ShapeError(f"expand{tuple(sizes)}: -1 is not allowed for a new "
                                     f"leading axis.")
                s = self.shape[i - lead]
            shape.append(s)
        return _ops.broadcast_to(self, tuple(shape))

    def expand_as(self, other):
        """``expand`` to ``other``'s shape."""
        return _ops.broadcast_to(self, tuple(other.shape))

    def view_as(self, other):
        """``reshape`` to ``other``'s shape."""
        return _ops.reshape(self, tuple(other.shape))

    def repeat(self, repeats, *more, axis=None):
        """NumPy's ``repeat(repeats, axis=None)``: every element repeated (``tenferro.repeat``).

        PyTorch's ``x.repeat(*sizes)`` (tiling) has the same name and different semantics;
        NumPy's wins here, because ``tenferro.repeat`` is NumPy's. PyTorch's is spelled
        ``x.tile(*sizes)`` (the same for ``len(sizes) >= x.ndim``). Calls that can only be
        PyTorch's (three or more sizes, or an axis that does not exist) raise and point there."""
        if len(more) > 1 or (more and axis is not None):
            raise TypeError(
                f"repeat{(repeats, *more)}: NumPy's repeat takes (repeats, axis); for "
                f"PyTorch's x.repeat(*sizes) (tiling) write x.tile{(repeats, *more)}."
            )
        if more:
            axis = more[0]
        if axis is not None and not -self.ndim <= axis < self.ndim:
            raise ShapeError(
                f"repeat({repeats}, {axis}): axis {axis} does not exist for shape "
                f"{tuple(self.shape)}. For PyTorch's x.repeat(*sizes) (tiling) write "
                f"x.tile({repeats}, {axis})."
            )
        return _ops.repeat(self, repeats, axis)

    def tile(self, *reps):
        """NumPy's ``tile(reps)`` (PyTorch's ``x.repeat(*sizes)`` / ``x.tile``); sizes may be
        given as one tuple or as separate ints."""
        if len(reps) == 1 and not isinstance(reps[0], (int, np.integer)):
            reps = tuple(reps[0])
        return _ops.tile(self, reps)

    # Reductions take NumPy's ``axis``/``keepdims`` and PyTorch's ``dim``/``keepdim``
    # (positionally the two agree: ``x.sum(1, True)``).
    def sum(self, axis=None, keepdims=False, *, dim=None, keepdim=None, dtype=None):
        """Sum over ``axis`` (alias ``dim``), all axes by default."""
        axis, keepdims = _reduction_args("sum", axis, keepdims, dim, keepdim)
        return _ops.sum(self, axis, keepdims=keepdims, dtype=dtype)

    def mean(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Mean over ``axis`` (alias ``dim``), all axes by default."""
        axis, keepdims = _reduction_args("mean", axis, keepdims, dim, keepdim)
        return _ops.mean(self, axis, keepdims=keepdims)

    def prod(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Product over ``axis`` (alias ``dim``), all axes by default."""
        axis, keepdims = _reduction_args("prod", axis, keepdims, dim, keepdim)
        return _ops.prod(self, axis, keepdims=keepdims)

    def max(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """NumPy's ``max(axis, keepdims)``: the values. With PyTorch's ``dim=`` keyword it is
        PyTorch's ``max(dim)``: a named pair ``(values, indices)``. Ties share the gradient
        equally (``tenferro.max``); the index is the first maximal one."""
        return self._extremum("max", axis, keepdims, dim, keepdim)

    def min(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """Like ``max``, for the minimum."""
        return self._extremum("min", axis, keepdims, dim, keepdim)

    def _extremum(self, name, axis, keepdims, dim, keepdim):
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        values = getattr(_ops, name)(self, ax, keepdims=kd)
        if dim is None:
            return values
        idx = getattr(_ops, "arg" + name)(self, ax)
        return MaxMin(values, _ops.expand_dims(idx, ax) if kd else idx)

    def argmax(self, axis=None, *, dim=None, keepdim=False):
        """Index of the maximum along ``axis`` (alias ``dim``); no derivative."""
        axis, keep = _reduction_args("argmax", axis, False, dim, keepdim)
        out = _ops.argmax(self, axis)
        return _ops.expand_dims(out, axis) if keep and axis is not None else out

    def argmin(self, axis=None, *, dim=None, keepdim=False):
        """Index of the minimum along ``axis`` (alias ``dim``); no derivative."""
        axis, keep = _reduction_args("argmin", axis, False, dim, keepdim)
        out = _ops.argmin(self, axis)
        return _ops.expand_dims(out, axis) if keep and axis is not None else out

    def cumsum(self, axis=None, *, dim=None):
        """Cumulative sum along ``axis`` (alias ``dim``)."""
        return _ops.cumsum(self, _reduction_args("cumsum", axis, False, dim, None)[0])

    def logsumexp(self, axis=None, keepdims=False, *, dim=None, keepdim=None):
        """log(sum(exp(x))) over ``axis`` (alias ``dim``), computed stably."""
        axis, keepdims = _reduction_args("logsumexp", axis, keepdims, dim, keepdim)
        return _ops.logsumexp(self, axis, keepdims=keepdims)

    def softmax(self, dim):
        """PyTorch's ``softmax(dim)`` (``tenferro.softmax(x, axis=dim)``)."""
        return _ops.softmax(self, dim)

    def log_softmax(self, dim):
        """PyTorch's ``log_softmax(dim)``."""
        return _ops.log_softmax(self, dim)

    def trace(self, offset=0, axis1=0, axis2=1):
        """Sum of the diagonal (``tenferro.matrix_trace``)."""
        return _ops.matrix_trace(self, offset, axis1, axis2)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        """The diagonal of the ``axis1``/``axis2`` planes (NumPy's order: diagonal last)."""
        return _ops.diagonal(self, offset, axis1, axis2)

    def conj(self):
        """Complex conjugate (the tensor itself for real dtypes)."""
        return _ops.conj(self)

    @property
    def real(self):
        """The real part."""
        return _ops.real(self)

    @property
    def imag(self):
        """The imaginary part (zeros for real dtypes)."""
        return _ops.imag(self)

    def abs(self):
        """|x|; derivative sign(x), 0 at 0 (``tenferro.abs``)."""
        return _ops.abs(self)

    def exp(self):
        """Elementwise exp."""
        return _ops.exp(self)

    def log(self):
        """Elementwise natural logarithm."""
        return _ops.log(self)

    def sqrt(self):
        """Elementwise square root (derivative infinite at 0, as 1/(2 sqrt x))."""
        return _ops.sqrt(self)

    def sin(self):
        """Elementwise sine."""
        return _ops.sin(self)

    def cos(self):
        """Elementwise cosine."""
        return _ops.cos(self)

    def tanh(self):
        """Elementwise hyperbolic tangent."""
        return _ops.tanh(self)

    def sigmoid(self):
        """1 / (1 + exp(-x)) (``tenferro.sigmoid``)."""
        return _ops.sigmoid(self)

    def relu(self):
        """max(x, 0) with derivative 0 at 0 (PyTorch's convention; ``tenferro.relu``)."""
        return _ops.relu(self)

    def pow(self, exponent):
        """``x ** exponent`` (PyTorch's ``pow``)."""
        return _ops.power(self, exponent)

    def masked_fill(self, mask, value):
        """``value`` where ``mask`` is true (``tenferro.masked_fill``)."""
        return _ops.masked_fill(self, mask, value)

    def index_select(self, dim, index):
        """Entries at the 1-D ``index`` along ``dim`` (``tenferro.index_select``)."""
        return _ops.index_select(self, dim, index)

    def gather(self, dim, index):
        """PyTorch's ``gather(dim, index)`` (``tenferro.gather``)."""
        return _ops.gather(self, dim, index)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """The ``k`` largest entries along ``dim`` and their indices (``tenferro.topk``)."""
        return _ops.topk(self, k, dim, largest, sorted)

    def chunk(self, chunks, dim=0):
        """PyTorch's ``chunk`` (``tenferro.chunk``): at most ``chunks`` pieces along ``dim``."""
        return _ops.chunk(self, chunks, dim)

    def split(self, split_size_or_sections, dim=0):
        """PyTorch's ``split`` (NumPy's ndarray has no ``split`` method): pieces of
        ``split_size`` entries along ``dim`` (the last one shorter), or of the listed sizes;
        a tuple. ``tenferro.split(x, ...)`` is NumPy's unless given ``dim=``."""
        return _ops.split(self, split_size_or_sections=split_size_or_sections, dim=dim)

    def index_add(self, dim, index, source, *, alpha=1):
        """PyTorch's ``index_add`` (``tenferro.index_add(x, dim, index, source)``)."""
        return _ops.index_add(self, dim, index, source, alpha=alpha)

    def index_add_(self, dim, index, source, *, alpha=1):
        """In place ``index_add`` (PyTorch's): ``source`` added along ``dim`` at ``index``."""
        self._inplace(lambda: _ops.index_add(self, dim, index, source, alpha=alpha), source)
        return self

    def scatter_add(self, dim, index, src):
        """PyTorch's ``scatter_add(dim, index, src)``."""
        return _ops.scatter_add(self, dim, index, src)

    def scatter_add_(self, dim, index, src):
        """In place PyTorch ``scatter_add``."""
        self._inplace(lambda: _ops.scatter_add(self, dim, index, src), src)
        return self

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """PyTorch's ``scatter(dim, index, src)`` (or ``value=``)."""
        return _ops.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        """In place PyTorch ``scatter``."""
        self._inplace(lambda: _ops.scatter(self, dim, index, src, value=value, reduce=reduce),
                      src)
        return self

    def sort(self, axis=-1, kind=None, order=None, *, dim=None, descending=None, stable=None):
        """NumPy's ``ndarray.sort(axis=-1)``: sorts in place and returns None. With PyTorch's
        keywords ``dim=``, ``descending=`` or ``stable=`` it is PyTorch's ``sort``: a named
        pair ``(values, indices)``, the tensor unchanged (``tenferro.sort``'s rule)."""
        if dim is None and descending is None and stable is None:
            self._inplace(lambda: _ops.sort(self, axis, kind, order))
            return None
        if dim is None:
            dim, axis = axis, -1
        return _ops.sort(self, axis, kind, order, dim=dim, descending=bool(descending))

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None,
            dim=None, keepdim=None, unbiased=None):
        """NumPy's ``ndarray.std(axis, dtype, out, ddof=0, keepdims)`` (population standard
        deviation); PyTorch's keywords ``dim=``/``keepdim=``/``unbiased=`` select PyTorch's
        (``correction`` 1 by default): ``tenferro.std``'s rule."""
        return _moment_method(self, "std", axis, dtype, out, ddof, keepdims, correction, dim,
                              keepdim, unbiased)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None,
            dim=None, keepdim=None, unbiased=None):
        """NumPy's ``ndarray.var``; PyTorch's with ``dim=``/``keepdim=``/``unbiased=``
        (``tenferro.var``'s rule)."""
        return _moment_method(self, "var", axis, dtype, out, ddof, keepdims, correction, dim,
                              keepdim, unbiased)

    def bmm(self, mat2):
        """Batched matrix product of 3-D tensors (``tenferro.bmm``)."""
        return _ops.bmm(self, mat2)

    def is_complex(self) -> bool:
        """Whether the dtype is complex."""
        return self.dtype.kind == "c"

    def is_floating_point(self) -> bool:
        """Whether the dtype is a real floating-point type."""
        return self.dtype.kind == "f"

    def contiguous(self):
        """The tensor itself (tenferro tensors have no memory layout to fix)."""
        return self

    def square(self):
        """Elementwise x * x."""
        return _ops.square(self)

    def clip(self, min=None, max=None):
        """``tenferro.clip``: x gets the gradient strictly inside [min, max], a bound where x
        is at or beyond it."""
        return _ops.clip(self, min, max)

    clamp = clip

    def astype(self, dtype, *, copy: bool = True):
        """Cast to ``dtype`` (differentiable between float and complex types); a new tensor
        unless ``copy=False`` and the dtype is already ``dtype`` (NumPy's ``astype``)."""
        return _ops.astype(self, dtype, copy=copy)

    # PyTorch's dtype casts. (Python's ``float(x)``/``int(x)``/``bool(x)`` of a one-element
    # tensor are ``__float__``/``__int__``/``__bool__``, not these methods.)
    def float(self):
        """Cast to float32, as PyTorch's ``x.float()`` (complex input raises: use ``x.real``)."""
        return _real_cast(self, "float", "float32")

    def double(self):
        """Cast to float64 (PyTorch's ``x.double()``; complex input raises: use ``x.real``)."""
        return _real_cast(self, "double", "float64")

    def long(self):
        """Cast to int64 (PyTorch's ``x.long()``; truncates toward zero)."""
        return _real_cast(self, "long", "int64")

    def int(self):
        """Cast to int32 (PyTorch's ``x.int()``; truncates toward zero)."""
        return _real_cast(self, "int", "int32")

    def bool(self):
        """Cast to bool (nonzero is True)."""
        return _ops.cast(self, np.dtype("bool"))

    def cdouble(self):
        """Cast to complex128."""
        return _ops.cast(self, np.dtype("complex128"))

    def cfloat(self):
        """Cast to complex64."""
        return _ops.cast(self, np.dtype("complex64"))

    def to(self, *args, dtype=None, device=None):
        """``to(device)``, ``to(dtype)``, or both. Device transfers are differentiable."""
        for a in args:
            if _is_device_name(a):
                device = a
            else:
                dtype = a
        out = self
        if dtype is not None:
            out = _ops.cast(out, dtype)
        if device is not None:
            out = _ops.to_device(out, device)
        return out

    def cpu(self):
        """``to('cpu')``: a differentiable transfer to the host."""
        return self.to("cpu")

    def dot(self, o):
        """NumPy's ``dot``."""
        return _ops.dot(self, o)

    def matmul(self, o):
        """``self @ o``."""
        return _ops.matmul(self, o)

    # ------------------------------------------------------ autograd (tape) surface
    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for ``backward()``."""
        return False

    def detach(self):
        """The same values without history (in-place updates of the result are refused)."""
        return mark_view(_ops.stop_gradient(self), self, "detach()")

    @property
    def data(self):
        """PyTorch's ``x.data``: the values without history. In-place updates of it write
        through to ``x`` without being recorded (``p.data.add_(...)``, ``p.data.copy_(...)``,
        ``p.data = t``), as in PyTorch, except that they advance ``x``'s version, so a pending
        backward that needs the old value raises instead of silently using the new one."""
        out = _ops.stop_gradient(self)
        if out is self:  # nothing to detach: a plain tensor is its own data
            return self
        out._view_of = DataView(self) if hasattr(self, "_version") else "x.data"
        return out

    @data.setter
    def data(self, value):
        self._set_data(value)

    def _set_data(self, value):
        """``x.data = value`` (EagerTensor implements it)."""
        raise GraphError(
            f"x.data = value is for eager tensors; this is a {type(self).__name__}, whose "
            f"values exist only when the graph runs. Compute the new value functionally."
        )

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Eager tensors only: accumulate gradients into the leaves' ``.grad``."""
        raise GradientError(
            f"backward() is for eager tensors; this is a {type(self).__name__}. Inside "
            f"transformations use tenferro.grad / vjp instead."
        )


def _moment_method(x, name, axis, dtype, out, ddof, keepdims, correction, dim, keepdim,
                   unbiased):
    if out is not None:
        raise TypeError(f"{name}: out= is not supported (tensors are values).")
    if dtype is not None:
        x = _ops.astype(x, dtype)
    return getattr(_ops, name)(x, axis, ddof, keepdims, correction=correction, dim=dim,
                               keepdim=keepdim, unbiased=unbiased)


def _reduction_args(op, axis, keepdims, dim, keepdim):
    """NumPy's ``axis``/``keepdims`` or PyTorch's ``dim``/``keepdim`` (not both)."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{op}: give axis or dim, not both.")
        axis = tuple(dim) if isinstance(dim, list) else dim
    if keepdim is not None:
        keepdims = keepdim
    return axis, keepdims


def _real_cast(x, name, dtype):
    if x.dtype.kind == "c":
        raise DTypeError(
            f"{name}(): casting complex {x.dtype} to {dtype} would drop the imaginary part; "
            f"take x.real (or x.abs()) first."
        )
    return _ops.cast(x, np.dtype(dtype))


class MaxMin(tuple):
    """``(values, indices)`` of ``x.max(dim=...)``/``x.min(dim=...)`` (PyTorch's
    ``torch.return_types.max``)."""

    __slots__ = ()

    def __new__(cls, values, indices):
        return tuple.__new__(cls, (values, indices))

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


class DataView:
    """What ``x.data`` is a view of: in-place updates replace ``x``'s values, unrecorded."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __str__(self):
        return "x.data"


class Size(int):
    """A tensor's ``size``: NumPy's element count (an ``int``, used as one everywhere), which
    PyTorch code may also call: ``x.size()`` is the shape (a tuple), ``x.size(d)`` the length of
    axis ``d``."""

    def __new__(cls, n: int, shape: tuple):
        self = int.__new__(cls, n)
        self._shape = shape
        return self

    def __reduce__(self):  # pickles and copies as the plain count
        return (int, (int(self),))

    def __call__(self, dim=None):
        if dim is None:
            return self._shape
        if not isinstance(dim, (int, np.integer)) or not -len(self._shape) <= dim < len(
                self._shape):

            raise ShapeError(
                f"size({dim!r}): a tensor of shape {self._shape} has axes "
                f"{-len(self._shape)}..{len(self._shape) - 1}."
            )
        return self._shape[dim]


RESHAPED = object()
"""The index of a reshape's view mark ``(base, RESHAPED)`` (see ``Tensor._update``)."""


def index_view(out, base, index):
    """Mark ``out = base[index]`` (basic indexing) as a view: in-place updates of ``out``
    write through to ``base`` (``_update``). The mark is the pair ``(base, index)``, a plain
    tuple: it is made on every indexing operation."""
    if out is not base:
        out._view_of = (base, index)
    return out


def mark_view(out, base, what):
    """Mark ``out`` as the result of a view-like operation on ``base`` (see ``_update``);
    ``base`` itself (nothing changed) stays an ordinary tensor."""
    if out is not base:
        out._view_of = what
    return out


def _is_device_name(a) -> bool:
    return isinstance(a, str) and a.split(":")[0].lower() in ("cpu", "cuda", "gpu", "strict")
