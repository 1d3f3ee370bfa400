"""Directional (non-C4v) corner-transfer-matrix renormalisation group for a unit cell.

The infinite square-lattice network of an ``Ly x Lx`` unit cell of site tensors
``a[u, l, d, r]`` (up, left, down, right; double-layer iPEPS tensors or classical ones, real or
complex) is contracted by one environment per unit-cell site ``(x, y)`` (x to the right, y
downwards): four corners and four edges around the site,

    C1 T1 C2        legs in clockwise order (rotation covariant: turning the lattice by 90
    T4 a  T2        degrees clockwise turns C1 into C2, T1 into T2, ... with the same order):
    C4 T3 C3        C1[s, e]  C2[w, s]  C3[n, w]  C4[e, n]
                    T1[w, d, e]  T2[n, l, s]  T3[e, u, w]  T4[s, r, n]

(e.g. ``T1[w, d, e]``: west and east boundary legs, ``d`` the bulk leg to ``a``'s up leg).
``T1[x, y]`` is the edge above site ``(x, y)``, ``C1[x, y]`` the corner to its left, so the
top boundary of row ``y`` reads ``C1[x, y] T1[x, y] T1[x+1, y] ... C2[x+k, y]``.

One iteration is four directional moves (Corboz, Rice, Troyer, PRL 113, 046402 (2014);
Corboz, White, Vidal, Troyer, PRB 84, 041108 (2011)). The left move absorbs column ``x``
into the left boundary of column ``x + 1``, for every column in turn:

    C1'[x+1, y] = P~(y-1|y) C1[x, y] T1[x, y]
    T4'[x+1, y] = P~(y|y+1) T4[x, y] a[x, y] P(y-1|y)
    C4'[x+1, y] = C4[x, y] T3[x, y] P(y|y+1)

The projectors of the cut between rows ``y`` and ``y+1`` come from the enlarged corners
``Q1..Q4`` of the 2x2 block at columns ``x, x+1``, rows ``y, y+1`` (each a (chi d) x (chi d)
matrix, ordered around the block: Q1[a, g] Q2[g, b] Q3[b, e] Q4[e, a]). For a product
``X Y`` of the pieces on either side of the cut ``a``, contracted over ``a``,
``X Y = U S V^H`` (truncated to chi) gives

    P~ = S^{-1/2} U^H X      (on the upper side of the cut)
    P  = Y V S^{-1/2}        (on the lower side)

and ``X P P~ Y = U S V^H`` restricted to the kept values: ``P P~`` inserted into the cut
reproduces the network to the truncation error (exactly without truncation).
``projector="half"`` (default) uses the left half of the block, ``X = Q4``, ``Y = Q1``;
``projector="full"`` all four corners, ``X = Q3 Q4``, ``Y = Q1 Q2`` (Corboz, Rice, Troyer). The
singular values of the full product are the fourth power of the corner spectrum (the half's
the square), so in double precision "full" resolves corner values only down to ~1e-4 of the
largest and stalls there (measured on a D=2 C4v state at chi = 16: energy 1.7e-12 off and
spectrum change 1.2e-9 after 40 iterations, against 6e-16 and 1.7e-13 in 14 iterations with
"half"); for a C4v tensor "half" is the C4v CTMRG's projector. The right, down and up moves
are the left move of the lattice turned by 90, 180 and 270 degrees (``rotate_cell``: a
relabelling of the environment and a transpose of ``a``). Singular values below
``PROJECTOR_CUTOFF`` (1e-14) of the largest are dropped (zero in ``S^{-1/2}``), so states of
low entanglement (product states) are handled.

Costs per move and site: O(chi^3 d^2 + chi^2 d^4) for the enlarged corners, O((chi d)^3) for
the three products and the SVD. Everything is a tenferro operation, so the environment
differentiates by unrolling (``checkpoint=True``: each iteration is recomputed in the backward
pass) or implicitly at its fixed point (``implicit=True``: ``tenferro.fixed_point`` with
``ctm_directional_gauge_fix``).
"""

from __future__ import annotations

import math

from .. import ops
from ..autodiff.checkpoint import checkpoint as remat
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ConcretizationError, ShapeError
from ..progress import warn_unconverged
from . import arguments as arg
from .ctmrg_gauge import ctmrg_directional_implicit
from .ctmrg_moves import (
    _TENSORS,
    PROJECTORS,
    DirectionalEnv,
    _distance,
    _env_rule,
    _flat,
    _pattern_rule,
    _sites,
    _unflat,
    corner_spectra,
    ctm_directional_init,
    ctm_directional_step,
)
from .progress import Progress

__all__ = ["ctm_directional_lnz", "ctmrg_directional"]


@arg.checked(tensors=_TENSORS, pattern=_pattern_rule, chi=arg.SIZE, max_iter=arg.SIZE,
             tol=arg.OPTIONAL_TOL, env=_env_rule,
             projector=arg.rule(arg.choice, options=PROJECTORS), checkpoint=arg.FLAG,
             implicit=arg.FLAG, progress=arg.FLAG)
