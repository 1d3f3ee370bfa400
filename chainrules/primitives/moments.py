"""Second moments as primitives: the variance (and standard deviation) over axes, and layer
normalisation, each with the linear primitive its JVP is.

Why primitives: as compositions (mean, subtract, square, sum, divide, and sqrt with its
zero-guard, or rsqrt and products for layer_norm) each costs seven to twelve binds and tape
nodes per call and as many in the backward pass. Here the impl computes the moments itself,
and each JVP is one linear primitive whose transpose is one call (``layer_norm_tangent`` is
its own adjoint; ``var_tangent`` flips a ``transpose`` flag). ``var_tangent`` recomputes the
centred values from ``x``; ``layer_norm`` returns its reciprocal deviation as a second output,
which its tangent reads.

Real floating operands only (``DTypeError`` otherwise): the user layer keeps its composition
for complex input, whose variance is of |x - mean|.
"""

from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, Zero, is_undefined
from ..dtypes import is_inexact
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import BOOL, INTS, REAL
from . import _batching
from ._checks import check_axes, same_shape_and_dtype


def _check_operand(name, x, axes):
    if not is_inexact(x.dtype) or x.dtype.kind == "c":
        raise DTypeError(
            f"{name}: expected a real floating operand, got {fmt_aval(x)}; convert integers "
            f"with .astype(tenferro.float64) (tenferro.var/std and nn.functional.layer_norm "
            f"handle complex input by composition)."
        )
    check_axes(name, axes, x.ndim)


