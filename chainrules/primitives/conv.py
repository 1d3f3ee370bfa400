"""Sliding windows: ``im2col`` (gather every window of a padded, strided, dilated input) and its
transpose ``col2im`` (scatter-add windows back).

Convolution and pooling are compositions on top (``tenferro.nn.functional``): a convolution
is ``im2col`` followed by one ``dot_general`` with the kernel, pooling is a reduction over the
window axes. Both primitives are linear (each is the other's transpose), so every derivative of
a convolution, of any order and in every mode, comes from ``dot_general``'s rules and these
two transposes: no convolution-specific JVP or VJP exists to get wrong.

Layout, for ``n`` spatial axes (``n = 1`` for conv1d, ``2`` for conv2d):

* input ``x``: ``(N, C, *S)`` (PyTorch's channels-first);
* windows: ``(C, *K, N, *O)``, with ``K`` the kernel size and ``O`` the output size
  ``O_i = (S_i + lo_i + hi_i - d_i (K_i - 1) - 1) // s_i + 1``.

The window layout puts the contracted axes ``(C, *K)`` first and the kept axes ``(N, *O)``
last, so the convolution's matrix product reads the windows without another copy.
"""

from __future__ import annotations

import itertools

from ..core import Primitive, ShapedArray, no_flops
from ..errors import ShapeError, fmt_aval
from ..params import INDEX, INDICES, SHAPE, tuple_of
from . import _batching


def _out_size(n, k, s, lo, hi, d):
    return (n + lo + hi - d * (k - 1) - 1) // s + 1


def _check_params(op, nsp, kernel_size, strides, padding, dilation):
    for name, v in (("kernel_size", kernel_size), ("strides", strides), ("dilation", dilation)):
        if len(v) != nsp or any(type(i) is not int or i < 1 for i in v):
            raise ShapeError(f"{op}: {name} must be {nsp} positive integers, got {v}.")
    if len(padding) != nsp or any(
        len(p) != 2 or any(type(i) is not int or i < 0 for i in p) for p in padding
    ):
        raise ShapeError(f"{op}: padding must be {nsp} non-negative (low, high) pairs, got "
                         f"{padding}.")


def _out_shape(op, x, spatial, kernel_size, strides, padding, dilation):
    out = []
    for ax, (n, k, s, (lo, hi), d) in enumerate(
        zip(spatial, kernel_size, strides, padding, dilation)
    ):
        if type(n) is not int:
            raise ShapeError(f"{op}: spatial axis {ax} of {fmt_aval(x)} has a size known only at "
                             f"run time; windows need static sizes.")
        o = _out_size(n, k, s, lo, hi, d)
        if o < 1:
            raise ShapeError(
                f"{op}: spatial axis {ax} of size {n} (padded by {lo}+{hi}) is smaller than the "
                f"dilated kernel ({d} * ({k} - 1) + 1 = {d * (k - 1) + 1}); pad the input or use "
                f"a smaller kernel."
            )
        out.append(o)
    return tuple(out)


def _window(k_off, s, o):
    """The strided slice of a padded axis seen by kernel offset ``k_off`` (dilation applied)."""
    return slice(k_off, k_off + s * (o - 1) + 1, s)


# ------------------------------------------------------------------------------- im2col
_WINDOW = {"kernel_size": SHAPE, "strides": INDICES, "padding": tuple_of(tuple_of(INDEX, 2)),
           "dilation": INDICES}
"""The kinds of the window parameters both primitives take."""

im2col_p = Primitive("im2col", linear=True, cost=no_flops, params=_WINDOW)
im2col_p.__doc__ = (
    "Every window of ``x`` (N, C, *S), zero-padded by ``padding``, taken with ``strides`` and "
    "``dilation``, as an array (C, *kernel_size, N, *O)."
)


