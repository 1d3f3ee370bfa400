"""Two-site DMRG for any MPO (``tenferro.tn.mpo`` conventions), with tenferro's Lanczos.

The state is an MPS ``A[i][left, phys, right]``; the Hamiltonian an MPO
``W[i][left, right, phys_out, phys_in]``. A sweep visits the bonds left to right and back;
a *sweep* is one pass over the bonds, alternately left to right and right to left (no
backward re-canonicalisation pass is needed: each pass leaves the MPS canonical for the next).
At bond (i, i+1) the two-site tensor theta[a, s, t, c] is optimised as the lowest eigenvector
of the effective Hamiltonian

    H_eff theta [b, s', t', d] = L[b, w, a] W_i[w, v, s', s] W_{i+1}[v, u, t', t] R[d, u, c]
                                 theta[a, s, t, c]

applied, never formed, in three contractions: L theta (D^3 w d^2), the two MPO tensors merged
into one (D^2 w^2 d^4), R (D^3 w d^2). The eigensolver is the thick-restart Lanczos of
``tenferro.linalg.eigsh`` warm-started from the current theta, so late sweeps need only a few
products; its residual tolerance follows the convergence of the energy. theta is split by a
truncated SVD (``max_rank``, ``cutoff`` on singular values of the normalised state), and the
environment (L moving right, R moving left) is extended by the new isometry. Bond
dimensions may follow a ``schedule`` (one per sweep, then the last repeats), as quimb's.

Everything is tenferro operations on tensors, so it runs on every backend (GPU included).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .. import ops
from ..linalg import _iterative as it
from ..progress import warn_unconverged
from . import arguments as arg
from .dispatch import implementation
from .mps import right_canonicalize, split_two_site
from .progress import Progress

__all__ = ["DMRGResult", "dmrg"]


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


def default_schedule(max_rank: int) -> list[int]:
    """Bond dimensions per sweep: 8, 16, 32, ... up to ``max_rank``: cheap early sweeps find
    the right sector, the last ones the accuracy."""
    out, d = [], 8
    while d < max_rank:
        out.append(d)
        d *= 2
    return out + [int(max_rank)]


# ------------------------------------------------------------------ environments
def _extend_left(L, A, W):
    """L'[b', w', k'] = L[b, w, k] conj(A)[b, s', b'] W[w, w', s', s] A[k, s, k']."""
    t = ops.tensordot(L, A, ([2], [0]))  # [b, w, s, k']
    t = ops.tensordot(t, W, ([1, 2], [0, 3]))  # [b, k', w', s']
    t = ops.tensordot(t, ops.conj(A), ([0, 3], [0, 1]))  # [k', w', b']
    return ops.transpose(t, (2, 1, 0))


def _extend_right(R, A, W):
    """R'[d', u', c'] = R[d, u, c] conj(A)[d', t', d] W[u', u, t', t] A[c', t, c]."""
    t = ops.tensordot(A, R, ([2], [2]))  # [c', t, d, u]
    t = ops.tensordot(t, W, ([1, 3], [3, 1]))  # [c', d, u', t']
    t = ops.tensordot(t, ops.conj(A), ([1, 3], [2, 1]))  # [c', u', d']
    return ops.transpose(t, (2, 1, 0))


def _two_site_mpo(W1, W2):
    """W12[w, u, s', t', s, t] = W1[w, v, s', s] W2[v, u, t', t]."""
    return ops.transpose(ops.tensordot(W1, W2, ([1], [0])), (0, 3, 1, 4, 2, 5))


def _heff_apply(L, W12, R, shape):
    """The matvec theta -> H_eff theta on flat vectors (three contractions)."""
    n = int(np.prod(shape))

    def mv(x):
        th = ops.reshape(x, shape)
        t = ops.tensordot(L, th, ([2], [0]))  # [b, w, s, t, c]
        t = ops.tensordot(t, W12, ([1, 2, 3], [0, 4, 5]))  # [b, c, u, s', t']
        t = ops.tensordot(t, R, ([1, 2], [2, 1]))  # [b, s', t', d]
        return ops.reshape(t, (n,))

    return mv


def _lowest(mv, v0, tol, ncv, rng):
    """Lowest eigenpair of the local problem (dense for tiny ones)."""
    n = v0.shape[0]
    if n <= 2 * ncv:
        res = it.dense_eig(mv, n, v0.dtype, v0.device, 1, "SA", True)
    else:
        res = it.krylov_schur(mv, v0, 1, "SA", True, tol=tol, ncv=ncv, maxiter=200, rng=rng)
    return float(np.real(res.values[0])), res.vectors[:, 0], res.info.iterations


# ------------------------------------------------------------------------ DMRG
def sweep_outcome(energy: float, change: float, tol: float, local_tol: float,
                  at_final: bool) -> tuple:
    """After a sweep: (converged?, the next sweep's Lanczos tolerance). Converged once the
    final bond dimension is reached and the energy changed by at most ``tol`` relative; the
    local tolerance follows the energy's convergence (sqrt of its relative change, x 1e-3).
    ``tol=0`` never converges: the loop runs all its sweeps."""
    if tol > 0 and at_final and change <= tol * max(abs(energy), 1e-300):
        return True, local_tol
    if not math.isinf(change):
        local_tol = min(1e-4, max(1e-12, math.sqrt(change / max(abs(energy), 1e-300)) * 1e-3))
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


def _dense_or_other(dense_rule):
    """A rule for a chain argument: the dense rule, except for a list holding tensors of a
    type with its own DMRG (symmetric ones, checked by that implementation, where tn.dmrg
    dispatches them)."""

    def check(op, name, value):
        if isinstance(value, Sequence) and implementation("dmrg", *value) is not None:
            return list(value)
        return dense_rule(op, name, value)

    return check


@arg.checked(mpo=_dense_or_other(arg.rule(arg.mpo, min_sites=2)),
             max_rank=arg.rule(arg.size, hint=" (Pass a starting state by keyword: "
                                              "dmrg(mpo, mps0=mps).)"),
             mps0=_dense_or_other(arg.mps), schedule=arg.rule(arg.size_list, none=True),
             cutoff=arg.TOL, max_sweeps=arg.SIZE, tol=arg.TOL, ncv=arg.rule(arg.size, minimum=2),
             seed=arg.SEED, dtype=arg.DTYPE, progress=arg.FLAG, callback=arg.FUNCTION)
def dmrg(mpo, max_rank: int = 64, *, mps0=None, schedule=None, cutoff: float = 1e-10,
         max_sweeps: int = 40, tol: float = 1e-10, ncv: int = 12, seed: int = 0,
         dtype=None, progress=None,
         callback: Callable[[dict], object] | None = None) -> DMRGResult:
    """Two-site DMRG ground state of the MPO ``mpo`` (any local dimension, real or complex).

    ``max_rank``: largest bond dimension; ``schedule``: bond dimension per sweep (a sweep is
    one pass, alternately left to right and right to left; default 8, 16, ..., max_rank, see
    ``default_schedule``); ``cutoff``: drop singular values of the normalised two-site tensor
    below it. Stops when a sweep at the final bond dimension changes the energy by less than
    ``tol * |E|``, or after ``max_sweeps`` (then with a ``tenferro.errors.ConvergenceWarning``
    naming the change reached; ``tol=0`` runs exactly ``max_sweeps`` sweeps, no warning).
    ``mps0``: initial MPS on the MPO's chain (same sites and physical dimensions; default:
    random, bond dimension schedule[0], from ``seed``).
    ``ncv``: Lanczos Krylov dimension. ``progress``: a line per sweep (None: global setting).
    ``callback(record)`` receives each sweep's record, printed or not: ``energy`` (the float
    returned, all digits), ``dE`` (change since the previous sweep, NaN on the first),
    ``D`` (largest bond), ``trunc_err`` (largest discarded weight of the sweep), ``products``
    (Lanczos matrix-vector products), ``step_time``; ``steps_left`` estimates the sweeps to
    convergence from the rate at which |dE| falls towards ``tol * |E|``.
    Returns ``DMRGResult``.

    A symmetric MPO (``tenferro.symmetric.mpo_from_dense``) runs the block-sparse DMRG
    (``tenferro.symmetric.dmrg``, same parameters and result, ``mps0`` symmetric, sector: the
    charge of ``mps0`` or the identity)."""
    # other tensor types (symmetric MPOs: the block-sparse DMRG)
    impl = implementation("dmrg", *mpo) if isinstance(mpo, Sequence) else None
    if impl is not None:
        return impl(mpo, max_rank, mps0=mps0, schedule=schedule, cutoff=cutoff,
                              max_sweeps=max_sweeps, tol=tol, ncv=ncv, seed=seed, dtype=dtype,
                              progress=progress, callback=callback)
    L = len(mpo)
    d = [int(w.shape[2]) for w in mpo]
    if dtype is None:
        dtype = np.result_type(*[w.dtype for w in mpo])
        if mps0 is not None:
            dtype = np.result_type(dtype, *[a.dtype for a in mps0])
    sched = list(schedule) if schedule is not None else default_schedule(max_rank)
    sched = [min(int(x), int(max_rank)) for x in sched]
    if mps0 is None:
        mps = _random_mps(d, sched[0], dtype, seed, mpo[0].device)
    else:
        mps0 = arg.mps("dmrg", "mps0", mps0)  # a symmetric MPS needs a symmetric MPO
        arg.same_chain("dmrg", mpo, mps0, "mps0")
        mps = right_canonicalize([a.astype(dtype) for a in mps0], normalize=True)
    mpo = [w.astype(dtype) for w in mpo]
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    one = ops.ones((1, 1, 1), dtype=dtype, device=mpo[0].device)
    # right environments for the right-canonical start: R[i] covers sites > i
    R = [None] * L
    R[L - 1] = one
    for i in range(L - 1, 0, -1):
        R[i - 1] = _extend_right(R[i], mps[i], mpo[i])
    Lenv = [None] * L
    Lenv[0] = one
    energies, energy, prev = [], math.nan, math.nan
    converged, disc_max, sweep = False, 0.0, 0
    W12 = [_two_site_mpo(mpo[i], mpo[i + 1]) for i in range(L - 1)]
    local_tol = 1e-4
    change, at_final = math.inf, False
    with Progress("DMRG", max_sweeps, progress, monitor="dE", tol=None,
                  callback=callback, unit="sweep") as p:
        for sweep in range(max_sweeps):
            D = sched[min(sweep, len(sched) - 1)]
            disc_max, nmv = 0.0, 0
            if sweep % 2 == 0:
                order = [(i, True) for i in range(L - 1)]
            else:
                order = [(i, False) for i in range(L - 2, -1, -1)]
            for i, right in order:
                a, b = mps[i], mps[i + 1]
                theta = ops.tensordot(a, b, ([2], [0]))  # [Dl, s, t, Dr]
                shape = tuple(theta.shape)
                mv = _heff_apply(Lenv[i], W12[i], R[i + 1], shape)
                v0 = ops.reshape(theta, (-1,))
                energy, v, k = _lowest(mv, v0, local_tol, ncv, rng)
                nmv += k
                a, b, disc = split_two_site(ops.reshape(v, shape), D, cutoff, right,
                                            normalize=True)
                disc_max = max(disc_max, disc)
                mps[i], mps[i + 1] = a, b
                if right:
                    Lenv[i + 1] = _extend_left(Lenv[i], a, mpo[i])
                else:
                    R[i] = _extend_right(R[i + 1], b, mpo[i + 1])
            energies.append(energy)
            change = abs(energy - prev) if not math.isnan(prev) else math.inf
            p.tol = tol * max(abs(energy), 1e-300)  # the convergence test's threshold
            p.min_left = max(len(sched) - 1 - sweep, 0)  # sweeps before the final D
            p.update(sweep + 1, energy=energy, dE=energy - prev,
                     D=max(a.shape[2] for a in mps[:-1]), trunc_err=disc_max, products=nmv)
            at_final = D >= sched[-1] and sweep >= len(sched) - 1
            converged, local_tol = sweep_outcome(energy, change, tol, local_tol, at_final)
            if converged:
                break
            prev = energy
    warn_if_unconverged("dmrg", converged, sweep + 1, energy, change, tol, at_final)
    maxb = max(int(a.shape[2]) for a in mps[:-1])
    return DMRGResult(energy, mps, energies, maxb, disc_max, sweep + 1, converged,
                      time.perf_counter() - t0)


def _random_mps(d, D, dtype, seed, device):
    """A random right-canonical MPS with bond dimension D (capped by the chain's ends)."""
    L = len(d)
    rng = np.random.default_rng(seed)
    dims = [1]
    for k in range(1, L):
        left = int(np.prod(d[:k], dtype=float)) if k < 40 else D
        right = int(np.prod(d[k:], dtype=float)) if L - k < 40 else D
        dims.append(int(min(D, left, right)))
    dims.append(1)
    mps = []
    for i in range(L):
        shape = (dims[i], d[i], dims[i + 1])
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        mps.append(ops.asarray(x.astype(dtype), device=device))
    return right_canonicalize(mps, normalize=True)
