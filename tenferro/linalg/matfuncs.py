"""Matrix functions built from products: ``matrix_power``."""

from __future__ import annotations

import numpy as np

from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import broadcast_to, eye, matmul, tensor_of
from .dense import _matrix, inv

__all__ = ["matrix_power"]


def matrix_power(a, n: int) -> Tensor:
    """``a`` (..., m, m) raised to the integer power ``n`` by repeated squaring
    (2 log2(n) products at most); n = 0 gives the identity (in ``a``'s dtype, also for
    integer matrices) and n < 0 the power of ``inv(a)``, as NumPy. Its derivative is that
    of the products (and of ``inv``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ShapeError(f"matrix_power: the exponent must be an integer, got {n!r}.")
    n = int(n)
    x = tensor_of(a)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(
            f"matrix_power: expected square matrices (..., m, m), got shape {x.shape}."
        )
    if n == 0:
        return broadcast_to(eye(x.shape[-1], dtype=x.dtype, device=x.device), x.shape)
    if n < 0:
        x = inv(_matrix("matrix_power", x, square=True))
        n = -n
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            return result
        base = matmul(base, base)
