"""The softmax family: ``logsumexp``, ``softmax`` and ``log_softmax``, one primitive each, and
the three linear primitives their JVPs are.

Why primitives: written as the max-shift composition (max, where, sub, exp, sum, log, add, ...)
each of these costs a dozen binds and tape nodes per call, and its backward pass as many again.
As single primitives the impl shifts by the maximum itself, and each JVP is one linear
primitive whose transpose is one linear primitive (``softmax_tangent`` is its own adjoint; the
other two flip a ``transpose`` flag), so an eager backward pass runs one call per op.

Real floating operands only: over complex numbers the maximum shift is not defined (there is no
order) and log(sum(exp)) has branch cuts, so complex input is refused (``DTypeError``) rather
than given a guessed meaning.
"""

from __future__ import annotations

import numpy as np

from ..caches import BoundedCache
from ..core import Primitive, ShapedArray, Zero, is_undefined
from ..dtypes import is_inexact
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import BOOL, INTS
from . import _batching
from ._checks import check_axes, same_shape_and_dtype

NEG_INF = -float("inf")
_BIG = BoundedCache("softmax shift bounds", 64)  # (namespace, dtype) -> largest finite value

_CONVENTION = (
    "shifted by the maximum over the axes (no overflow); a row whose every entry is -inf has "
    "logsumexp -inf with derivative 0 (the function is -inf on a neighbourhood), softmax and "
    "log_softmax nan there and log_softmax's derivative the tangent itself; -inf entries of "
    "other rows get weight 0 (also in higher derivatives: no 0 * nan)"
)


def _check_operand(name, x, axes):
    if not is_inexact(x.dtype) or x.dtype.kind == "c":
        raise DTypeError(
            f"{name}: expected a real floating operand, got {fmt_aval(x)}; convert integers "
            f"with .astype(tenferro.float64); complex input has no maximum to shift by and is "
            f"not supported (apply it to .real or abs(...))."
        )
    check_axes(name, axes, x.ndim)
    for a in axes:
        if x.shape[a] == 0:
            raise ShapeError(f"{name}: cannot reduce over axis {a} of size 0 ({fmt_aval(x)}).")


