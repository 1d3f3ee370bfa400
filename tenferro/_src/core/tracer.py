"""``Tracer``: base class of the values of transformation traces (and of traced graphs).

A tracer wraps a value of the level below (``_lower``). Converting it to a Python number or a
NumPy array leaves the AD system: if the value carries a derivative at some level, the result
would silently contribute zero to it, so those conversions raise (as JAX does; PyTorch refuses
``.numpy()`` on a tensor that requires grad). ``bool()`` stays allowed: branching on a value
does not lose a derivative, each branch is differentiated as written.
"""

from __future__ import annotations

from ..errors import GradientError, GraphError, fmt_aval
from . import tensor as _tensor_mod
from .tensor import Tensor


class Tracer(Tensor):
    """A value seen by a transformation. Subclasses define ``shape``/``dtype``, ``_lower``
    (the wrapped value one level down) and ``_carries_derivative``."""

    __slots__ = ("_trace", "_view_of")

    def _lower(self):  # pragma: no cover - overridden
        raise NotImplementedError

    def _carries_derivative(self) -> bool:
        return False

    def _check_concrete(self, what: str) -> None:
        """Raise if this tracer's value cannot become one concrete value (``vmap``'s tracers
        hold a value per batch member)."""

    def _concrete(self, what: str = "bool()"):
        """The innermost eager value (or ``ConcretizationError`` in a traced graph)."""
        x = self
        while isinstance(x, Tracer):
            x._check_concrete(what)
            x = x._lower()
        return x

    def _escape(self, what: str):
        """The innermost eager value for a conversion that leaves the AD system."""
        x = self
        while isinstance(x, Tracer):
            x._check_concrete(what)
            if x._carries_derivative():
                raise GradientError(
                    f"{what} on a value that is being differentiated ({type(x).__name__} "
                    f"{x.shape}): the result is a plain Python/NumPy value, so the derivative "
                    f"through it would silently be zero. Call .detach() (or "
                    f"tenferro.stop_gradient) first if a constant is intended, or wrap the "
                    f"computation outside tenferro in a tenferro.custom_vjp function."
                )
            x = x._lower()
        return x

    @property
    def device(self):
        return self._lower().device

    def __bool__(self):
        return bool(self._concrete())

    def __float__(self):
        return float(self._escape("float()"))

    def __int__(self):
        return int(self._escape("int()"))

    def __complex__(self):
        return complex(self._escape("complex()"))

    def __index__(self):
        return self._concrete("int index").__index__()  # integer tensors carry no derivative

    def item(self):
        return self._escape(".item()").item()

    def tolist(self):
        return self._escape(".tolist()").tolist()

    def numpy(self):
        return self._escape(".numpy()").numpy()

    def __array__(self, dtype=None, copy=None):
        return self._escape("numpy.asarray()").__array__(dtype)

    def __format__(self, spec: str) -> str:
        if not spec:
            return str(self)
        return format(self._escape("format()"), spec)

    # DLPack, pickling and copying: a traced value has no buffer to export or pickle
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._escape("DLPack export (__dlpack__)").__dlpack__(
            stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        return self._concrete("DLPack export (__dlpack_device__)").__dlpack_device__()

    def __reduce_ex__(self, protocol):
        raise GraphError(
            f"pickle: a {type(self).__name__} ({fmt_aval(self)}) is a value of a trace or "
            f"transformation, which exists only while it runs. Pickle concrete results (the "
            f"function's outputs), or the compiled graph (tenferro.jit(f).lower(*args) is a "
            f"Graph, and Graphs pickle)."
        )

    def __copy__(self):
        """``tenferro.copy(x)``: a new value of the trace (in-place updates of one do not reach
        the other), differentiated through as any operation (under a transformation there
        are no leaves to start a new history from, unlike eager ``copy.copy``)."""
        return _tensor_mod._ops.copy(self)

    def __deepcopy__(self, memo):
        out = memo[id(self)] = self.__copy__()
        return out


class PrimalTracer(Tracer):
    """A tracer wrapping a value of the level below (its ``primal``): the values of the
    differentiating traces, whose shape and dtype are the primal's."""

    __slots__ = ("primal",)

    shape = property(lambda self: self.primal.shape)
    dtype = property(lambda self: self.primal.dtype)

    def _lower(self):
        return self.primal
