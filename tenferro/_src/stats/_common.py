"""Shared pieces of the distributions: argument promotion, the loc/scale standardization,
SciPy's nan for invalid parameters, and the two-sided ``where`` that keeps gradients finite.

Every function here is a composition of tenferro operations, so derivatives in the data and
in the parameters come from the operations' own rules (eager, ``grad``, ``jit`` alike).

Gradients through ``where``: the branch that is not taken still receives a zero cotangent,
and 0 * inf = nan; so each branch is evaluated at a *safe* input where it is not selected
(``safe``), the usual double-``where`` pattern.
"""

from __future__ import annotations

import math

from ..core.tensor import Tensor
from ..errors import DTypeError
from ..ops import (
    floor,
    full_like,
    log,
    log1p,
    logical_and,
    stop_gradient,
    where,
)
from ..ops._base import operands, to_inexact

NAN = float("nan")
INF = float("inf")
LOG_2PI_HALF = 0.5 * math.log(2.0 * math.pi)
SQRT2 = math.sqrt(2.0)
SQRT1_2 = math.sqrt(0.5)


def promote(op: str, *xs) -> list[Tensor]:
    """Broadcast and promote like NumPy (integers become float64); real input only."""
    out = [to_inexact(t) for t in operands(op, *xs)]
    if out[0].dtype.kind == "c":
        raise DTypeError(f"{op}: complex input ({out[0].dtype}) is not supported; "
                         f"distributions are defined on real numbers, as in SciPy.")
    return out


def safe(cond: Tensor, x: Tensor, value: float, taken: bool = True) -> Tensor:
    """``x`` where ``cond`` (``taken``; where not ``cond`` if not ``taken``), else the constant
    ``value``: the input of a branch that ``where`` may discard, kept where its derivative is
    finite."""
    if taken:
        return where(cond, x, full_like(x, value))
    return where(cond, full_like(x, value), x)


def invalid_to_nan(out: Tensor, *conditions) -> Tensor:
    """SciPy's answer for invalid parameters (scale <= 0, a shape parameter <= 0): nan."""
    ok = conditions[0]
    for c in conditions[1:]:
        ok = logical_and(ok, c)
    return where(ok, out, full_like(out, NAN))


def standardize(op: str, x, loc, scale, *shape) -> tuple[Tensor, ...]:
    """(y, scale, *shape) with y = (x - loc) / scale, everything broadcast together."""
    x, loc, scale, *shape = promote(op, x, loc, scale, *shape)
    return ((x - loc) / scale, scale, *shape)


def log_of_tail(p: Tensor, q: Tensor) -> Tensor:
    """log(p) given p and its complement q = 1 - p, both accurate: log(p) where p is the
    small one, log1p(-q) where q is (so log(cdf) keeps its digits where cdf is near 1)."""
    small = p <= 0.5
    return where(small, log(safe(small, p, 0.5)), log1p(-safe(small, q, 0.5, taken=False)))


def integer_part(k: Tensor) -> Tensor:
    """floor(k) without a derivative: a count, which discrete distributions do not
    differentiate (its derivative is 0 almost everywhere)."""
    return stop_gradient(floor(k))
