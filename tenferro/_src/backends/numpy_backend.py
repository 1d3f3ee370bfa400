"""The NumPy/SciPy backend (the default ``"cpu"`` device)."""

from __future__ import annotations

import functools

import numpy as np

from .base import Backend
from .eig import fix_eig_gauge, numpy_eig
from .linalg_ext import ScipyLinalg
from .malloc import tune_glibc_malloc
from .namespace import Namespace, copy_public
from .special import ScipySpecial


def _constant(shape, value, dtype):
    # Large constants are read-only broadcast views of a 0-d array (no allocation); small
    # ones are filled directly, which is faster than building a view.
    n = 1
    for d in shape:
        n *= d
    if n <= 4096:
        return np.full(shape, value, dtype)
    return np.broadcast_to(np.asarray(value, dtype=dtype), shape)


def _scatter_add(operand, indices, updates, axis):
    out = np.array(operand, copy=True)
    np.add.at(out, (slice(None),) * axis + (indices,), updates)
    return out


def _matmul(a, b):
    # np.dot is the cheaper call for plain matrices (same result as matmul there)
    return np.dot(a, b) if a.ndim == 2 and b.ndim == 2 else np.matmul(a, b)


def _reducer(ufunc):
    reduce = ufunc.reduce

    def f(x, axis=None, dtype=None, keepdims=False):  # NumPy's defaults (all axes)
        return reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)

    return f


def _logaddexp(x, y):
    # NumPy flags a NaN operand as "invalid value" here (not in exp or log): NaN in, NaN out
    with np.errstate(invalid="ignore"):
        return np.logaddexp(x, y)


def _to_numpy(arr):
    return np.asarray(arr)


def make_backend() -> Backend:
    tune_glibc_malloc()
    ns = Namespace()
    copy_public(ns, np)
    ns.linalg = np.linalg
    # array-API spellings through the cheaper ndarray methods (same semantics)
    ns.reshape = lambda x, shape, copy=None: x.reshape(shape)
    ns.permute_dims = lambda x, axes: x.transpose(axes)
    ns.matmul = _matmul
    ns.matmul_2d = np.dot  # two matrices: what _matmul calls (compiled graphs call it directly)
    # reductions straight to the ufunc reducers (np.sum & co. add ~1 us of Python per call)
    ns.sum = _reducer(np.add)
    ns.prod = _reducer(np.multiply)
    ns.max = _reducer(np.maximum)
    ns.min = _reducer(np.minimum)
    ns.constant = _constant
    ns.logaddexp = _logaddexp
    ns.scatter_add = _scatter_add
    ns.np_dtype = lambda d: d
    ns.to_numpy = _to_numpy
    ns.is_native = lambda a: isinstance(a, np.ndarray)
    ns.asarray = np.asarray
    ns.asarray_owned = lambda data, dtype=None: np.array(data, dtype=dtype, copy=True)
    ns.linalg_ext = ScipyLinalg(ns)
    ns.special = ScipySpecial()  # np.fft is already ns.fft
    ns.eig = numpy_eig
    ns.fix_eig_gauge = functools.partial(fix_eig_gauge, ns)
    return Backend("numpy", "cpu", ns)


@functools.cache
def host_xp():
    """The NumPy namespace for work done on the host at compile time (constant folding)."""
    return make_backend().xp
