"""The dialect rule: one top-level function for a name NumPy and PyTorch both use.

Top-level functions are NumPy's (and the array API's). PyTorch's keywords ``dim=`` and
``keepdim=`` (and its other keyword-only spellings: ``unbiased=``, ``dims=``, ``diagonal=``,
``split_size_or_sections=``) select PyTorch's meaning of the same call, return type included:
``max(x, dim=0)`` and ``sort(x, dim=1)`` return ``(values, indices)``, ``std(x, dim=0)`` is
the unbiased estimate. A positional call both libraries accept with different results raises
``DialectError`` naming both spellings, where the two readings can be told apart at all
(``split(x, 2)``, ``max(a, b)``). design/numpy-surface.md ("The dialect rule") lists every name
and its resolution; tests/numpy_api/test_dialect.py checks each row against NumPy and PyTorch.

This module holds the wrappers for names whose NumPy implementation lives elsewhere
(reductions.py, sorting.py, shape.py); each costs one Python call on top of it.
"""

from __future__ import annotations

import builtins
from collections import namedtuple

import numpy as np

from ..core.tensor import MaxMin, Tensor, _reduction_args
from ..errors import DialectError, DTypeError, ShapeError, named_argument_errors
from . import reductions as _r
from . import shape as _s
from . import sorting as _so
from ._base import normalize_axes, normalize_axis, tensor_of

SortResult = namedtuple("SortResult", ["values", "indices"])
"""``sort(x, dim=...)``'s result (PyTorch's ``torch.return_types.sort``)."""

_UNSET = object()


def _torch_mode(*kws) -> bool:
    return builtins.any(k is not None for k in kws)


# ---------------------------------------------------------------- max / min
def _refuse_second_tensor(op: str, axis) -> None:
    """``max(a, b)`` with a tensor ``b``: PyTorch's elementwise maximum, NumPy's error (its
    second argument is the axis)."""
    if not (isinstance(axis, Tensor) or isinstance(axis, np.ndarray) and axis.ndim):
        return  # an axis, valid or not (its own error names it)
    other = "maximum" if op in ("max", "amax") else "minimum"
    raise DialectError(
        f"{op}(a, b): the second argument of tenferro.{op} is an axis (NumPy's "
        f"{op}(a, axis)), got {type(axis).__name__}. For the elementwise {other} of two "
        f"tensors (PyTorch's torch.{op}(a, b)) write tenferro.{other}(a, b); for the "
        f"reduction with indices write {op}(a, dim=d).")


def _extremum(name: str):
    numpy_f = getattr(_r, name)
    arg_f = getattr(_r, "arg" + name)

    def f(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
        _refuse_second_tensor(name, axis)
        if dim is None and keepdim is None:
            return numpy_f(x, axis, keepdims)
        _refuse_second_tensor(name, dim)
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        values = numpy_f(x, ax, kd)
        if dim is None:  # keepdim= alone: PyTorch's full reduction, values only
            return values
        if not isinstance(dim, (int, np.integer)):
            raise ShapeError(f"{name}(x, dim={dim!r}): PyTorch's {name} with indices reduces one "
                             f"axis; for several write a{name}(x, dim={dim!r}) (values only).")
        idx = arg_f(x, ax, keepdims=kd)
        return MaxMin(values, idx)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"NumPy's ``{name}(x, axis, keepdims)``: the {name}imum values over ``axis`` (all "
        f"axes by default). With PyTorch's ``dim=`` keyword it is PyTorch's ``{name}(x, dim, "
        f"keepdim)``: a named pair ``(values, indices)`` (the first extremal index). "
        f"``{name}(a, b)`` with a tensor ``b`` raises ``DialectError`` pointing to "
        f"``{'maximum' if name == 'max' else 'minimum'}``. Gradient: ties share it equally "
        f"(PyTorch gives it to one entry). Complex input raises ``DTypeError``.")
    return f


max = _extremum("max")
min = _extremum("min")


def _values_extremum(name: str, numpy_f):
    def f(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
        _refuse_second_tensor(name, axis)
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        return numpy_f(x, ax, kd)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"The {name[1:]}imum values over ``axis``/``dim`` (several axes allowed; "
                 f"NumPy's and PyTorch's ``{name}`` agree: values only). Ties share the "
                 f"gradient equally (PyTorch's ``{name}`` too).")
    return f


