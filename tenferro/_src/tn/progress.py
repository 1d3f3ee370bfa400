"""Progress output of the tensor-network algorithms: ``tenferro._src.progress`` (a leaf utility that
the contraction executor uses too), re-exported here for ``tenferro.tn.set_progress``."""

from ..progress import Progress, set_progress

__all__ = ["Progress", "set_progress"]
