"""Batching rules of the linear-algebra primitives, registered from one fact: their ``impl``
maps over leading axes (NumPy's convention, which every backend's ``linalg_ext`` follows), so
the batch is one more leading axis. Kept apart from ``linalg.py`` so that module stays about
the decompositions' mathematics; a primitive added there without an entry here is batched by
the loop fallback (correct, with a one-time warning naming it).
"""

from __future__ import annotations

from ..core import PRIMITIVES
from . import _batching
from . import linalg as _linalg  # noqa: F401  (registers the primitives named below)

LEADING_AXES_BATCHED = (
    "broadened_inverse", "svd", "svdvals", "eigh", "eigvalsh", "qr", "cholesky",
    "triangular_solve", "solve", "inv", "det", "slogdet", "expm", "expm_frechet",
    # being added on other branches (degeneracy.py, spectral.py, linalg.py): registered when
    # present; tests/vmap pins that every registered primitive has a rule
    "adjugate", "cut_inverse", "degeneracy_guard", "degeneracy_check", "funm",
)

for _name in LEADING_AXES_BATCHED:
    if _name in PRIMITIVES:
        _batching.leading(PRIMITIVES[_name])
del _name


def _truncation_indices_batch(b, args, dims, *, max_rank, cutoff, relative_cutoff, size):
    """Without a cutoff the kept rank is min(k, max_rank) for every member: one shared
    result. With a cutoff each member decides its own rank from its values."""
    if cutoff is not None or relative_cutoff is not None:
        raise _batching.data_dependent(
            "a cutoff-truncated SVD (truncation_indices)",
            "Give svd a static max_rank (and no cutoff) inside vmap, or loop over the batch.")
    s = _batching.move_axis(b, args[0], dims[0], 0)
    out = b.bind(PRIMITIVES["truncation_indices"], s, max_rank=max_rank, cutoff=cutoff,
                 relative_cutoff=relative_cutoff, size=size)
    return [out], [None]


PRIMITIVES["truncation_indices"].def_batch(_truncation_indices_batch)
