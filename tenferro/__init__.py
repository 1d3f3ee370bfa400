"""tenferro: tensor networks with automatic differentiation, eager and traced.

One set of differentiation rules (``chainrules``) serves eager mode (``EagerTensor`` + tape,
PyTorch-style ``backward()``), the functional transforms (``grad``, ``vjp``, ``jvp``,
``linearize``, ``hvp``...) and traced graphs.

Complex convention: JVPs are R-linear derivatives; the gradient of a real loss L with respect
to a complex z is dL/dRe z + i dL/dIm z (so ``grad(|z|^2) = 2z``), as in PyTorch.
"""

from chainrules.dtypes import (
    bool_,
    complex64,
    complex128,
    float32,
    float64,
    int32,
    int64,
)

from . import errors, lax, linalg, ops, pytree
from .autodiff.checkpoint import checkpoint, checkpoint_loop, saved_residuals
from .autodiff.custom import custom_jvp, custom_vjp
from .autodiff.eager import autograd_grad
from .autodiff.forward import jvp
from .autodiff.higher import hessian, hvp, jacfwd, jacrev
from .autodiff.linearize import linear_transpose, linearize
from .autodiff.reverse import grad, value_and_grad, vjp
from .backends import get_backend, set_cpu_backend
from .core.dispatch import default_device
from .core.eager import EagerTensor, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .core.tensor import Tensor
from .einsum import contract_path, einsum, ncon
from .ops import *  # noqa: F401,F403
from .ops import __all__ as _ops_all
from .traced import Graph, ShapeDtype, TracedTensor, jit, load, trace

bool = bool_  # noqa: A001  (tenferro.bool, like numpy/torch)

__version__ = "0.1.0"

__all__ = [
    "EagerTensor",
    "Graph",
    "ShapeDtype",
    "TracedTensor",
    "jit",
    "lax",
    "load",
    "trace",
    "Tensor",
    "autograd_grad",
    "checkpoint",
    "checkpoint_loop",
    "saved_residuals",
    "contract_path",
    "custom_vjp",
    "einsum",
    "linalg",
    "ncon",
    "complex64",
    "complex128",
    "default_device",
    "enable_grad",
    "errors",
    "float32",
    "float64",
    "get_backend",
    "grad",
    "hessian",
    "hvp",
    "int32",
    "int64",
    "is_grad_enabled",
    "jacfwd",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "no_grad",
    "pytree",
    "set_cpu_backend",
    "set_grad_enabled",
    "value_and_grad",
    "vjp",
] + list(_ops_all)
