"""Implementation of ``tenferro.errors`` (its docstring is the user documentation)."""

from __future__ import annotations

import functools

import numpy as np

from chainrules.errors import (  # noqa: F401
    AxisError,
    ConcretizationError,
    DegeneracyWarning,
    DeviceError,
    DTypeError,
    GradientError,
    GraphError,
    IndexOutOfBoundsError,
    IndexShapeError,
    LeakedTracerError,
    LinAlgError,
    NonLinearError,
    NotHermitianError,
    RetraceWarning,
    ShapeError,
    SingularMatrixError,
    TenferroError,
    fmt_aval,
)

__all__ = [
    "ComplexWarning",
    "AxisError",
    "ConcretizationError",
    "ConvergenceWarning",
    "DegeneracyWarning",
    "DeviceError",
    "DialectError",
    "DTypeError",
    "GaugeWarning",
    "GradientError",
    "GraphError",
    "GraphFileError",
    "GraphFormatError",
    "IndexOutOfBoundsError",
    "IndexShapeError",
    "LeakedTracerError",
    "LinAlgError",
    "NonLinearError",
    "NotHermitianError",
    "RetraceWarning",
    "ShapeError",
    "SingularMatrixError",
    "TenferroError",
]


#: the module users import these classes from: every class of ``__all__`` reports it as its
#: ``__module__`` (tracebacks, ``repr``, ``help``), including those defined in
#: ``chainrules.errors``. Pickle finds a class by ``__module__`` and ``__qualname__``, and
#: ``tenferro.errors`` holds each of them, so pickled errors load as the same classes and
#: ``except`` clauses are unaffected (the classes themselves do not change).
PUBLIC_MODULE = "tenferro.errors"


class DialectError(ShapeError, TypeError):
    """A call NumPy and PyTorch both accept with different results (``split(x, 2)``,
    ``max(a, b)``, ``x.transpose(0, 1)`` on a matrix): tenferro refuses to guess, and the
    message gives the spelling of each meaning (design/numpy-surface.md, "The dialect
    rule"). A ``ShapeError`` and a ``TypeError``."""


class GaugeWarning(UserWarning):
    """A loss depends on an arbitrary gauge (the phase of an eigen- or singular vector)."""


class ComplexWarning(np.exceptions.ComplexWarning):
    """A cast from complex to real discards the imaginary part (``astype``, ``x.to``,
    ``x.float()``...). A subclass of NumPy's ``ComplexWarning``, so filters written for NumPy
    apply; take ``x.real`` first to drop the imaginary part on purpose."""


class ConvergenceWarning(RuntimeWarning):
    """An iterative solver or algorithm stopped before reaching its tolerance."""


class GraphFormatError(GraphError):
    """A graph file is corrupt, hostile, over a size limit, or in a format version this
    tenferro does not read (see design/graph-files.md). The message names what is wrong."""


class GraphFileError(GraphError, OSError):
    """A graph file cannot be opened (missing, a directory, no permission). An ``OSError`` too,
    with the ``errno`` and ``filename`` of the failed open, so ``except OSError`` still works."""

    def __init__(self, errno: int | None, message: str, filename: str | None = None):
        super().__init__(message)
        self.errno, self.strerror, self.filename = errno, message, filename

    def __str__(self) -> str:
        return self.strerror

    @classmethod
    def like(cls, e: OSError, message: str, filename: str) -> GraphFileError:
        """The error for the failed open ``e``: also an instance of ``type(e)``
        (``FileNotFoundError``, ``PermissionError``, ...), so narrow handlers still catch it."""
        return _file_error_class(type(e))(e.errno, message, filename)

    def __reduce__(self):
        # pickled by its fields: the constructor takes (errno, message, filename), and the
        # classes made by ``like`` are rebuilt from the OSError subclass they mix in
        bases = type(self).__bases__
        os_type = bases[1] if bases[0] is GraphFileError and len(bases) == 2 else None
        return _rebuild_file_error, (os_type, self.errno, self.strerror, self.filename)


_FILE_ERRORS: dict = {}


def _file_error_class(os_type: type | None) -> type:
    """``GraphFileError`` mixed with ``os_type`` (one class per OSError subclass)."""
    if os_type is None:
        return GraphFileError
    sub = _FILE_ERRORS.get(os_type)
    if sub is None:
        sub = _FILE_ERRORS[os_type] = type(GraphFileError.__name__, (GraphFileError, os_type),
                                           {"__module__": PUBLIC_MODULE})
    return sub


def _rebuild_file_error(os_type, errno, message, filename):
    return _file_error_class(os_type)(errno, message, filename)


def named_argument_errors(op: str):
    """Decorate a public function whose arguments take many forms (sequences, nested lists,
    numbers or tensors): a raw ``TypeError``/``AttributeError`` (a wrong kind of argument) or
    ``ValueError``/``OverflowError``/``ZeroDivisionError``/``IndexError`` (a wrong value, an
    axis a tensor of too low rank lacks) raised while it interprets them becomes a
    ``DTypeError``/``ShapeError`` naming the op, the argument types and where to look.
    tenferro's own errors pass through unchanged."""

    def wrap(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except TenferroError:
                raise
            except (TypeError, AttributeError, ValueError, OverflowError,
                    ZeroDivisionError, IndexError) as e:
                kinds = ", ".join([type(a).__name__ for a in args]
                                  + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
                cls = DTypeError if isinstance(e, (TypeError, AttributeError)) else ShapeError
                raise cls(f"{op}: invalid arguments ({kinds}): {e}. See help(tenferro.{op}) "
                          f"for the accepted forms.") from e

        return checked

    return wrap


def check_callable(op: str, f) -> None:
    """Transformations take a function: say so when they are handed something else."""
    if not callable(f):
        raise GradientError(
            f"{op}: expected a function as the first argument, got {type(f).__name__} "
            f"{f!r:.40}. Call it as {op}(f)(*args) (or {op}(f, *args) where it takes them)."
        )


for _name in __all__:
    globals()[_name].__module__ = PUBLIC_MODULE
del _name
