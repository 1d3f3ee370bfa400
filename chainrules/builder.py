"""The ``Builder`` protocol and the helper methods rules are written with.

A builder has one required method, ``bind(prim, *args, **params)``. Everything else here is a
thin wrapper over it that also propagates symbolic ``Zero`` values through linear operations, so
rules can be written without special-casing zero tangents/cotangents. Helpers also accept Python
numbers where one operand is a value (they become constants of the other operand's dtype).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from numbers import Number

import numpy as np

from . import primitives as P
from .core import Primitive, ShapedArray, Zero, aval_of, out_avals
from .dtypes import is_complex, real_dtype


def _zero_out(prim: Primitive, args, params) -> Zero:
    return Zero(out_avals(prim, [aval_of(a) for a in args], params)[0])


class Builder(ABC):
    """Anything that can apply a primitive: eager evaluation, graph building, transforms."""

    @abstractmethod
    def bind(self, prim: Primitive, *args, **params):
        """Apply ``prim`` to ``args`` with static ``params``; return its output(s)."""

    # ----------------------------------------------------------------- constants
    def full(self, shape, value, dtype, device=None):
        return self.bind(
            P.full_p, shape=tuple(shape), value=value, dtype=np.dtype(dtype), device=device
        )

    def full_like(self, x, value, dtype=None):
        return self.full(x.shape, value, x.dtype if dtype is None else dtype, _device(x))

    def zeros_like(self, x, dtype=None):
        return self.full_like(x, 0, dtype)

    def ones_like(self, x, dtype=None):
        return self.full_like(x, 1, dtype)

    def iota(self, shape, dimension, dtype, device=None):
        return self.bind(
            P.iota_p, shape=tuple(shape), dimension=dimension, dtype=np.dtype(dtype),
            device=device,
        )

    def instantiate(self, x):
        """Turn a symbolic ``Zero`` into an actual zero value."""
        if type(x) is Zero:
            return self.full(x.aval.shape, 0, x.aval.dtype)
        return x

    def _const(self, c, like):
        return self.full_like(like, c) if isinstance(c, Number) else c

    # ------------------------------------------------------- linear (zero-aware)
    def add(self, x, y):
        if type(x) is Zero:
            return y
        if type(y) is Zero:
            return x
        return self.bind(P.add_p, self._const(x, y), self._const(y, x))

    def sub(self, x, y):
        if type(y) is Zero:
            return x
        if type(x) is Zero:
            return self.neg(y)
        return self.bind(P.sub_p, self._const(x, y), self._const(y, x))

    def neg(self, x):
        if type(x) is Zero:
            return x
        return self.bind(P.neg_p, x)

    def mul(self, x, y):
        if type(x) is Zero or type(y) is Zero:
            z = x if type(x) is Zero else y
            other = y if z is x else x
            dt = np.result_type(z.dtype, other.dtype) if not isinstance(other, Number) else z.dtype
            return Zero(ShapedArray(z.shape, dt))
        return self.bind(P.mul_p, self._const(x, y), self._const(y, x))

    def div(self, x, y):
        if type(x) is Zero:
            return x
        return self.bind(P.div_p, self._const(x, y), self._const(y, x))

    def conj(self, x):
        if type(x) is Zero or not is_complex(x.dtype):
            return x
        return self.bind(P.conj_p, x)

    def real(self, x):
        if not is_complex(x.dtype):
            return x
        if type(x) is Zero:
            return Zero(ShapedArray(x.shape, real_dtype(x.dtype)))
        return self.bind(P.real_p, x)

    def imag(self, x):
        if type(x) is Zero:
            return Zero(ShapedArray(x.shape, real_dtype(x.dtype)))
        if not is_complex(x.dtype):
            return Zero(aval_of(x))
        return self.bind(P.imag_p, x)

    def convert(self, x, dtype):
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        if type(x) is Zero:
            return Zero(ShapedArray(x.shape, dtype))
        return self.bind(P.convert_element_type_p, x, new_dtype=dtype)

    def _linear_unary(self, prim, x, **params):
        if type(x) is Zero:
            return _zero_out(prim, [x], params)
        return self.bind(prim, x, **params)

    def reduce_sum(self, x, axes):
        axes = tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
        if not axes:
            return x
        return self._linear_unary(P.reduce_sum_p, x, axes=axes)

    def reshape(self, x, shape):
        shape = tuple(shape)
        if tuple(x.shape) == shape:
            return x
        return self._linear_unary(P.reshape_p, x, new_sizes=shape)

    def permute(self, x, permutation):
        """Permute the axes of ``x`` (the ``transpose`` primitive; ``transpose`` in the
        linear-algebra sense is the rule of a linear primitive)."""
        permutation = tuple(permutation)
        if permutation == tuple(range(len(permutation))):
            return x
        return self._linear_unary(P.transpose_p, x, permutation=permutation)

    def broadcast_in_dim(self, x, shape, broadcast_dimensions):
        shape, bd = tuple(shape), tuple(broadcast_dimensions)
        if tuple(x.shape) == shape and bd == tuple(range(len(shape))):
            return x
        return self._linear_unary(P.broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=bd)

    def slice(self, x, start_indices, limit_indices, strides=None):
        strides = tuple(strides) if strides is not None else (1,) * x.ndim
        start, limit = tuple(start_indices), tuple(limit_indices)
        if start == (0,) * x.ndim and limit == tuple(x.shape) and strides == (1,) * x.ndim:
            return x
        return self._linear_unary(
            P.slice_p, x, start_indices=start, limit_indices=limit, strides=strides
        )

    def pad(self, x, padding_value, padding_config):
        cfg = tuple(tuple(c) for c in padding_config)
        pv_is_zero = type(padding_value) is Zero or (
            isinstance(padding_value, Number) and padding_value == 0)
        if type(x) is Zero and pv_is_zero:
            return _zero_out(P.pad_p, [x, ShapedArray((), x.dtype)], {"padding_config": cfg})
        if isinstance(padding_value, Number) or type(padding_value) is Zero:
            value = 0 if type(padding_value) is Zero else padding_value
            padding_value = self.full((), value, x.dtype)
        return self.bind(P.pad_p, self.instantiate(x), padding_value, padding_config=cfg)

    def concatenate(self, xs, dimension):
        xs = list(xs)
        if len(xs) == 1:
            return xs[0]
        if all(type(x) is Zero for x in xs):
            return _zero_out(P.concatenate_p, xs, {"dimension": dimension})
        return self.bind(P.concatenate_p, *[self.instantiate(x) for x in xs], dimension=dimension)

    def flip(self, x, axes):
        axes = tuple(axes)
        if not axes:
            return x
        return self._linear_unary(P.flip_p, x, axes=axes)

    def gather(self, x, indices, axis):
        if type(x) is Zero:
            return _zero_out(P.gather_p, [x, indices], {"axis": axis})
        return self.bind(P.gather_p, x, indices, axis=axis)

    def scatter_add(self, operand, indices, updates, axis):
        if type(operand) is Zero and type(updates) is Zero:
            return operand
        if type(updates) is Zero:
            return operand
        return self.bind(P.scatter_add_p, self.instantiate(operand), indices, updates, axis=axis)

    def diagonal(self, x, offset=0):
        return self._linear_unary(P.diagonal_p, x, offset=offset)

    def diag_embed(self, x, offset=0, dims=None):
        """Put the last axis on diagonal ``offset`` of (..., m, n) zeros; square by default."""
        if dims is None:
            k = x.shape[-1] + abs(offset)
            dims = (k, k)
        return self._linear_unary(P.diag_embed_p, x, offset=offset, dims=tuple(dims))

    def tril(self, x, k=0):
        return self._linear_unary(P.tril_p, x, k=k)

    def triu(self, x, k=0):
        return self._linear_unary(P.triu_p, x, k=k)

    def cumsum(self, x, axis, reverse=False):
        return self._linear_unary(P.cumsum_p, x, axis=axis, reverse=reverse)

    def select(self, pred, x, y):
        if type(x) is Zero and type(y) is Zero:
            return x
        return self.bind(P.select_p, pred, self.instantiate(x), self.instantiate(y))

    def where_or_zero(self, pred, x):
        """``select(pred, x, 0)``, kept symbolic when ``x`` is a ``Zero``."""
        if type(x) is Zero:
            return x
        return self.bind(P.select_p, pred, x, self.zeros_like(x))

    def dot_general(self, x, y, dimension_numbers):
        dn = _canon_dn(dimension_numbers)
        if type(x) is Zero or type(y) is Zero:
            return _zero_out(P.dot_general_p, [x, y], {"dimension_numbers": dn})
        return self.bind(P.dot_general_p, x, y, dimension_numbers=dn)

    # -------------------------------------------------------------- nonlinear
    def _unary(name):
        prim = getattr(P, name + "_p")

        def method(self, x):
            return self.bind(prim, x)

        method.__name__ = name
        return method

    exp = _unary("exp")
    log = _unary("log")
    log1p = _unary("log1p")
    expm1 = _unary("expm1")
    sin = _unary("sin")
    cos = _unary("cos")
    tan = _unary("tan")
    tanh = _unary("tanh")
    sinh = _unary("sinh")
    cosh = _unary("cosh")
    arctan = _unary("arctan")
    sqrt = _unary("sqrt")
    rsqrt = _unary("rsqrt")
    square = _unary("square")
    abs = _unary("abs")
    sign = _unary("sign")
    logical_not = _unary("logical_not")
    isfinite = _unary("isfinite")
    del _unary

    def pow(self, x, y):
        return self.bind(P.pow_p, self._const(x, y), self._const(y, x))

    def pow_scalar(self, x, exponent):
        return self.bind(P.pow_scalar_p, x, exponent=exponent)

    def atan2(self, y, x):
        return self.bind(P.atan2_p, self._const(y, x), self._const(x, y))

    def maximum(self, x, y):
        return self.bind(P.maximum_p, self._const(x, y), self._const(y, x))

    def minimum(self, x, y):
        return self.bind(P.minimum_p, self._const(x, y), self._const(y, x))

    def clamp(self, x, lo, hi):
        return self.bind(P.clamp_p, x, self._const(lo, x), self._const(hi, x))

    def _compare(name):
        prim = getattr(P, name + "_p")

        def method(self, x, y):
            return self.bind(prim, self._const(x, y), self._const(y, x))

        method.__name__ = name
        return method

    eq = _compare("eq")
    ne = _compare("ne")
    lt = _compare("lt")
    le = _compare("le")
    gt = _compare("gt")
    ge = _compare("ge")
    logical_and = _compare("logical_and")
    logical_or = _compare("logical_or")
    del _compare

    def reduce_max(self, x, axes):
        return self.bind(P.reduce_max_p, x, axes=tuple(sorted(a % x.ndim for a in axes)))

    def reduce_min(self, x, axes):
        return self.bind(P.reduce_min_p, x, axes=tuple(sorted(a % x.ndim for a in axes)))

    def reduce_prod(self, x, axes):
        return self.bind(P.reduce_prod_p, x, axes=tuple(sorted(a % x.ndim for a in axes)))

    # ------------------------------------------------------------ compositions
    def reciprocal(self, x):
        return self.div(self.ones_like(x), x)

    def abs2(self, x):
        """|x|^2 as a real value."""
        if is_complex(x.dtype):
            return self.add(self.square(self.real(x)), self.square(self.imag(x)))
        return self.square(x)

    def sum_all(self, x):
        return self.reduce_sum(x, tuple(range(x.ndim)))

    def mT(self, x):
        """Swap the last two axes."""
        n = x.ndim
        return self.permute(x, tuple(range(n - 2)) + (n - 1, n - 2))

    def mH(self, x):
        """Conjugate transpose of the last two axes."""
        return self.conj(self.mT(x))

    def matmul(self, x, y):
        """Batched matrix product over the last two axes (equal leading batch shapes)."""
        nb = x.ndim - 2
        if y.ndim == x.ndim - 1:  # matrix @ vector
            batch = tuple(range(nb))
            return self.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 1,)), (batch, batch)))
        batch = tuple(range(nb))
        return self.dot_general(x, y, (((x.ndim - 1,), (y.ndim - 2,)), (batch, batch)))

    def eye_like(self, x, n=None, dtype=None):
        """Identity matrices of size ``n`` (default: last dim of x), batched like ``x``."""
        n = x.shape[-1] if n is None else n
        dtype = x.dtype if dtype is None else dtype
        i = self.iota((n, n), 0, np.int64, _device(x))
        j = self.iota((n, n), 1, np.int64, _device(x))
        return self.convert(self.eq(i, j), dtype)


def _device(x):
    return getattr(x, "device", None)


def _canon_dn(dn):
    (lc, rc), (lb, rb) = dn
    return ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
