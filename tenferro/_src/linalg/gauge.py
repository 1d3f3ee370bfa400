"""Testing a gradient for gauge invariance at exact degeneracies.

At an exactly degenerate spectrum every basis of a multiplet is an equally valid
decomposition; ``svd``, ``eigh`` and ``eig`` return a fixed generic one (rotations numbered by
``tie_gauge``'s seed, default 0). The backward check (``DegeneracyWarning``) sees the
cotangents of one decomposition only, and design/linalg.md proves that some gauge-dependent
gradients cannot be told from exact ones there: a loss that also uses the matrix directly,
like <U M V^H, A> (its direct part carries the basis), or one that depends on a discrete
choice (the sign of a real null vector). They change with the basis, though: this computes the
gradient again in other bases and compares.
"""

from __future__ import annotations

import warnings

import numpy as np

from chainrules.primitives.degeneracy import report
from chainrules.primitives.tie_gauge import tie_gauge

from ..autodiff.reverse import grad
from ..errors import DegeneracyWarning
from ..ops import stop_gradient
from ..pytree import tree_flatten

__all__ = ["check_gauge_invariance", "tie_gauge"]


def _leaves(g) -> list:
    return [np.asarray(stop_gradient(x)) for x in tree_flatten(g)[0]]


def check_gauge_invariance(f, *args, argnums=0, seeds=(1, 2), rtol: float = 1e-6,
                           atol: float = 1e-10, eps_scale: float | None = 1e-3) -> float:
    """The gradient of ``f`` at ``args`` in the default basis and in the bases of ``seeds``
    (``tie_gauge``), and with the default tie tolerance scaled by ``eps_scale`` (None: not
    tried); reports (``DegeneracyWarning``, per ``TENFERRO_DEGENERACY``) and returns the largest
    difference relative to the gradients' norm that exceeds ``rtol`` (1e-3 for the tolerance
    run, which resolves near ties only to ~1e-16 / split) while the difference itself exceeds
    ``atol`` (a gradient that is 0 up to rounding stays quiet); 0.0 when none does. A
    difference means that the gradient depends on
    how degenerate multiplets were decomposed, or on what the tie tolerance cut, so it is not
    the derivative of ``f``. Without degeneracies every run agrees and the result is 0. ``f``
    must be deterministic (it runs ``2 + len(seeds)`` times). Costs one gradient per run;
    meant for tests and for validating a new loss, not for every step."""
    df = grad(f, argnums=argnums)
    base = _leaves(df(*args))
    runs = [({"seed": s}, rtol) for s in seeds]
    if eps_scale is not None:
        runs.append(({"eps_scale": eps_scale}, max(rtol, 1e-3)))
    found = 0.0
    for kw, tol in runs:
        with tie_gauge(**kw), warnings.catch_warnings():
            warnings.simplefilter("ignore", DegeneracyWarning)  # reported by the first run
            other = _leaves(df(*args))
        diff = max((float(np.linalg.norm(a - b)) for a, b in zip(base, other)), default=0.0)
        scale = max((float(np.linalg.norm(x)) for x in base + other), default=0.0)
        rel = diff / scale if scale > 0 else 0.0
        if diff > atol and rel > tol:
            found = max(found, rel)
    if found:
        report(
            f"check_gauge_invariance: the gradient of {getattr(f, '__name__', 'f')} changes "
            f"by {found:.2e} (relative) when the degenerate multiplets of its svd/eigh/eig "
            f"are decomposed in another basis (or with another tie tolerance): it depends on "
            f"the gauge, so it is not the derivative of the function. A loss that uses the "
            f"factors together with the matrix itself, or a discrete choice (the sign of a "
            f"null vector), does this; express it through gauge-invariant quantities."
        )
    return found
