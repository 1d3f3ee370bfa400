"""The two-site DMRG sweep, shared by the dense (``tn.dmrg``) and the block-sparse
(``symmetric.dmrg``) DMRG.

What the two have in common is the algorithm: the schedule of bond dimensions, the sweep
order (left to right, then right to left, alternately), at each bond the lowest eigenvector
of the effective Hamiltonian (``linalg.eigensolver.lowest_eigenpair``, warm-started from the
current two-site tensor, with a tolerance that follows the energy's convergence), its split and
truncation, the environment update, the per-sweep progress record and the convergence test.
What differs is how tensors are stored and multiplied, behind a small interface
(``TwoSiteChain``): the dense DMRG keeps tenferro tensors and contracts them with
``ops.tensordot``, the block-sparse one keeps raw block arrays in the layouts its products
want (design/symmetric.md). ``run`` drives either.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple, Protocol

import numpy as np

from ..linalg.eigensolver import lowest_eigenpair
from ..progress import warn_unconverged
from .progress import Progress

__all__ = ["DMRGResult", "TwoSiteChain", "default_schedule", "run", "schedule_of",
           "sweep_outcome", "warn_if_unconverged"]

LOOSE_TOL = 1e-4  # the first sweeps' local eigensolver tolerance


class DMRGResult(NamedTuple):
    """Ground-state energy (of the last local solve), the MPS (mixed canonical, normalised),
    the energy after each sweep, the largest bond dimension, the largest discarded weight of
    the last sweep, the number of sweeps, whether the energy converged to ``tol``, and the
    wall time in seconds."""

    energy: float
    mps: list
    energies: list
    max_bond: int
    discarded: float
    sweeps: int
    converged: bool
    seconds: float


class TwoSiteChain(Protocol):
    """What a two-site DMRG stores and how it multiplies: the MPS and the environments of
    one representation (dense tensors, symmetric blocks)."""

    name: str  # for the progress line ("DMRG", "symmetric DMRG")
    op: str  # for messages ("dmrg", "symmetric.dmrg")
    sites: int
    vectors: object  # the Krylov vectors of the local problems (linalg.vectors)

    def prepare(self) -> None:
        """Bring the start into right-canonical form and build the right environments."""

    def local(self, i: int) -> tuple:
        """The two-site problem on bond (i, i + 1): (theta as a vector, the effective
        Hamiltonian's matvec on such vectors, whatever ``split`` needs to undo the
        vectorisation)."""

    def split(self, i: int, v, local, max_rank: int, cutoff: float, right: bool) -> float:
        """Store the truncated split of the new two-site vector ``v`` (the isometry on the
        side the sweep leaves, the weights on the side it moves to) and extend the
        environment in the sweep's direction; returns the discarded weight."""

    def max_bond(self) -> int:
        """The largest bond dimension now."""

    def result(self) -> tuple:
        """(the MPS in the user's representation, its largest bond dimension)."""


def default_schedule(max_rank: int) -> list[int]:
    """Bond dimensions per sweep: 8, 16, 32, ... up to ``max_rank``: cheap early sweeps find
    the right sector, the last ones the accuracy."""
    out, d = [], 8
    while d < max_rank:
        out.append(d)
        d *= 2
    return out + [int(max_rank)]


def schedule_of(max_rank: int, schedule=None) -> list[int]:
    """The bond dimension of each sweep: ``schedule`` (None or empty: ``default_schedule``),
    capped at ``max_rank``; the last one repeats."""
    sched = (list(schedule) if schedule is not None else []) or default_schedule(max_rank)
    return [min(int(x), int(max_rank)) for x in sched]