def _kept(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _reduced(shape, axes):
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _out_shape(shape, axes, keepdims):
    return _kept(shape, axes) if keepdims else _reduced(shape, axes)


def _shift(xp, x, axes):
    """The maximum over ``axes`` (kept as size-1 axes), clipped to the finite range of the
    dtype: an all -inf row then gives exp(-inf - (-big)) = 0 terms, a +inf entry
    exp(inf - big) = inf (the value inf), a nan stays nan; finite maxima are unchanged. (Two
    ufunc calls: cheaper than isfinite and where.)"""
    key = (id(xp), x.dtype)  # the namespace first: dtypes of two backends are not compared
    big = _BIG.get(key)
    if big is None:
        big = _BIG.put(key, float(xp.finfo(x.dtype).max))
    return xp.maximum(xp.minimum(xp.max(x, axis=axes, keepdims=True), big), -big)


# NumPy fast paths. On small operands each NumPy call costs ~0.3-1 us, which is what these
# primitives spend: the fast paths below (taken for plain ndarrays; other namespaces use the
# portable code) pass one axis as an int (cheaper in ufunc.reduce than a tuple), work in place
# in freshly allocated temporaries, and check for the rare non-finite cases once per call
# instead of masking every element, with the same results.
_np_max = np.maximum.reduce
_np_min = np.minimum.reduce
_np_sum = np.add.reduce


def _np_axis(axes):
    return axes[0] if len(axes) == 1 else axes


try:  # the clip ufunc itself: one call (np.clip adds ~2 us of Python; min + max are two calls)
    from numpy._core.umath import clip as _np_clip
except ImportError:  # pragma: no cover - NumPy < 2 or a future layout
    def _np_clip(m, lo, hi, out):
        np.minimum(m, hi, out=out)
        return np.maximum(out, lo, out=out)

_NP_BIG = BoundedCache("softmax shift bounds (NumPy)", 16)  # NumPy dtype -> largest finite


def _np_shift(x, axis):
    """``_shift`` for an ndarray: the maximum, clipped in place (nan stays nan)."""
    m = _np_max(x, axis=axis, keepdims=True)
    big = _NP_BIG.get(x.dtype)
    if big is None:
        big = _NP_BIG.put(x.dtype, float(np.finfo(x.dtype).max))
    return _np_clip(m, -big, big, out=m)


def _axes_batch(prim):
    """Batch rule: every operand mapped over axis 0 (shared ones broadcast), axes shifted."""

    def rule(b, args, dims, /, **params):
        params["axes"] = tuple(a + 1 for a in params["axes"])
        return [b.bind(prim, *_batching.all_at_front(b, args, dims), **params)], [0]

    prim.def_batch(rule)


def _bcast(b, y, x, axes):
    """``y`` (reduced over ``axes``, kept or not) broadcast back to ``x``'s shape."""
    if y.ndim != x.ndim:
        y = b.reshape(y, _kept(x.shape, axes))
    return b.broadcast_in_dim(y, x.shape, tuple(range(x.ndim)))


def _only_linear_in_t(name, *nonlinear):
    if any(is_undefined(a) for a in nonlinear):
        raise ValueError(f"{name} is linear in its last operand only; the others are residuals.")


# ----------------------------------------------------------------------------- logsumexp
logsumexp_p = Primitive("logsumexp", convention=_CONVENTION,
                        params={"axes": INTS, "keepdims": BOOL})
logsumexp_p.__doc__ = """log(sum(exp(x))) over ``axes`` (kept as size-1 axes with ``keepdims``),
computed stably; its JVP is ``logsumexp_tangent`` (the softmax-weighted sum)."""


@logsumexp_p.def_abstract_eval
def _logsumexp_aval(x, *, axes, keepdims):
    _check_operand("logsumexp", x, axes)
    return ShapedArray(_out_shape(x.shape, axes, keepdims), x.dtype)


@logsumexp_p.def_impl
def _logsumexp_impl(xp, x, *, axes, keepdims):
    m = _shift(xp, x, axes)
    s = xp.sum(xp.exp(x - m), axis=axes, keepdims=True)
    # s >= 1 unless every entry is -inf (the maximum's own term is exp(0) = 1): s == 0 marks
    # exactly the all -inf rows, whose value is -inf (computed without log(0)'s warning)
    empty = s == 0
    out = xp.where(empty, NEG_INF, xp.log(xp.where(empty, 1.0, s)) + m)
    return out if keepdims else xp.reshape(out, _reduced(x.shape, axes))


@logsumexp_p.def_jvp
def _logsumexp_jvp(b, primals, tangents, *, axes, keepdims):
    (x,), (t,) = primals, tangents
    y = b.bind(logsumexp_p, x, axes=axes, keepdims=keepdims)
    if type(t) is Zero:
        return y, Zero(ShapedArray(y.shape, y.dtype))
    return y, b.bind(logsumexp_tangent_p, x, y, t, axes=axes, keepdims=keepdims,
                     transpose=False)


logsumexp_tangent_p = Primitive(
    "logsumexp_tangent", params={"axes": INTS, "keepdims": BOOL, "transpose": BOOL},
    convention="weights exp(x - c), 0 where c = -inf (all -inf rows); linear in t",
)
logsumexp_tangent_p.__doc__ = """The JVP of ``logsumexp`` and its adjoint, linear in ``t``.
With ``c = logsumexp(x)`` over ``axes`` (kept or not, ``keepdims``) and the softmax weights
w = exp(x - c) (0 on rows where c = -inf): ``transpose=False`` gives sum(w * t) over ``axes``
(``t`` shaped like ``x``, the result like ``c``); ``transpose=True`` gives w * t broadcast
(``t`` shaped like ``c``, the result like ``x``). Each is the other's transpose."""


@logsumexp_tangent_p.def_abstract_eval
def _lse_tangent_aval(x, c, t, *, axes, keepdims, transpose):
    _check_operand("logsumexp_tangent", x, axes)
    want_c = _out_shape(x.shape, axes, keepdims)
    want_t = want_c if transpose else tuple(x.shape)
    if tuple(c.shape) != want_c or tuple(t.shape) != want_t:
        raise ShapeError(f"logsumexp_tangent: operands {fmt_aval(x)}, {fmt_aval(c)}, "
                         f"{fmt_aval(t)} do not fit axes {axes} (keepdims={keepdims}, "
                         f"transpose={transpose}).")
    if not c.dtype == t.dtype == x.dtype:
        raise DTypeError(f"logsumexp_tangent: operand dtypes differ ({fmt_aval(x)}, "
                         f"{fmt_aval(c)}, {fmt_aval(t)}); primitives do not promote.")
    return ShapedArray(tuple(x.shape) if transpose else want_c, x.dtype)


def _lse_weights(xp, x, c, axes, keepdims):
    if not keepdims:
        c = xp.reshape(c, _kept(x.shape, axes))
    return xp.exp(x - xp.where(c == NEG_INF, 0.0, c))


@logsumexp_tangent_p.def_impl
def _lse_tangent_impl(xp, x, c, t, *, axes, keepdims, transpose):
    w = _lse_weights(xp, x, c, axes, keepdims)
    if transpose:
        return w * (t if keepdims else xp.reshape(t, _kept(x.shape, axes)))
    return xp.sum(w * t, axis=axes, keepdims=keepdims)


@logsumexp_tangent_p.def_jvp
def _lse_tangent_jvp(b, primals, tangents, *, axes, keepdims, transpose):
    (x, c, t), (dx, dc, dt) = primals, tangents
    params = {"axes": axes, "keepdims": keepdims, "transpose": transpose}
    out = b.bind(logsumexp_tangent_p, x, c, t, **params)
    d = Zero(ShapedArray(out.shape, out.dtype))
    if type(dt) is not Zero:
        d = b.bind(logsumexp_tangent_p, x, c, dt, **params)
    if type(dx) is Zero and type(dc) is Zero:
        return out, d
    # d w = w * (dx - dc), with dc taken as 0 where c = -inf (w is 0 there on a neighbourhood)
    ck = b.reshape(c, _kept(x.shape, axes))
    live = b.ne(ck, NEG_INF)
    w = b.exp(b.sub(x, _bcast(b, b.select(live, ck, b.zeros_like(ck)), x, axes)))
    dlog = b.sub(dx, _bcast(b, b.where_or_zero(live, b.reshape(dc, ck.shape)), x, axes))
    if transpose:
        extra = b.mul(b.mul(w, _bcast(b, t, x, axes)), dlog)
    else:
        extra = b.reshape(b.reduce_sum(b.mul(b.mul(w, t), dlog), axes), out.shape)
    return out, b.add(d, extra)


@logsumexp_tangent_p.def_transpose
def _lse_tangent_transpose(b, ct, x, c, t, *, axes, keepdims, transpose):
    _only_linear_in_t("logsumexp_tangent", x, c)
    if type(ct) is Zero:
        return None, None, Zero(t.aval)
    return None, None, b.bind(logsumexp_tangent_p, x, c, ct, axes=axes, keepdims=keepdims,
                              transpose=not transpose)


# ------------------------------------------------------------------------------- softmax
softmax_p = Primitive("softmax", convention=_CONVENTION, params={"axes": INTS})
softmax_p.__doc__ = """exp(x) / sum(exp(x)) over ``axes``, computed stably (shifted by the
maximum); its JVP is ``softmax_tangent``, s * (t - sum(s * t))."""


@softmax_p.def_abstract_eval
def _softmax_aval(x, *, axes):
    _check_operand("softmax", x, axes)
    return x


@softmax_p.def_impl
def _softmax_impl(xp, x, *, axes):
    if type(x) is np.ndarray:
        ax = _np_axis(axes)
        e = np.subtract(x, _np_shift(x, ax))
        np.exp(e, out=e)
        return np.divide(e, _np_sum(e, axis=ax, keepdims=True), out=e)
    e = xp.exp(x - _shift(xp, x, axes))
    return e / xp.sum(e, axis=axes, keepdims=True)


@softmax_p.def_jvp
def _softmax_jvp(b, primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    s = b.bind(softmax_p, x, axes=axes)
    if type(t) is Zero:
        return s, t
    return s, b.bind(softmax_tangent_p, s, t, axes=axes)


softmax_tangent_p = Primitive(
    "softmax_tangent", params={"axes": INTS},
    convention="s * (t - sum(s * t)) over the axes: linear in t and its own transpose",
)
softmax_tangent_p.__doc__ = """The JVP of ``softmax`` at output ``s``: s * (t - sum(s * t))
over ``axes``. Linear in ``t``; the Jacobian diag(s) - s s^T is symmetric, so the primitive is
its own transpose."""


@softmax_tangent_p.def_abstract_eval
def _softmax_tangent_aval(s, t, *, axes):
    _check_operand("softmax_tangent", s, axes)
    return same_shape_and_dtype("softmax_tangent", s, t)


@softmax_tangent_p.def_impl
def _softmax_tangent_impl(xp, s, t, *, axes):
    if type(s) is np.ndarray and type(t) is np.ndarray:
        st = np.multiply(s, t)
        out = np.multiply(s, _np_sum(st, axis=_np_axis(axes), keepdims=True))
        return np.subtract(st, out, out=out)
    st = s * t
    return st - s * xp.sum(st, axis=axes, keepdims=True)


@softmax_tangent_p.def_jvp
def _softmax_tangent_jvp(b, primals, tangents, *, axes):
    (s, t), (ds, dt) = primals, tangents
    out = b.bind(softmax_tangent_p, s, t, axes=axes)
    d = Zero(ShapedArray(out.shape, out.dtype))
    if type(dt) is not Zero:
        d = b.bind(softmax_tangent_p, s, dt, axes=axes)
    if type(ds) is not Zero:  # ds * (t - sum(s t)) - s * sum(ds t)
        centred = b.sub(t, _bcast(b, b.reduce_sum(b.mul(s, t), axes), t, axes))
        d = b.add(d, b.sub(b.mul(ds, centred),
                           b.mul(s, _bcast(b, b.reduce_sum(b.mul(ds, t), axes), t, axes))))
    return out, d


@softmax_tangent_p.def_transpose
def _softmax_tangent_transpose(b, ct, s, t, *, axes):
    _only_linear_in_t("softmax_tangent", s)
    if type(ct) is Zero:
        return None, Zero(t.aval)
    return None, b.bind(softmax_tangent_p, s, ct, axes=axes)


# --------------------------------------------------------------------------- log_softmax
log_softmax_p = Primitive("log_softmax", convention=_CONVENTION, params={"axes": INTS})
log_softmax_p.__doc__ = """x - logsumexp(x) over ``axes``, computed stably (shifted by the
maximum); its JVP is ``log_softmax_tangent``, t - sum(softmax(x) * t)."""


@log_softmax_p.def_abstract_eval
def _log_softmax_aval(x, *, axes):
    _check_operand("log_softmax", x, axes)
    return x


@log_softmax_p.def_impl
def _log_softmax_impl(xp, x, *, axes):
    if type(x) is np.ndarray:
        ax = _np_axis(axes)
        z = np.subtract(x, _np_shift(x, ax))
        lse = _np_sum(np.exp(z), axis=ax, keepdims=True)
        return np.subtract(z, np.log(lse, out=lse), out=z)
    z = x - _shift(xp, x, axes)
    return z - xp.log(xp.sum(xp.exp(z), axis=axes, keepdims=True))


@log_softmax_p.def_jvp
def _log_softmax_jvp(b, primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    y = b.bind(log_softmax_p, x, axes=axes)
    if type(t) is Zero:
        return y, t
    return y, b.bind(log_softmax_tangent_p, x, y, t, axes=axes, transpose=False)


log_softmax_tangent_p = Primitive(
    "log_softmax_tangent", params={"axes": INTS, "transpose": BOOL},
    convention="weights exp(y), 0 where x = -inf (also on all -inf rows, where y is nan); "
    "linear in t",
)
log_softmax_tangent_p.__doc__ = """The JVP of ``log_softmax`` at ``x`` with output ``y``, and
its adjoint, linear in ``t``: with the softmax w = exp(y) (0 where x = -inf),
``transpose=False`` gives t - sum(w * t) and ``transpose=True`` t - w * sum(t), sums over
``axes`` broadcast back. Each is the other's transpose."""


@log_softmax_tangent_p.def_abstract_eval
def _log_softmax_tangent_aval(x, y, t, *, axes, transpose):
    _check_operand("log_softmax_tangent", x, axes)
    return same_shape_and_dtype("log_softmax_tangent", x, y, t)


def _log_softmax_weights(xp, x, y):
    return xp.exp(xp.where(x == NEG_INF, NEG_INF, y))


@log_softmax_tangent_p.def_impl
def _log_softmax_tangent_impl(xp, x, y, t, *, axes, transpose):
    if type(x) is np.ndarray and type(y) is np.ndarray and type(t) is np.ndarray:
        # the mask (weight 0 where x = -inf) changes nothing unless x holds a -inf: its
        # minimum says (nan too, if there is one: then the mask is applied anyway; no warning)
        if _np_min(x, axis=None) > NEG_INF:
            w = np.exp(y)
        else:
            w = _log_softmax_weights(np, x, y)
        ax = _np_axis(axes)
        if transpose:
            w = np.multiply(w, _np_sum(t, axis=ax, keepdims=True), out=w)
            return np.subtract(t, w, out=w)
        np.multiply(w, t, out=w)
        return np.subtract(t, _np_sum(w, axis=ax, keepdims=True))
    w = _log_softmax_weights(xp, x, y)
    if transpose:
        return t - w * xp.sum(t, axis=axes, keepdims=True)
    return t - xp.sum(w * t, axis=axes, keepdims=True)


@log_softmax_tangent_p.def_jvp
def _log_softmax_tangent_jvp(b, primals, tangents, *, axes, transpose):
    (x, y, t), (_, dy, dt) = primals, tangents  # x only masks: no derivative
    out = b.bind(log_softmax_tangent_p, x, y, t, axes=axes, transpose=transpose)
    d = Zero(ShapedArray(out.shape, out.dtype))
    if type(dt) is not Zero:
        d = b.bind(log_softmax_tangent_p, x, y, dt, axes=axes, transpose=transpose)
    if type(dy) is Zero:
        return out, d
    hole = b.eq(x, NEG_INF)
    w = b.exp(b.select(hole, b.full_like(x, NEG_INF), y))
    dw = b.mul(w, b.where_or_zero(b.logical_not(hole), dy))  # d exp(y) = exp(y) dy
    if transpose:  # -dw * sum(t)
        extra = b.neg(b.mul(dw, _bcast(b, b.reduce_sum(t, axes), t, axes)))
    else:  # -sum(dw * t)
        extra = b.neg(_bcast(b, b.reduce_sum(b.mul(dw, t), axes), t, axes))
    return out, b.add(d, extra)


@log_softmax_tangent_p.def_transpose
def _log_softmax_tangent_transpose(b, ct, x, y, t, *, axes, transpose):
    _only_linear_in_t("log_softmax_tangent", x, y)
    if type(ct) is Zero:
        return None, None, Zero(t.aval)
    return None, None, b.bind(log_softmax_tangent_p, x, y, ct, axes=axes,
                              transpose=not transpose)


for _p in (logsumexp_p, logsumexp_tangent_p, softmax_p, softmax_tangent_p, log_softmax_p,
           log_softmax_tangent_p):
    _axes_batch(_p)
del _p
