"""Graph optimisation passes. Each is a function ``Program -> Program`` in its own module:

* ``fold_shapes``: transpose∘transpose, reshape∘reshape and identity reshapes/transposes/casts;
* ``const_fold``: evaluate equations whose inputs are all constants (bounded in size);
* ``fold_seeds``: multiplications by a constant of ones (reverse mode's seeds) vanish;
* ``cse``: common-subexpression elimination (not across remat barriers);
* ``dce``: dead-code elimination;
* ``liveness``: not a rewrite; the last use of every value, used by the executor to free
  intermediates as soon as possible.
"""

from __future__ import annotations

from ..program import Program
from .const_fold import const_fold
from .cse import cse
from .dce import dce
from .fold_seeds import fold_seeds
from .fold_shapes import fold_shapes
from .liveness import last_uses

DEFAULT_PASSES = (fold_shapes, const_fold, fold_seeds, cse, dce)


def optimize(program: Program, passes=DEFAULT_PASSES) -> Program:
    """Run ``passes`` in order, repeating until the equation count stops shrinking."""
    while True:
        n = len(program.eqns)
        for p in passes:
            program = p(program)
        if len(program.eqns) >= n:
            return program


__all__ = ["const_fold", "cse", "dce", "fold_seeds", "fold_shapes", "last_uses", "optimize"]