def sweep_outcome(energy: float, change: float, tol: float, local_tol: float,
                  at_final: bool) -> tuple:
    """After a sweep run with local tolerance ``local_tol``: (converged?, the next sweep's
    local tolerance). Converged once the final bond dimension is reached and the energy
    changed by at most ``tol`` relative, in a sweep whose local solves were tighter than the
    first sweeps' loose ``LOOSE_TOL`` (a start that is already good, a warm ``mps0``, barely
    moves under the loose tolerance: an unchanged energy there is no convergence). The local
    tolerance follows the energy's convergence (sqrt of its relative change, x 1e-3).
    ``tol=0`` never converges: the loop runs all its sweeps."""
    if (tol > 0 and at_final and change <= tol * max(abs(energy), 1e-300)
            and local_tol < LOOSE_TOL):
        return True, local_tol
    if not math.isinf(change):
        local_tol = min(LOOSE_TOL, max(1e-12, math.sqrt(change / max(abs(energy), 1e-300))
                                       * 1e-3))
    return False, local_tol


def warn_if_unconverged(op: str, converged: bool, sweeps: int, energy: float, change: float,
                        tol: float, at_final: bool) -> None:
    """The ``ConvergenceWarning`` of a DMRG that used its ``max_sweeps`` without meeting
    ``tol`` (none for ``tol=0``, an explicit request for exactly ``max_sweeps`` sweeps)."""
    if converged or tol <= 0:
        return
    if not at_final:
        why = "the bond-dimension schedule had not reached its final bond dimension"
    else:
        rel = change / max(abs(energy), 1e-300)
        why = f"the last sweep changed the energy by {rel:.1e} relative, above tol={tol:g}"
    warn_unconverged(f"{op}: not converged after {sweeps} sweeps (max_sweeps): {why}. Raise "
                     f"max_sweeps or loosen tol (the result has converged=False; tol=0 runs "
                     f"exactly max_sweeps sweeps without this warning).")


def run(chain: TwoSiteChain, sched: list[int], *, cutoff: float, max_sweeps: int, tol: float,
        ncv: int, seed: int, progress, callback) -> DMRGResult:
    """Two-site sweeps over ``chain`` until the energy converges (``sweep_outcome``) or
    ``max_sweeps``; the bond dimension of sweep s is ``sched[s]`` (the last repeats). The
    per-sweep record (``energy``, ``dE``, ``D``, ``trunc_err``, ``products``) goes to
    ``progress``/``callback`` (``tenferro.tn.dmrg`` documents it)."""
    t0 = time.perf_counter()
    chain.prepare()
    rng = np.random.default_rng(seed)
    L = chain.sites
    energies, energy, prev = [], math.nan, math.nan
    converged, disc_max, sweep = False, 0.0, 0
    local_tol = LOOSE_TOL
    change, at_final = math.inf, False
    with Progress(chain.name, max_sweeps, progress, monitor="dE", tol=None,
                  callback=callback, unit="sweep") as p:
        for sweep in range(max_sweeps):
            D = sched[min(sweep, len(sched) - 1)]
            disc_max, nmv = 0.0, 0
            order = ([(i, True) for i in range(L - 1)] if sweep % 2 == 0
                     else [(i, False) for i in range(L - 2, -1, -1)])
            for i, right in order:
                v0, mv, local = chain.local(i)
                energy, v, k = lowest_eigenpair(mv, v0, tol=local_tol, ncv=ncv, maxiter=200,
                                                rng=rng, vectors=chain.vectors)
                nmv += k
                disc_max = max(disc_max, chain.split(i, v, local, D, cutoff, right))
            energies.append(energy)
            change = abs(energy - prev) if not math.isnan(prev) else math.inf
            p.tol = tol * max(abs(energy), 1e-300)  # the convergence test's threshold
            p.min_left = max(len(sched) - 1 - sweep, 0)  # sweeps before the final D
            p.update(sweep + 1, energy=energy, dE=energy - prev, D=chain.max_bond(),
                     trunc_err=disc_max, products=nmv)
            at_final = D >= sched[-1] and sweep >= len(sched) - 1
            converged, local_tol = sweep_outcome(energy, change, tol, local_tol, at_final)
            if converged:
                break
            prev = energy
    warn_if_unconverged(chain.op, converged, sweep + 1, energy, change, tol, at_final)
    mps, maxb = chain.result()
    return DMRGResult(energy, mps, energies, maxb, disc_max, sweep + 1, converged,
                      time.perf_counter() - t0)
