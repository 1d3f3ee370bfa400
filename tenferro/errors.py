"""tenferro's exception hierarchy (defined in ``chainrules.errors``, re-exported here)."""

from chainrules.errors import (  # noqa: F401
    ConcretizationError,
    DegeneracyWarning,
    DeviceError,
    DTypeError,
    GradientError,
    GraphError,
    LeakedTracerError,
    NonLinearError,
    RetraceWarning,
    ShapeError,
    SingularMatrixError,
    TenferroError,
    fmt_aval,
)


class GraphFormatError(GraphError):
    """A graph file is corrupt, hostile, over a size limit, or in a format version this
    tenferro does not read (see design/graph-files.md). The message names what is wrong."""
