"""Discrete Fourier transforms: ``fft`` (complex to complex over several axes), ``rfft`` (real
to the half spectrum along one axis) and ``irfft`` (its inverse).

All three are linear, so their JVP is the transform itself; the transpose is the adjoint under
<a, b> = Re sum conj(a) b. With R the unnormalised real-to-half-spectrum DFT and I the
unnormalised inverse (``irfft`` with ``norm="forward"``), and n the signal length:

* ``fft``: the adjoint of the unnormalised DFT is the unnormalised inverse DFT, so the transpose
  of ``fft(norm=m)`` is ``ifft(norm=dual(m))``, where ``dual`` swaps "backward" and "forward"
  (the scale 1, 1/sqrt(n), 1/n moves to the other side) and keeps "ortho".
* ``rfft``: <ct, R x> = Re sum_k conj(ct_k) sum_j x_j e^{-2 pi i jk/n} = sum_j x_j Re sum_k
  ct_k e^{+2 pi i jk/n}. ``I`` counts the interior frequencies 0 < k < n/2 twice (they stand for
  their conjugate partners) and the imaginary parts of k = 0 and k = n/2 not at all, so
  R^T ct = I(w ct) with w = 1 at k = 0 (and k = n/2 for even n) and w = 1/2 in between.
* ``irfft``: by the same bookkeeping I^T ct = c R ct with c = 1 at k = 0 (and n/2 for even n)
  and c = 2 in between: the Hermitian weighting of the half spectrum.

Parameters: ``norm`` is NumPy's ("backward", "ortho", "forward"); ``rfft``/``irfft`` act on one
axis (the user-facing ``rfftn`` runs ``fft`` over the other axes); ``irfft`` takes the output
length ``n`` and an input of length n // 2 + 1 (the user-facing layer crops or zero-pads).
"""

from __future__ import annotations

import math

from ..core import Primitive, ShapedArray, Zero
from ..dtypes import complex_dtype, int64, is_complex, real_dtype
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import BOOL, FFT_NORM, INT, INTS, LENGTH
from . import _batching
from ._checks import check_axes

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check_norm(op: str, norm) -> None:
    if norm not in _NORMS:
        raise ShapeError(f"{op}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}.")


def _fft_cost(in_avals, out_avals, **params):
    """About 5 N log2(L) flops for N complex points transformed along axes of total length L."""
    x = in_avals[0] if in_avals[0].dtype.kind == "c" else out_avals[0]
    if not x.is_static:
        return None
    if "axes" in params:
        length = math.prod(x.shape[a] for a in params["axes"])
    else:
        length = params.get("n") or in_avals[0].shape[params["axis"]]
    return int(5 * x.size * max(math.log2(max(length, 1)), 1))


# ------------------------------------------------------------------------------ fft
fft_p = Primitive(
    "fft", linear=True, cost=_fft_cost,
    params={"axes": INTS, "inverse": BOOL, "norm": FFT_NORM},
    convention="linear: the complex DFT (inverse=True: its inverse) over ``axes``; transpose "
    "ifft with the dual normalisation",
)


@fft_p.def_abstract_eval
def _fft_aval(x, *, axes, inverse, norm):
    if not is_complex(x.dtype):
        raise DTypeError(
            f"fft: the primitive expects a complex operand, got {fmt_aval(x)}; the tenferro.fft "
            f"functions convert real input."
        )
    check_axes("fft", axes, x.ndim)
    _check_norm("fft", norm)
    for a in axes:
        if x.shape[a] == 0:
            raise ShapeError(f"fft: axis {a} of {fmt_aval(x)} has length 0; nothing to transform.")
    return x


@fft_p.def_impl
def _fft_impl(xp, x, *, axes, inverse, norm):
    f = xp.fft.ifftn if inverse else xp.fft.fftn
    return f(x, axes=axes, norm=norm)


fft_p.def_jvp(
    lambda b, p, t, **params: (b.bind(fft_p, p[0], **params), _fft(b, t[0], **params))
)


def _fft(b, x, **params):
    if type(x) is Zero:
        return x
    return b.bind(fft_p, x, **params)


@fft_p.def_transpose
def _fft_transpose(b, ct, x, *, axes, inverse, norm):
    return (_fft(b, ct, axes=axes, inverse=not inverse, norm=_DUAL[norm]),)


