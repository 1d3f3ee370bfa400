"""TDVP: time evolution of a finite MPS projected onto the MPS manifold (Haegeman, Lubich,
Oseledets, Vandereycken, Verstraete, PRB 94, 165116 (2016)), for any MPO Hamiltonian
(``tenferro.tn.mpo`` conventions), real or imaginary time, complex tensors.

The projector-splitting integrator sweeps the chain. One-site TDVP (``sites=1``, fixed bond
dimension): at site i evolve the centre tensor forward, ``A_i <- exp(-z H_eff^(1) dt/2) A_i``;
split it by QR into an isometry and a bond matrix C; evolve C *backward*,
``C <- exp(+z H_eff^(0) dt/2) C``; absorb C into site i+1; then the same sweep back. Two-site
TDVP (``sites=2``, the bond dimension grows up to ``max_rank``): evolve the two-site tensor
forward, split it by a truncated SVD, evolve the new centre site backward. A left-then-right
sweep with dt/2 each is one symmetric second-order step; ``order=4`` composes five of them
(Suzuki, ``p = 1/(4 - 4^(1/3))``) for O(dt^4) errors. z = i (real time) or 1 (imaginary time,
renormalised after every sweep).

Every local exponential is ``tenferro.linalg.expm_multiply`` (Lanczos with error-controlled
substeps, ``tol``) on a ``LinearOperator`` whose matvec is the effective Hamiltonian in three
contractions; the environments are those of ``tenferro.tn.dmrg``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .. import linalg, ops
from ..contract.api import einsum
from ..linalg import LinearOperator, expm_multiply
from . import arguments as arg
from .dmrg import _extend_left, _extend_right, _heff_apply, _two_site_mpo
from .mps import mixed_canonicalize, split_two_site
from .progress import Progress

__all__ = ["TDVPResult", "tdvp"]

_P4 = 1 / (4 - 4 ** (1 / 3))


class TDVPResult(NamedTuple):
    """The evolved MPS (centre at site 0), the measurement times and results, the summed
    discarded weight (two-site TDVP), the steps taken, and the progress records."""

    mps: list
    times: list
    measurements: list
    truncation_error: float
    steps: int
    records: list


def _heff1(Lenv, W, R, shape):
    n = int(np.prod(shape))

    def mv(x):
        t = ops.tensordot(Lenv, ops.reshape(x, shape), ([2], [0]))  # [b, w, s, c]
        t = ops.tensordot(t, W, ([1, 2], [0, 3]))  # [b, c, u, s']
        t = ops.tensordot(t, R, ([1, 2], [2, 1]))  # [b, s', d]
        return ops.reshape(t, (n,))

    return mv


def _heff0(Lenv, R, shape):
    n = int(np.prod(shape))

    def mv(x):
        t = ops.tensordot(Lenv, ops.reshape(x, shape), ([2], [0]))  # [b, w, c]
        t = ops.tensordot(t, R, ([1, 2], [1, 2]))  # [b, d]
        return ops.reshape(t, (n,))

    return mv


def _evolve(mv, x, tau, tol, krylov_dim):
    """exp(-tau H) x for the local Hermitian H given by mv (tau complex for real time)."""
    shape = tuple(x.shape)
    n = int(np.prod(shape))
    op = LinearOperator(mv, (n, n), x.dtype)
    y = expm_multiply(op, ops.reshape(x, (n,)), -tau, tol=tol, hermitian=True,
                      krylov_dim=min(krylov_dim, n))
    return ops.reshape(y.astype(x.dtype), shape)


class _State:
    """The MPS with its environments: Lenv[i] covers sites < i, R[i] sites > i."""

    def __init__(self, mps, mpo):
        self.mps, self.mpo = mps, mpo
        L = len(mps)
        one = ops.ones((1, 1, 1), dtype=mps[0].dtype, device=mps[0].device)
        self.R = [None] * L
        self.R[L - 1] = one
        for i in range(L - 1, 0, -1):
            self.R[i - 1] = _extend_right(self.R[i], mps[i], mpo[i])
        self.Lenv = [None] * L
        self.Lenv[0] = one


def _sweep1(st, tau, tol, kd):
    """One-site projector-splitting sweep, left to right then right to left, tau/2 each
    (the MPS starts and ends with its centre at site 0)."""
    mps, mpo, L = st.mps, st.mpo, len(st.mps)
    half = tau / 2
    for i in range(L):
        a = mps[i]
        a = _evolve(_heff1(st.Lenv[i], mpo[i], st.R[i], tuple(a.shape)), a, half, tol, kd)
        if i == L - 1:
            mps[i] = a
            break
        Dl, d, Dr = a.shape
        q, c = linalg.qr(ops.reshape(a, (Dl * d, Dr)))
        mps[i] = ops.reshape(q, (Dl, d, q.shape[1]))
        st.Lenv[i + 1] = _extend_left(st.Lenv[i], mps[i], mpo[i])
        c = _evolve(_heff0(st.Lenv[i + 1], st.R[i], tuple(c.shape)), c, -half, tol, kd)
        mps[i + 1] = einsum("ab,bsc->asc", c, mps[i + 1])
    for i in range(L - 1, -1, -1):
        a = mps[i]  # (the last site gets its second half step right after its first)
        a = _evolve(_heff1(st.Lenv[i], mpo[i], st.R[i], tuple(a.shape)), a, half, tol, kd)
        if i == 0:
            mps[0] = a
            break
        Dl, d, Dr = a.shape
        q, r = linalg.qr(ops.reshape(a, (Dl, d * Dr)).T)  # a = r^T q^T
        mps[i] = ops.reshape(q.T, (q.shape[1], d, Dr))
        c = r.T
        st.R[i - 1] = _extend_right(st.R[i], mps[i], mpo[i])
        c = _evolve(_heff0(st.Lenv[i], st.R[i - 1], tuple(c.shape)), c, -half, tol, kd)
        mps[i - 1] = einsum("asb,bc->asc", mps[i - 1], c)
    return 0.0


def _sweep2(st, tau, tol, kd, max_rank, cutoff):
    """Two-site projector-splitting sweep (tau/2 each way); returns the discarded weight."""
    mps, mpo, L = st.mps, st.mpo, len(st.mps)
    half = tau / 2
    disc = 0.0
    for i in range(L - 1):
        theta = ops.tensordot(mps[i], mps[i + 1], ([2], [0]))
        shape = tuple(theta.shape)
        mv = _heff_apply(st.Lenv[i], _two_site_mpo(mpo[i], mpo[i + 1]), st.R[i + 1], shape)
        theta = _evolve(mv, theta, half, tol, kd)
        a, b, dw = split_two_site(theta, max_rank, cutoff, True)
        disc += dw
        mps[i] = a
        st.Lenv[i + 1] = _extend_left(st.Lenv[i], a, mpo[i])
        if i < L - 2:
            b = _evolve(_heff1(st.Lenv[i + 1], mpo[i + 1], st.R[i + 1], tuple(b.shape)), b,
                        -half, tol, kd)
        mps[i + 1] = b
    for i in range(L - 2, -1, -1):
        theta = ops.tensordot(mps[i], mps[i + 1], ([2], [0]))
        shape = tuple(theta.shape)
        mv = _heff_apply(st.Lenv[i], _two_site_mpo(mpo[i], mpo[i + 1]), st.R[i + 1], shape)
        theta = _evolve(mv, theta, half, tol, kd)
        a, b, dw = split_two_site(theta, max_rank, cutoff, False)
        disc += dw
        mps[i + 1] = b
        st.R[i] = _extend_right(st.R[i + 1], b, mpo[i + 1])
        if i > 0:
            a = _evolve(_heff1(st.Lenv[i], mpo[i], st.R[i], tuple(a.shape)), a, -half, tol,
                        kd)
        mps[i] = a
    return disc


@arg.checked(mps=arg.MPS, mpo=arg.MPO, dt=arg.NUMBER, steps=arg.COUNT,
             sites=arg.rule(arg.choice, options=(1, 2)), imaginary=arg.FLAG,
             order=arg.rule(arg.choice, options=(2, 4)), max_rank=arg.OPTIONAL_SIZE,
             cutoff=arg.TOL, tol=arg.TOL, krylov_dim=arg.rule(arg.size, minimum=2),
             measure=arg.FUNCTION, measure_every=arg.SIZE, progress=arg.FLAG,
             callback=arg.FUNCTION)
def tdvp(mps: Sequence, mpo: Sequence, dt: float, steps: int, *, sites: int = 2,
         imaginary: bool = False, order: int = 2, max_rank: int | None = None,
         cutoff: float = 0.0, tol: float = 1e-12, krylov_dim: int = 12, measure=None,
         measure_every: int = 1, progress=None, callback=None) -> TDVPResult:
    """Evolve ``mps`` by ``steps`` steps of ``dt`` under the MPO ``mpo`` with TDVP.

    ``sites``: 1 (fixed bond dimension: conserves energy and norm exactly, up to ``tol``) or
    2 (the bond dimension grows to ``max_rank``; ``cutoff`` on normalised singular values).
    ``imaginary=True``: exp(-H tau), renormalised every sweep (use ``order=2``).
    ``order``: 2 (one symmetric sweep per step) or 4 (Suzuki composition of five).
    ``tol``/``krylov_dim``: of each local ``expm_multiply``. ``measure(mps, t)``: called at
    t = 0 and every ``measure_every`` steps. ``progress``/``callback``: a record per step."""
    arg.same_chain("tdvp", mpo, mps)
    subs = {2: [1.0], 4: [_P4, _P4, 1 - 4 * _P4, _P4, _P4]}[order]
    z = 1.0 if imaginary else 1j
    dtype = np.result_type(mps[0].dtype, *[w.dtype for w in mpo],
                           np.float64 if imaginary else np.complex128)
    psi = mixed_canonicalize([a.astype(dtype) for a in mps], 0, normalize=True)
    st = _State(psi, [w.astype(dtype) for w in mpo])
    times, results = [], []
    if measure is not None:
        times.append(0.0)
        results.append(measure(list(st.mps), 0.0))
    total = 0.0
    with Progress(f"TDVP{sites}", steps, progress, fixed=True, callback=callback) as p:
        for step in range(1, steps + 1):
            disc = 0.0
            for f in subs:
                tau = z * f * dt
                if sites == 1:
                    disc += _sweep1(st, tau, tol, krylov_dim)
                else:
                    disc += _sweep2(st, tau, tol, krylov_dim, max_rank, cutoff)
                if imaginary:
                    st.mps[0] = st.mps[0] / linalg.norm(st.mps[0])
            total += disc
            t = step * dt
            p.update(step, t=t, D=max(a.shape[2] for a in st.mps[:-1]), trunc_err=disc,
                     trunc_err_total=total)
            if measure is not None and step % measure_every == 0:
                times.append(t)
                results.append(measure(list(st.mps), t))
    return TDVPResult(list(st.mps), times, results, total, steps, p.records)
