"""C4v CTMRG with symmetric corners and edges (``tenferro.tn.ctmrg`` on ``SymmetricTensor``).

The algorithm is ``tenferro.tn.ctmrg``'s, step for step (enlarged corner ``M``, symmetrised;
projector ``P`` = the leading singular vectors of ``M``; ``C' = P^T M P``,
``T' = P^T T a P``; symmetrise, normalise), with every tensor block sparse and the projector
from the block ``svd`` truncated across sectors on the merged spectrum (``max_rank=chi``), so
at the same ``chi`` it keeps the values a dense truncated SVD keeps (unless ``chi`` cuts a
multiplet) and returns the same environment up to a gauge.

**Leg directions.** C4v needs one corner ``C[x, y]`` symmetric under ``x <-> y`` and one site
tensor whose four legs are the same leg; contracting a leg with a copy of itself is legal only
when every charge on it is its own dual (``dual(q) == q``: Z2 and products of Z2s; a U(1)
environment needs oriented legs, which C4v's reflections reverse). For such legs the direction
is a label without effect on blocks or conservation, so the code keeps every leg ordinary and
flips the direction of the second operand's contracted legs (``_dot``). Other symmetries raise
``ShapeError`` at the entry.

**Initial environment.** The dense ``ctm_init`` sums the outward legs with all-ones vectors,
which mix charge sectors; here the boundary vector is 1 on the charge-identity sector only
(``ctm_init``), so the environment is symmetric from the start. Pass the same environment to
the dense code (``to_dense_env``) to compare step by step.

Everything is a composition of block operations, so ``grad`` differentiates through all
iterations (the truncated block SVDs with their kept/discarded coupling), and under ``jit``
(``tol=None``) every sector's kept size is a run-time size (``symmetric.svd``).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core.tensor import Tensor
from ..errors import ShapeError
from ..tn import arguments as arg
from ..tn.ctmrg import C4V, CTMEnv, _env_rule, iterate_c4v
from ..tn.dispatch import register
from ..tn.peps import bond_energy, heisenberg_bond
from .contract import tensordot
from .decompositions import diagonal, svd
from .fusion import fuse_legs
from .tensor import SymmetricTensor, _structure_class, norm

__all__ = ["ctm_init", "ctmrg", "ctmrg_step", "double_layer", "heisenberg_energy", "self_dual",
           "to_dense_env"]


# ------------------------------------------------------------------ leg directions
def self_dual(leg) -> bool:
    """Whether every charge of ``leg`` (and of its parts) is its own dual: then the leg's
    direction is a label only, and a leg contracts with a copy of itself."""
    sym = leg.symmetry
    return all(sym.dual(q) == q for q in leg.charges) and (
        leg.fused_from is None or all(self_dual(l) for l in leg.fused_from))


def _undirected(leg):
    return leg.flip() if leg.dual else leg


def _ordinary(x: SymmetricTensor) -> SymmetricTensor:
    """``x`` with every leg ordinary (blocks unchanged: the charges are self-dual)."""
    if not any(l.dual for l in x.legs):
        return x
    legs = tuple(_undirected(l) for l in x.legs)
    return _structure_class(legs, x.charge)._trusted(dict(x.blocks))


def _dot(x: SymmetricTensor, y: SymmetricTensor, axes) -> SymmetricTensor:
    """``tensordot`` of two tensors with ordinary, self-dual legs: ``y``'s contracted legs are
    relabelled as the flips of ``x``'s; the result's legs are ordinary again."""

    ax, ay = axes
    legs = list(y.legs)
    for a, b in zip(ax, ay):
        if _undirected(legs[b]) == _undirected(x.legs[a]):  # else tensordot names the mismatch
            legs[b] = x.legs[a].flip()
    yf = _structure_class(tuple(legs), y.charge)._trusted(y.blocks)
    return tensordot(x, yf, (list(ax), list(ay)))


def _check_site(op: str, a) -> SymmetricTensor:
    if not isinstance(a, SymmetricTensor):
        raise ShapeError(f"symmetric.{op}: expected a SymmetricTensor site tensor, got "
                         f"{type(a).__name__}.")
    if a.ndim != 4:
        raise ShapeError(f"symmetric.{op}: the site tensor must be a[u, l, d, r] (4 legs); got "
                         f"{a.ndim} legs.")
    legs = [_undirected(l) for l in a.legs]
    if any(l != legs[0] for l in legs):
        raise ShapeError(f"symmetric.{op}: C4v needs the four legs of a[u, l, d, r] to be the "
                         f"same leg; got {list(a.legs)}.")
    if not self_dual(legs[0]) or a.symmetry.dual(a.charge) != a.charge:
        raise ShapeError(
            f"symmetric.{op}: the C4v CTMRG contracts a leg with a copy of itself, which needs "
            f"self-dual charges (Z2, products of Z2); got {legs[0]!r} with charge {a.charge!r}. "
            f"A U(1) environment needs oriented legs (not C4v symmetric): use the dense "
            f"tenferro.tn.ctmrg on to_dense(a).")
    if a.charge != a.symmetry.identity:
        raise ShapeError(f"symmetric.{op}: the site tensor must have the identity charge (a "
                         f"translation-invariant network), got {a.charge!r}.")
    if np.dtype(a.dtype).kind == "c":
        raise ShapeError(f"symmetric.{op}: the C4v CTMRG works with a real site tensor (got "
                         f"{a.dtype}); see tenferro.tn.ctmrg.")
    return _ordinary(a)


# ---------------------------------------------------------------------------- pieces
def _boundary(leg, like: SymmetricTensor) -> SymmetricTensor:
    """The vector that is 1 on the identity sector of ``leg`` (and 0 elsewhere), flipped so it
    contracts with ``leg``: the symmetric stand-in for the dense all-ones boundary."""
    sym = leg.symmetry
    if not leg.has(sym.identity):
        raise ShapeError(f"symmetric.ctm_init: the site leg {leg!r} has no identity-charge "
                         f"sector for the boundary vector; pass env=(C, T).")
    n = leg.sector_dim(sym.identity)
    ones = ops.ones((n,), dtype=like.dtype, device=like.device)
    return _structure_class((leg,), sym.identity)._trusted({(sym.identity,): ones})


def _contract_vector(x: SymmetricTensor, axis: int, v: SymmetricTensor) -> SymmetricTensor:
    return _dot(x, v, ([axis], [0]))


def ctm_init(a: SymmetricTensor):
    """The initial symmetric environment: ``C[d, r] = sum_{u,l} v_u v_l a``,
    ``T[u, r, d] = sum_l v_l a`` with ``v`` 1 on the identity sector (``_boundary``),
    normalised. Returns ``(C, T)``."""
    a = _check_site("ctm_init", a)
    v = _boundary(a.legs[0], a)
    C = _contract_vector(_contract_vector(a, 0, v), 0, v)  # [d, r]
    T = _contract_vector(a, 1, v).transpose(0, 2, 1)  # [u, d, r] -> [u, r, d]
    return C / norm(C), T / norm(T)


def _enlarged_corner(a, C, T):
    """M[b, r, c, d] = C[x, y] T[x, u, b] T[y, l, c] a[u, l, d, r] (tn.ctmrg's order)."""
    ct = _dot(C, T, ([0], [0]))  # [y, u, b]
    ctt = _dot(ct, T, ([0], [0]))  # [u, b, l, c]
    m = _dot(ctt, a, ([0, 2], [0, 1]))  # [b, c, d, r]
    return m.transpose(0, 3, 1, 2)


def _renormalised_edge(a, T, P):
    pt = _dot(P, T, ([0], [0]))  # [u, α, l, y]
    pta = _dot(pt, a, ([0, 2], [0, 1]))  # [α, y, d, r]
    return _dot(pta, P, ([1, 2], [0, 1]))  # [α, r, β]


def _spectrum(S) -> Tensor:
    vals = list(diagonal(S).values())
    s = vals[0] if len(vals) == 1 else ops.concatenate(vals)
    return s / ops.max(s)


def ctmrg_step(a: SymmetricTensor, C: SymmetricTensor, T: SymmetricTensor, chi: int):
    """One C4v CTMRG iteration on symmetric tensors; returns ``(C', T', s)`` with ``s`` the
    kept spectrum of the enlarged corner normalised by its largest value (sector by sector,
    not sorted)."""
    a, C, T = _ordinary(a), _ordinary(C), _ordinary(T)
    M = _enlarged_corner(a, C, T)
    M = (M + M.transpose(2, 3, 0, 1)) / 2
    U, S, _ = svd(M, 2, max_rank=int(chi))
    P = _ordinary(U)  # [x, u, α]
    Cn = _dot(P, _dot(M, P, ([2, 3], [0, 1])), ([0, 1], [0, 1]))  # [α, β]
    Tn = _renormalised_edge(a, T, P)
    Cn = (Cn + Cn.transpose(1, 0)) / 2
    Tn = (Tn + Tn.transpose(2, 1, 0)) / 2
    return Cn / norm(Cn), Tn / norm(Tn), _spectrum(S)


def _sorted_values(s) -> np.ndarray:
    return np.sort(np.asarray(ops.stop_gradient(s), dtype=np.float64))[::-1]


def _c4v_part(a: SymmetricTensor) -> SymmetricTensor:
    """The C4v-symmetric part of a site tensor with four equal ordinary legs (the average of
    its eight leg permutations), as ``tenferro.tn.ctmrg``'s ``c4v_part``: the C4v CTMRG is a
    function of it, so its derivative is the symmetric network's."""
    out = None
    for p in C4V:
        t = a.transpose(p)
        out = t if out is None else out + t
    return out / len(C4V)


@arg.checked(where="symmetric.ctmrg", chi=arg.SIZE, max_iter=arg.SIZE, tol=arg.OPTIONAL_TOL,
             env=_env_rule, progress=arg.FLAG, callback=arg.FUNCTION)
def ctmrg(a: SymmetricTensor, chi: int, *, max_iter: int = 100, tol: float | None = 1e-10,
          env=None, progress=None, callback=None) -> CTMEnv:
    """``tenferro.tn.ctmrg`` for a symmetric site tensor ``a[u, l, d, r]`` (four equal legs with
    self-dual charges, identity total charge, real): the environment ``C``, ``T`` are
    ``SymmetricTensor``s and the projectors come from the block SVD truncated across sectors
    to ``chi``. ``tol`` compares the sorted corner spectrum between iterations (2-norm);
    ``tol=None`` runs ``max_iter`` iterations (needed under ``jit``). ``env``: a ``CTMEnv`` or
    ``(C, T)`` (default ``ctm_init(a)``). Differentiable in ``a`` through every iteration.
    ``progress``/``callback``: the per-iteration record of ``tenferro.tn.ctmrg``, and its
    ``ConvergenceWarning`` when ``max_iter`` ends the loop before ``tol``. As the dense C4v
    CTMRG, the environment is that of the C4v-symmetric part of ``a`` (its eight leg
    permutations averaged), so gradients are the symmetric network's."""
    a = _c4v_part(_check_site("ctmrg", a))
    if env is None:
        C, T = ctm_init(a)
    else:
        C, T = env.C, env.T
    return iterate_c4v(lambda C, T: ctmrg_step(a, C, T, chi), C, T, max_iter, tol, progress,
                   callback, _sorted_values)[0]


# --------------------------------------------------------------- dense counterparts
def _reshape_order(leg) -> np.ndarray:
    """For a leg fused from parts: ``order[i]`` = the C-order (reshape) index of the parts
    that sits at dense position ``i`` of the fused leg. Identity for an unfused leg."""
    if leg.fused_from is None:
        return np.arange(leg.dim)
    parts = leg.fused_from
    dims = [p.dim for p in parts]
    out = np.empty(leg.dim, dtype=np.int64)
    fmap = leg.fusion_map()
    for q, _d in leg.sectors:
        start = leg.sector_slice(q).start
        entries, _ = fmap[q]
        for sub, off, _sdims in entries:
            ranges = [np.arange(p.sector_slice(c).start, p.sector_slice(c).stop)
                      for p, c in zip(parts, sub)]
            grid = np.ravel_multi_index(np.ix_(*ranges), dims).reshape(-1)
            out[start + off:start + off + len(grid)] = grid
    return out


def to_dense_env(env, site_leg=None) -> CTMEnv:
    """The dense ``CTMEnv`` of a symmetric environment (differentiable ``to_dense``). With the
    site leg of a fused double-layer tensor (``site_leg``, e.g. ``a.legs[0]``), the edge's bulk
    leg is put in reshape order ``(u u')``, as ``tenferro.tn.peps`` expects."""
    C, T = (env.C, env.T) if isinstance(env, CTMEnv) else env
    Cd, Td = C.to_dense(), T.to_dense()
    if site_leg is not None and site_leg.fused_from is not None:
        inv = np.argsort(_reshape_order(_undirected(site_leg)))
        Td = ops.take(Td, ops.asarray(inv), axis=1)
    if isinstance(env, CTMEnv):
        return CTMEnv(Cd, Td, env.iterations, env.converged, env.delta, env.spectrum)
    return CTMEnv(Cd, Td)


def double_layer(A: SymmetricTensor) -> SymmetricTensor:
    """``a[(u u'), (l l'), (d d'), (r r')] = sum_s A[s, u, l, d, r] conj(A[s, u', ...])`` with
    each pair fused into one ordinary leg (``to_dense_env`` maps the fused order to the
    reshape order of ``tenferro.tn.double_layer``)."""
    if not isinstance(A, SymmetricTensor) or A.ndim != 5:
        raise ShapeError("symmetric.double_layer: expected A[s, u, l, d, r] as a "
                         "SymmetricTensor.")

    a = tensordot(A, A.conj(), ([0], [0]))  # [u, l, d, r, u', l', d', r']
    a = a.transpose(0, 4, 1, 5, 2, 6, 3, 7)
    for i in (3, 2, 1, 0):
        a = fuse_legs(a, (2 * i, 2 * i + 1))
    return a


def heisenberg_energy(A: SymmetricTensor, chi: int, *, J: float = 1.0,
                      return_env: bool = False, **ctmrg_options):
    """``tenferro.tn.heisenberg_energy`` for a symmetric iPEPS ``A[s, u, l, d, r]`` (e.g. Z2:
    the parity of the number of up spins, conserved by the sublattice-rotated bond
    ``-SxSx + SySy - SzSz``): the environment is converged with symmetric tensors
    (``ctmrg``), the bond energy is evaluated on its dense form (``to_dense_env``; that
    costs O(chi^3 D^4), less than one CTMRG step). Differentiable in ``A``."""

    A = A / norm(A)
    a = double_layer(A)
    env = ctmrg(a, chi, **ctmrg_options)
    e = 2 * bond_energy(A.to_dense(), to_dense_env(env, a.legs[0]), heisenberg_bond(J))
    return (e, env) if return_env else e


def ctmrg_dispatch(a, chi, *, max_iter, tol, env, progress, projector="svd",
                   multiplet_tol=None, checkpoint=False, implicit=False,
                   callback=None) -> CTMEnv:
    """``tenferro.tn.ctmrg`` on a symmetric site tensor: the options this implementation has;
    the others raise rather than being ignored."""
    unsupported = [name for name, given in (("projector='eigh'", projector != "svd"),
                                            ("multiplet_tol", multiplet_tol is not None),
                                            ("checkpoint=True", bool(checkpoint)),
                                            ("implicit=True", bool(implicit))) if given]
    if unsupported:
        raise ShapeError(f"ctmrg: {', '.join(unsupported)} is not supported for symmetric site "
                         f"tensors (the symmetric CTMRG: block SVD projector, unrolled "
                         f"differentiation); use the dense tenferro.tn.ctmrg on to_dense(a).")
    return ctmrg(a, chi, max_iter=max_iter, tol=tol, env=env, progress=progress,
                 callback=callback)


register("ctmrg", SymmetricTensor, ctmrg_dispatch)
