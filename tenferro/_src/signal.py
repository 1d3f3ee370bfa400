"""``tenferro.signal``: N-dimensional convolution and correlation with ``scipy.signal``'s names,
modes and output shapes, differentiable in both inputs.

``method="direct"`` gathers every window of the (zero-padded) first input with the ``im2col``
primitive and contracts it with the flipped second input (one ``dot_general``), so the
derivative in either input comes from those linear primitives' rules; ``method="fft"``
multiplies spectra from ``tenferro.fft`` (``rfftn`` for real inputs). ``"auto"`` picks the one
with the smaller operation count. Both give SciPy's results up to rounding, for real and
complex inputs; integer inputs are computed in floating point (SciPy keeps integers for
``direct``).
"""

from __future__ import annotations

import math

import numpy as np

from chainrules import primitives as P

from . import fft as _fft
from .core.dispatch import bind
from .core.tensor import Tensor
from .errors import ShapeError
from .ops import astype, conj, flip, real, reshape, tensor_of, tensordot
from .ops._base import to_inexact

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")
_METHODS = ("auto", "direct", "fft")


def _prepare(op: str, in1, in2, mode: str, method: str):
    if mode not in _MODES:
        raise ValueError(f"{op}: mode must be 'full', 'same' or 'valid', got {mode!r}.")
    if method not in _METHODS:
        raise ValueError(f"{op}: method must be 'auto', 'direct' or 'fft', got {method!r}.")
    a, b = to_inexact(tensor_of(in1)), to_inexact(tensor_of(in2))
    dt = np.result_type(a.dtype, b.dtype)
    a, b = astype(a, dt), astype(b, dt)
    if a.ndim != b.ndim:
        raise ShapeError(f"{op}: in1 {a.shape} and in2 {b.shape} must have the same number of "
                         f"axes (as scipy.signal); reshape one of them.")
    if 0 in a.shape or 0 in b.shape:
        raise ShapeError(f"{op}: empty input (in1 {a.shape}, in2 {b.shape}).")
    return a, b


def _swap_for_valid(op: str, a, b):
    """'valid' needs one input at least as large as the other on every axis; convolution is
    commutative, so the larger one goes first."""
    if all(m >= n for m, n in zip(a.shape, b.shape)):
        return a, b
    if all(m <= n for m, n in zip(a.shape, b.shape)):
        return b, a
    raise ShapeError(f"{op}: for mode='valid' one input must be at least as large as the other "
                     f"on every axis, got in1 {a.shape} and in2 {b.shape}.")


def _padding(mode: str, n1: tuple, n2: tuple) -> tuple:
    """(low, high) zero padding of in1 per axis so that the windows give the mode's output."""
    if mode == "full":
        return tuple((k - 1, k - 1) for k in n2)
    if mode == "valid":
        return tuple((0, 0) for _ in n2)
    # 'same': the full output's centre, of in1's size (SciPy's _centered: start (k - 1) // 2)
    return tuple((k - 1 - (k - 1) // 2, (k - 1) // 2) for k in n2)


def _direct(a: Tensor, b: Tensor, mode: str) -> Tensor:
    """sum_j a[k - j] b[j]: every window of the padded ``a`` against the flipped ``b``."""
    pad = _padding(mode, a.shape, b.shape)
    x = reshape(a, (1, 1) + a.shape)
    cols = bind(P.im2col_p, x, kernel_size=tuple(b.shape), strides=(1,) * a.ndim,
                padding=pad, dilation=(1,) * a.ndim)  # (1, *K, 1, *O)
    out_shape = cols.shape[a.ndim + 2:]
    cols = reshape(cols, (math.prod(b.shape), math.prod(out_shape)))
    kernel = reshape(flip(b), (math.prod(b.shape),))
    return reshape(tensordot(kernel, cols, 1), out_shape)


def _fft_conv(a: Tensor, b: Tensor, mode: str) -> Tensor:
    full = tuple(m + n - 1 for m, n in zip(a.shape, b.shape))
    axes = tuple(range(a.ndim))
    if a.dtype.kind == "c":
        out = _fft.ifftn(_fft.fftn(a, full, axes) * _fft.fftn(b, full, axes), full, axes)
    else:
        out = _fft.irfftn(_fft.rfftn(a, full, axes) * _fft.rfftn(b, full, axes), full, axes)
        out = astype(real(out), a.dtype) if out.dtype != a.dtype else out
    if mode == "full":
        return out
    if mode == "same":
        size = a.shape
    else:
        size = tuple(m - n + 1 for m, n in zip(a.shape, b.shape))
    start = [(f - s) // 2 if mode == "same" else n - 1
             for f, s, n in zip(full, size, b.shape)]
    return out[tuple(slice(i, i + s) for i, s in zip(start, size))]


def _choose(a: Tensor, b: Tensor, mode: str) -> str:
    """The cheaper method by operation count (SciPy's 'auto' also times; this only counts)."""
    pad = _padding(mode, a.shape, b.shape)
    out = math.prod(m + lo + hi - n + 1 for m, (lo, hi), n in zip(a.shape, pad, b.shape))
    direct = out * math.prod(b.shape)
    full = math.prod(m + n - 1 for m, n in zip(a.shape, b.shape))
    fft = 3 * full * max(math.log2(full), 1.0) * (4 if a.dtype.kind == "c" else 2)
    return "direct" if direct <= fft else "fft"


def convolve(in1, in2, mode: str = "full", method: str = "auto") -> Tensor:
    """``scipy.signal.convolve``: the N-d convolution ``sum_j in1[k - j] in2[j]`` of two arrays
    with the same number of axes. ``mode``: "full" (every overlap, size n1 + n2 - 1), "same"
    (in1's size, centred on the full output as SciPy) or "valid" (complete overlaps only,
    size |n1 - n2| + 1; one input must be at least as large as the other on every axis).
    ``method``: "direct", "fft" or "auto" (the smaller operation count). Differentiable in both
    inputs (their gradients are correlations)."""
    a, b = _prepare("convolve", in1, in2, mode, method)
    if a.ndim == 0:
        return a * b
    if mode == "valid":
        a, b = _swap_for_valid("convolve", a, b)
    if method == "auto":
        method = _choose(a, b, mode)
    return _direct(a, b, mode) if method == "direct" else _fft_conv(a, b, mode)


def correlate(in1, in2, mode: str = "full", method: str = "auto") -> Tensor:
    """``scipy.signal.correlate``: ``z[k] = sum_l in1[l] conj(in2[l - k + N - 1])`` (N-d),
    i.e. the convolution of ``in1`` with ``in2`` reversed and conjugated; modes and methods as
    ``convolve``. Differentiable in both inputs."""
    a, b = _prepare("correlate", in1, in2, mode, method)
    if a.ndim == 0:
        return a * conj(b)
    if mode == "valid" and not all(m >= n for m, n in zip(a.shape, b.shape)):
        if all(m <= n for m, n in zip(a.shape, b.shape)):
            # SciPy: correlate the swapped inputs and reverse (and conjugate) the result
            return conj(flip(correlate(b, a, mode, method)))
        _swap_for_valid("correlate", a, b)  # raises
    return convolve(a, flip(conj(b)), mode, method)
