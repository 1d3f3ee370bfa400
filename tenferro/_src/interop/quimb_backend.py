"""tenferro as an autodiff backend of quimb's ``TNOptimizer``.

quimb runs tensor-network code on tenferro tensors through autoray with no registration (it
infers the backend "tenferro" from the tensor's module). Its optimizer is different: it picks
one of its own handler classes by name (``autodiff_backend="jax"``, ``"torch"``...) from the
table ``quimb.tensor.optimize._BACKEND_HANDLERS``, its one extension point. ``register()`` adds
``"tenferro"`` to that table; the handler turns quimb's NumPy parameters into tenferro tensors
and differentiates the loss with ``value_and_grad`` (compiled once by ``jit`` by default, so
every later evaluation replays the graph), and Hessian-vector products with ``hvp``.

The complex convention needs no conversion: quimb expects PyTorch's gradient of a real loss,
dL/dRe z + i dL/dIm z, which is tenferro's (JAX's handler conjugates its own).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autodiff.higher import hvp
from ..autodiff.reverse import value_and_grad
from ..core.tensor import Tensor
from ..ops import asarray
from ..pytree import tree_map
from ..traced import jit

__all__ = ["TenferroHandler", "register"]


def _to_numpy(x):
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


class TenferroHandler:
    """quimb's handler protocol (``to_variable``, ``to_constant``, ``setup_fn``, ``value``,
    ``value_and_grad``, ``hessp``) on tenferro. ``jit_fn=True`` compiles the loss, its
    gradient and its Hessian-vector product on first use; ``device`` places the parameters
    (``None``: tenferro's default device)."""

    def __init__(self, jit_fn: bool = True, device: str | None = None) -> None:
        self.jit_fn = jit_fn
        self.device = device

    def to_variable(self, x) -> Tensor:
        return asarray(x, device=self.device)

    def to_constant(self, x) -> Tensor:
        return asarray(x, device=self.device)

    def setup_fn(self, fn: Callable) -> None:
        def hessp(primals, tangents):
            return hvp(fn, (primals,), (tangents,))

        compile_ = jit if self.jit_fn else (lambda f: f)
        self._value = compile_(fn)
        self._value_and_grad = compile_(value_and_grad(fn))
        self._hessp = compile_(hessp)

    def _tensors(self, arrays):
        return tree_map(self.to_constant, arrays)

    def value(self, arrays) -> np.ndarray:
        return _to_numpy(self._value(self._tensors(arrays)))

    def value_and_grad(self, arrays) -> tuple[np.ndarray, Any]:
        loss, grads = self._value_and_grad(self._tensors(arrays))
        return _to_numpy(loss), tree_map(_to_numpy, grads)

    def hessp(self, primals, tangents) -> Any:
        return tree_map(_to_numpy, self._hessp(self._tensors(primals), self._tensors(tangents)))


def register() -> None:
    """Make ``autodiff_backend="tenferro"`` available to quimb's ``TNOptimizer`` (idempotent;
    options such as ``jit_fn=False`` or ``device="cuda:0"`` pass through ``TNOptimizer``'s
    keyword arguments, as for quimb's own backends)."""
    from quimb.tensor import optimize

    optimize._BACKEND_HANDLERS["tenferro"] = TenferroHandler
