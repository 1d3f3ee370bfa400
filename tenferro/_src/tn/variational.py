"""Implementation of ``tenferro.tn.variational`` (its docstring is the user documentation)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from chainrules.dtypes import float64

from .. import ops
from ..autodiff.reverse import value_and_grad
from ..contract.api import einsum
from ..errors import ShapeError
from ..progress import warn_unconverged
from ..traced import jit
from . import arguments as arg
from .mps import (
    bond_dimensions,
    expand_bond_dimension,
    mixed_canonicalize,
    mpo_expectation,
    mpo_variance,
    random_mps,
)
from .progress import Progress

__all__ = ["VariationalResult", "mps_energy", "variational_ground_state"]


@arg.checked(mps=arg.MPS, mpo=arg.MPO)
def mps_energy(mps, mpo):
    """Re <psi|H|psi> / <psi|psi>: the variational energy of an MPS for a Hermitian MPO."""
    return ops.real(mpo_expectation(mps, mpo))


def _preconditioned_energy(xs, ps, mpo):
    """The energy of psi = X_0 P_1 X_1 ... P_{L-1} X_{L-1} (the P's absorbed to the left)."""
    mps = [einsum("lsk,kr->lsr", x, p) for x, p in zip(xs[:-1], ps)] + [xs[-1]]
    return mps_energy(mps, mpo)


_energy_and_grad = value_and_grad(_preconditioned_energy)
_energy_and_grad_jit = jit(_energy_and_grad)


@dataclass
class VariationalResult:
    """What ``variational_ground_state`` found.

    ``mps``: the state, normalised and mixed-canonical about the middle site; ``energy``: its
    energy; ``variance``: <H^2> - <H>^2 (None if not computed); ``history``: the energy after
    every L-BFGS iteration, over all stages; ``bond_history``: the bond dimension of each of
    those iterations; ``stages``: one dict per bond dimension (D, iterations, evaluations,
    energy, seconds, rounds); ``converged``: the final stage met ``tol`` (not the budget)."""

    mps: list = field(repr=False)
    energy: float
    variance: float | None
    history: np.ndarray = field(repr=False)
    bond_history: np.ndarray = field(repr=False)
    stages: list = field(default_factory=list)
    n_iterations: int = 0
    n_evaluations: int = 0
    seconds: float = 0.0
    converged: bool = False


def default_schedule(D: int, start: int = 4) -> list[int]:
    """Bond dimensions of the growing-D stages: halve ``D`` until at most ``start``
    (``16 -> [4, 8, 16]``, ``12 -> [3, 6, 12]``, ``4 -> [4]``)."""
    ds = [int(D)]
    while ds[0] > start:
        ds.insert(0, (ds[0] + 1) // 2)
    return ds


@arg.checked(mpo=arg.MPO, D=arg.SIZE, mps0=arg.optional(arg.mps),
             schedule=arg.rule(arg.size_list, none=True), dtype=arg.DTYPE, seed=arg.SEED,
             tol=arg.TOL, restart_every=arg.SIZE, stage_iterations=arg.SIZE,
             metric_eps=arg.TOL, maxcor=arg.SIZE, max_iterations=arg.SIZE, noise=arg.TOL,
             jit=arg.FLAG, variance=arg.FLAG, progress=arg.FLAG, gtol=arg.OPTIONAL_TOL,
             callback=arg.FUNCTION)
def variational_ground_state(
    mpo, D: int, *, mps0=None, schedule=None, dtype=None, seed=0, tol: float = 1e-12,
    restart_every: int = 30, stage_iterations: int = 100, metric_eps: float = 1e-8,
    maxcor: int = 10, max_iterations: int = 20000, noise: float = 1e-2, jit: bool = True,
    variance: bool = True, progress=None, gtol: float | None = None,
    callback: Callable[[dict], object] | None = None,
) -> VariationalResult:
    """Minimise <psi|H|psi>/<psi|psi> over MPS of bond dimension ``D`` with L-BFGS.

    * ``mpo``: the Hamiltonian (``tenferro.tn.mpo``; W[left, right, out, in], Hermitian);
    * ``mps0``: a starting state (default: a random MPS, seeded by ``seed``, at the first
      bond dimension of ``schedule``); ``dtype``: of the random start (default float64; use
      complex128 for complex Hamiltonians);
    * ``schedule``: the bond dimensions of successive stages (default ``default_schedule(D)``,
      halving down to 4; with ``mps0`` given: just ``[D]``);
    * ``tol``: a stage ends when two successive rounds each lower the energy by less than
      ``tol * max(1, |E|)``;
    * ``restart_every``: L-BFGS iterations per round (re-canonicalisation and a fresh
      preconditioner between rounds); ``metric_eps``: regularisation of the preconditioner;
      ``maxcor``: L-BFGS memory;
    * ``stage_iterations``: iteration budget of each intermediate (smaller-D) stage: it only
      has to give the next stage a good start;
    * ``max_iterations``: total L-BFGS iteration budget over all stages; running out of it
      before the final stage meets ``tol`` (or ``gtol``) warns
      (``tenferro.errors.ConvergenceWarning``, naming the last energy gain);
    * ``noise``: relative size of the random entries added when D grows;
    * ``jit``: compile the energy-and-gradient function with ``tenferro.jit`` (3-4x faster
      than eager on these sizes; traced once per bond dimension);
    * ``variance``: also compute <H^2> - <H>^2 of the result (about one energy evaluation);
    * ``gtol``: a stage also ends once the gradient norm (2-norm in the preconditioned
      variables, at an accepted L-BFGS iterate) is at most ``gtol`` (default None: only the
      energy test);
    * ``progress``: periodic log lines (None: the ``tenferro.tn`` default, False: silent);
      the steps left are estimated from the rate at which the gradient norm falls towards
      ``gtol`` (or, without one, towards sqrt(tol * max(1, |E|)), the gradient whose
      quadratic energy gain is the energy tolerance), not from ``max_iterations``;
    * ``callback(record)``: every L-BFGS iteration's record, printed or not: ``energy``
      (full precision), ``dE``, ``grad`` (None if the last evaluation was not at the accepted
      iterate), ``D``, ``step_time``, ``steps_left``.

    The defaults were tuned on the Heisenberg (L = 12) and critical transverse-field Ising
    (L = 32, 64) chains at D = 16 (``design/mps.md``).
    """
    from scipy.optimize import minimize

    L = len(mpo)
    d = mpo[0].shape[2]
    if schedule is None:
        schedule = [D] if mps0 is not None else default_schedule(D)
    schedule = [int(k) for k in schedule]
    if not schedule or min(schedule) < 1 or schedule[-1] != D:
        raise ShapeError(f"variational_ground_state: schedule {schedule} must be positive "
                         f"bond dimensions ending with D={D}.")
    if mps0 is None:
        psi = random_mps(L, schedule[0], d, dtype=float64 if dtype is None else dtype,
                         seed=seed)
    else:
        psi = list(mps0)
        arg.same_chain("variational_ground_state", mpo, psi, "mps0")
        if max(bond_dimensions(psi)) > schedule[0]:
            raise ShapeError(
                f"variational_ground_state: mps0 has bond dimension {max(bond_dimensions(psi))}"
                f" > {schedule[0]} (the first stage); truncate it first (two_site_update).")
    vg = _energy_and_grad_jit if jit else _energy_and_grad
    center = L // 2
    history: list[float] = []
    bond_hist: list[int] = []
    stages = []
    n_eval = 0
    t_start = time.perf_counter()
    seeds = np.random.SeedSequence(seed)

    last = {}  # the latest evaluation: the accepted iterate's gradient for the report

    def fun(x, shapes, dt, ps):
        nonlocal n_eval
        e, g = vg(_unflatten(x, shapes, dt), ps, mpo)
        n_eval += 1
        e = e.item()
        if not np.isfinite(e):  # let the line search back off instead of failing
            return np.inf, np.zeros_like(x)
        g = _flatten(g)
        last.update(x=x, grad=float(np.linalg.norm(g)))
        return e, g

    # L-BFGS gradients are not monotone: the rate is taken over a longer window
    with Progress("vMPS", max_iterations, progress, monitor="grad", tol=gtol,
                  callback=callback, window=20, unit="iteration") as prog:
        for si, Dk in enumerate(schedule):
            if max(bond_dimensions(psi)) < Dk:
                psi = expand_bond_dimension(psi, Dk, noise=noise, seed=seeds.spawn(1)[0])
            final = si == len(schedule) - 1
            left = max_iterations - len(history)
            budget = left if final else min(stage_iterations, left)
            t0, it0, ev0 = time.perf_counter(), len(history), n_eval
            e_best, small, rounds, gain = np.inf, 0, 0, math.inf
            last["gconv"] = False
            while len(history) - it0 < budget and small < 2 and not last["gconv"]:
                xs, ps = precondition(psi, center, metric_eps)
                shapes, dt = [x.shape for x in xs], xs[0].dtype
                n = min(restart_every, budget - (len(history) - it0))
                res = minimize(fun, _flatten(xs), args=(shapes, dt, ps), jac=True,
                               method="L-BFGS-B",
                               callback=_recorder(history, bond_hist, Dk, prog, last, tol,
                                                  gtol),
                               options=dict(maxiter=n, maxfun=4 * n, maxcor=maxcor,
                                            ftol=10 * np.finfo(float).eps, gtol=0.0))
                xs = _unflatten(res.x, shapes, dt)
                psi = [einsum("lsk,kr->lsr", x, p) for x, p in zip(xs[:-1], ps)] + [xs[-1]]
                rounds += 1
                e = float(res.fun)
                gain = e_best - e
                small = small + 1 if gain < tol * max(1.0, abs(e)) else 0
                e_best = min(e, e_best)
            stages.append(dict(D=Dk, iterations=len(history) - it0, evaluations=n_eval - ev0,
                               rounds=rounds, energy=e_best, seconds=time.perf_counter() - t0,
                               converged=small >= 2 or last["gconv"]))
            if len(history) >= max_iterations:
                break
    psi = mixed_canonicalize(psi, center, normalize=True)
    energy = mps_energy(psi, mpo).item()
    var = mpo_variance(psi, mpo).item() if variance else None
    converged = len(stages) == len(schedule) and stages[-1]["converged"]
    if not converged and (tol > 0 or gtol):
        where = ("" if len(stages) == len(schedule) else
                 f" in the stage at D={stages[-1]['D']} (of schedule {schedule})")
        last_gain = (f"the last L-BFGS round lowered the energy by {gain:.1e}"
                     if math.isfinite(gain) else "the budget ended within the first L-BFGS "
                     "round of the stage")
        warn_unconverged(
            f"variational_ground_state: not converged after {len(history)} iterations "
            f"(max_iterations){where}: {last_gain}, the test needs two rounds each below "
            f"tol * max(1, |E|) = {tol * max(1.0, abs(energy)):.1e}"
            f"{'' if gtol is None else f', gradient norm above gtol={gtol:g}'}. Raise "
            f"max_iterations or loosen tol (the result has converged=False).")
    return VariationalResult(
        mps=psi, energy=energy, variance=var, history=np.asarray(history),
        bond_history=np.asarray(bond_hist), stages=stages, n_iterations=len(history),
        n_evaluations=n_eval, seconds=time.perf_counter() - t_start, converged=converged)


def _recorder(history, bond_hist, D, prog, last, tol, gtol):
    """The L-BFGS callback: scipy passes the new iterate as ``intermediate_result`` (the
    parameter name selects that calling convention). The gradient norm is that of the last
    evaluation when it was at the accepted iterate (L-BFGS-B's line search ends there).
    Raising StopIteration ends the L-BFGS run once that norm is below ``gtol``."""

    def record(intermediate_result):
        e = float(intermediate_result.fun)
        de = e - history[-1] if history else math.nan
        history.append(e)
        bond_hist.append(D)
        x = last.get("x")
        g = last["grad"] if x is not None and np.array_equal(x, intermediate_result.x) else None
        # the estimate of the steps left aims at gtol, or else at the gradient whose
        # quadratic energy gain is the energy tolerance
        prog.tol = gtol if gtol is not None else math.sqrt(tol * max(1.0, abs(e)))
        prog.update(len(history), energy=e, dE=de, grad=g, D=D)
        if gtol is not None and g is not None and g <= gtol:
            last["gconv"] = True
            raise StopIteration

    return record


# ----------------------------------------------------------------- preconditioning
def precondition(mps, center: int, eps: float = 1e-6):
    """``(xs, ps)`` with ``psi = X_0 P_1 X_1 ... P_{L-1} X_{L-1}`` the normalised state and the
    fixed bond matrices ``P_k`` chosen so that the metric <dpsi|dpsi> is the identity on each
    X_i's block at this point (regularised by ``eps`` relative to the largest eigenvalue).

    With the state mixed-canonical about ``center`` and normalised, a left-canonical site
    i < c changes the state by dA_i weighted by the right environment R of its right bond,
    <dpsi|dpsi> = sum conj(dA[l,s,r']) R[r',r] dA[l,s,r], so A_i = X_i P with
    P = (R^{-1/2})^T; a right-canonical site i > c sees the left environment E of its left bond
    and A_i = P X_i with P = E^{-1/2}. Both P's sit on bond matrices of the chain."""
    mps = mixed_canonicalize(mps, center, normalize=True)
    A = [_host(a) for a in mps]
    L = len(A)
    ps: list = [None] * (L - 1)
    xs = list(A)
    # right environments of the bonds k = center, ..., 1 (bond k is between sites k-1 and k)
    r = np.ones((1, 1), dtype=A[0].dtype)
    for k in range(L - 1, 0, -1):
        a = A[k]
        r = np.einsum("asb,yb,xsy->xa", a, r, a.conj())  # R[bra x, ket a]
        if k <= center:
            p, p_inv = _inv_sqrt(r, eps)
            ps[k - 1] = p.T
            xs[k - 1] = np.einsum("lsr,rk->lsk", xs[k - 1], p_inv.T)
    # left environments of the bonds k = center + 1, ..., L - 1
    e = np.ones((1, 1), dtype=A[0].dtype)
    for k in range(1, L):
        a = A[k - 1]
        e = np.einsum("xa,asb,xsy->yb", e, a, a.conj())  # E[bra y, ket b]
        if k > center:
            p, p_inv = _inv_sqrt(e, eps)
            ps[k - 1] = p
            xs[k] = np.einsum("kl,lsr->ksr", p_inv, xs[k])
    dev = mps[0].device
    return ([ops.asarray(x, device=dev) for x in xs], [ops.asarray(p, device=dev) for p in ps])


def _host(t):
    return np.asarray(t.detach() if hasattr(t, "detach") else t)


def _inv_sqrt(g, eps):
    """(G + eps max|G|)^{-1/2} and its inverse, for a Hermitian positive semi-definite G."""
    g = (g + g.conj().T) / 2
    w, u = np.linalg.eigh(g)
    w = np.maximum(w, 0.0)
    w = w + eps * max(w.max(), np.finfo(float).tiny)
    return (u / np.sqrt(w)) @ u.conj().T, (u * np.sqrt(w)) @ u.conj().T


def _flatten(ts) -> np.ndarray:
    """Concatenate tensors into one float64 vector (complex: interleaved real and imaginary
    parts, so the gradient dL/dRe z + i dL/dIm z flattens to the real gradient)."""
    parts = []
    for t in ts:
        a = np.ascontiguousarray(_host(t)).ravel()
        if a.dtype.kind == "c":
            parts.append(a.astype(np.complex128, copy=False).view(np.float64))
        else:
            parts.append(a.astype(np.float64, copy=False))
    return np.concatenate(parts)


def _unflatten(x, shapes, dtype):
    dt = np.dtype(dtype)
    out, o = [], 0
    width = 2 if dt.kind == "c" else 1
    for s in shapes:
        n = int(np.prod(s)) * width
        chunk = np.ascontiguousarray(x[o:o + n])
        arr = chunk.view(np.complex128) if width == 2 else chunk
        out.append(ops.tensor(arr.astype(dt, copy=False).reshape(s)))
        o += n
    return out
