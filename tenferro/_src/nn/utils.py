"""PyTorch's ``torch.nn.utils`` gradient helpers: clipping gradients by norm or value and
flattening parameters to one vector (and back), for eager tensors and their ``.grad``."""

from __future__ import annotations

import math

from .. import ops
from ..core.eager import EagerTensor, no_grad
from ..errors import DTypeError, GradientError, ShapeError
from ..linalg.array_api import vector_norm


def _tensors(op: str, parameters) -> list:
    """``parameters`` as a list: one tensor or an iterable of them (``model.parameters()``)."""
    ps = [parameters] if isinstance(parameters, EagerTensor) else list(parameters)
    for p in ps:
        if not isinstance(p, EagerTensor):
            raise DTypeError(f"{op}: parameters must be eager tensors, got {type(p).__name__}.")
    return ps


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> EagerTensor:
    """Scale every ``.grad`` in place by ``min(1, max_norm / (total + 1e-6))`` where ``total``
    is the ``norm_type``-norm of all gradients taken together (``inf``: the largest entry);
    returns ``total`` as a 0-d tensor. As PyTorch: parameters without a gradient are skipped,
    none at all gives 0, and ``error_if_nonfinite`` raises on a NaN/inf total instead of
    scaling by it. ``foreach`` is accepted and ignored (one implementation)."""
    op = "clip_grad_norm_"
    grads = [p.grad for p in _tensors(op, parameters) if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    with no_grad():
        if not grads:
            return ops.tensor(0.0)
        each = [vector_norm(g, ord=norm_type) for g in grads]
        total = vector_norm(ops.stack([ops.astype(n, each[0].dtype) for n in each]),
                            ord=norm_type)
        if error_if_nonfinite and not math.isfinite(float(total)):
            raise GradientError(
                f"{op}: the total {norm_type}-norm of the gradients is {float(total)}; "
                f"pass error_if_nonfinite=False to scale by it anyway (the gradients then "
                f"become NaN), or find the non-finite gradient first.")
        coef = ops.minimum(max_norm / (total + 1e-6), 1.0)
        for p in _tensors(op, parameters):
            if p.grad is not None:
                p.grad = ops.astype(p.grad * coef, p.grad.dtype)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every ``.grad`` in place to ``[-clip_value, clip_value]`` (PyTorch's
    ``clip_grad_value_``; ``foreach`` ignored). Complex gradients raise (no order)."""
    op = "clip_grad_value_"
    c = float(clip_value)
    with no_grad():
        for p in _tensors(op, parameters):
            if p.grad is None:
                continue
            if p.grad.dtype.kind == "c":
                raise DTypeError(f"{op}: complex gradients ({p.grad.dtype}) have no order; "
                                 f"use clip_grad_norm_.")
            p.grad = ops.clip(p.grad, -c, c)


def parameters_to_vector(parameters) -> EagerTensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable, as
    PyTorch's: the result depends on the parameters)."""
    ps = _tensors("parameters_to_vector", parameters)
    if not ps:
        raise ShapeError("parameters_to_vector: got no parameters.")
    return ops.concatenate([ops.reshape(p, (-1,)) for p in ps])


def vector_to_parameters(vec, parameters) -> None:
    """Write consecutive slices of the 1-D ``vec`` into the parameters' values (their
    ``.data``: no history, as PyTorch's; each keeps its dtype, where PyTorch's ``.data``
    assignment takes ``vec``'s). ``vec`` must have exactly as many entries as the
    parameters together."""
    op = "vector_to_parameters"
    if not isinstance(vec, EagerTensor):
        raise DTypeError(f"{op}: expected an eager tensor, got {type(vec).__name__}.")
    ps = _tensors(op, parameters)
    total = sum(p.size for p in ps)
    if vec.ndim != 1 or vec.shape[0] != total:
        raise ShapeError(f"{op}: vec of shape {tuple(vec.shape)} must be 1-D with {total} "
                         f"entries (the parameters' sizes together).")
    start = 0
    with no_grad():
        for p in ps:
            n = p.size
            p.data = ops.astype(ops.reshape(vec.detach()[start:start + n], p.shape), p.dtype)
            start += n


__all__ = ["clip_grad_norm_", "clip_grad_value_", "parameters_to_vector",
           "vector_to_parameters"]