@im2col_p.def_abstract_eval
def _im2col_aval(x, *, kernel_size, strides, padding, dilation):
    nsp = len(kernel_size)
    if x.ndim != nsp + 2:
        raise ShapeError(
            f"im2col: expected an input (N, C, {nsp} spatial axes), got {fmt_aval(x)}."
        )
    _check_params("im2col", nsp, kernel_size, strides, padding, dilation)
    o = _out_shape("im2col", x, x.shape[2:], kernel_size, strides, padding, dilation)
    n, c = x.shape[:2]
    return ShapedArray((c, *kernel_size, n, *o), x.dtype)


@im2col_p.def_impl
def _im2col_impl(xp, x, *, kernel_size, strides, padding, dilation):
    n, c, *spatial = x.shape
    nsp = len(spatial)
    o = [_out_size(m, k, s, lo, hi, d) for m, k, s, (lo, hi), d in
         zip(spatial, kernel_size, strides, padding, dilation)]
    if any(lo or hi for lo, hi in padding):
        padded = [m + lo + hi for m, (lo, hi) in zip(spatial, padding)]
        xp_ = xp.zeros((n, c, *padded), dtype=x.dtype)
        xp_[(slice(None), slice(None)) + tuple(
            slice(lo, lo + m) for m, (lo, _) in zip(spatial, padding))] = x
    else:
        xp_ = x
    windows = _window_view(xp, xp_, kernel_size, strides, dilation, o)
    if windows is not None:  # NumPy/CuPy: one strided copy
        return xp.ascontiguousarray(xp.permute_dims(
            windows, (1,) + tuple(range(2 + nsp, 2 + 2 * nsp)) + (0,) + tuple(range(2, 2 + nsp))))
    out = xp.empty((c, *kernel_size, n, *o), dtype=x.dtype)
    # array API only: one strided copy per kernel offset, (N, C, *O) -> (C, N, *O) into its slot
    perm = (1, 0) + tuple(range(2, 2 + nsp))
    for kidx in itertools.product(*[range(k) for k in kernel_size]):
        src = xp_[(slice(None), slice(None)) + tuple(
            _window(i * d, s, oo) for i, d, s, oo in zip(kidx, dilation, strides, o))]
        out[(slice(None),) + kidx + (Ellipsis,)] = xp.permute_dims(src, perm)
    return out


def _window_view(xp, x, kernel_size, strides, dilation, o):
    """A strided view (N, C, *O, *K) of every window (never written to), where the namespace
    has ``lib.stride_tricks.as_strided`` (NumPy, CuPy); ``None`` otherwise."""
    tricks = getattr(getattr(xp, "lib", None), "stride_tricks", None)
    if tricks is None or not hasattr(tricks, "as_strided") or not hasattr(x, "strides"):
        return None
    nsp = len(kernel_size)
    st = x.strides
    shape = tuple(x.shape[:2]) + tuple(o) + tuple(kernel_size)
    strides = tuple(st[:2]) + tuple(st[2 + i] * strides[i] for i in range(nsp)) + tuple(
        st[2 + i] * dilation[i] for i in range(nsp))
    return tricks.as_strided(x, shape=shape, strides=strides)  # only read, then copied


im2col_p.def_jvp(
    lambda b, p, t, **params: (
        b.bind(im2col_p, p[0], **params),
        b._linear_unary(im2col_p, t[0], **params),
    )
)


@im2col_p.def_transpose
def _im2col_transpose(b, ct, x, *, kernel_size, strides, padding, dilation):
    return (b._linear_unary(
        col2im_p, ct, input_shape=tuple(x.shape[2:]), kernel_size=kernel_size, strides=strides,
        padding=padding, dilation=dilation,
    ),)


# ------------------------------------------------------------------------------- col2im
col2im_p = Primitive("col2im", linear=True, params={"input_shape": SHAPE, **_WINDOW})
col2im_p.__doc__ = (
    "The transpose of ``im2col``: windows (C, *kernel_size, N, *O) added back into an input of "
    "spatial shape ``input_shape`` (overlapping windows accumulate, padding is cropped)."
)


