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
``batch(b, args, dims, **params) -> (outs, out_dims)``
    The batching (vmap) rule: ``dims[i]`` is the axis of ``args[i]`` that is mapped over, or
    ``None`` when that argument is the same for every batch member; returns the outputs (a
    list) and the mapped axis of each (``None``: the same for every member). Written against
    the Builder like the others (helpers in ``chainrules.primitives._batching``).

Rules never touch arrays or tensor classes: they only call ``b.bind`` (through helpers), which
is what lets one rule serve eager evaluation, graph building and every transformation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from .dtypes import canonical, short_name


class ShapedArray:
    """Abstract value: a shape and a dtype, nothing else. A dimension is an int or a size
    known only at run time (``chainrules.symbolic.Sym``)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = canonical(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        """Number of elements: an int, or a symbolic size when a dimension is symbolic."""
        n = 1
        for d in self.shape:
            n = n * d
        return n

    @property
    def nbytes(self):
        return self.size * self.dtype.itemsize

    @property
    def is_static(self) -> bool:
        """Every dimension is a Python int (no run-time sizes)."""
        return all(type(d) is int for d in self.shape)

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


def static_size(aval):
    """The element count of an aval as an int, or ``None`` if it is only known at run time."""
    n = aval.size
    return n if type(n) is int else None


def aval_of(x) -> ShapedArray:
    """The abstract value of anything carrying ``shape`` and ``dtype``."""
    if isinstance(x, ShapedArray):
        return x
    return ShapedArray(x.shape, x.dtype)


class _Abstract:
    """A placeholder known only by its aval (shape and dtype)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))

    def __repr__(self):
        return f"{type(self).__name__}({self.aval})"


class Zero(_Abstract):
    """A symbolic zero tangent or cotangent: carries an aval, allocates nothing."""

    __slots__ = ()


def is_zero(x) -> bool:
    return type(x) is Zero


class UndefinedPrimal(_Abstract):
    """Marks, in a transpose rule, an input the primitive is linear in."""

    __slots__ = ()


def is_undefined(x) -> bool:
    return type(x) is UndefinedPrimal


PRIMITIVES: dict[str, Primitive] = {}
"""Every primitive by name (graph serialization looks primitives up here)."""


def elementwise_cost(in_avals, out_avals, **params):
    """Default FLOP estimate: one per element of the largest operand or result."""
    sizes = [static_size(a) for a in (*in_avals, *out_avals)]
    if None in sizes:
        return None
    return max(sizes, default=0)


def no_flops(in_avals, out_avals, **params):
    """Cost of pure data movement (reshape, transpose, slicing...): no arithmetic."""
    return 0


