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
