"""Implementation of ``tenferro.nn.functional`` (its docstring is the user documentation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chainrules import primitives as P
from chainrules.dtypes import bool_, float64, int64

from .. import errors, lax, linalg, ops, special
from ..core.dispatch import bind
from ..core.eager import EagerTensor, no_grad
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from ..ops import _base as ops_base
from ..ops._base import as_real
from ..ops.indexing import checked_index, take_named

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "avg_pool1d", "avg_pool2d", "batch_norm",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv1d", "conv2d",
    "cross_entropy", "dropout", "elu", "embedding", "gelu", "group_norm", "huber_loss",
    "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid",
    "max_pool1d", "max_pool2d", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh",
]


# ---------------------------------------------------------------------------- helpers
def _t(x) -> Tensor:
    return x if isinstance(x, Tensor) else ops.asarray(x)


def _float(x) -> Tensor:
    x = _t(x)
    return x if x.dtype.kind in "fc" else ops.cast(x, float64)


_LEAST = {"padding": 0}  # window sizes, strides and dilations are at least 1


def _tuple(v, n: int, name: str, op: str) -> tuple:
    """A window parameter (``kernel_size``, ``stride``, ``padding``, ``dilation``): an int
    or one int per spatial axis, checked (ints, >= 1; padding >= 0)."""
    if isinstance(v, (int, np.integer, bool, np.bool_)) or not isinstance(v, (tuple, list)):
        v = (v,)
    v = tuple(ops_base.as_int(op, name, i) for i in v)
    least = _LEAST.get(name, 1)
    if any(i < least for i in v):
        raise ShapeError(f"{op}: {name} must be >= {least} on every axis, got {v}.")
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise ShapeError(f"{op}: {name} needs {n} entries (one per spatial axis), got {v}.")
    return v


def _reduce(loss: Tensor, reduction: str, op: str) -> Tensor:
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "none":
        return loss
    raise ShapeError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r:.40}.")


def _inplace(x, compute, inplace):
    """``compute()``, or with ``inplace=True`` PyTorch's in-place form: the result replaces
    ``x`` through ``Tensor._inplace`` (views write through; the op's own use of the old value
    stays valid, earlier users of it raise at backward)."""
    if inplace:
        x._inplace(compute)
        return x
    return compute()


def _need_dim(dim, op):
    if dim is None:
        raise ShapeError(f"{op}: give dim explicitly (PyTorch's implicit choice is deprecated).")
    return dim


def _same_dtype(op, *xs):
    ts = [x for x in xs if x is not None]
    dt = np.result_type(*[x.dtype for x in ts])
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    return [None if x is None else ops.cast(x, dt) for x in xs]


# ------------------------------------------------------------------- linear, activations
def linear(input, weight, bias=None) -> Tensor:
    """``input @ weight.T + bias``; ``weight`` is ``(out_features, in_features)``."""
    x, w = _t(input), _t(weight)
    if w.ndim not in (1, 2) or x.shape[-1] != w.shape[-1]:
        raise ShapeError(
            f"linear: input {x.shape} does not match weight {w.shape} (the weight is "
            f"(out_features, in_features); in_features must equal input.shape[-1])."
        )
    x, w, bias = _same_dtype("linear", x, w, None if bias is None else _t(bias))
    out = ops.tensordot(x, w, ((x.ndim - 1,), (w.ndim - 1,)))
    return out if bias is None else out + bias


def relu(input, inplace: bool = False) -> Tensor:
    """max(x, 0). Derivative at 0: 0 (as PyTorch); NaN stays NaN (as PyTorch)."""
    x = _t(input)
    return _inplace(x, lambda: ops.relu(x), inplace)


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise. Derivative at 0: negative_slope (PyTorch)."""
    x = _t(input)
    return _inplace(x, lambda: ops.where(x > 0, x, negative_slope * x), inplace)


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha (exp(x) - 1) otherwise. Derivative at 0: alpha (PyTorch)."""
    x = _t(input)
    neg = ops.where(x > 0, 0.0, x)  # no overflow in the discarded branch
    return _inplace(x, lambda: ops.where(x > 0, x, alpha * ops.expm1(neg)), inplace)


def gelu(input, approximate: str = "none") -> Tensor:
    """x Phi(x) with Phi the standard normal CDF: ``approximate='none'`` uses the exact
    0.5 x (1 + erf(x / sqrt 2)) with ``tenferro.special.erf`` (a primitive: exact derivative
    2/sqrt(pi) exp(-t^2) to every order); ``'tanh'`` uses PyTorch's approximation
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). Smooth everywhere."""
    x = _float(input)
    if approximate == "none":
        return 0.5 * x * (1.0 + special.erf(x * (1.0 / math.sqrt(2.0))))
    if approximate == "tanh":
        return 0.5 * x * (1.0 + ops.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))
    raise ShapeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r:.40}.")


def sigmoid(input) -> Tensor:
    """1 / (1 + exp(-x)). Smooth."""
    return ops.sigmoid(input)


def tanh(input) -> Tensor:
    """Hyperbolic tangent. Smooth."""
    return ops.tanh(input)


def silu(input, inplace: bool = False) -> Tensor:
    """x sigmoid(x) (swish). Smooth."""
    x = _float(input)
    return _inplace(x, lambda: x * ops.sigmoid(x), inplace)


def logsigmoid(input) -> Tensor:
    """log sigmoid(x) = -softplus(-x), computed stably. Smooth."""
    return -ops.softplus(-_float(input))


def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch, whose
    derivative there is 1). Smooth otherwise."""
    x = _float(input)
    bx = x * beta if beta != 1 else x
    soft = ops.softplus(bx)
    if beta != 1:
        soft = soft / beta
    return ops.where(bx > threshold, x, soft)


def softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (required). Smooth."""
    x = _float(input) if dtype is None else ops.cast(_t(input), dtype)
    return ops.softmax(x, _need_dim(dim, "softmax"))


def log_softmax(input, dim: int | None = None, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim`` (required), computed stably. Smooth."""
    x = _float(input) if dtype is None else ops.cast(_t(input), dtype)
    return ops.log_softmax(x, _need_dim(dim, "log_softmax"))


def normalize(input, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``. The norm's derivative at 0 is taken as 0 and the
    clamp passes no gradient below eps (as PyTorch)."""
    x = _float(input)
    n = linalg.norm(x, ord=p, axis=dim, keepdims=True)
    return x / ops.maximum(n, eps)


# -------------------------------------------------------------------------- dropout
def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each entry with probability ``p`` and scale the rest by 1/(1-p) (training only).

    The mask is drawn from tenferro's generator (seed it with ``tenferro.manual_seed``), so
    the random stream differs from PyTorch's. Random draws happen eagerly: inside ``jit`` use
    ``training=False`` or multiply by a mask drawn outside."""
    p = as_real("dropout", "p", p, low=0.0, high=1.0)
    x = _t(input)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return _inplace(x, lambda: x * 0, inplace)
    try:
        u = ops.rand(*x.shape, device=x.device)
    except errors.GraphError as e:
        raise errors.GraphError(
            "dropout: the random mask would be frozen into the traced graph; call it with "
            "training=False inside jit, or draw the mask outside (tenferro.rand) and multiply."
        ) from e
    keep = ops.cast(u >= p, x.dtype) * (1.0 / (1.0 - p))
    return _inplace(x, lambda: x * keep, inplace)


# ------------------------------------------------------------------ embedding, one_hot
def embedding(input, weight, padding_idx: int | None = None) -> Tensor:
    """Rows ``weight[input]``; cotangents of repeated indices accumulate. Rows selected by
    ``padding_idx`` get no gradient (as PyTorch). Indices must lie in ``[0, num_embeddings)``
    (negative ones too raise ``IndexOutOfBoundsError``, as in PyTorch; checked when the
    values are known: eager at once, under ``jit`` when the graph runs)."""
    w = _t(weight)
    idx = _t(input)
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"embedding: indices must be integers, got {idx.dtype}.")
    out = take_named("embedding", w, idx, 0, wrap=False)
    if padding_idx is not None:
        pad_row = ops.expand_dims(idx == (padding_idx % w.shape[0]), -1)
        out = ops.where(pad_row, ops.stop_gradient(out), out)
    return out


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last axis. ``num_classes=-1`` uses max + 1 (eager
    only: traced mode needs the number). Class indices must lie in ``[0, num_classes)``:
    others raise ``IndexOutOfBoundsError`` (as PyTorch; under ``jit`` when the graph runs)
    instead of giving an all-zero row."""
    idx = _t(tensor)
    if idx.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: expected integer class indices, got {idx.dtype}.")
    num_classes = ops_base.as_int("one_hot", "num_classes", num_classes)
    if num_classes < -1:
        raise ShapeError(f"one_hot: num_classes must be >= 0 (or -1: max + 1), got "
                         f"{num_classes}.")
    if num_classes == -1:
        num_classes = int(ops.max(idx).item()) + 1 if idx.size else 0
    idx = checked_index("one_hot", idx, num_classes, wrap=False, what="class index")
    classes = ops.arange(num_classes, device=idx.device)
    return ops.cast(ops.expand_dims(idx, -1) == classes, int64)


# --------------------------------------------------------------------------- losses
def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """(input - target)^2, reduced. Smooth."""
    return _reduce(ops.square(_float(input) - target), reduction, "mse_loss")


def l1_loss(input, target, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced. Derivative at input == target: 0 (as PyTorch)."""
    return _reduce(ops.abs(_float(input) - target), reduction, "l1_loss")


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (d = input - target).
    Differentiable (once) everywhere; derivative 0 at d = 0. ``delta`` must be > 0 (as
    PyTorch: a negative one would make the loss negative)."""
    delta = as_real("huber_loss", "delta", delta, low=0.0, low_open=True)
    d = _float(input) - target
    a = ops.abs(d)
    return _reduce(ops.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta)), reduction,
                   "huber_loss")


def smooth_l1_loss(input, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (``huber_loss / beta``); with
    ``beta=0`` this is ``l1_loss``. Differentiable (once) everywhere for beta > 0; derivative 0
    at d = 0 (``l1_loss``'s sign(0) = 0 for beta = 0). ``beta`` must be >= 0 (as PyTorch)."""
    beta = as_real("smooth_l1_loss", "beta", beta, low=0.0)
    if beta == 0:
        return l1_loss(input, target, reduction)
    d = _float(input) - target
    a = ops.abs(d)
    return _reduce(ops.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta), reduction,
                   "smooth_l1_loss")


