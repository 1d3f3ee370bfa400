"""PyTorch-style functional access to the eager tape: ``autograd_grad``."""

from __future__ import annotations

from ..core.eager import EagerTensor, as_eager, run_backward
from ..errors import GradientError


def autograd_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
                  allow_unused=False):
    """Like ``torch.autograd.grad``: gradients of ``outputs`` w.r.t. ``inputs`` (any tensors
    that require grad, leaves or intermediates), without touching ``.grad``."""
    single_out = isinstance(outputs, EagerTensor)
    outputs = [outputs] if single_out else list(outputs)
    single_in = isinstance(inputs, EagerTensor)
    inputs = [inputs] if single_in else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, EagerTensor):
        grad_outputs = [grad_outputs]
    pairs = []
    for o, g in zip(outputs, grad_outputs):
        if o._node is None:
            raise GradientError("autograd_grad: an output does not require grad.")
        if g is None:
            if o.size != 1:
                raise GradientError(
                    f"autograd_grad: grad_outputs needed for the non-scalar output {o.shape}."
                )
            g = as_eager(1.0, like=o, dtype=o.dtype)
            g = EagerTensor(g._backend.xp.reshape(g._value, o._value.shape), o._backend)
        pairs.append((o, as_eager(g, like=o)))
    retain = create_graph if retain_graph is None else retain_graph
    grads = run_backward(pairs, retain, create_graph, collect=inputs)
    if not allow_unused:
        for i, g in enumerate(grads):
            if g is None:
                raise GradientError(
                    f"autograd_grad: input {i} was not used to compute the outputs "
                    f"(pass allow_unused=True to get None)."
                )
    return grads[0] if single_in else tuple(grads)
