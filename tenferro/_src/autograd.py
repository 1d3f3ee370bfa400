"""Implementation of ``tenferro.autograd`` (its docstring is the user documentation)."""

from __future__ import annotations

from .autodiff.custom import custom_vjp
from .autodiff.eager import autograd_grad
from .core.tensor import Tensor

__all__ = ["Function", "grad"]

grad = autograd_grad


class FunctionCtx:
    """The ``ctx`` of a ``Function``: ``save_for_backward(*tensors)`` keeps tensors for
    ``backward`` (``ctx.saved_tensors``); other attributes set in ``forward`` are kept as they
    are; ``needs_input_grad`` says which arguments are tensors of a floating dtype."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (or None) for ``backward`` as ``ctx.saved_tensors``."""
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Accepted for compatibility; outputs of integer dtype have no derivative anyway."""


class Function:
    """PyTorch's ``torch.autograd.Function``: subclass it with static ``forward(ctx, *args)``
    and ``backward(ctx, *grad_outputs)`` (one gradient or None per argument of ``forward``),
    then call ``MyFunction.apply(*args)``. Built on ``tenferro.custom_vjp``: ``forward`` runs
    unrecorded, ``backward`` is the rule (it is itself differentiated for higher orders, like
    ``create_graph=True`` in PyTorch). Non-tensor arguments are constants (their gradient must
    be None)."""

    @staticmethod
    def forward(ctx, *args):  # pragma: no cover - overridden
        raise NotImplementedError("Function subclasses define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):  # pragma: no cover - overridden
        raise NotImplementedError("Function subclasses define backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        """Call ``forward`` with the derivative given by ``backward``."""
        slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        needs = tuple(isinstance(a, Tensor) and a.dtype.kind in "fc" for a in args)
        ctxs = []  # the ctx of the forward whose backward runs (one per application)

        def full(xs):
            full_args = list(args)
            for i, x in zip(slots, xs):
                full_args[i] = x
            return full_args

        def fun(*xs):
            return cls.forward(FunctionCtx(needs), *full(xs))

        def fwd(*xs):
            ctx = FunctionCtx(needs)
            out = cls.forward(ctx, *full(xs))
            ctxs.append(ctx)
            return out, tuple(ctx.saved_tensors)

        def bwd(saved, ct):
            ctx = ctxs[-1]
            ctx.saved_tensors = saved
            grads = cls.backward(ctx, *(ct if isinstance(ct, tuple) else (ct,)))
            grads = grads if isinstance(grads, tuple) else (grads,)
            if len(grads) != len(args):
                raise TypeError(
                    f"{cls.__name__}.backward returned {len(grads)} gradients; forward takes "
                    f"{len(args)} arguments (return None for the non-differentiable ones)."
                )
            for i, g in enumerate(grads):
                if g is not None and i not in slots:
                    raise TypeError(
                        f"{cls.__name__}.backward returned a gradient for argument {i}, which "
                        f"is not a tensor; return None for it."
                    )
            return tuple(grads[i] for i in slots)

        f = custom_vjp(fun)
        f.__name__ = cls.__name__
        f.defvjp(fwd, bwd)
        return f(*(args[i] for i in slots))
