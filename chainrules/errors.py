"""The exception hierarchy shared by ``chainrules`` and ``tenferro``.

Every user mistake raises one of these. Messages name the operation, the offending
shapes/dtypes/devices, and what to do. ``tenferro.errors`` re-exports this module.
"""

from __future__ import annotations

import numpy as np

from .dtypes import short_name


class TenferroError(Exception):
    """Base class of every error raised for a user mistake."""


class ShapeError(TenferroError, ValueError):
    """Operand shapes do not fit the operation."""


class IndexOutOfBoundsError(ShapeError, IndexError):
    """An index held in data (``take``, ``gather``, integer-array indexing, class targets of a
    loss, ``one_hot``, ``embedding``) lies outside the axis it indexes. Checked when the values
    are known: at once in eager mode, when the graph runs under ``jit``. Also an ``IndexError``,
    as NumPy's and PyTorch's out-of-range indices are."""


class IndexShapeError(ShapeError, IndexError):
    """An index does not fit the shape of the tensor it indexes: a boolean mask whose shape is
    not that of the axes it selects (each mask size must equal the axis size, or be 0). Also an
    ``IndexError``, as NumPy's error and the array API standard's are."""


class AxisError(ShapeError, IndexError):
    """An axis argument is out of range for the operand's rank (NumPy's ``AxisError``, also an
    ``IndexError`` as the array API standard asks)."""


class DTypeError(TenferroError, TypeError):
    """Operand dtypes do not fit the operation (or cannot be differentiated)."""


class DeviceError(TenferroError, ValueError):
    """Operands live on different devices, or a device/backend is unavailable."""


class GradientError(TenferroError, RuntimeError):
    """Misuse of differentiation: backward twice, non-scalar output, in-place mutation..."""


class NonLinearError(GradientError):
    """A function handed to ``linear_transpose`` (or a transpose rule) is not linear."""


class GraphError(TenferroError, RuntimeError):
    """Tracing, compiling, saving or loading a graph went wrong."""


class RetraceWarning(UserWarning):
    """A jitted function is traced again and again (its signature keeps changing)."""


class ConcretizationError(GraphError):
    """Python control flow asked for the value of a traced (abstract) tensor."""


class LeakedTracerError(GraphError):
    """A tracer escaped the transformation that created it and was used later."""


class DegeneracyWarning(TenferroError, UserWarning):
    """A derivative through an exactly degenerate spectrum (svd, eigh) is not determined.

    Raised as a warning by default when a loss depends on the basis inside a degenerate
    subspace, or on individual values of a degenerate multiplet, or when a truncation cuts
    through a multiplet. ``TENFERRO_DEGENERACY=raise|warn|ignore`` selects what happens; with
    ``raise`` it is raised as an exception (it is a ``TenferroError`` for that reason).
    """


class LinAlgError(TenferroError, np.linalg.LinAlgError):
    """A decomposition or solve failed on the values it was given (a singular matrix, a matrix
    that is not positive definite, an iteration that did not converge). The message names the
    operation and its operands; NumPy's ``numpy.linalg.LinAlgError`` (a ``ValueError``) is
    both a base class and the ``__cause__``, so code catching NumPy's error keeps working."""


class NotHermitianError(LinAlgError):
    """A solver for Hermitian (self-adjoint) operators (``eigsh``) was given a matrix that is
    not Hermitian: its anti-Hermitian part exceeds the rounding of its entries."""


class SingularMatrixError(LinAlgError):
    """A matrix that must be invertible (``inv``, ``solve``, the derivative of ``slogdet``) or
    positive definite (``cholesky``) is not."""


def fmt_aval(x) -> str:
    """Short ``dtype[shape]`` description of anything with ``shape`` and ``dtype``."""

    shape = ",".join(str(d) for d in x.shape)
    return f"{short_name(x.dtype)}[{shape}]"