def ctmrg_directional(tensors, pattern, chi: int, *, max_iter: int = 100,
                      tol: float | None = 1e-10, env: DirectionalEnv | None = None,
                      projector: str = "half", checkpoint: bool = False,
                      implicit: bool = False, progress=None) -> DirectionalEnv:
    """Converge the unit-cell environment of the site tensors ``tensors`` (a list of
    ``a[u, l, d, r]``, real or complex) placed on the lattice by ``pattern`` (a grid
    ``pattern[y][x]`` of indices into ``tensors``; e.g. ``[[0, 1], [1, 0]]`` is a
    checkerboard) at boundary bond dimension ``chi``.

    Iterates ``ctm_directional_step`` from ``env`` (default ``ctm_directional_init``) until
    every normalised corner spectrum changes by less than ``tol`` (2-norm) or ``max_iter``
    iterations have run; ``tol=None`` runs exactly ``max_iter`` (required under
    ``tenferro.jit``). The environment differentiates with respect to the tensors through all
    iterations (``checkpoint=True`` recomputes each iteration in the backward pass), or, with
    ``implicit=True``, at its fixed point (``tenferro.fixed_point`` on one gauge-fixed step,
    ``ctm_directional_gauge_fix``; memory independent of the number of iterations).
    ``projector``: "half" (two enlarged corners, default) or "full" (four; see the module
    docstring for why "half" is the precise one). Non-differentiable points: exactly
    degenerate projector spectra give the Lorentzian-broadened SVD derivative (finite;
    right for gauge-invariant quantities).
    ``progress``: None (global setting), True or False. Stopping at ``max_iter`` with
    ``tol > 0`` unmet warns (``tenferro.errors.ConvergenceWarning``, naming the change
    reached); ``tol=None`` or ``tol=0`` run exactly ``max_iter`` iterations without it."""
    sites = _sites(tensors, pattern)
    ly, lx = len(sites), len(sites[0])
    if env is None:
        env = ctm_directional_init(tensors, pattern)
    if env.shape != (ly, lx):
        raise ShapeError(f"ctmrg_directional: the environment is for a {env.shape} cell, the "
                         f"pattern is {(ly, lx)}.")
    if implicit:
        with Progress("CTMRG (directional)", max_iter, progress, unit="iteration") as p:
            return ctmrg_directional_implicit(list(tensors), pattern, env, chi, max_iter,
                                              tol, projector, p)
    C, T = env.C, env.T

    def step(sites, leaves):
        Cn, Tn, _ = arg.unchecked(ctm_directional_step)(sites, *_unflat(leaves, ly, lx), chi,
                                                         projector)
        return _flat(Cn, Tn)

    if checkpoint:
        step = remat(step)
    leaves = _flat(C, T)
    prev, delta, converged, it = None, math.nan, False, 0
    with Progress("CTMRG (directional)", max_iter, progress, unit="iteration") as p:
        for it in range(1, max_iter + 1):
            leaves = step(sites, leaves)
            if tol is None:
                p.update(it, chi=chi)
                continue
            C, T = _unflat(leaves, ly, lx)
            sv = corner_spectra(C)
            delta = _distance(sv, prev)
            prev = sv
            p.update(it, chi=chi, delta=delta)
            if delta < tol:
                converged = True
                break
    if tol is not None and tol > 0 and not converged:
        warn_unconverged(f"ctmrg_directional: not converged after {it} iterations (max_iter): "
                         f"the corner spectra changed by {delta:.1e} in the last one, above "
                         f"tol={tol:g}. Raise max_iter or loosen tol (env.converged is False; "
                         f"tol=None runs exactly max_iter iterations without this warning).")
    C, T = _unflat(leaves, ly, lx)
    if prev is None:
        try:
            prev = corner_spectra(C)
        except ConcretizationError:
            pass
    return DirectionalEnv(C, T, it, converged, delta, prev)


# ------------------------------------------------------------------ observables
@arg.checked(a=arg.rule(arg.tensor, legs="a[u, l, d, r]"), env=_env_rule)
def ctm_directional_lnz(a, env: DirectionalEnv) -> Tensor:
    """ln Z per site of the network of one tensor ``a[u, l, d, r]`` (a 1x1 cell) from its
    converged environment: ln kappa = ln Z_site + ln Z_corners - ln Z_row - ln Z_column, with
    Z_site the 3x3 network (a, four C, four T), Z_corners = Tr C1 C2 C3 C4, Z_row the top row
    C1 T1 C2 facing the bottom row C4 T3 C3 and Z_column the left column facing the right one.
    Independent of how the tensors are normalised; equal to ``ctm_lnz`` for a C4v tensor."""
    if env is None or env.shape != (1, 1):
        raise ShapeError(f"ctm_directional_lnz: needs the environment of a 1x1 cell, got "
                         f"{env.shape}.")
    e = env.site(0, 0)
    C1, C2, C3, C4 = (e[f"C{i}"] for i in range(1, 5))
    T1, T2, T3, T4 = (e[f"T{i}"] for i in range(1, 5))
    top = ops.tensordot(ops.tensordot(C1, T1, ([1], [0])), C2, ([2], [0]))  # [s, d, s']
    bottom = ops.tensordot(ops.tensordot(C3, T3, ([1], [0])), C4, ([2], [0]))  # [n(C3), u, n(C4)]
    left = ops.tensordot(ops.tensordot(C4, T4, ([1], [0])), C1, ([2], [0]))  # [e4, r, e1]
    right = ops.tensordot(ops.tensordot(C2, T2, ([1], [0])), C3, ([2], [0]))  # [w, l, w3]
    z_row = einsum("adb,bda->", top, bottom)
    z_col = einsum("arb,bra->", left, right)
    z_corners = einsum("ab,bc,cd,da->", C1, C2, C3, C4)
    x = ops.tensordot(top, T4, ([0], [2]))  # [d, s', s, r]
    x = ops.tensordot(x, a, ([0, 3], [0, 1]))  # [s', s, dd, rr]
    x = ops.tensordot(x, T2, ([0, 3], [0, 1]))  # [s, dd, s'']
    z_site = einsum("sdt,tds->", x, bottom)
    return ops.log(z_site) + ops.log(z_corners) - ops.log(z_row) - ops.log(z_col)
