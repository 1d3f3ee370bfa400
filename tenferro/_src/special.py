"""Implementation of ``tenferro.special`` (its docstring is the user documentation)."""

from __future__ import annotations

from chainrules import primitives as P

from .core.dispatch import bind
from .core.tensor import Tensor
from .errors import DTypeError, ShapeError
from .ops import log, log1p, logsumexp, sigmoid, tensor_of
from .ops._base import operands, to_inexact

__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gammaln",
    "logit",
    "logsumexp",  # tenferro.logsumexp: SciPy's (a, axis, b, keepdims, return_sign)
    "polygamma",
    "xlogy",
]


def _inexact(op: str, x, *, real: bool) -> Tensor:
    x = to_inexact(tensor_of(x))
    if real and x.dtype.kind == "c":
        raise DTypeError(
            f"{op}: complex input ({x.dtype}) is not supported; {op} is a real function here, "
            f"as in SciPy."
        )
    return x


def erf(z) -> Tensor:
    """The error function 2/sqrt(pi) int_0^z exp(-t^2) dt; derivative 2/sqrt(pi) exp(-z^2).
    Complex input supported (holomorphic)."""
    return bind(P.erf_p, _inexact("erf", z, real=False))


def erfc(x) -> Tensor:
    """1 - erf(x), accurate for large x; derivative -2/sqrt(pi) exp(-x^2). Complex input
    supported."""
    return bind(P.erfc_p, _inexact("erfc", x, real=False))


def erfinv(y) -> Tensor:
    """Inverse of ``erf`` on (-1, 1) (+-inf at +-1, nan outside); derivative
    sqrt(pi)/2 exp(erfinv(y)^2), infinite at +-1. Real input only."""
    return bind(P.erfinv_p, _inexact("erfinv", y, real=True))


def gammaln(x) -> Tensor:
    """log|Gamma(x)| (inf at the poles 0, -1, -2, ...); derivative digamma(x). Real input
    only."""
    return bind(P.gammaln_p, _inexact("gammaln", x, real=True))


def polygamma(n: int, x) -> Tensor:
    """The n-th derivative of digamma (n = 0: digamma itself), for a static non-negative int
    ``n``; derivative polygamma(n + 1, x). Real input only."""
    if isinstance(n, Tensor) or int(n) != n or n < 0:
        raise ShapeError(f"polygamma: the order n must be a non-negative Python int, got {n!r}.")
    return bind(P.polygamma_p, _inexact("polygamma", x, real=True), n=int(n))


def digamma(x) -> Tensor:
    """d/dx log Gamma(x) (poles at 0, -1, -2, ...); derivative polygamma(1, x). Real input
    only."""
    return polygamma(0, x)


def xlogy(x, y) -> Tensor:
    """x * log(y), defined as 0 where x == 0 (also where y == 0). Derivative: log(y) in x
    (-inf at y = 0) and x / y in y, which is 0 where x == 0 (the function is 0 along that
    line)."""
    a, b = (to_inexact(t) for t in operands("xlogy", x, y))
    return bind(P.xlogy_p, a, b)


def expit(x) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x)) (computed as (1 + tanh(x/2)) / 2, stable for
    large |x|)."""
    return sigmoid(x)


def logit(p) -> Tensor:
    """log(p / (1 - p)), the inverse of ``expit`` (-inf at 0, inf at 1, nan outside [0, 1]);
    derivative 1 / (p (1 - p))."""
    p = to_inexact(tensor_of(p))
    return log(p) - log1p(-p)

