"""Matrix functions: ``funm`` (and ``sqrtm``, ``logm``, ``powm`` through it) for Hermitian
matrices, exact at every degeneracy (the ``funm`` primitive, Daleckii-Krein divided
differences: chainrules/primitives/spectral.py), and ``matrix_power`` for any square matrix
(repeated products). ``expm(a, hermitian=True)`` (in ``dense``) is ``funm(a, "exp")``."""

from __future__ import annotations

import numpy as np

from chainrules import primitives as P

from .. import ops
from ..core.dispatch import bind
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..ops import broadcast_to, expand_dims, eye, matmul, tensor_of
from ..ops._base import astype
from .dense import _matrix, _mH, eigh, inv

__all__ = ["expm", "funm", "logm", "matrix_power", "powm", "sqrtm"]

_NAMED = ("exp", "log", "sqrt", "sin", "cos")


def _function_name(f):
    """A named scalar function from ``f``: a name, ``("pow", p)``, or the tenferro / NumPy
    elementwise function of that name. None for any other callable."""

    if isinstance(f, str):
        return f, None
    if isinstance(f, tuple) and len(f) == 2 and f[0] == "pow":
        return "pow", float(f[1])
    for name in _NAMED:
        if f is getattr(ops, name) or f is getattr(np, name):
            return name, None
    return None


def funm(a, f) -> Tensor:
    """``f(a)`` for a Hermitian matrix ``a`` (its Hermitian part ``(a + a^H)/2`` is used, as in
    ``eigh``): ``V diag(f(w)) V^H``.

    ``f`` is a name, ``"exp"``, ``"log"``, ``"sqrt"``, ``"sin"``, ``"cos"``, or ``("pow", p)``
    (the tenferro or NumPy function of that name works too). Then the derivative is the
    Daleckii-Krein formula ``V [G o (V^H dA V)] V^H``, ``G_ij = (f(w_i) - f(w_j))/(w_i - w_j)``
    computed without cancellation (``f'(w_i)`` on ties), and higher derivatives use higher
    divided differences: exact at every degeneracy, to every order, and the graph stays
    savable (the name is a parameter). This is how to apply a function to a Hermitian matrix:
    composing ``eigh`` with an elementwise function has no derivative at degenerate spectra.

    Any other callable ``f`` (acting elementwise on the eigenvalues, written with tenferro
    operations) is applied through ``eigh``: exact away from degeneracies; at a degenerate
    spectrum its gradient is reported as not determined (``DegeneracyWarning``).
    """
    a = _matrix("funm", a, square=True)
    named = _function_name(f)
    if named is not None:
        return bind(P.funm_p, a, fn=named[0], power=named[1])
    if not callable(f):
        raise ShapeError(
            f"funm: f must be a function name ({', '.join(_NAMED)}), ('pow', p), or a callable; "
            f"got {f!r}."
        )
    w, v = eigh(a)
    fw = tensor_of(f(w))
    if fw.shape != w.shape:
        raise ShapeError(
            f"funm: f must act elementwise on the eigenvalues (shape {w.shape}); it returned "
            f"shape {fw.shape}."
        )
    return matmul(v * expand_dims(astype(fw, v.dtype), -2), _mH(v))


def sqrtm(a) -> Tensor:
    """Square root of a Hermitian positive semi-definite matrix (its Hermitian part), exact to
    every order at degeneracies (``funm(a, "sqrt")``). The derivative is infinite where an
    eigenvalue is zero. Negative eigenvalues give NaN."""
    return funm(a, "sqrt")


def logm(a) -> Tensor:
    """Logarithm of a Hermitian positive-definite matrix (its Hermitian part), exact to every
    order at degeneracies (``funm(a, "log")``). Non-positive eigenvalues give -inf / NaN."""
    return funm(a, "log")


def powm(a, p: float) -> Tensor:
    """``a**p`` for a Hermitian positive semi-definite ``a`` and any real ``p`` (its Hermitian
    part; ``funm(a, ("pow", p))``), exact to every order at degeneracies. For integer powers
    of general matrices use ``matrix_power``."""
    return funm(a, ("pow", float(p)))


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


def expm(a, hermitian: bool = False) -> Tensor:
    """Matrix exponential.

    General matrices: scaling and squaring with Pade approximants; the derivative is the
    Frechet derivative ``expm_frechet``, itself differentiable to any order.
    ``hermitian=True``: exp of the Hermitian part of ``a`` through its eigendecomposition
    (``funm(a, "exp")``), faster, and exact to every order at any degeneracy."""
    if hermitian:
        return funm(a, "exp")
    a = _matrix("expm", a, square=True)
    return bind(P.expm_p, a)