class Primitive:
    """A named operation with static parameters, its rules (see the module docstring), and the
    facts that passes, cost models and transformations read from it:

    ``multiple_results``
        ``impl`` returns a tuple and ``abstract_eval`` a tuple of avals.
    ``differentiable``
        ``False`` for operations whose outputs carry no derivative (comparisons, integer
        results, constants, ``stop_gradient``): their JVP rule is generated (zero tangents).
    ``linear``
        Linear in every float/complex operand jointly (a transpose rule is then required).
        Primitives that are linear in one operand at a time (``mul``, ``dot_general``) are not
        ``linear`` but still have a transpose rule.
    ``decomposition``
        A matrix decomposition or other expensive, non-arithmetic-intensity-1 operation:
        cheap to keep, expensive to recompute (checkpoint policies save these).
    ``cse``
        Graph optimisation may merge identical applications (``False`` for barriers).
    ``cost``
        ``cost(in_avals, out_avals, **params) -> FLOPs`` (``None`` when a size is only known
        at run time); defaults to one FLOP per element.
    ``convention``
        What the derivative is at non-differentiable points (documented, tested).
    ``validate_eager``
        ``False`` when ``impl`` itself rejects every input ``abstract_eval`` rejects: eager
        mode then skips ``abstract_eval`` on the hot path (and runs it to word the error when
        ``impl`` fails). Elementwise primitives, whose operands the user layer has already
        broadcast and promoted, and simple layout operations. ``TENFERRO_CHECK=1`` validates
        every application regardless; traced mode always does.
    ``params``
        Every static parameter, by name, with its *kind* (``chainrules.params``): what a
        value of it may hold. The rules take exactly these keyword parameters (a test pins
        it); a graph file's parameters are checked against the kinds before ``abstract_eval``.
    ``check_params``
        ``check_params(params)`` checks across one application's parameters what
        ``abstract_eval`` leaves to run time (``full``: the value fits the dtype); raises
        ``chainrules.params.BadParam``.
    ``produces_size``
        The parameter naming the run-time size this primitive's output introduces (its
        length is decided from the data, e.g. ``truncation_indices``); ``None`` for every
        primitive whose output sizes follow from its operands' and parameters'.
    ``specialize``
        Optional ``specialize(xp, in_avals, **params) -> callable | None``: the graph
        compiler calls it once per equation with static shapes and calls the returned
        ``f(*inputs)`` (no ``xp``, no params) instead of ``impl``, so that layout work
        (permutations, reshapes, broadcast plans) is done at compile time, not per call.
        It must compute exactly what ``impl`` computes; ``None`` means "use ``impl``".
    """

    def __init__(
        self,
        name: str,
        *,
        multiple_results: bool = False,
        differentiable: bool = True,
        linear: bool = False,
        decomposition: bool = False,
        cse: bool = True,
        cost: Callable[..., Any] | None = None,
        convention: str = "",
        validate_eager: bool = True,
        out_device=None,
        params: Mapping[str, Callable[[Any, int], None]] | None = None,
        check_params: Callable[[dict], None] | None = None,
        produces_size: str | None = None,
    ):
        if name in PRIMITIVES:
            raise ValueError(f"primitive {name!r} is already registered")
        params = dict(params or {})
        for k, kind in params.items():
            if not callable(kind):
                raise TypeError(f"primitive {name!r}: the kind of parameter {k!r} must be a "
                                f"function (see chainrules.params), got {kind!r}")
        if produces_size is not None and produces_size not in params:
            raise ValueError(f"primitive {name!r}: produces_size names {produces_size!r}, "
                             f"which is not one of its parameters {sorted(params)}")
        self.name = name
        self.multiple_results = multiple_results
        self.differentiable = differentiable
        self.linear = linear
        self.decomposition = decomposition
        self.cse = cse
        self.cost = cost if cost is not None else elementwise_cost
        self.convention = convention
        self.validate_eager = validate_eager
        # For transfers only: params -> the device the output lives on.
        self.out_device = out_device
        self.params: Mapping[str, Callable[[Any, int], None]] = MappingProxyType(params)
        self.check_params = check_params
        self.produces_size = produces_size
        # Higher-order primitives (calls carrying sub-programs) are processed by
        # ``process(trace, tracers, params)`` instead of ``trace.process_primitive``.
        self.process: Callable[..., Any] | None = None
        self.abstract_eval: Callable[..., Any] | None = None
        self.impl: Callable[..., Any] | None = None
        self.jvp: Callable[..., Any] | None = None if differentiable else self._zero_jvp
        self.transpose: Callable[..., Any] | None = None
        self.batch: Callable[..., Any] | None = None
        self.specialize: Callable[..., Any] | None = None
        PRIMITIVES[name] = self

    def def_abstract_eval(self, f):
        self.abstract_eval = f
        return f

    def def_impl(self, f):
        self.impl = f
        return f

    def def_jvp(self, f):
        if not self.differentiable:
            raise ValueError(f"{self.name} is not differentiable: its JVP rule is generated")
        self.jvp = f
        return f

    def def_transpose(self, f):
        self.transpose = f
        return f

    def def_specialize(self, f):
        self.specialize = f
        return f

    def def_batch(self, f):
        self.batch = f
        return f

    def _zero_jvp(self, b, primals, tangents, **params):
        out = b.bind(self, *primals, **params)
        return out, self.unpack([Zero(ShapedArray(o.shape, o.dtype)) for o in self.as_list(out)])

    # The two places that know whether a primitive has one result or several. Besides them,
    # only two speed-critical spots in tenferro read ``multiple_results`` (the eager
    # ``EvalTrace.eval`` return and the derivative template's flags; design/architecture.md).
    def as_list(self, out) -> list:
        """An ``impl``/``bind`` result as a list of outputs."""
        return list(out) if self.multiple_results else [out]

    def unpack(self, outs):
        """A list of outputs as ``bind`` returns them: a tuple, or the single output."""
        return tuple(outs) if self.multiple_results else outs[0]

    def __repr__(self):
        return self.name

    def __reduce__(self):  # primitives are singletons: pickle by name
        return (PRIMITIVES.__getitem__, (self.name,))


def out_avals(prim: Primitive, avals, params) -> list:
    """Run ``abstract_eval`` and always return a list of avals."""
    return prim.as_list(prim.abstract_eval(*avals, **params))


def params_str(params: dict) -> str:
    """Readable ``k=v`` rendering used by error messages and graph listings."""
    parts = []
    for k, v in params.items():
        if isinstance(v, np.dtype):
            v = short_name(v)
        parts.append(f"{k}={v}")
    return ", ".join(parts)
