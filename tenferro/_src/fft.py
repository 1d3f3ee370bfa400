"""Implementation of ``tenferro.fft`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import complex_dtype

from .core.dispatch import bind
from .core.tensor import Tensor
from .errors import DTypeError, ShapeError
from .ops import asarray, conj, roll, tensor_of
from .ops._base import astype, normalize_axis
from .ops.shape import slice_axis

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


# ------------------------------------------------------------------------- helpers
def _norm(op: str, norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ShapeError(
            f"{op}: norm must be None, 'backward', 'ortho' or 'forward', got {norm!r}."
        )
    return norm


def _complex(x: Tensor) -> Tensor:
    return x if x.dtype.kind == "c" else astype(x, complex_dtype(x.dtype))


def _real(op: str, x: Tensor) -> Tensor:
    if x.dtype.kind == "c":
        raise DTypeError(
            f"{op}: expected real input, got {x.dtype} (NumPy raises too); use the full "
            f"transform ({op[1:]}) for complex input, or pass x.real."
        )
    return x if x.dtype.kind == "f" else astype(x, np.float64)


def _resize(op: str, x: Tensor, axis: int, n) -> Tensor:
    """Crop or zero-pad ``x`` along ``axis`` to length ``n`` (NumPy's ``n``/``s``)."""
    if n is None:
        return x
    n = int(n)
    if n < 1:
        raise ShapeError(f"{op}: invalid number of data points ({n}); it must be >= 1.")
    m = x.shape[axis]
    if n < m:
        return slice_axis(x, axis, 0, n)
    if n > m:
        cfg = tuple((0, n - m, 0) if i == axis else (0, 0, 0) for i in range(x.ndim))
        zero = tensor_of(0, like=x, dtype=x.dtype)
        return bind(P.pad_p, x, zero, padding_config=cfg)
    return x


def _axes_and_sizes(op: str, x: Tensor, s, axes):
    """NumPy's rules: ``axes`` default all axes, or the last len(s) when ``s`` is given."""
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(normalize_axis(op, a, x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: repeated axes {axes} are not supported; transform once per axis.")
    if s is None:
        s = (None,) * len(axes)
    s = tuple(s)
    if len(s) != len(axes):
        raise ShapeError(f"{op}: s {s} and axes {axes} must have the same length.")
    return axes, s


def _c2c(op: str, x, s, axes, norm, inverse: bool) -> Tensor:
    x = _complex(tensor_of(x))
    axes, s = _axes_and_sizes(op, x, s, axes)
    for a, n in zip(axes, s):
        x = _resize(op, x, a, n)
    if not axes:
        return x
    return bind(P.fft_p, x, axes=axes, inverse=inverse, norm=_norm(op, norm))


# ---------------------------------------------------------------- complex transforms
def fft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """One-dimensional DFT along ``axis``: y_k = sum_j x_j exp(-2 pi i jk / n). Linear."""
    return _c2c("fft", a, None if n is None else (n,), (axis,), norm, False)


def ifft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """Inverse of ``fft`` (1/n on this side with the default norm). Linear."""
    return _c2c("ifft", a, None if n is None else (n,), (axis,), norm, True)


def fftn(a, s=None, axes=None, norm=None) -> Tensor:
    """N-dimensional DFT over ``axes`` (default all, or the last len(s)). Linear."""
    return _c2c("fftn", a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm=None) -> Tensor:
    """Inverse of ``fftn``: (1/N) sum_k y_k exp(+2 pi i jk / N) per axis with the default
    norm. Linear."""
    return _c2c("ifftn", a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Two-dimensional DFT over ``axes`` (the last two by default). Linear."""
    return _c2c("fft2", a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """Inverse of ``fft2`` over ``axes`` (the last two by default). Linear."""
    return _c2c("ifft2", a, s, axes, norm, True)


# ------------------------------------------------------------------- real transforms
def rfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """DFT of real input along ``axis``, frequencies 0..n//2 (the others are their complex
    conjugates). Linear; its adjoint weights the interior frequencies by 1/2."""
    return rfftn(a, None if n is None else (n,), (axis,), norm)


def irfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """Inverse of ``rfft``: the real signal of length ``n`` (default 2 (m - 1) for m input
    frequencies) whose half spectrum is ``a`` (cropped or zero-padded to n // 2 + 1; the
    imaginary parts of the zero and, for even n, Nyquist frequencies are ignored, as NumPy).
    Linear over the reals."""
    return irfftn(a, None if n is None else (n,), (axis,), norm)


def rfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """N-dimensional DFT of real input: ``rfft`` over the last of ``axes``, then ``fft`` over
    the others. Linear."""
    x = _real("rfftn", tensor_of(a))
    axes, s = _axes_and_sizes("rfftn", x, s, axes)
    if not axes:
        raise ShapeError("rfftn: needs at least one axis to transform.")
    nm = _norm("rfftn", norm)
    for ax, n in zip(axes, s):
        x = _resize("rfftn", x, ax, n)
    y = bind(P.rfft_p, x, axis=axes[-1], norm=nm)
    if len(axes) > 1:
        y = bind(P.fft_p, y, axes=axes[:-1], inverse=False, norm=nm)
    return y


def irfftn(a, s=None, axes=None, norm=None) -> Tensor:
    """Inverse of ``rfftn``: ``ifft`` over all but the last of ``axes``, then ``irfft`` along
    the last, whose output length is s[-1] (default 2 (m - 1)). Linear over the reals."""
    x = _complex(tensor_of(a))
    axes, s = _axes_and_sizes("irfftn", x, s, axes)
    if not axes:
        raise ShapeError("irfftn: needs at least one axis to transform.")
    nm = _norm("irfftn", norm)
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _resize("irfftn", x, ax, n)
    if len(axes) > 1:
        x = bind(P.fft_p, x, axes=axes[:-1], inverse=True, norm=nm)
    last = axes[-1]
    n = s[-1] if s[-1] is not None else 2 * (x.shape[last] - 1)
    if int(n) < 1:
        raise ShapeError(
            f"irfftn: invalid output length {n} along axis {last} (an input of length "
            f"{x.shape[last]} gives 2 (m - 1) by default); pass n/s explicitly."
        )
    x = _resize("irfftn", x, last, int(n) // 2 + 1)
    return bind(P.irfft_p, x, axis=last, n=int(n), norm=nm)


def rfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """``rfftn`` over two axes (the last two by default)."""
    return rfftn(a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None) -> Tensor:
    """``irfftn`` over two axes (the last two by default)."""
    return irfftn(a, s, axes, norm)


# ------------------------------------------------------------ Hermitian transforms
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """DFT of a Hermitian-symmetric signal given by its first half ``a``: a real spectrum of
    length ``n`` (default 2 (m - 1)); ``irfft`` of conj(a) with the normalisation swapped, as
    NumPy. Linear over the reals."""
    x = _complex(tensor_of(a))
    return irfft(conj(x), n, axis, _SWAP[_norm("hfft", norm)])


def ihfft(a, n=None, axis: int = -1, norm=None) -> Tensor:
    """Inverse of ``hfft``: the first half (n // 2 + 1 entries) of the Hermitian signal whose
    DFT is the real ``a``; conj(rfft(a)) with the normalisation swapped, as NumPy. Linear."""
    return conj(rfft(a, n, axis, _SWAP[_norm("ihfft", norm)]))


# ------------------------------------------------------------------- helpers of NumPy's
def fftshift(x, axes=None) -> Tensor:
    """Move the zero frequency to the centre (roll by n // 2 along ``axes``, default all)."""
    x = tensor_of(x)
    axes = tuple(range(x.ndim)) if axes is None else np.atleast_1d(axes).tolist()
    shifts = [x.shape[normalize_axis("fftshift", a, x.ndim)] // 2 for a in axes]
    return roll(x, shifts, axes) if axes else x


def ifftshift(x, axes=None) -> Tensor:
    """Inverse of ``fftshift`` (roll by -(n // 2))."""
    x = tensor_of(x)
    axes = tuple(range(x.ndim)) if axes is None else np.atleast_1d(axes).tolist()
    shifts = [-(x.shape[normalize_axis("ifftshift", a, x.ndim)] // 2) for a in axes]
    return roll(x, shifts, axes) if axes else x


def fftfreq(n: int, /, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """Sample frequencies of ``fft`` for n points with spacing d: a constant of ``dtype``
    (a real floating dtype, float64 by default)."""
    return asarray(np.fft.fftfreq(int(n), d), dtype=_freq_dtype("fftfreq", dtype),
                   device=device)


def rfftfreq(n: int, /, d: float = 1.0, *, dtype=None, device=None) -> Tensor:
    """Sample frequencies of ``rfft`` for n points with spacing d (``dtype``: float64 by
    default)."""
    return asarray(np.fft.rfftfreq(int(n), d), dtype=_freq_dtype("rfftfreq", dtype),
                   device=device)


def _freq_dtype(op, dtype):
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt.kind != "f":
        raise DTypeError(f"{op}: dtype must be a real floating dtype, got {dt}.")
    return dt
