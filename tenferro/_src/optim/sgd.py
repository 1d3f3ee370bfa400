"""Stochastic gradient descent with momentum, Nesterov momentum and weight decay."""

from __future__ import annotations

from ..errors import ShapeError
from .optimizer import Optimizer, bool_option, real_option


class SGD(Optimizer):
    """PyTorch's SGD. For each parameter p with gradient g (negated when ``maximize``)::

        g <- g + weight_decay * p
        b <- g (first step), else momentum * b + (1 - dampening) * g
        g <- g + momentum * b (nesterov), else b          (when momentum != 0)
        p <- p - lr * g

    Complex parameters are updated with the same formulas (the update is complex-linear)."""

    options = {**Optimizer.options, "lr": real_option(low=0.0),
               "momentum": real_option(low=0.0), "dampening": real_option(),
               "weight_decay": real_option(low=0.0), "nesterov": bool_option}

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))
        for g in self.param_groups:
            if g["nesterov"] and (g["momentum"] <= 0 or g["dampening"] != 0):
                raise ShapeError("SGD: Nesterov momentum needs momentum > 0 and dampening = 0.")

    def _update(self, p, g, group):
        lr, mom, damp = group["lr"], group["momentum"], group["dampening"]
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        if mom != 0:
            st = self._state(p)
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = g.detach().clone()
            else:
                buf = buf * mom + (g if damp == 0 else g * (1 - damp))
            st["momentum_buffer"] = buf
            g = g + mom * buf if group["nesterov"] else buf
        p.sub_(g * lr)