# ---------------------------------------------------------------- half-spectrum weights
def _half_weights(b, shape, axis, n, interior, dtype, device):
    """Weights along ``axis`` (length n // 2 + 1) of a half spectrum: 1 at k = 0 and, for even
    n, at k = n / 2; ``interior`` in between. Shape ``shape``, dtype ``dtype``."""
    k = b.iota(shape, axis, int64, device)
    edge = b.eq(k, b.full(shape, 0, int64, device))
    if n % 2 == 0:
        edge = b.logical_or(edge, b.eq(k, b.full(shape, n // 2, int64, device)))
    return b.select(edge, b.full(shape, 1.0, dtype, device), b.full(shape, interior, dtype, device))


# ----------------------------------------------------------------------------- rfft
rfft_p = Primitive(
    "rfft", linear=True, cost=_fft_cost, params={"axis": INT, "norm": FFT_NORM},
    convention="linear: the DFT of real input along ``axis``, frequencies 0..n//2; transpose "
    "irfft of the half spectrum weighted 1/2 at the interior frequencies (dual normalisation)",
)


@rfft_p.def_abstract_eval
def _rfft_aval(x, *, axis, norm):
    if x.dtype.kind != "f":
        raise DTypeError(
            f"rfft: expected a real float operand, got {fmt_aval(x)}; use fft for complex input."
        )
    check_axes("rfft", (axis,), x.ndim)
    _check_norm("rfft", norm)
    n = x.shape[axis]
    if n == 0:
        raise ShapeError(f"rfft: axis {axis} of {fmt_aval(x)} has length 0.")
    shape = tuple(n // 2 + 1 if i == axis else d for i, d in enumerate(x.shape))
    return ShapedArray(shape, complex_dtype(x.dtype))


@rfft_p.def_impl
def _rfft_impl(xp, x, *, axis, norm):
    return xp.fft.rfft(x, axis=axis, norm=norm)


def _rfft(b, x, *, axis, norm):
    if type(x) is Zero:
        return Zero(_rfft_aval(x.aval, axis=axis, norm=norm))
    return b.bind(rfft_p, x, axis=axis, norm=norm)


rfft_p.def_jvp(lambda b, p, t, **params: (b.bind(rfft_p, p[0], **params), _rfft(b, t[0], **params)))


@rfft_p.def_transpose
def _rfft_transpose(b, ct, x, *, axis, norm):
    n = x.shape[axis]
    if type(ct) is Zero:
        return (Zero(x.aval),)
    w = _half_weights(b, ct.shape, axis, n, 0.5, ct.dtype, getattr(ct, "device", None))
    return (_irfft(b, b.mul(ct, w), axis=axis, n=n, norm=_DUAL[norm]),)


# ---------------------------------------------------------------------------- irfft
irfft_p = Primitive(
    "irfft", linear=True, cost=_fft_cost,
    params={"axis": INT, "n": LENGTH, "norm": FFT_NORM},
    convention="linear (over the reals): the real signal of length n whose half spectrum is the "
    "input (imaginary parts of the k = 0 and k = n/2 terms are ignored, as in NumPy); transpose "
    "rfft weighted 2 at the interior frequencies (dual normalisation)",
)


@irfft_p.def_abstract_eval
def _irfft_aval(x, *, axis, n, norm):
    if not is_complex(x.dtype):
        raise DTypeError(
            f"irfft: the primitive expects a complex half spectrum, got {fmt_aval(x)}; "
            f"tenferro.fft.irfft converts real input."
        )
    check_axes("irfft", (axis,), x.ndim)
    _check_norm("irfft", norm)
    if not (isinstance(n, int) and n >= 1):
        raise ShapeError(f"irfft: the output length n must be a positive int, got {n!r}.")
    if x.shape[axis] != n // 2 + 1:
        raise ShapeError(
            f"irfft: a signal of length n = {n} has a half spectrum of length {n // 2 + 1}, but "
            f"axis {axis} of {fmt_aval(x)} has length {x.shape[axis]}; tenferro.fft.irfft crops "
            f"or zero-pads for you."
        )
    shape = tuple(n if i == axis else d for i, d in enumerate(x.shape))
    return ShapedArray(shape, real_dtype(x.dtype))


@irfft_p.def_impl
def _irfft_impl(xp, x, *, axis, n, norm):
    return xp.fft.irfft(x, n=n, axis=axis, norm=norm)


def _irfft(b, x, *, axis, n, norm):
    if type(x) is Zero:
        return Zero(_irfft_aval(x.aval, axis=axis, n=n, norm=norm))
    return b.bind(irfft_p, x, axis=axis, n=n, norm=norm)


irfft_p.def_jvp(
    lambda b, p, t, **params: (b.bind(irfft_p, p[0], **params), _irfft(b, t[0], **params))
)


@irfft_p.def_transpose
def _irfft_transpose(b, ct, x, *, axis, n, norm):
    if type(ct) is Zero:
        return (Zero(x.aval),)
    spec = b.bind(rfft_p, ct, axis=axis, norm=_DUAL[norm])
    c = _half_weights(b, spec.shape, axis, n, 2.0, spec.dtype, getattr(ct, "device", None))
    return (b.mul(spec, c),)

_batching.axis_shift(fft_p, "axes")
_batching.axis_shift(rfft_p, "axis")
_batching.axis_shift(irfft_p, "axis")
