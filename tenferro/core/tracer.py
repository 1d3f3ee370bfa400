"""``Tracer``: base class of the values of transformation traces (and of traced graphs)."""

from __future__ import annotations

from .tensor import Tensor


class Tracer(Tensor):
    """A value seen by a transformation. Subclasses define ``aval``-like ``shape``/``dtype``
    and how to reach a concrete value (``_concrete``) if there is one."""

    __slots__ = ("_trace",)

    def _concrete(self):
        """The innermost eager value, or raise ``ConcretizationError``."""
        raise NotImplementedError

    @property
    def device(self):
        return self._primal_device()

    def _primal_device(self):  # pragma: no cover - overridden
        return None

    # Python conversions go to the concrete value where there is one.
    def __bool__(self):
        return bool(self._concrete())

    def __float__(self):
        return float(self._concrete())

    def __int__(self):
        return int(self._concrete())

    def __complex__(self):
        return complex(self._concrete())

    def __index__(self):
        return self._concrete().__index__()

    def item(self):
        return self._concrete().item()

    def numpy(self):
        return self._concrete().numpy()

    def __array__(self, dtype=None, copy=None):
        a = self._concrete().numpy()
        return a if dtype is None else a.astype(dtype)
