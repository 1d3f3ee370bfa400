"""tenferro: tensor networks with automatic differentiation, eager and traced.

One set of differentiation rules (``chainrules``) serves eager mode (``EagerTensor`` + tape,
PyTorch-style ``backward()``), the functional transforms (``grad``, ``vjp``, ``jvp``,
``linearize``, ``hvp``...) and traced graphs.

Complex convention: JVPs are R-linear derivatives; the gradient of a real loss L with respect
to a complex z is dL/dRe z + i dL/dIm z (so ``grad(|z|^2) = 2z``), as in PyTorch.

The module is also the array API standard's namespace (2024.12, with the ``linalg`` and ``fft``
extensions): ``x.__array_namespace__()`` returns it. Where NumPy, PyTorch and the standard
spell one call differently, design/array-api.md lists the decisions.
"""

import math as _math

from ._src.autodiff.checkpoint import checkpoint, checkpoint_loop, saved_residuals
from ._src.autodiff.custom import custom_jvp, custom_vjp
from ._src.autodiff.eager import autograd_grad
from ._src.autodiff.forward import jvp
from ._src.autodiff.higher import hessian, hvp, jacfwd, jacrev
from ._src.autodiff.linearize import linear_transpose, linearize
from ._src.autodiff.reverse import grad, value_and_grad, vjp
from ._src.backends import get_backend, set_cpu_backend
from ._src.batching import vmap
from ._src.core.dispatch import default_device
from ._src.core.eager import EagerTensor, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._src.core.tensor import Tensor
from ._src.einsum import contract_path, einsum, ncon
from ._src.fixed_point import fixed_point
from ._src.linalg import norm  # one norm (NumPy semantics), also tenferro.linalg.norm
from ._src.ops import *  # noqa: F403  (the NumPy/PyTorch-style functions, ops.__all__)
from ._src.ops import __all__ as _ops_all
from ._src.ops.namespace import __array_api_version__, __array_namespace_info__

# the dtypes: numpy.dtype objects that are also callable like NumPy's scalar types (ScalarType)
from ._src.ops.numpy_names import bool_ as bool  # noqa: A004  (tenferro.bool, like numpy/torch)
from ._src.ops.numpy_names import (
    complex64,
    complex128,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._src.traced import Graph, ShapeDtype, TracedTensor, jit, load, make_graph, save, trace

__version__ = "0.1.0"

# the array API standard's constants
e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None

# the public modules (facades over tenferro._src)
from . import (  # noqa: E402
    autograd,
    caches,
    distributed,
    errors,
    fft,
    integrate,
    interop,
    lax,
    linalg,
    nn,
    optim,
    pytree,
    signal,
    special,
    stats,
    symmetric,
    testing,
    tn,
)
from ._src import interop as _interop  # noqa: E402  (registrations with installed consumers)

del _interop

_api = [
    # submodules that are part of the API
    "autograd", "caches", "distributed", "errors", "fft", "integrate", "interop", "lax",
    "linalg", "nn", "optim", "pytree", "signal", "special", "stats", "symmetric", "testing",
    "tn",
    # dtypes
    "bool", "complex64", "complex128", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
    # the array API standard's constants (its hooks __array_api_version__ and
    # __array_namespace_info__ are module attributes, not star-imported)
    "e", "inf", "nan", "newaxis", "pi",
    # tensors and devices
    "EagerTensor", "Tensor", "TracedTensor", "default_device", "get_backend",
    "set_cpu_backend",
    # the tape (PyTorch style)
    "autograd_grad", "enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled",
    # transformations (JAX style)
    "checkpoint", "checkpoint_loop", "custom_jvp", "custom_vjp", "grad", "hessian", "hvp",
    "jacfwd", "jacrev", "jvp", "linear_transpose", "linearize", "saved_residuals",
    "value_and_grad", "vjp", "vmap",
    # traced mode
    "Graph", "ShapeDtype", "jit", "load", "make_graph", "save",
    # NumPy's matrix trace (tenferro.trace(f, ...) still forwards to make_graph, deprecated)
    "trace",
    # contraction
    "contract_path", "einsum", "ncon",
    # norms (the one implementation lives in tenferro.linalg)
    "norm",
    # implicit differentiation of iterations
    "fixed_point",
]
__all__ = sorted(_api + list(_ops_all))
del _api, _ops_all


def __getattr__(name: str):
    """NumPy names tenferro refuses on purpose, with the reason (design/numpy-surface.md)."""
    if name in ("float16", "half", "bfloat16"):
        raise AttributeError(
            f"tenferro has no {name}: its dtypes are the array API standard's (no 16-bit float; "
            f"array_api_strict and the generated rule checks have none); use tenferro.float32."
        )
    raise AttributeError(f"module 'tenferro' has no attribute {name!r}")
