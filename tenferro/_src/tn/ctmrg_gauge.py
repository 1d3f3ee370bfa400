"""Gauge fixing of unit-cell CTMRG environments and the implicit (fixed-point) derivative of
``ctmrg_directional(..., implicit=True)``.

Why. One directional CTMRG step maps an environment to an equivalent one only up to a gauge:
every boundary bond is renewed by a projector pair built from an SVD, whose singular vectors
are fixed only up to a phase (a sign for real tensors) per value and a unitary inside a
degenerate multiplet. At the converged environment x*, step(x*) = g . x* with g a gauge
transformation on every bond, not x* itself. ``tenferro.fixed_point`` needs x* = G(x*)
exactly: its adjoint equation (1 - dG/dx)^T lambda = x_bar is only meaningful at a true fixed
point. An implicit derivative taken without the gauge fix ("naive" custom_vjp recipe) uses
the wrong Jacobian and returns a wrong gradient without any warning when g is not the
identity (tests/tn_next/test_ipeps_implicit.py shows it at D=3).

How. Each bond of the environment is shared by the tensors on both sides of it (legs in
clockwise order ``[in, (bulk), out]``, see ``ctmrg_directional``): a gauge U (new index,
old index) acts as ``X -> X U`` on the ``out`` leg and ``X -> U^H X`` on the ``in`` leg.
The edges of one boundary (e.g. the T1 of row y, left to right) form a periodic MPS; if
``T_new[x] = U_x T_old[x] U_{x+1}^H`` then the mixed transfer matrices
``sigma_{x+1} = sum_b T_old[x]_b^H sigma_x T_new[x]_b`` have the fixed point
``sigma_x = rho_x U_x^H`` with ``rho_x`` the (positive) fixed point of the old boundary, so
``U_x^H`` is the unitary factor of the polar decomposition of ``sigma_x``: no inverse of
rho, and degenerate multiplets need no special treatment. ``sigma_0`` is the leading
eigenvector of the product of the mixed transfer matrices around the cell (dense, chi^2 x
chi^2: O(L chi^6) per boundary, fine at the chi of the tests; a Krylov eigensolver would
make it O(chi^3 d)). The corners' bonds are the edges' bonds; a remaining phase (sign) per
tensor, the freedom of sigma_0's normalisation, is aligned with the old tensor. All gauges
are constants computed from the values (a gauge-invariant loss does not depend on them).
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..contract.api import einsum
from ..errors import ConcretizationError, ShapeError
from ..fixed_point import fixed_point
from . import arguments as arg
from .ctmrg_moves import (
    DirectionalEnv,
    _concrete,
    _corners_and_edges_rule,
    _distance,
    _sites,
    corner_spectra,
    ctm_directional_step,
)

__all__ = ["ctm_directional_gauge_fix"]


def _value(x) -> np.ndarray:
    return _concrete(x, "the gauge fix (implicit=True)")


def _chain_gauges(new: list, old: list) -> list[np.ndarray]:
    """Gauges U_x (for the in-leg of each edge of one boundary chain, in chain order) with
    U_x^H T_new[x] U_{x+1} ~ T_old[x]."""
    n = len(new)
    mats = []
    for tn, to in zip(new, old):
        # E[(j, j'), (i, i')] = sum_b conj(to[i, b, j]) tn[i', b, j']
        e = np.einsum("ibj,kbl->jlik", np.conj(to), tn)
        a, b = to.shape[2], tn.shape[2]
        mats.append(e.reshape(a * b, to.shape[0] * tn.shape[0]))
    m = mats[0]
    for k in range(1, n):
        m = mats[k] @ m
    w, v = np.linalg.eig(m)
    sigma = v[:, int(np.argmax(np.abs(w)))].reshape(old[0].shape[0], new[0].shape[0])
    real = all(np.isrealobj(t) for t in new + old)
    if real:  # the leading eigenvector of a real matrix is real up to a phase
        big = sigma.flat[int(np.argmax(np.abs(sigma)))]
        sigma = (sigma * abs(big) / big).real
    gauges = []
    for k in range(n):
        X, _, Yh = np.linalg.svd(sigma)
        gauges.append((X @ Yh).conj().T)  # U_x = (polar factor of sigma_x)^H
        sigma = (mats[k] @ sigma.reshape(-1)).reshape(old[(k + 1) % n].shape[0],
                                                        new[(k + 1) % n].shape[0])
        sigma = sigma / max(np.abs(sigma).max(), 1e-300)
    return gauges


def _gauges(Cn, Tn, To):
    """Per-bond gauges U[i][y][x] for the in-leg of T_{i+1}[y][x] (chains: T1 along +x,
    T2 along +y, T3 along -x, T4 along -y)."""
    ly, lx = len(Tn[0]), len(Tn[0][0])
    U = [[[None] * lx for _ in range(ly)] for _ in range(4)]
    for y in range(ly):
        xs = list(range(lx))
        for i, order in ((0, xs), (2, xs[::-1])):
            g = _chain_gauges([_value(Tn[i][y][x]) for x in order],
                              [_value(To[i][y][x]) for x in order])
            for x, u in zip(order, g):
                U[i][y][x] = u
    for x in range(lx):
        ys = list(range(ly))
        for i, order in ((1, ys), (3, ys[::-1])):
            g = _chain_gauges([_value(Tn[i][y][x]) for y in order],
                              [_value(To[i][y][x]) for y in order])
            for y, u in zip(order, g):
                U[i][y][x] = u
    return U


def _legs(U, ly, lx):
    """(in-gauge, out-gauge) of every corner and edge, from the per-bond gauges."""
    def at(i, y, x):
        return U[i][y % ly][x % lx]

    corner = {  # C_i[y][x]: (in, out)
        0: lambda y, x: (at(3, y - 1, x), at(0, y, x)),  # C1: out of T4[y], in of T1[y][x]
        1: lambda y, x: (at(0, y, x + 1), at(1, y, x)),  # C2: out of T1[x], in of T2[y][x]
        2: lambda y, x: (at(1, y + 1, x), at(2, y, x)),  # C3: out of T2[y], in of T3[y][x]
        3: lambda y, x: (at(2, y, x - 1), at(3, y, x)),  # C4: out of T3[x], in of T4[y][x]
    }
    edge = {  # T_i[y][x]: (in = own bond, out = the next one along the chain)
        0: lambda y, x: (at(0, y, x), at(0, y, x + 1)),
        1: lambda y, x: (at(1, y, x), at(1, y + 1, x)),
        2: lambda y, x: (at(2, y, x), at(2, y, x - 1)),
        3: lambda y, x: (at(3, y, x), at(3, y - 1, x)),
    }
    return corner, edge


def _align(t, old):
    """t times the phase (sign) that makes <old, t> real positive: the gauge freedom left
    after the bonds, a constant."""
    ov = np.vdot(_value(old), _value(t))
    if ov == 0:
        return t
    ph = ov / abs(ov)
    if np.isrealobj(_value(t)):
        return t if ph.real >= 0 else -t
    return t * complex(np.conj(ph))


@arg.checked(new=_corners_and_edges_rule, old=_corners_and_edges_rule)
def ctm_directional_gauge_fix(new, old):
    """``new = (C', T')`` (the grids of ``ctm_directional_step``) brought into the gauge of
    ``old = (C, T)``: every boundary bond gets the unitary (orthogonal for real tensors)
    that maps the new boundary MPS onto the old one (module docstring), then each tensor's
    remaining phase (sign) is aligned with the old tensor. The gauges are computed from the
    values as constants. At a converged environment this makes one CTMRG step an exact fixed
    point, which ``tenferro.fixed_point`` needs. Shapes that differ (chi still growing) are
    returned unchanged."""
    (Cn, Tn), (Co, To) = new, old
    for gn, go in zip(Cn + Tn, Co + To):
        for rn, ro in zip(gn, go):
            for a, b in zip(rn, ro):
                if tuple(a.shape) != tuple(b.shape):
                    return new
    ly, lx = len(Tn[0]), len(Tn[0][0])
    U = _gauges(Cn, Tn, To)
    corner, edge = _legs(U, ly, lx)

    def const(u, like):
        return ops.asarray(u.astype(np.dtype(like.dtype), copy=False), device=like.device)

    def fix_matrix(c, gin, gout):
        return const(gin, c).conj().T @ c @ const(gout, c)

    def fix_edge(t, gin, gout):
        return einsum("ia,ibj,jc->abc", ops.conj(const(gin, t)), t, const(gout, t))

    C = tuple(tuple(tuple(_align(fix_matrix(Cn[i][y][x], *corner[i](y, x)), Co[i][y][x])
                          for x in range(lx)) for y in range(ly)) for i in range(4))
    T = tuple(tuple(tuple(_align(fix_edge(Tn[i][y][x], *edge[i](y, x)), To[i][y][x])
                          for x in range(lx)) for y in range(ly)) for i in range(4))
    return C, T


# ---------------------------------------------------------------------- the driver
def ctmrg_directional_implicit(tensors, pattern, env: DirectionalEnv, chi: int, max_iter: int,
                               tol, projector: str, p, gauge_fix: bool = True):
    """The fixed point of one (gauge-fixed) directional CTMRG step, differentiated
    implicitly. Plain warm-up steps on ``stop_gradient`` tensors first let chi grow and the
    corner spectra converge to ``tol``; the fixed-point iteration then only polishes the
    tensors. ``gauge_fix=False`` is the naive recipe (kept for the tests that show it is
    wrong)."""
    if tol is None:
        raise ShapeError("ctmrg_directional: implicit=True needs a convergence tolerance "
                         "(tol); it differentiates the converged environment.")
    frozen = [ops.stop_gradient(t) for t in tensors]
    try:
        _value(frozen[0])
    except ConcretizationError as e:
        raise ConcretizationError(
            "ctmrg_directional: implicit=True needs the values of the environment (its "
            "convergence test and gauge fix), which a traced graph (jit) does not have; "
            "under jit use implicit=False with tol=None.") from e
    sites = _sites(frozen, pattern)
    C = tuple(tuple(tuple(ops.stop_gradient(c) for c in r) for r in g) for g in env.C)
    T = tuple(tuple(tuple(ops.stop_gradient(t) for t in r) for r in g) for g in env.T)
    warm, prev = 0, None
    while warm < max(1, max_iter // 2):
        Cn, Tn, _ = arg.unchecked(ctm_directional_step)(sites, C, T, chi, projector)
        warm += 1
        grew = any(a.shape != b.shape for a, b in zip(Cn[0][0], C[0][0]))
        C, T = Cn, Tn
        sv = corner_spectra(C)
        done = not grew and _distance(sv, prev) < tol
        prev = sv
        if done:
            break

    def step(x, *ts):
        Cn, Tn, _ = arg.unchecked(ctm_directional_step)(_sites(list(ts), pattern), x[0], x[1],
                                                         chi, projector)
        return Cn, Tn

    last = {"hist": []}

    def spectrum_stalled(new, old):
        d = _distance(corner_spectra(new[0]), corner_spectra(old[0]))
        last["delta"] = d
        h = last["hist"]
        h.append(d)
        return len(h) > 3 and d < tol and min(h[-4:-1]) < 2 * d

    fix = arg.unchecked(ctm_directional_gauge_fix) if gauge_fix else None
    (C, T), info = fixed_point(step, (C, T), *tensors, tol=tol,
                                  maxiter=max(1, max_iter - warm), gauge_fix=fix,
                                  converged=spectrum_stalled, return_info=True)
    its = warm + (info.iterations if info is not None else 0)
    delta = last.get("delta", math.nan)
    p.update(its, chi=chi, delta=delta)
    try:
        spectra = corner_spectra(C)
    except ConcretizationError:
        spectra = None
    return DirectionalEnv(C, T, its, bool(info is not None and info.converged), delta, spectra)
