"""Sorting: ``argsort``, the one primitive sorting needs.

``sort(x)`` is ``take_along_axis(x, argsort(x))`` in the user-facing layer, so its derivative
follows the permutation (a gather, whose transpose scatters the cotangent back) and no sorting
rule is needed. The permutation is *stable*: equal values keep their order, so ties are broken
by index and the derivative at a tie is well defined (each tied entry moves with its own
position).
"""

from __future__ import annotations

from ..core import Primitive, ShapedArray
from ..dtypes import int64
from ..errors import DTypeError
from ._checks import check_axes, require_real


def _sort_cost(in_avals, out_avals, *, axis):
    """n log2(n) comparisons per sorted line."""
    import math

    x = in_avals[0]
    if not x.is_static:
        return None
    n = x.shape[axis]
    return int(x.size * max(math.log2(n), 1)) if n else 0


argsort_p = Primitive(
    "argsort", differentiable=False, cost=_sort_cost,
    convention="integer output (a stable permutation: ties keep their order): no gradient",
)


@argsort_p.def_abstract_eval
def _argsort_aval(x, *, axis):
    require_real("argsort", x)
    if x.dtype.kind == "b":
        raise DTypeError("argsort: bool operand; convert it to an integer dtype first.")
    check_axes("argsort", (axis,), x.ndim)
    return ShapedArray(x.shape, int64)


@argsort_p.def_impl
def _argsort_impl(xp, x, *, axis):
    return xp.astype(xp.argsort(x, axis=axis, stable=True), int64)
