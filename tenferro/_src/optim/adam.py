"""Adam and AdamW (PyTorch's algorithms, including ``amsgrad``)."""

from __future__ import annotations

import math

from .. import ops
from ..errors import DTypeError
from .optimizer import Optimizer, bool_option, from_real_view, real_option, real_view


def _betas(op, name, v):
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise DTypeError(f"{op}: betas must be a pair (beta1, beta2), got {v!r:.40}.")
    return tuple(real_option(low=0.0, high=1.0, high_open=True)(op, f"{name}[{i}]", b)
                 for i, b in enumerate(v))


def _lerp(a, b, w: float):
    # PyTorch's lerp: a + w (b - a) for w < 0.5, else b - (b - a)(1 - w) (same rounding)
    return a + w * (b - a) if w < 0.5 else b - (b - a) * (1 - w)


class Adam(Optimizer):
    """PyTorch's Adam. With t the step count and g the gradient (plus ``weight_decay * p``,
    an L2 term; AdamW decouples it)::

        m <- lerp(m, g, 1 - beta1)
        v <- beta2 v + (1 - beta2) g^2        (v_max <- max(v_max, v) with amsgrad)
        p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    Complex parameters are treated as pairs of reals (``torch.view_as_real``): the second
    moment is kept per real and imaginary part, (Re g)^2 and (Im g)^2, as PyTorch does."""

    _decoupled = False
    options = {**Optimizer.options, "lr": real_option(low=0.0), "betas": _betas,
               "eps": real_option(low=0.0), "weight_decay": real_option(low=0.0),
               "amsgrad": bool_option}

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    def _update(self, p, g, group):
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        wd = group["weight_decay"]
        x = real_view(p.detach())
        g = real_view(g)
        st = self._state(p)
        if not st:
            st["step"] = 0
            st["exp_avg"] = ops.zeros_like(x)
            st["exp_avg_sq"] = ops.zeros_like(x)
            if group["amsgrad"]:
                st["max_exp_avg_sq"] = ops.zeros_like(x)
        st["step"] += 1
        t = st["step"]
        if wd != 0:
            if self._decoupled:
                x = x * (1 - lr * wd)
            else:
                g = g + wd * x
        m = _lerp(st["exp_avg"], g, 1 - b1)
        v = st["exp_avg_sq"] * b2 + (g * g) * (1 - b2)
        st["exp_avg"], st["exp_avg_sq"] = m, v
        if group["amsgrad"]:
            v = ops.maximum(st["max_exp_avg_sq"], v)
            st["max_exp_avg_sq"] = v
        step_size = lr / (1 - b1**t)
        denom = ops.sqrt(v) / math.sqrt(1 - b2**t) + eps
        x = x - step_size * (m / denom)
        p.copy_(from_real_view(x, p))


class AdamW(Adam):
    """Adam with decoupled weight decay (PyTorch's AdamW): p <- p (1 - lr weight_decay)
    before the Adam update, which then uses the plain gradient. Default weight_decay 0.01."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
