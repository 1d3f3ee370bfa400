"""``tenferro.linalg``: decompositions, solves, norms and matrix functions with correct
derivatives (``dense``: LAPACK-backed). See ``tenferro.linalg.dense`` for the conventions
(degenerate spectra, truncation, gauges) and design/linalg.md for the derivations."""

from . import dense
from .dense import *  # noqa: F403

__all__ = list(dense.__all__)
