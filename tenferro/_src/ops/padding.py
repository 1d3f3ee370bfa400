"""``pad`` with NumPy's signature and modes.

``constant`` padding is the ``pad`` primitive (one value per call; per-axis values pad one side
of one axis at a time, axes in order, so later axes own the corners as in NumPy). The copying
modes (``edge``, ``reflect``, ``symmetric``, ``wrap``) gather each axis with the source-index
map NumPy itself gives for ``arange(n)``, so their semantics match NumPy's exactly for any
width; the derivative of a copied entry goes back to its source (cotangents of copies add).
"""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.symbolic import Sym

from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import ShapeError
from ._base import tensor_of

__all__ = ["pad"]

_COPY_MODES = ("edge", "reflect", "symmetric", "wrap")
_UNSUPPORTED = ("linear_ramp", "maximum", "mean", "median", "minimum", "empty")


def _widths(op, pad_width, ndim):
    if _has_symbol(pad_width):
        return _run_time_widths(op, pad_width, ndim)
    try:
        pw = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    except ValueError as e:
        raise ShapeError(
            f"{op}: pad_width {pad_width!r} does not fit an array of rank {ndim}; give an int, "
            f"a (before, after) pair, or one pair per axis."
        ) from e
    if (pw < 0).any():
        raise ShapeError(f"{op}: negative pad widths {pad_width!r}; slice to crop instead.")
    return [(int(lo), int(hi)) for lo, hi in pw]


def _is_zero(w) -> bool:
    return not isinstance(w, Sym) and w == 0  # a run-time size is not known to be 0


def _has_symbol(w) -> bool:
    if isinstance(w, Sym):
        return True
    return isinstance(w, (tuple, list)) and any(_has_symbol(v) for v in w)


def _run_time_widths(op, pad_width, ndim):
    """Widths with run-time sizes (under ``jit``, e.g. a data-dependent truncation): the same
    three forms as NumPy's, written as Python numbers and sizes (no array conversion)."""
    w = pad_width
    if not isinstance(w, (tuple, list)):
        pairs = [(w, w)] * ndim
    elif len(w) == 2 and not any(isinstance(v, (tuple, list)) for v in w):
        pairs = [tuple(w)] * ndim
    elif len(w) == ndim and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in w):
        pairs = [tuple(p) for p in w]
    else:
        raise ShapeError(f"{op}: pad_width {pad_width!r} does not fit an array of rank {ndim}; "
                         f"give a size, a (before, after) pair, or one pair per axis.")
    for p in pairs:
        for v in p:
            if not isinstance(v, Sym) and (isinstance(v, bool) or not isinstance(v, int)
                                           or v < 0):
                raise ShapeError(f"{op}: pad widths must be non-negative integers or run-time "
                                 f"sizes, got {v!r} in {pad_width!r}.")
    return pairs


def _pad_axis(x, axis, lo, hi, value):
    cfg = tuple((lo, hi, 0) if i == axis else (0, 0, 0) for i in range(x.ndim))
    return bind(P.pad_p, x, value, padding_config=cfg)


def _constant(x, widths, constant_values):
    cv = constant_values
    if isinstance(cv, Tensor) or np.ndim(cv) == 0:
        v = tensor_of(cv, like=x, dtype=x.dtype)
        if v.ndim != 0:
            raise ShapeError(f"pad: constant_values must be a scalar, got shape {v.shape}.")
        cfg = tuple((lo, hi, 0) for lo, hi in widths)
        if all(_is_zero(lo) and _is_zero(hi) for lo, hi in widths):
            return x
        return bind(P.pad_p, x, v, padding_config=cfg)
    try:
        vals = np.broadcast_to(np.asarray(cv), (x.ndim, 2))
    except ValueError as e:
        raise ShapeError(
            f"pad: constant_values {cv!r} does not fit an array of rank {x.ndim}; give a "
            f"scalar, a (before, after) pair, or one pair per axis."
        ) from e
    for ax, (lo, hi) in enumerate(widths):
        for w, val, side in ((lo, vals[ax, 0], 0), (hi, vals[ax, 1], 1)):
            if w:
                v = tensor_of(val.item(), like=x, dtype=x.dtype)
                x = _pad_axis(x, ax, w if side == 0 else 0, w if side == 1 else 0, v)
    return x


def pad(array, pad_width, mode: str = "constant", **kwargs) -> Tensor:
    """Pad with NumPy's ``numpy.pad`` signature.

    ``pad_width``: an int, a (before, after) pair, or one pair per axis (under ``jit`` the
    widths may be run-time sizes, with ``mode="constant"``). ``mode``:
    ``"constant"`` (``constant_values``: a scalar, possibly a tensor, which is then
    differentiable; or NumPy's per-axis pairs), ``"edge"``, ``"reflect"``, ``"symmetric"``,
    ``"wrap"`` (``reflect_type="even"``, the default, only). Other NumPy modes
    (statistics, ``linear_ramp``, ``empty``, callables) raise ``ShapeError``.

    Derivative: padded constants carry none (except a tensor ``constant_values``); a copied
    entry passes its cotangent back to its source, where the copies add up."""
    x = tensor_of(array)
    widths = _widths("pad", pad_width, x.ndim)
    if mode == "constant":
        extra = set(kwargs) - {"constant_values"}
        if extra:
            raise ShapeError(f"pad: unexpected keyword(s) {sorted(extra)} for mode='constant'.")
        return _constant(x, widths, kwargs.get("constant_values", 0))
    if mode in _COPY_MODES:
        if _has_symbol(widths):
            raise ShapeError(f"pad: mode={mode!r} needs concrete widths (it copies entries by "
                             f"index); run-time sizes {pad_width!r} work with mode='constant'.")
        extra = set(kwargs) - {"reflect_type"}
        if extra:
            raise ShapeError(f"pad: unexpected keyword(s) {sorted(extra)} for mode={mode!r}.")
        if kwargs.get("reflect_type", "even") != "even":
            raise ShapeError("pad: reflect_type='odd' is not supported; use the default 'even'.")
        for ax, (lo, hi) in enumerate(widths):
            if lo == 0 and hi == 0:
                continue
            n = x.shape[ax]
            if n == 0:
                raise ShapeError(
                    f"pad: mode={mode!r} copies values, but axis {ax} of shape {x.shape} is empty."
                )
            idx = np.pad(np.arange(n, dtype=np.int64), (lo, hi), mode=mode)
            x = bind(P.gather_p, x, tensor_of(idx, like=x), axis=ax)
        return x
    if mode in _UNSUPPORTED or callable(mode):
        raise ShapeError(
            f"pad: mode={mode!r} is not supported; use 'constant', 'edge', 'reflect', "
            f"'symmetric' or 'wrap'."
        )
    raise ShapeError(
        f"pad: unknown mode {mode!r}; use 'constant', 'edge', 'reflect', 'symmetric' or 'wrap'."
    )
