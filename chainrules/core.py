"""The primitive contract: abstract values, symbolic zeros, and ``Primitive``.

A ``Primitive`` is a named operation with static parameters and four rules:

``abstract_eval(*avals, **params) -> aval | tuple[aval]``
    Output shapes/dtypes; validates inputs and raises clear errors.
``impl(xp, *arrays, **params) -> array | tuple[array]``
    The concrete computation on an array namespace ``xp``.
``jvp(b, primals, tangents, **params) -> (out, tangent_out)``
    The linearization, written against a ``Builder`` ``b``. Tangent outputs may only be
    produced by *linear* primitives applied to tangents (with residuals computed from primals),
    so that reverse mode is obtained by transposing them. Tangents may be ``Zero``.
``transpose(b, ct, *args, **params) -> tuple``
    Only for primitives linear in some inputs. ``args`` holds ``UndefinedPrimal`` for the
    linear inputs and ordinary values for the others; returns one cotangent per input
    (``None`` for inputs that are not linear).

Rules never touch arrays or tensor classes: they only call ``b.bind`` (through helpers), which
is what lets one rule serve eager evaluation, graph building and every transformation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .dtypes import canonical, short_name


class ShapedArray:
    """Abstract value: a shape and a dtype, nothing else."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = canonical(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __eq__(self, other):
        return (
            isinstance(other, ShapedArray)
            and self.shape == other.shape
            and self.dtype == other.dtype
        )

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return f"{short_name(self.dtype)}[{','.join(str(d) for d in self.shape)}]"


def aval_of(x) -> ShapedArray:
    """The abstract value of anything carrying ``shape`` and ``dtype``."""
    if isinstance(x, ShapedArray):
        return x
    return ShapedArray(x.shape, x.dtype)


class Zero:
    """A symbolic zero tangent or cotangent: carries an aval, allocates nothing."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def __repr__(self):
        return f"Zero({self.aval})"


def is_zero(x) -> bool:
    return type(x) is Zero


class UndefinedPrimal:
    """Marks, in a transpose rule, an input the primitive is linear in."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


PRIMITIVES: dict[str, Primitive] = {}
"""Every primitive by name (graph serialization looks primitives up here)."""


class Primitive:
    """A named operation with static parameters and its rules (see the module docstring).

    ``convention`` documents what the derivative is at non-differentiable points.
    """

    def __init__(
        self,
        name: str,
        *,
        multiple_results: bool = False,
        differentiable: bool = True,
        convention: str = "",
        validate_eager: bool = True,
        out_device=None,
    ):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is already registered")
        self.name = name
        self.multiple_results = multiple_results
        self.differentiable = differentiable
        self.convention = convention
        # Elementwise primitives skip abstract_eval in eager mode: the user-facing layer has
        # already broadcast and promoted their operands (TENFERRO_CHECK=1 validates anyway).
        self.validate_eager = validate_eager
        # For transfers only: params -> the device the output lives on.
        self.out_device = out_device
        self.abstract_eval: Callable[..., Any] | None = None
        self.impl: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None
        self.transpose: Callable[..., Any] | None = None
        PRIMITIVES[name] = self

    def def_abstract_eval(self, f):
        self.abstract_eval = f
        return f

    def def_impl(self, f):
        self.impl = f
        return f

    def def_jvp(self, f):
        self.jvp = f
        return f

    def def_transpose(self, f):
        self.transpose = f
        return f

    def __repr__(self):
        return self.name

    def __reduce__(self):  # primitives are singletons: pickle by name
        return (PRIMITIVES.__getitem__, (self.name,))


def out_avals(prim: Primitive, avals, params) -> tuple:
    """Run ``abstract_eval`` and always return a tuple of avals."""
    out = prim.abstract_eval(*avals, **params)
    return tuple(out) if prim.multiple_results else (out,)


def params_str(params: dict) -> str:
    """Readable ``k=v`` rendering used by error messages and graph listings."""
    parts = []
    for k, v in params.items():
        if isinstance(v, np.dtype):
            v = short_name(v)
        parts.append(f"{k}={v}")
    return ", ".join(parts)