amax = _values_extremum("amax", _r.max)
amin = _values_extremum("amin", _r.min)


def _arg(name: str):
    numpy_f = getattr(_r, name)

    def f(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        return numpy_f(x, ax, kd)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = numpy_f.__doc__ + " PyTorch's ``dim``/``keepdim`` mean the same."
    return f


argmax = _arg("argmax")
argmin = _arg("argmin")


def _logical(name: str):
    numpy_f = getattr(_r, name)

    def f(x, axis=None, keepdims=False, *, dim=None, keepdim=None):
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        return numpy_f(x, ax, kd)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = numpy_f.__doc__ + " PyTorch's ``dim``/``keepdim`` mean the same."
    return f


all = _logical("all")
any = _logical("any")


# ---------------------------------------------------------------- std / var
def _moment(name: str):
    numpy_f = getattr(_r, name)

    def f(x, axis=None, ddof=0, keepdims=False, *, correction=None, dim=None, keepdim=None,
          unbiased=None):
        if not _torch_mode(dim, keepdim, unbiased):
            return numpy_f(x, axis, ddof, keepdims, correction=correction)
        if ddof != 0:
            raise DialectError(f"{name}: give NumPy's ddof or PyTorch's dim=/unbiased=, not "
                               f"both (PyTorch's count is correction=).")
        if unbiased is not None and correction is not None:
            raise DTypeError(f"{name}: give unbiased or correction, not both.")
        ax, kd = _reduction_args(name, axis, keepdims, dim, keepdim)
        if correction is None:
            correction = 0 if unbiased is False else 1
        return numpy_f(x, ax, 0, kd, correction=correction)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (
        f"NumPy's ``{name}(x, axis, ddof=0, keepdims)`` (population {name} by default; the "
        f"array API's ``correction=`` is ``ddof``). With PyTorch's ``dim=``, ``keepdim=`` or "
        f"``unbiased=`` keywords it is PyTorch's ``{name}``: ``correction`` defaults to 1 "
        f"(the unbiased estimate), ``unbiased=False`` gives 0. Derivative as ``{name}``.")
    return f


var = _moment("var")
std = _moment("std")


# ------------------------------------------------------------- softmax family
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, *, dim=None,
              keepdim=None):
    """SciPy's ``logsumexp(a, axis, b, keepdims, return_sign)``; PyTorch's ``dim``/
    ``keepdim`` mean ``axis``/``keepdims`` (both libraries agree)."""
    if dim is not None or keepdim is not None:
        axis, keepdims = _reduction_args("logsumexp", axis, keepdims, dim, keepdim)
    return _r.logsumexp(a, axis, b, keepdims, return_sign)