def _class_last(x: Tensor) -> Tensor:
    """(N, C, d1, ...) -> (N * d1 * ..., C); (C,) -> (1, C)."""
    if x.ndim == 1:
        return ops.reshape(x, (1, -1))
    if x.ndim > 2:
        x = ops.moveaxis(x, 1, -1)
    return ops.reshape(x, (-1, x.shape[-1]))


def _check_targets(op, x, target):
    if target.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: class-index targets must be integers, got {target.dtype} (for class "
            f"probabilities give a float target of the input's shape to cross_entropy)."
        )
    want = (x.shape[0],) + tuple(x.shape[2:]) if x.ndim > 1 else ()
    if tuple(target.shape) != want:
        raise ShapeError(
            f"{op}: input {x.shape} (class axis 1) needs a target of shape {want}, got "
            f"{target.shape}."
        )


def _checked_targets(op, safe, c, ignore_index):
    """Class-index targets (``ignore_index`` entries already replaced by 0), each checked to
    lie in ``[0, C)`` as PyTorch requires: a target of C would read the next sample's row."""
    return checked_index(op, safe, c, wrap=False, what="target class",
                         hint=f"Targets are class indices 0..C-1 (C = {c}); entries equal to "
                              f"ignore_index ({ignore_index}) are skipped.")


def _class_weights(op, weight, c, dtype):
    w = ops.astype(_t(weight), dtype)
    if tuple(w.shape) != (c,):
        raise ShapeError(f"{op}: weight must hold one entry per class, shape ({c},), got "
                         f"{tuple(w.shape)}.")
    return w


def _gather(x, positions):
    """``x[positions]`` for positions known to be in range (checked targets)."""
    return bind(P.gather_p, x, positions, axis=0)


