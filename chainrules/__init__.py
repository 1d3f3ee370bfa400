"""chainrules: primitives and their differentiation rules, independent of any tensor class.

Nothing here imports ``tenferro``. A primitive's rules are written against the ``Builder``
protocol, so the same rules serve eager evaluation, graph building and every transformation.
"""

from . import dtypes, errors, primitives
from .builder import Builder
from .core import PRIMITIVES, Primitive, ShapedArray, UndefinedPrimal, Zero, aval_of, is_zero

__all__ = [
    "Builder",
    "PRIMITIVES",
    "Primitive",
    "ShapedArray",
    "UndefinedPrimal",
    "Zero",
    "aval_of",
    "dtypes",
    "errors",
    "is_zero",
    "primitives",
]
