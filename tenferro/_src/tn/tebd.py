"""TEBD: real- and imaginary-time evolution of a finite MPS under a nearest-neighbour
Hamiltonian ``H = sum_i h_{i,i+1}`` by Trotter-Suzuki products of two-site gates.

One second-order step is the symmetric sweep
``S2(dt) = prod_{i=0}^{L-2} e^{-z h_i dt/2}  prod_{i=L-2}^{0} e^{-z h_i dt/2}`` (z = i for real
time, 1 for imaginary time): its error per step is O(dt^3) and it is time-reversible, so the
fourth-order Suzuki composition ``S4(dt) = S2(p dt)^2 S2((1-4p) dt) S2(p dt)^2`` with
``p = 1/(4 - 4^(1/3))`` applies (``order=4``, the default: errors O(dt^4) globally). The
orthogonality centre moves with the sweep, so every gate acts on the centre and its SVD
truncation (``max_rank``, ``cutoff``) is optimal; the discarded weights are summed into the
truncation error.

The gates are dense exponentials of the (d^2, d^2) bond matrices (``tenferro.linalg.expm``),
made on the device of the MPS. Works on complex tensors; a real MPS is promoted for real time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .. import linalg, ops
from ..contract.api import einsum
from ..errors import ShapeError
from . import arguments as arg
from .mpo import spin_operators
from .mps import mixed_canonicalize, split_two_site
from .progress import Progress

__all__ = ["TEBDResult", "heisenberg_bond_terms", "tebd", "tfim_bond_terms"]


class TEBDResult(NamedTuple):
    """The evolved MPS (normalised, centre at site 0), the times at which ``measure`` ran and
    its results, the summed discarded weight, the steps taken, and the progress records."""

    mps: list
    times: list
    measurements: list
    truncation_error: float
    steps: int
    records: list


# ------------------------------------------------------------------ bond Hamiltonians
@arg.checked(L=arg.rule(arg.size, minimum=2), g=arg.NUMBER, J=arg.NUMBER)
def tfim_bond_terms(L: int, g: float = 1.0, J: float = 1.0) -> list:
    """The bond terms h_i (i = 0..L-2, each h[s', t', s, t]) of the open chain
    ``H = -J sum Z_i Z_{i+1} - g sum X_i``: every field is shared by the bonds touching its
    site (half each inside, whole at the ends), so ``sum_i h_i = H``."""
    p = spin_operators("pauli")
    return _nn_terms(L, [(-J * p["Z"], p["Z"])], -g * p["X"])


@arg.checked(L=arg.rule(arg.size, minimum=2), J=arg.NUMBER)
def heisenberg_bond_terms(L: int, J: float = 1.0) -> list:
    """The bond terms of the open Heisenberg chain ``H = J sum S_i . S_{i+1}`` (real)."""
    s = spin_operators("spin")
    return _nn_terms(L, [(J / 2 * s["Sp"], s["Sm"]), (J / 2 * s["Sm"], s["Sp"]),
                         (J * s["Sz"], s["Sz"])], None)


def _nn_terms(L, pairs, onsite):
    d = 2
    eye = np.eye(d)
    out = []
    for i in range(L - 1):
        h = sum(np.kron(a, b) for a, b in pairs)
        if onsite is not None:
            wl = 1.0 if i == 0 else 0.5
            wr = 1.0 if i == L - 2 else 0.5
            h = h + wl * np.kron(onsite, eye) + wr * np.kron(eye, onsite)
        h = np.real_if_close(h)
        out.append(h.reshape(d, d, d, d))
    return out


# --------------------------------------------------------------------------- gates
_P4 = 1 / (4 - 4 ** (1 / 3))


def _substeps(order: int) -> list[float]:
    """Fractions of dt of the second-order sweeps making one step."""
    if order == 2:
        return [1.0]
    if order == 4:
        return [_P4, _P4, 1 - 4 * _P4, _P4, _P4]
    raise ShapeError(f"tebd: order must be 2 or 4, got {order!r}.")


def _gates(terms, tau, dtype, device):
    """exp(-tau h_i) for each bond term, as (d, d, d, d) tensors (out, out, in, in)."""
    gates = []
    for h in terms:
        d = h.shape[0]
        m = ops.asarray(np.asarray(h).reshape(d * d, d * d).astype(dtype), device=device)
        tau_t = ops.asarray(np.asarray(tau, dtype=dtype), device=device)
        gates.append(ops.reshape(linalg.expm(-tau_t * m), (d, d, d, d)))
    return gates


def _apply(mps, gate, i, right, max_rank, cutoff):
    """Gate on sites (i, i+1) with the centre on them; the centre moves right or left."""
    theta = einsum("lsm,mtr->lstr", mps[i], mps[i + 1])
    theta = einsum("uvst,lstr->luvr", gate, theta)
    mps[i], mps[i + 1], disc = split_two_site(theta, max_rank, cutoff, right)
    return disc


def _sweep(mps, half_gates, max_rank, cutoff, normalize):
    """One S2 sweep: right with the first half gates, back left with the second; centre at
    site 0 before and after."""
    L = len(mps)
    disc = 0.0
    fwd, bwd = half_gates
    for i in range(L - 1):
        disc += _apply(mps, fwd[i], i, True, max_rank, cutoff)
    for i in range(L - 2, -1, -1):
        disc += _apply(mps, bwd[i], i, False, max_rank, cutoff)
    if normalize:
        mps[0] = mps[0] / linalg.norm(mps[0])
    return disc


# ---------------------------------------------------------------------------- TEBD
@arg.checked(mps=arg.MPS, dt=arg.NUMBER, steps=arg.COUNT, imaginary=arg.FLAG,
             order=arg.rule(arg.choice, options=(2, 4)), max_rank=arg.OPTIONAL_SIZE,
             cutoff=arg.TOL, measure=arg.FUNCTION, measure_every=arg.SIZE,
             progress=arg.FLAG, callback=arg.FUNCTION)
def tebd(mps: Sequence, terms: Sequence, dt: float, steps: int, *, imaginary: bool = False,
         order: int = 4, max_rank: int | None = None, cutoff: float = 0.0,
         measure=None, measure_every: int = 1, progress=None, callback=None) -> TEBDResult:
    """Evolve ``mps`` by ``steps`` steps of ``dt`` under ``H = sum_i terms[i]`` (the bond terms
    h_i[s', t', s, t] on sites i, i+1, e.g. ``tfim_bond_terms(L, g)``).

    Real time (default): psi(t) = exp(-i H t) psi, complex tensors. ``imaginary=True``:
    exp(-H tau) psi, renormalised after every sweep (ground states by cooling); use order=2
    there (the fourth-order composition has a negative substep, amplifying excited states).
    ``max_rank``/``cutoff``: truncation of every gate's SVD (cutoff on normalised singular
    values). ``measure(mps, t)``: called at t = 0 and every ``measure_every`` steps; its
    results are returned. ``progress``/``callback``: one record per step (time t, bond
    dimension, truncation error, norm)."""
    L = len(mps)
    terms = arg.tensor_list("tebd", "terms", terms, min_items=0)
    if len(terms) != L - 1:
        raise ShapeError(f"tebd: {len(terms)} bond terms for a chain of {L} sites (need L-1).")
    d = [int(a.shape[1]) for a in mps]
    for i, h in enumerate(terms):
        if tuple(np.shape(h)) not in ((d[i], d[i + 1], d[i], d[i + 1]),
                                      (d[i] * d[i + 1], d[i] * d[i + 1])):
            raise ShapeError(f"tebd: bond term {i} has shape {tuple(np.shape(h))}; expected "
                             f"{(d[i], d[i + 1], d[i], d[i + 1])} (out, out, in, in).")
    terms = [np.asarray(ops.stop_gradient(h)).reshape(d[i], d[i + 1], d[i], d[i + 1])
             for i, h in enumerate(terms)]
    z = 1.0 if imaginary else 1j
    dtype = np.result_type(mps[0].dtype, *[h.dtype for h in terms],
                           np.float64 if imaginary else np.complex128)
    device = mps[0].device
    psi = mixed_canonicalize([a.astype(dtype) for a in mps], 0, normalize=True)
    subs = _substeps(order)
    gate_sets = {}
    for f in sorted(set(subs)):
        g = _gates(terms, z * f * dt / 2, dtype, device)
        gate_sets[f] = (g, g)
    times, results = [], []
    if measure is not None:
        times.append(0.0)
        results.append(measure(psi, 0.0))
    total_disc = 0.0
    with Progress("TEBD", steps, progress, fixed=True, callback=callback) as p:
        for step in range(1, steps + 1):
            disc = 0.0
            for f in subs:
                disc += _sweep(psi, gate_sets[f], max_rank, cutoff, imaginary)
            total_disc += disc
            t = step * dt
            p.update(step, t=t, D=max(a.shape[2] for a in psi[:-1]), trunc_err=disc,
                     trunc_err_total=total_disc)
            if measure is not None and step % measure_every == 0:
                times.append(t)
                results.append(measure(psi, t))
    return TEBDResult(psi, times, results, total_disc, steps, p.records)


