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
    ShapeError,
    TenferroError,
    fmt_aval,
)