_np_sum = np.add.reduce  # the NumPy fast paths of layer_norm (plain ndarrays)


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _kept(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _out_shape(shape, axes, keepdims):
    return _kept(shape, axes) if keepdims else tuple(
        d for i, d in enumerate(shape) if i not in axes)


def _axes_batch(prim):
    def rule(b, args, dims, /, **params):
        params["axes"] = tuple(a + 1 for a in params["axes"])
        outs = prim.as_list(b.bind(prim, *_batching.all_at_front(b, args, dims), **params))
        return outs, [0] * len(outs)

    prim.def_batch(rule)


def _bcast(b, y, x, axes):
    """``y`` (reduced over ``axes``, kept or not) broadcast back to ``x``'s shape."""
    if y.ndim != x.ndim:
        y = b.reshape(y, _kept(x.shape, axes))
    return b.broadcast_in_dim(y, x.shape, tuple(range(x.ndim)))


def _mean(b, x, axes):
    """The mean over ``axes`` broadcast back to ``x``'s shape (builder ops)."""
    return _bcast(b, b.mul(b.reduce_sum(x, axes), 1.0 / _count(x.shape, axes)), x, axes)


def _only_linear_in_t(name, *nonlinear):
    if any(is_undefined(a) for a in nonlinear):
        raise ValueError(f"{name} is linear in its last operand only; the others are residuals.")


# ------------------------------------------------------------------------------ variance
_VAR_PARAMS = {"axes": INTS, "correction": REAL, "keepdims": BOOL, "std": BOOL}

var_p = Primitive(
    "var", params=_VAR_PARAMS,
    convention="sum((x - mean)^2) / (n - correction); with std=True its square root, whose "
    "derivative where the variance is 0 is taken as 0",
)
var_p.__doc__ = """The variance over ``axes`` with ``correction`` delta degrees of freedom
(NumPy's ddof), or with ``std`` its square root; ``keepdims`` keeps the axes with size 1.
Needs n - correction > 0 (the user layer handles the rest). JVP: ``var_tangent``."""


@var_p.def_abstract_eval
def _var_aval(x, *, axes, correction, keepdims, std):
    _check_operand("var", x, axes)
    if not _count(x.shape, axes) - correction > 0:
        raise ShapeError(f"var: no degrees of freedom left ({fmt_aval(x)} over axes {axes} "
                         f"with correction {correction}); tenferro.var handles this case.")
    return ShapedArray(_out_shape(x.shape, axes, keepdims), x.dtype)


def _centred(xp, x, axes):
    return x - xp.sum(x, axis=axes, keepdims=True) / _count(x.shape, axes)


@var_p.def_impl
def _var_impl(xp, x, *, axes, correction, keepdims, std):
    d = _centred(xp, x, axes)
    v = xp.sum(d * d, axis=axes, keepdims=keepdims) / (_count(x.shape, axes) - correction)
    return xp.sqrt(v) if std else v


@var_p.def_jvp
def _var_jvp(b, primals, tangents, **params):
    (x,), (t,) = primals, tangents
    y = b.bind(var_p, x, **params)
    if type(t) is Zero:
        return y, Zero(ShapedArray(y.shape, y.dtype))
    return y, b.bind(var_tangent_p, x, y, t, transpose=False, **params)


var_tangent_p = Primitive(
    "var_tangent", params={**_VAR_PARAMS, "transpose": BOOL},
    convention="weights r = 2 (x - mean) / (n - correction), for std r / (2 std) and 0 where "
    "std is 0; linear in t",
)
var_tangent_p.__doc__ = """The JVP of ``var`` at ``x`` with output ``y``, and its adjoint,
linear in ``t``: with the weights r = d var / d x (see the convention), ``transpose=False``
gives sum(r * t) over ``axes`` (``t`` like ``x``, the result like ``y``) and ``transpose=True``
r * t broadcast (``t`` like ``y``, the result like ``x``)."""


@var_tangent_p.def_abstract_eval
def _var_tangent_aval(x, y, t, *, axes, correction, keepdims, std, transpose):
    want_y = _out_shape(x.shape, axes, keepdims)
    _check_operand("var_tangent", x, axes)
    if tuple(y.shape) != want_y or tuple(t.shape) != (want_y if transpose else tuple(x.shape)):
        raise ShapeError(f"var_tangent: operands {fmt_aval(x)}, {fmt_aval(y)}, {fmt_aval(t)} "
                         f"do not fit axes {axes} (keepdims={keepdims}, "
                         f"transpose={transpose}).")
    if not x.dtype == y.dtype == t.dtype:
        raise DTypeError(f"var_tangent: operand dtypes differ ({fmt_aval(x)}, {fmt_aval(y)}, "
                         f"{fmt_aval(t)}); primitives do not promote.")
    return ShapedArray(tuple(x.shape) if transpose else want_y, x.dtype)


def _coeff(xp, x, y, axes, correction, keepdims, std):
    """d var / d d_i = 2 d_i / dof, as a factor of d; for std divided by 2 std (0 where 0)."""
    dof = _count(x.shape, axes) - correction
    if not std:
        return 2.0 / dof
    if not keepdims:
        y = xp.reshape(y, _kept(x.shape, axes))
    zero = y == 0
    return xp.where(zero, 0.0, 1.0 / (dof * xp.where(zero, 1.0, y)))


@var_tangent_p.def_impl
def _var_tangent_impl(xp, x, y, t, *, axes, correction, keepdims, std, transpose):
    r = _centred(xp, x, axes) * _coeff(xp, x, y, axes, correction, keepdims, std)
    if transpose:
        return r * (t if keepdims else xp.reshape(t, _kept(x.shape, axes)))
    return xp.sum(r * t, axis=axes, keepdims=keepdims)


@var_tangent_p.def_jvp
def _var_tangent_jvp(b, primals, tangents, **params):
    (x, y, t), (dx, dy, dt) = primals, tangents
    axes, std = params["axes"], params["std"]
    out = b.bind(var_tangent_p, x, y, t, **params)
    d = Zero(ShapedArray(out.shape, out.dtype))
    if type(dt) is not Zero:
        d = b.bind(var_tangent_p, x, y, dt, **params)
    if type(dx) is Zero and (type(dy) is Zero or not std):
        return out, d
    # r = c * (x - mean): dr = c * (dx - mean(dx)) + dc * (x - mean), where for std
    # c = 1 / (dof y) (0 where y = 0) and dc = -c dy / y
    dof = _count(x.shape, axes) - params["correction"]
    centred = b.sub(x, _mean(b, x, axes))
    if std:
        yb = _bcast(b, y, x, axes)
        live = b.ne(yb, 0.0)
        c = b.select(live, b.div(1.0 / dof, b.select(live, yb, b.ones_like(yb))),
                     b.zeros_like(yb))
    else:
        c = b.full_like(x, 2.0 / dof)
    dr = Zero(ShapedArray(x.shape, x.dtype))
    if type(dx) is not Zero:
        dr = b.mul(c, b.sub(dx, _mean(b, dx, axes)))
    if std and type(dy) is not Zero:
        ratio = b.select(live, b.div(c, b.select(live, yb, b.ones_like(yb))), b.zeros_like(yb))
        dr = b.sub(dr, b.mul(b.mul(ratio, centred), _bcast(b, dy, x, axes)))
    if params["transpose"]:
        extra = b.mul(dr, _bcast(b, t, x, axes))
    else:
        extra = b.reshape(b.reduce_sum(b.mul(dr, t), axes), out.shape)
    return out, b.add(d, extra)


@var_tangent_p.def_transpose
def _var_tangent_transpose(b, ct, x, y, t, **params):
    _only_linear_in_t("var_tangent", x, y)
    if type(ct) is Zero:
        return None, None, Zero(t.aval)
    params["transpose"] = not params["transpose"]
    return None, None, b.bind(var_tangent_p, x, y, ct, **params)


# ---------------------------------------------------------------------------- layer_norm
layer_norm_p = Primitive("layer_norm", multiple_results=True, params={"axes": INTS, "eps": REAL},
                         convention="smooth for eps > 0")
layer_norm_p.__doc__ = """``(y, r)``: y = (x - mean) * r over ``axes``, r = 1 / sqrt(var + eps)
(the biased variance; r kept as size-1 axes): layer normalisation without the affine part,
and the reciprocal deviation its derivative needs (as PyTorch saves it). JVP:
``layer_norm_tangent`` for y; dr = -r^2 mean(y * t)."""


@layer_norm_p.def_abstract_eval
def _layer_norm_aval(x, *, axes, eps):
    _check_operand("layer_norm", x, axes)
    return x, ShapedArray(_kept(x.shape, axes), x.dtype)


@layer_norm_p.def_impl
def _layer_norm_impl(xp, x, *, axes, eps):
    if type(x) is np.ndarray:  # the same arithmetic in place, one axis as an int (cheaper)
        ax = axes[0] if len(axes) == 1 else axes
        n = _count(x.shape, axes)
        mu = _np_sum(x, axis=ax, keepdims=True)
        d = np.subtract(x, np.divide(mu, n, out=mu))
        r = _np_sum(np.multiply(d, d), axis=ax, keepdims=True)
        np.divide(r, n, out=r)
        np.add(r, eps, out=r)
        np.power(r, -0.5, out=r)
        return np.multiply(d, r, out=d), r
    d = _centred(xp, x, axes)
    r = (xp.sum(d * d, axis=axes, keepdims=True) / _count(x.shape, axes) + eps) ** -0.5
    return d * r, r


@layer_norm_p.def_jvp
def _layer_norm_jvp(b, primals, tangents, *, axes, eps):
    (x,), (t,) = primals, tangents
    y, r = b.bind(layer_norm_p, x, axes=axes, eps=eps)
    if type(t) is Zero:
        return (y, r), (t, Zero(ShapedArray(r.shape, r.dtype)))
    dy = b.bind(layer_norm_tangent_p, r, y, t, axes=axes)
    # dr = -r^3 mean(d * t) = -r^2 mean(y * t)  (d = x - mean = y / r)
    scale = b.mul(b.mul(r, r), -1.0 / _count(x.shape, axes))
    dr = b.mul(scale, b.reshape(b.reduce_sum(b.mul(y, t), axes), r.shape))
    return (y, r), (dy, dr)


layer_norm_tangent_p = Primitive(
    "layer_norm_tangent", params={"axes": INTS},
    convention="r * (t - mean(t) - y * mean(y * t)): linear in t and its own transpose",
)
layer_norm_tangent_p.__doc__ = """The JVP of ``layer_norm``'s output ``y`` (with its ``r``, kept
axes): r * (t - mean(t) - y * mean(y * t)) over ``axes``. Linear in ``t``; the Jacobian
r (I - 1/n - y y^T / n) is symmetric, so the primitive is its own transpose."""


@layer_norm_tangent_p.def_abstract_eval
def _layer_norm_tangent_aval(r, y, t, *, axes):
    _check_operand("layer_norm_tangent", y, axes)
    if tuple(r.shape) != _kept(y.shape, axes) or r.dtype != y.dtype:
        raise ShapeError(f"layer_norm_tangent: r {fmt_aval(r)} must have the shape "
                         f"{_kept(y.shape, axes)} and dtype of y {fmt_aval(y)} reduced over "
                         f"axes {axes} (kept).")
    return same_shape_and_dtype("layer_norm_tangent", y, t)


@layer_norm_tangent_p.def_impl
def _layer_norm_tangent_impl(xp, r, y, t, *, axes):
    n = _count(y.shape, axes)
    if type(r) is np.ndarray and type(y) is np.ndarray and type(t) is np.ndarray:
        ax = axes[0] if len(axes) == 1 else axes
        st = _np_sum(t, axis=ax, keepdims=True)
        u = np.multiply(y, t)
        syt = _np_sum(u, axis=ax, keepdims=True)
        np.multiply(y, syt, out=u)
        np.add(u, st, out=u)
        np.divide(u, n, out=u)
        np.subtract(t, u, out=u)
        return np.multiply(u, r, out=u)  # r (t - (st + y syt) / n): one broadcast fewer
    st = xp.sum(t, axis=axes, keepdims=True)
    syt = xp.sum(y * t, axis=axes, keepdims=True)
    return r * t - (r / n) * (st + y * syt)


@layer_norm_tangent_p.def_jvp
def _layer_norm_tangent_jvp(b, primals, tangents, *, axes):
    (r, y, t), (dr, dy, dt) = primals, tangents
    out = b.bind(layer_norm_tangent_p, r, y, t, axes=axes)
    d = Zero(ShapedArray(out.shape, out.dtype))
    if type(dt) is not Zero:
        d = b.bind(layer_norm_tangent_p, r, y, dt, axes=axes)
    if type(dr) is not Zero:  # out = r u: d out = dr u
        u = b.sub(t, b.add(_mean(b, t, axes), b.mul(y, _mean(b, b.mul(y, t), axes))))
        d = b.add(d, b.mul(_bcast(b, dr, y, axes), u))
    if type(dy) is not Zero:  # du = -(dy mean(y t) + y mean(dy t))
        du = b.add(b.mul(dy, _mean(b, b.mul(y, t), axes)), b.mul(y, _mean(b, b.mul(dy, t), axes)))
        d = b.sub(d, b.mul(_bcast(b, r, y, axes), du))
    return out, d


@layer_norm_tangent_p.def_transpose
def _layer_norm_tangent_transpose(b, ct, r, y, t, *, axes):
    _only_linear_in_t("layer_norm_tangent", r, y)
    if type(ct) is Zero:
        return None, None, Zero(t.aval)
    return None, None, b.bind(layer_norm_tangent_p, r, y, ct, axes=axes)


for _p in (var_p, var_tangent_p, layer_norm_p, layer_norm_tangent_p):
    _axes_batch(_p)
del _p