@col2im_p.def_abstract_eval
def _col2im_aval(p, *, input_shape, kernel_size, strides, padding, dilation):
    nsp = len(kernel_size)
    if p.ndim != 2 * nsp + 2 or tuple(p.shape[1:1 + nsp]) != tuple(kernel_size):
        raise ShapeError(
            f"col2im: expected windows (C, *{tuple(kernel_size)}, N, {nsp} output axes), got "
            f"{fmt_aval(p)}."
        )
    _check_params("col2im", nsp, kernel_size, strides, padding, dilation)
    if len(input_shape) != nsp:
        raise ShapeError(f"col2im: input_shape must have {nsp} entries, got {input_shape}.")
    o = _out_shape("col2im", p, input_shape, kernel_size, strides, padding, dilation)
    if tuple(p.shape[2 + nsp:]) != o:
        raise ShapeError(
            f"col2im: windows {fmt_aval(p)} do not match input_shape {tuple(input_shape)} "
            f"(expected output axes {o})."
        )
    return ShapedArray((p.shape[1 + nsp], p.shape[0], *input_shape), p.dtype)


@col2im_p.def_impl
def _col2im_impl(xp, p, *, input_shape, kernel_size, strides, padding, dilation):
    nsp = len(kernel_size)
    c, n = p.shape[0], p.shape[1 + nsp]
    o = p.shape[2 + nsp:]
    padded = [m + lo + hi for m, (lo, hi) in zip(input_shape, padding)]
    # accumulate in (C, N, *padded) (no transposes inside the loop), transpose once at the end
    out = xp.zeros((c, n, *padded), dtype=p.dtype)
    for kidx in itertools.product(*[range(k) for k in kernel_size]):
        dst = (slice(None), slice(None)) + tuple(
            _window(i * d, s, oo) for i, d, s, oo in zip(kidx, dilation, strides, o))
        out[dst] += p[(slice(None),) + kidx + (Ellipsis,)]
    if any(lo or hi for lo, hi in padding):
        out = out[(slice(None), slice(None)) + tuple(
            slice(lo, lo + m) for m, (lo, _) in zip(input_shape, padding))]
    return xp.permute_dims(out, (1, 0) + tuple(range(2, 2 + nsp)))


col2im_p.def_jvp(
    lambda b, p, t, **params: (
        b.bind(col2im_p, p[0], **params),
        b._linear_unary(col2im_p, t[0], **params),
    )
)


@col2im_p.def_transpose
def _col2im_transpose(b, ct, p, *, input_shape, kernel_size, strides, padding, dilation):
    return (b._linear_unary(
        im2col_p, ct, kernel_size=kernel_size, strides=strides, padding=padding,
        dilation=dilation,
    ),)


# ----------------------------------------------------------------------- batching
# The batch merges with the images axis N: (B, N, ...) -> (B*N, ...) and back.
@im2col_p.def_batch
def _im2col_batch(b, args, dims, **params):
    x = _batching.move_axis(b, args[0], dims[0], 0)
    nb, n = x.shape[:2]
    out = b.bind(im2col_p, b.reshape(x, (nb * n,) + tuple(x.shape[2:])), **params)
    k = 1 + len(params["kernel_size"])  # position of N in (C, *K, N, *O)
    return [b.reshape(out, tuple(out.shape[:k]) + (nb, n) + tuple(out.shape[k + 1:]))], [k]


@col2im_p.def_batch
def _col2im_batch(b, args, dims, **params):
    k = 1 + len(params["kernel_size"])
    p = _batching.move_axis(b, args[0], dims[0], k)  # (C, *K, B, N, *O)
    nb, n = p.shape[k:k + 2]
    merged = b.reshape(p, tuple(p.shape[:k]) + (nb * n,) + tuple(p.shape[k + 2:]))
    out = b.bind(col2im_p, merged, **params)  # (B*N, C, *S)
    return [b.reshape(out, (nb, n) + tuple(out.shape[1:]))], [0]