def softmax(x, axis=-1, *, dim=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``axis`` (PyTorch's ``dim``), computed stably."""
    if dim is not None:
        axis = _reduction_args("softmax", None if axis == -1 else axis, False, dim, None)[0]
    return _r.softmax(x, axis)


def log_softmax(x, axis=-1, *, dim=None) -> Tensor:
    """x - logsumexp(x) along ``axis`` (PyTorch's ``dim``), computed stably."""
    if dim is not None:
        axis = _reduction_args("log_softmax", None if axis == -1 else axis, False, dim,
                               None)[0]
    return _r.log_softmax(x, axis)


# ---------------------------------------------------------------- sort
def sort(a, axis=-1, kind=None, order=None, *, descending: bool = False, stable=None,
         dim=None):
    """NumPy's ``sort(a, axis=-1)`` (and the array API's ``descending``/``stable``): the
    sorted values. With PyTorch's ``dim=`` keyword it is PyTorch's ``sort(x, dim,
    descending, stable)``: a named pair ``(values, indices)``; the order is always stable
    (PyTorch's default order of ties is unspecified). Derivative: each value carries the
    derivative of the entry it came from."""
    if dim is None:
        return _so.sort(a, axis, kind, order, descending=descending, stable=stable)
    ax = _reduction_args("sort", None if axis == -1 else axis, False, dim, None)[0]
    x = tensor_of(a)
    if x.ndim == 0:
        return SortResult(x, _s.reshape(_so.argsort(_s.reshape(x, (1,))), ()))
    idx = _so.argsort(x, ax, descending=descending)
    return SortResult(_so.take_along_axis(x, idx, ax), idx)


def argsort(a, axis=-1, kind=None, order=None, *, descending: bool = False, stable=None,
            dim=None) -> Tensor:
    """The permutation sorting ``a`` along ``axis`` (PyTorch's ``dim`` means the same), stable
    (NumPy's ``kind='stable'``, the array API's default); no derivative."""
    if dim is not None:
        axis = _reduction_args("argsort", None if axis == -1 else axis, False, dim, None)[0]
    return _so.argsort(a, axis, kind, order, descending=descending, stable=stable)


# ---------------------------------------------------------------- split
def _torch_split(op: str, x, size_or_sections, dim) -> tuple:
    """PyTorch's ``split``: pieces of ``size`` along ``dim`` (the last one shorter), or of
    the listed sizes, which must add up to the axis length."""
    x = tensor_of(x)
    ax = normalize_axis(op, dim, x.ndim)
    n = x.shape[ax]
    if isinstance(size_or_sections, (int, np.integer)) and not isinstance(size_or_sections,
                                                                          bool):
        k = int(size_or_sections)
        if k < 1 and not (k == 0 and n == 0):
            raise ShapeError(f"{op}: the split size must be >= 1, got {k}.")
        sizes = [k] * (n // k) + ([n % k] if n % k else []) if k else [0]
    else:
        sizes = [int(s) for s in size_or_sections]
        if builtins.any(s < 0 for s in sizes) or builtins.sum(sizes) != n:
            raise ShapeError(f"{op}: the sizes {sizes} must be >= 0 and add up to the length "
                             f"{n} of axis {dim}.")
    out, lo = [], 0
    for s in sizes:
        out.append(_s.slice_axis(x, ax, lo, lo + s))
        lo += s
    return tuple(out)



@named_argument_errors("split")
def split(x, indices_or_sections=_UNSET, *args, axis=_UNSET, dim=None,
          split_size_or_sections=_UNSET):
    """NumPy's ``split(x, indices_or_sections, axis=0)`` (``k`` equal pieces, or cuts at the
    listed positions; a list) and PyTorch's ``split(x, split_size_or_sections, dim=0)``
    (pieces of ``k`` entries, or of the listed sizes; a tuple).

    The keywords decide: ``axis=`` (or ``indices_or_sections=``) is NumPy's,
    ``dim=`` (or ``split_size_or_sections=``) PyTorch's. A positional call is read the only
    way that is valid when one of the two readings is invalid (NumPy's ``k`` must divide
    the length, PyTorch's sizes must add up to it) or both give the same pieces; otherwise
    it raises ``DialectError`` naming both spellings. Linear (slices)."""
    torch_kw = dim is not None or split_size_or_sections is not _UNSET
    numpy_kw = axis is not _UNSET
    if len(args) > 1:
        raise DTypeError(f"split: takes (x, sections, axis), got {2 + len(args)} positional "
                        f"arguments.")
    if torch_kw and numpy_kw:
        raise DialectError("split: give NumPy's axis= or PyTorch's dim=, not both.")
    if split_size_or_sections is not _UNSET:
        if indices_or_sections is not _UNSET:
            raise DTypeError("split: the sections are given twice.")
        indices_or_sections = split_size_or_sections
    if indices_or_sections is _UNSET:
        raise DTypeError("split: missing the sections (NumPy's indices_or_sections, PyTorch's "
                        "split_size_or_sections).")
    if args:
        if torch_kw or numpy_kw:
            raise DTypeError("split: the axis is given twice.")
        ax = args[0]
    elif numpy_kw:
        ax = axis
    elif dim is not None:
        ax = dim
    else:
        ax = 0
    if numpy_kw:
        return _s.split(x, indices_or_sections, ax)
    if torch_kw:
        return _torch_split("split", x, indices_or_sections, ax)
    x = tensor_of(x)
    a = normalize_axis("split", ax, x.ndim)
    n = x.shape[a]
    s = indices_or_sections
    if isinstance(s, (int, np.integer)) and not isinstance(s, bool):
        k = int(s)
        numpy_ok = k >= 1 and n % k == 0
        torch_ok = k >= 1
        same = k * k == n
        numpy_text, torch_text = f"{k} equal pieces", f"pieces of {k} entries"
    else:
        s = [int(i) for i in s]
        numpy_ok = True
        torch_ok = builtins.sum(s) == n and builtins.all(i >= 0 for i in s)
        same = False
        numpy_text, torch_text = f"cuts at positions {s}", f"pieces of sizes {s}"
    if numpy_ok and torch_ok and not same:
        raise DialectError(
            f"split(x, {indices_or_sections!r}): on an axis of length {n} NumPy reads this as "
            f"{numpy_text}, PyTorch as {torch_text}. Write split(x, {indices_or_sections!r}, "
            f"axis={ax}) (or array_split) for NumPy's, split(x, {indices_or_sections!r}, "
            f"dim={ax}) or x.split({indices_or_sections!r}, {ax}) (or chunk) for PyTorch's.")
    if numpy_ok:
        return _s.split(x, indices_or_sections, ax)
    return _torch_split("split", x, indices_or_sections, ax)


# ---------------------------------------------------------------- shapes
def stack(xs, axis=0, *, dim=None) -> Tensor:
    """Join tensors of equal shape along a new axis ``axis`` (PyTorch's ``dim``)."""
    if dim is not None:
        axis = _reduction_args("stack", None if axis == 0 else axis, False, dim, None)[0]
    return _s.stack(xs, axis)


def concatenate(xs, axis=0, *, dim=None) -> Tensor:
    """Join along an existing axis (PyTorch's ``dim``; ``axis=None`` joins the flattened
    tensors)."""
    if dim is not None:
        axis = _reduction_args("concatenate", None if axis == 0 else axis, False, dim, None)[0]
    return _s.concatenate(xs, axis)


def squeeze(x, axis=None, *, dim=None) -> Tensor:
    """NumPy's ``squeeze(x, axis)``: drop size-1 axes (all, or the named ones, which must
    have size 1). With PyTorch's ``dim=`` it is PyTorch's: the named axes are dropped where
    their size is 1 and kept otherwise."""
    if dim is None:
        return _s.squeeze(x, axis)
    if axis is not None:
        raise DTypeError("squeeze: give axis or dim, not both.")
    x = tensor_of(x)
    if x.ndim == 0:
        return x
    axes = normalize_axes("squeeze", dim, x.ndim)
    keep = tuple(a for a in axes if x.shape[a].__class__ is int and x.shape[a] == 1)
    return _s.squeeze(x, keep) if keep else x


def flip(x, axis=None, *, dims=None) -> Tensor:
    """Reverse along ``axis`` (PyTorch's ``dims``; all axes by default). Linear."""
    if dims is not None:
        axis = _reduction_args("flip", axis, False, dims, None)[0]
    return _s.flip(x, axis)


def tril(x, /, k=0, *, diagonal=None) -> Tensor:
    """The lower triangle (on and below diagonal ``k``, PyTorch's ``diagonal``) of the last
    two axes; zeros elsewhere."""
    return _s.tril(x, k if diagonal is None else _one("tril", k, diagonal))


def triu(x, /, k=0, *, diagonal=None) -> Tensor:
    """The upper triangle (on and above diagonal ``k``, PyTorch's ``diagonal``) of the last
    two axes; zeros elsewhere."""
    return _s.triu(x, k if diagonal is None else _one("triu", k, diagonal))


def _one(op, k, diagonal):
    if k != 0:
        raise DTypeError(f"{op}: give k or diagonal, not both.")
    return diagonal


def transpose(x, axes=None, *more) -> Tensor:
    """NumPy's ``transpose(x, axes)`` (a permutation; reversed by default). PyTorch's
    ``transpose(x, dim0, dim1)`` (a swap) is accepted: NumPy refuses three arguments."""
    if more:
        if len(more) != 1:
            raise DTypeError(f"transpose: takes (x, axes) or PyTorch's (x, dim0, dim1), got "
                            f"{2 + len(more)} positional arguments.")
        return _s.swapaxes(x, axes, more[0])
    return _s.transpose(x, axes)


__all__ = ["SortResult"]
