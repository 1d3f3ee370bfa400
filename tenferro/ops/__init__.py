"""The user-facing functions (NumPy-style names, broadcasting and promotion).

They lower every call to primitives through ``bind``, so each function works in eager mode, in
traced mode and under every transformation, and gets its derivatives from the primitives'
rules.
"""

from __future__ import annotations

import sys

from ..core import tensor as _tensor_mod
from ._base import astype, broadcast_shapes, broadcast_to, tensor_of
from .creation import (
    arange,
    asarray,
    eye,
    full,
    full_like,
    get_rng_state,
    linspace,
    manual_seed,
    normal,
    ones,
    ones_like,
    rand,
    randn,
    set_rng_state,
    tensor,
    uniform,
    zeros,
    zeros_like,
)
from .elementwise import (
    abs,
    abs2,
    add,
    angle,
    arctan,
    arctan2,
    clamp,
    clip,
    conj,
    cos,
    cosh,
    divide,
    equal,
    exp,
    expm1,
    greater,
    greater_equal,
    imag,
    isfinite,
    isnan,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    real,
    reciprocal,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sinh,
    softplus,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    where,
)
from .indexing import _At, getitem, index_add, scatter_add, setitem, take
from .misc import copy, stop_gradient, to_device
from .products import dot, inner, kron, matmul, outer, tensordot, vdot
from .reductions import (
    amax,
    amin,
    argmax,
    argmin,
    cumsum,
    log_softmax,
    logsumexp,
    matrix_trace,
    max,
    mean,
    min,
    norm,
    prod,
    softmax,
    std,
    sum,
    var,
)
from .shape import (
    atleast_1d,
    concat,
    concatenate,
    diag,
    diag_embed,
    diagonal,
    expand_dims,
    flip,
    moveaxis,
    pad,
    permute_dims,
    ravel,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
    tril,
    triu,
)

# torch/NumPy aliases
sub = subtract
mul = multiply
div = true_divide = divide
neg = negative
pow = power
atan = arctan
atan2 = arctan2
absolute = abs
conjugate = conj
permute = permute_dims


def _at(self):
    return _At(self)


_tensor_mod.Tensor.at = property(_at)
_tensor_mod._ops = sys.modules[__name__]

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "sys")]