def nll_loss(input, target, weight=None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices: ``-weight[t] * input[n, t]``, input holding
    log-probabilities with classes on axis 1. ``mean`` divides by the summed weights of the
    targets that are not ``ignore_index`` (as PyTorch). Linear in ``input``. Targets must lie
    in ``[0, C)`` (or equal ``ignore_index``): others raise ``IndexOutOfBoundsError``, eager at
    once, under ``jit`` when the graph runs."""
    return _nll_loss("nll_loss", input, target, weight, ignore_index, reduction)


def _nll_loss(op, input, target, weight, ignore_index, reduction) -> Tensor:
    x = _float(input)
    t = _t(target)
    _check_targets(op, x, t)
    flat = _class_last(x)
    m, c = flat.shape
    tf_ = ops.reshape(t, (-1,))
    ignored = tf_ == ignore_index
    safe = _checked_targets(op, ops.where(ignored, 0, tf_), c, ignore_index)
    picked = _gather(ops.reshape(flat, (-1,)), ops.arange(m, device=x.device) * c + safe)
    w = ops.cast(ops.logical_not(ignored), flat.dtype)
    if weight is not None:
        w = w * _gather(_class_weights(op, weight, c, flat.dtype), safe)
    loss = -(picked * w)
    if reduction == "mean":
        return ops.sum(loss) / ops.sum(w)
    if reduction == "none":
        shape = (x.shape[0],) + tuple(x.shape[2:]) if x.ndim > 1 else ()
        return ops.reshape(loss, shape)
    return _reduce(loss, reduction, op)


def cross_entropy(input, target, weight=None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (classes on axis 1) with either class indices
    (integer ``target``, ``ignore_index`` honoured) or class probabilities (float ``target``
    of the input's shape). ``label_smoothing`` mixes the target with the uniform distribution
    as PyTorch does (for indices: (1 - s) nll + s / C * sum_c -w_c log p_c, normalised like the
    nll term). Smooth in ``input``."""
    x = _float(input)
    t = _t(target)
    label_smoothing = as_real("cross_entropy", "label_smoothing", label_smoothing, low=0.0,
                              high=1.0)
    cdim = 0 if x.ndim == 1 else 1
    n_classes = x.shape[cdim]
    logp = ops.log_softmax(x, cdim)
    wshape = [1] * x.ndim
    wshape[cdim] = n_classes
    w = None if weight is None else ops.reshape(ops.cast(_t(weight), x.dtype), wshape)
    if t.dtype.kind in "fc":  # class probabilities
        if tuple(t.shape) != tuple(x.shape):
            raise ShapeError(f"cross_entropy: a probability target must have the input's shape "
                             f"{x.shape}, got {t.shape}.")
        if label_smoothing > 0:
            t = t * (1.0 - label_smoothing) + label_smoothing / n_classes
        terms = logp * t if w is None else logp * t * w
        per = -ops.sum(terms, cdim)
        if reduction == "mean":
            return ops.sum(per) / (x.size // n_classes)
        return _reduce(per, reduction, "cross_entropy")
    nll = _nll_loss("cross_entropy", logp, t, weight, ignore_index, reduction)
    if label_smoothing == 0:
        return nll
    ignored = t == ignore_index
    smooth = -ops.sum(logp if w is None else logp * w, cdim)
    smooth = ops.where(ignored, 0.0, smooth)
    if reduction == "mean":
        if weight is None:
            denom = ops.sum(ops.cast(ops.logical_not(ignored), x.dtype))
        else:
            safe = _checked_targets("cross_entropy", ops.where(ignored, 0, t), n_classes,
                                    ignore_index)
            denom = ops.sum(ops.where(ignored, 0.0, _gather(
                _class_weights("cross_entropy", weight, n_classes, x.dtype), safe)))
        smooth = ops.sum(smooth) / denom
    else:
        smooth = _reduce(smooth, reduction, "cross_entropy")
    return (1.0 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


def _clamped_logs(x):
    # log(x) and log1p(-x), clamped below at -100 with no gradient where the clamp is active
    # (and no inf * 0 at x in {0, 1})
    tiny = math.exp(-100.0)
    ok0, ok1 = x > tiny, (1.0 - x) > tiny
    lx = ops.where(ok0, ops.log(ops.where(ok0, x, 1.0)), -100.0)
    l1x = ops.where(ok1, ops.log1p(-ops.where(ok1, x, 0.0)), -100.0)
    return lx, l1x


def _value_range(x):
    """``(min, max)`` of ``x`` when its values are known now (eager, also under ``grad`` and
    ``jvp``), ``None`` when they are not (``jit``, ``vmap``)."""
    if type(x) is EagerTensor:
        v, xp = x._value, x._backend.xp
    else:
        try:
            v, xp = ops_base.concrete_array("", "", x, ""), np
        except errors.ConcretizationError:
            return None
    if not math.prod(v.shape):
        return 0.0, 0.0
    return float(xp.min(v)), float(xp.max(v))


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) for probabilities x, each log clamped below at -100 as
    PyTorch does (so the loss stays finite at x in {0, 1}; the clamp passes no gradient where
    it is active).

    Inputs outside [0, 1] (or NaN) raise ``ShapeError`` when the values are known (eager, as
    PyTorch); under ``jit``/``vmap``, where they are not, the loss of such an entry is NaN
    rather than a finite (negative) number."""
    x = _float(input)
    t = ops.cast(_t(target), x.dtype)
    if tuple(t.shape) != tuple(x.shape):
        raise ShapeError(f"binary_cross_entropy: target {t.shape} must have the input's shape "
                         f"{x.shape}.")
    known = _value_range(x)
    if known is not None and not (known[0] >= 0 and known[1] <= 1):  # NaN fails too
        raise ShapeError(
            f"binary_cross_entropy: the input must hold probabilities in [0, 1], got values "
            f"from {known[0]} to {known[1]}; apply sigmoid first, or pass the logits to "
            f"binary_cross_entropy_with_logits.")
    lx, l1x = _clamped_logs(x)
    loss = -(t * lx + (1.0 - t) * l1x)
    if known is None:
        inside = ops.logical_and(x >= 0, x <= 1)  # False for NaN too
        loss = ops.where(inside, loss, np.nan)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    """Binary cross entropy of sigmoid(x), computed stably as (1 - t) x + (1 + (w_p - 1) t)
    softplus(-x) (``pos_weight`` w_p weighs the positive term). Smooth."""
    x = _float(input)
    t = ops.cast(_t(target), x.dtype)
    if tuple(t.shape) != tuple(x.shape):
        raise ShapeError(f"binary_cross_entropy_with_logits: target {t.shape} must have the "
                         f"input's shape {x.shape}.")
    sp = ops.softplus(-x)
    if pos_weight is not None:
        sp = (1.0 + (pos_weight - 1.0) * t) * sp
    loss = (1.0 - t) * x + sp
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input, target, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """Kullback-Leibler divergence with ``input`` holding log-probabilities:
    t (log t - input) (0 where t = 0, as PyTorch). ``reduction='batchmean'`` divides the sum
    by the batch size."""
    x = _float(input)
    t = _t(target)
    if log_target:
        loss = ops.exp(t) * (t - x)
    else:
        pos = t > 0
        loss = ops.where(pos, t * (ops.log(ops.where(pos, t, 1.0)) - x), 0.0)
    if reduction == "batchmean":
        return ops.sum(loss) / x.shape[0]
    return _reduce(loss, reduction, "kl_div")


# --------------------------------------------------------------------- normalisation
def _affine(y, weight, bias, shape):
    if weight is not None:
        y = y * ops.reshape(weight, shape)
    if bias is not None:
        y = y + ops.reshape(bias, shape)
    return y


# _TRAILING[ndim][k]: the last k axes of an ndim-dimensional array
_TRAILING = [[tuple(range(n - k, n)) for k in range(n + 1)] for n in range(33)]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` axes with the biased variance:
    (x - mean) / sqrt(var + eps) * weight + bias. Smooth (eps > 0)."""
    if (type(input) is EagerTensor and normalized_shape.__class__ is tuple
            and eps.__class__ is float and weight is None and bias is None):
        # the common eager call (real input, no affine part): the same primitive, without
        # the general argument handling below (~1.5 us a call)
        v = input._value
        shape = v.shape
        k = len(normalized_shape)
        if (type(v) is np.ndarray and v.dtype.kind == "f" and 0 < k <= len(shape) < len(_TRAILING)
                and shape[len(shape) - k:] == normalized_shape):
            return bind(P.layer_norm_p, input, axes=_TRAILING[len(shape)][k], eps=eps)[0]
    x = _float(input)
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(x.shape[x.ndim - len(ns):]) != ns:
        raise ShapeError(f"layer_norm: input {x.shape} does not end with normalized_shape {ns}.")
    axes = tuple(range(x.ndim - len(ns), x.ndim))
    if x.dtype.kind == "f" and isinstance(eps, (int, float)) and not isinstance(eps, bool):
        y = bind(P.layer_norm_p, x, axes=axes, eps=float(eps))[0]  # one primitive (real input)
    else:
        mu = ops.mean(x, axes, keepdims=True)
        d = x - mu
        var = ops.mean(d * d, axes, keepdims=True)
        y = d * ops.rsqrt(var + eps)
    return _affine(y, weight, bias, ns)


def batch_norm(input, running_mean, running_var, weight=None, bias=None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalisation over every axis but the channel axis 1.

    Training: normalise with the batch mean and biased variance, and update the running
    statistics in place (when given): ``r <- (1 - momentum) r + momentum * stat``, with the
    unbiased variance, as PyTorch. The update uses detached statistics, so it carries no
    gradient; it needs concrete (eager) statistics: inside ``jit`` use ``training=False``.
    Evaluation: normalise with the running statistics. Smooth (eps > 0)."""
    x = _float(input)
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: expected (N, C, ...) input, got {x.shape}.")
    c = x.shape[1]
    shape = (1, c) + (1,) * (x.ndim - 2)
    axes = (0,) + tuple(range(2, x.ndim))
    if training:
        n = x.size // c
        if n <= 1:
            raise ShapeError(f"batch_norm: training needs more than one value per channel, got "
                             f"input {x.shape}.")
        mu = ops.mean(x, axes, keepdims=True)
        d = x - mu
        var = ops.mean(d * d, axes, keepdims=True)
        if running_mean is not None or running_var is not None:
            _update_running(running_mean, running_var, mu, var, n, momentum)
        y = d * ops.rsqrt(var + eps)
    else:
        if running_mean is None or running_var is None:
            raise ShapeError("batch_norm: evaluation (training=False) needs running_mean and "
                             "running_var.")
        var = ops.reshape(running_var, shape)
        y = (x - ops.reshape(running_mean, shape)) * ops.rsqrt(var + eps)
    return _affine(y, weight, bias, shape)


def _update_running(rm, rv, mu, var, n, momentum):
    m = ops.stop_gradient(ops.reshape(mu, (-1,)))
    v = ops.stop_gradient(ops.reshape(var, (-1,))) * (n / (n - 1))
    try:
        with no_grad():
            if rm is not None:
                rm.copy_(rm * (1.0 - momentum) + m * momentum)
            if rv is not None:
                rv.copy_(rv * (1.0 - momentum) + v * momentum)
    except errors.GradientError as e:
        raise errors.GradientError(
            "batch_norm: the running statistics can only be updated with concrete values; "
            "inside jit call it with training=False (module.eval()), or train eagerly."
        ) from e


def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Normalise each of ``num_groups`` channel groups of every sample (biased variance), then
    scale and shift per channel. Smooth (eps > 0)."""
    x = _float(input)
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise ShapeError(f"group_norm: {c} channels do not split into {num_groups} groups.")
    g = ops.reshape(x, (n, num_groups, -1))
    mu = ops.mean(g, 2, keepdims=True)
    d = g - mu
    var = ops.mean(d * d, 2, keepdims=True)
    y = ops.reshape(d * ops.rsqrt(var + eps), x.shape)
    return _affine(y, weight, bias, (1, c) + (1,) * (x.ndim - 2))


# ---------------------------------------------------------------------- convolutions
def _im2col(x, kernel, stride, padding, dilation):
    return bind(P.im2col_p, x, kernel_size=tuple(kernel), strides=tuple(stride),
                padding=tuple(tuple(p) for p in padding), dilation=tuple(dilation))


def _padding_pairs(padding, kernel, dilation, stride, nsp, op):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nsp
        if padding == "same":
            if any(s != 1 for s in stride):
                raise ShapeError(f"{op}: padding='same' needs stride 1, got {stride}.")
            out = []
            for k, d in zip(kernel, dilation):
                total = d * (k - 1)
                out.append((total // 2, total - total // 2))
            return tuple(out)
        raise ShapeError(f"{op}: padding must be an int, a tuple, 'valid' or 'same', got "
                         f"{padding!r}.")
    return tuple((p, p) for p in _tuple(padding, nsp, "padding", op))


def _conv(op, nsp, input, weight, bias, stride, padding, dilation, groups):
    x, w = _t(input), _t(weight)
    unbatched = x.ndim == nsp + 1
    if unbatched:
        x = ops.expand_dims(x, 0)
    if x.ndim != nsp + 2 or w.ndim != nsp + 2:
        raise ShapeError(
            f"{op}: expected input (N, C, {nsp} spatial axes) and weight (out, in/groups, "
            f"{nsp} kernel axes), got {tuple(input.shape)} and {w.shape}."
        )
    x, w, bias = _same_dtype(op, x, w, None if bias is None else _t(bias))
    c, o = x.shape[1], w.shape[0]
    if c % groups or o % groups or w.shape[1] * groups != c:
        raise ShapeError(
            f"{op}: input has {c} channels and weight {w.shape} with groups={groups}; need "
            f"in_channels = weight.shape[1] * groups and out_channels divisible by groups."
        )
    kernel = tuple(w.shape[2:])
    stride = _tuple(stride, nsp, "stride", op)
    dilation = _tuple(dilation, nsp, "dilation", op)
    pads = _padding_pairs(padding, kernel, dilation, stride, nsp, op)
    cols = _im2col(x, kernel, stride, pads, dilation)  # (C, *K, N, *O)
    kaxes = tuple(range(1, 1 + nsp))
    if groups == 1:
        out = lax.dot_general(w, cols, dimension_numbers=(
            ((1,) + tuple(a + 1 for a in kaxes), (0,) + kaxes), ((), ())))  # (O, N, *O)
    else:
        wg = ops.reshape(w, (groups, o // groups) + tuple(w.shape[1:]))
        cg = ops.reshape(cols, (groups, c // groups) + tuple(cols.shape[1:]))
        out = lax.dot_general(wg, cg, dimension_numbers=(
            ((2,) + tuple(a + 2 for a in kaxes), (1,) + tuple(a + 1 for a in kaxes)),
            ((0,), (0,))))  # (G, O/G, N, *O)
        out = ops.reshape(out, (o,) + tuple(out.shape[2:]))
    out = ops.swapaxes(out, 0, 1)
    if bias is not None:
        out = out + ops.reshape(bias, (1, o) + (1,) * nsp)
    return out[0] if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """1-D cross-correlation (PyTorch's convolution): input (N, C, L), weight
    (out, C/groups, k). ``padding``: int, tuple, 'valid' or 'same' (extra padding on the
    right, as PyTorch). Bilinear, hence smooth."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """2-D cross-correlation (PyTorch's convolution): input (N, C, H, W), weight
    (out, C/groups, kh, kw); ``stride``, ``padding`` (int, pair, 'valid' or 'same'),
    ``dilation`` and ``groups`` as PyTorch. Computed as im2col + one matrix product (see
    design/nn.md). Bilinear, hence smooth."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


# --------------------------------------------------------------------------- pooling
def _pool_geometry(op, x, nsp, kernel_size, stride, padding, dilation, ceil_mode):
    kernel = _tuple(kernel_size, nsp, "kernel_size", op)
    empty = isinstance(stride, (tuple, list)) and len(stride) == 0  # PyTorch's default: []
    stride = kernel if stride is None or empty else _tuple(stride, nsp, "stride", op)
    pad = _tuple(padding, nsp, "padding", op)
    dil = _tuple(dilation, nsp, "dilation", op)
    if any(2 * p > k for p, k in zip(pad, kernel)):
        raise ShapeError(f"{op}: padding {pad} must be at most half the kernel size {kernel}.")
    extra = []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, pad, dil):
        span = n + 2 * p - d * (k - 1) - 1
        if span < 0:
            raise ShapeError(f"{op}: input {x.shape} is smaller than the kernel {kernel}.")
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside
            o -= 1
        extra.append((o - 1) * s + d * (k - 1) + 1 - (n + 2 * p))
    pads = tuple((p, p + max(e, 0)) for p, e in zip(pad, extra))
    return kernel, stride, pads, dil


def _batched(x, nsp, op):
    x = _t(x)
    if x.ndim == nsp + 1:
        return ops.expand_dims(x, 0), True
    if x.ndim != nsp + 2:
        raise ShapeError(f"{op}: expected input (N, C, {nsp} spatial axes), got {x.shape}.")
    return x, False


def _max_pool(op, nsp, input, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    if return_indices:
        raise ShapeError(f"{op}: return_indices=True is not supported; compute the indices "
                         f"with argmax over the windows if needed.")
    x, unbatched = _batched(input, nsp, op)
    kernel, stride, pads, dil = _pool_geometry(op, x, nsp, kernel_size, stride, padding,
                                               dilation, ceil_mode)
    if any(lo or hi for lo, hi in pads):
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        x = ops.pad(x, ((0, 0), (0, 0)) + pads, constant_values=low)
    cols = _im2col(x, kernel, stride, ((0, 0),) * nsp, dil)  # (C, *K, N, *O)
    out = ops.max(cols, tuple(range(1, 1 + nsp)))  # (C, N, *O)
    out = ops.swapaxes(out, 0, 1)
    return out[0] if unbatched else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor:
    """1-D max pooling (see ``max_pool2d``). Ties: the gradient is shared equally among the
    maximal entries of a window."""
    return _max_pool("max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False) -> Tensor:
    """Max over each window (padding is -inf, ``stride`` defaults to ``kernel_size``).

    Ties: the gradient is shared equally among the maximal entries of a window (PyTorch gives
    it all to the first one; both are valid subgradients and agree without ties)."""
    return _max_pool("max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def _avg_pool(op, nsp, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    x, unbatched = _batched(input, nsp, op)
    x = _float(x)
    kernel, stride, pads, dil = _pool_geometry(op, x, nsp, kernel_size, stride, padding, 1,
                                               ceil_mode)
    cols = _im2col(x, kernel, stride, pads, dil)
    kaxes = tuple(range(1, 1 + nsp))
    total = ops.sum(cols, kaxes)  # (C, N, *O)
    if divisor_override is not None:
        out = total / divisor_override
    else:
        # window sizes: PyTorch counts the symmetric padding (count_include_pad) but never the
        # extra ceil_mode overhang
        sym = tuple(p for p, _ in pads)
        if count_include_pad:
            region = np.ones(tuple(n + 2 * p for n, p in zip(x.shape[2:], sym)))
            ones = np.pad(region, [(0, hi - lo) for lo, hi in pads])
            counts = _np_window_sums(ones, kernel, stride)
        else:
            ones = np.pad(np.ones(x.shape[2:]), list(pads))
            counts = _np_window_sums(ones, kernel, stride)
        out = total / ops.asarray(counts.astype(x.dtype), device=x.device)
    out = ops.swapaxes(out, 0, 1)
    return out[0] if unbatched else out


def _np_window_sums(a, kernel, stride):
    """Sum of each (strided) window of a small static NumPy array: pooling divisors."""
    views = np.lib.stride_tricks.sliding_window_view(a, kernel)
    views = views[tuple(slice(None, None, s) for s in stride)]
    return views.sum(axis=tuple(range(-len(kernel), 0)))


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True) -> Tensor:
    """1-D average pooling (see ``avg_pool2d``)."""
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None) -> Tensor:
    """Mean over each window (zero padding; the divisor counts padded entries when
    ``count_include_pad``, as PyTorch). Linear, hence smooth."""
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def _adaptive_matrix(n_in, n_out, dtype):
    a = np.zeros((n_out, n_in), dtype=dtype)
    for i in range(n_out):
        lo = (i * n_in) // n_out
        hi = -((-(i + 1) * n_in) // n_out)
        a[i, lo:hi] = 1.0 / (hi - lo)
    return a


def _adaptive_avg(op, nsp, input, output_size):
    x, unbatched = _batched(input, nsp, op)
    x = _float(x)
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * nsp
    if len(output_size) != nsp:
        raise ShapeError(f"{op}: output_size needs {nsp} entries, got {output_size}.")
    out = x
    for k, (n, m) in enumerate(zip(x.shape[2:], output_size)):
        m = n if m is None else int(m)
        a = ops.asarray(_adaptive_matrix(n, m, x.dtype), device=x.device)
        ax = 2 + k
        out = ops.moveaxis(ops.tensordot(out, a, ((ax,), (1,))), -1, ax)
    return out[0] if unbatched else out


def adaptive_avg_pool1d(input, output_size) -> Tensor:
    """1-D adaptive average pooling (see ``adaptive_avg_pool2d``)."""
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size) -> Tensor:
    """Average over PyTorch's adaptive bins [floor(i n / m), ceil((i + 1) n / m)) per axis
    (``None`` keeps an axis). Linear, hence smooth."""
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def pad(input, pad: Sequence[int], mode: str = "constant", value: float = 0.0) -> Tensor:
    """PyTorch's padding spec: pairs (left, right) starting from the last axis. Only
    ``mode='constant'`` is supported. Linear in the input."""
    if mode != "constant":
        raise ShapeError(f"pad: mode {mode!r:.40} is not supported (only 'constant').")
    x = _t(input)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ShapeError(f"pad: need pairs for at most {x.ndim} axes, got {tuple(pad)}.")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        crop = tuple(slice(max(-lo, 0), (hi if hi < 0 else None)) for lo, hi in widths)
        x = x[crop]
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    return ops.pad(x, widths, constant_values=value)


# ------------------------------------------------------------------------- attention
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two axes (``scale`` defaults to
    1/sqrt(E)). A boolean ``attn_mask`` marks the entries that take part (False -> -inf), a
    float mask is added; ``is_causal`` keeps key j <= query i. A row with every entry masked
    gives NaN (the softmax of all -inf), as the reference implementation. Smooth elsewhere."""
    q, k, v = _same_dtype("scaled_dot_product_attention", _t(query), _t(key), _t(value))
    e = q.shape[-1]
    scale = 1.0 / math.sqrt(e) if scale is None else scale
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) * scale
    lq, lk = q.shape[-2], k.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise ShapeError("scaled_dot_product_attention: give attn_mask or is_causal, not "
                             "both.")
        keep = ops.tril(ops.ones((lq, lk), dtype=bool_, device=q.device))
        scores = ops.where(keep, scores, -np.inf)
    elif attn_mask is not None:
        m = _t(attn_mask)
        scores = ops.where(m, scores, -np.inf) if m.dtype.kind == "b" else scores + m
    p = ops.softmax(scores, -1)
    if dropout_p > 0:
        p = dropout(p, dropout_p, True)
    return ops.matmul(p, v)


def _name_argument_errors() -> None:
    """Every public function turns a raw Python error met while interpreting its arguments
    (``conv2d(3, 4)``, ``layer_norm(x, None)``) into a named one (``named_argument_errors``)."""
    for name in __all__:
        globals()[name] = errors.named_argument_errors(f"nn.functional.{name}")(globals()[name])


_name_argument_errors()


def __dir__():
    return list(__all__)
