"""tenferro's exception hierarchy (defined in ``chainrules.errors``, re-exported here)."""

from chainrules.errors import (  # noqa: F401
    ConcretizationError,
    DeviceError,
    DTypeError,
    GradientError,
    GraphError,
    LeakedTracerError,
    NonLinearError,
    RetraceWarning,
    ShapeError,
    TenferroError,
    fmt_aval,
)


class GraphFormatError(GraphError):
    """A graph file is corrupt, hostile, over a size limit, or in a format version this
    tenferro does not read (see design/graph-files.md). The message names what is wrong."""


class LinAlgError(TenferroError, ValueError):
    """A decomposition or solve failed on the values it was given (a singular matrix, a matrix
    that is not positive definite, an iteration that did not converge). The message names the
    operation and its operands; NumPy's ``numpy.linalg.LinAlgError`` is its ``__cause__``."""


def check_callable(op: str, f) -> None:
    """Transformations take a function: say so when they are handed something else."""
    if not callable(f):
        raise GradientError(
            f"{op}: expected a function as the first argument, got {type(f).__name__} "
            f"{f!r:.40}. Call it as {op}(f)(*args) (or {op}(f, *args) where it takes them)."
        )
