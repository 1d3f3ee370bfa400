"""Block-wise decompositions: ``svd``, ``qr``, ``eigh``.

The tensor is matricised by fusing its row legs and its column legs; a symmetric matrix is
block diagonal (one block per row charge), so each decomposition is one dense
``tenferro.linalg`` decomposition per block, and the new bond leg has one sector per block.
Every derivative is the dense rule applied to each block: the blocks are independent
(perturbations that respect the symmetry never couple them), so nothing new is needed.

Truncation across sectors: the singular values of all blocks are merged into one descending
spectrum, ``tenferro.linalg.truncation_rank`` (the dense rule: ``max_rank``, ``cutoff``,
``relative_cutoff``, at least one value kept) decides how many to keep globally, and each
block keeps its values among the global top ``r`` (ties broken by the blocks' order, as a
dense SVD of the permuted block-diagonal matrix does within a degenerate multiplet). Each block
is then a dense *thin* SVD followed by slicing, so the kept/discarded coupling of every block
is in the gradient, exactly as for a dense truncated SVD. A block that keeps nothing is
dropped from the bond leg.

Under ``jit`` the same rule runs on tensors (``_traced_keep``): each sector's kept count is a
run-time size ``k_q - 1`` (``k_q`` the symbol of one ``truncation_indices`` node, which keeps
at least one value, so the count itself may be 0), and the bond leg keeps every sector with
that size; a ``jit`` result drops the empty ones when it is rebuilt (design/symmetric.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from chainrules import primitives as P
from chainrules.symbolic import Sym, bound_of

from .. import linalg, ops
from ..core.dispatch import bind
from ..errors import ConcretizationError, ShapeError
from ..tn import arguments as arg
from . import arguments as sarg
from .fusion import fuse_legs, split_legs
from .legs import Leg
from .tensor import SymmetricTensor, _structure_class, symmetric_rule

__all__ = ["SymmetricEighResult", "SymmetricQRResult", "SymmetricSVDResult", "diagonal",
           "eigh", "qr", "svd"]


class SymmetricSVDResult(NamedTuple):
    U: SymmetricTensor
    S: SymmetricTensor
    Vh: SymmetricTensor


class SymmetricQRResult(NamedTuple):
    Q: SymmetricTensor
    R: SymmetricTensor


class SymmetricEighResult(NamedTuple):
    eigenvalues: SymmetricTensor
    eigenvectors: SymmetricTensor


def _rows(op, x: SymmetricTensor, row_axes):
    symmetric_rule(f"symmetric.{op}", "x", x)
    n = sarg.whole_number(row_axes)
    if n is not None:
        if not 0 < n < x.ndim:
            raise ShapeError(f"symmetric.{op}: row_axes={n} (the first n legs as rows) must lie "
                             f"in 1..{x.ndim - 1} for a tensor with {x.ndim} legs.")
        row_axes = tuple(range(n))
    rows = list(sarg.axes(f"symmetric.{op}", "row_axes", row_axes, x.ndim))
    cols = [i for i in range(x.ndim) if i not in rows]
    if not rows or not cols or len(set(rows)) != len(rows):
        raise ShapeError(f"symmetric.{op}: row_axes {tuple(row_axes)} must name some but not all "
                         f"of the {x.ndim} legs, each once.")
    perm = rows + cols
    if perm != list(range(x.ndim)):
        x = x.transpose(perm)
    return x, len(rows)


def _matricize(x, nr):
    """Fuse rows into one ordinary leg and columns into one dual leg: blocks (q, dual q')."""
    m = fuse_legs(x, range(nr, x.ndim), dual=True)
    return fuse_legs(m, range(nr), dual=False)


def diagonal(d: SymmetricTensor) -> dict:
    """The diagonals of a diagonal symmetric matrix (``S`` of ``svd``, eigenvalues of
    ``eigh``): ``{charge: 1-d tensor}``."""
    symmetric_rule("symmetric.diagonal", "d", d)
    if d.ndim != 2:
        raise ShapeError(f"symmetric.diagonal: expects a matrix (2 legs, as svd's S), got "
                         f"{d.ndim} legs.")
    return {k[0]: ops.diagonal(b) for k, b in d.blocks.items()}


def _diag_tensor(bond: Leg, values: dict):
    cls = _structure_class((bond, bond.flip()), bond.symmetry.identity)
    return cls({(q, q): ops.diag(v) for q, v in values.items()})


def _bond_leg(sym, sizes):
    return Leg(sym, tuple((q, n if isinstance(n, Sym) else int(n)) for q, n in sizes
                          if isinstance(n, Sym) or n > 0), dual=True)


def _concrete_values(svals: dict):
    try:
        return [np.asarray(ops.stop_gradient(s).numpy()) for s in svals.values()]
    except ConcretizationError:
        return None


def _traced_keep(svals: dict, max_rank, cutoff, relative_cutoff) -> dict:
    """The merged-spectrum rule on tensors, for traced graphs: ``{charge: kept positions}``
    whose length is a run-time size (possibly 0).

    A value's place in the merged descending order is its rank under a stable sort (ties by
    block order, then position: eager mode's order), ``r`` is the dense rule's count (values
    passing the cutoffs, at least 1, at most ``max_rank``: all order-free), and a sector keeps
    its values placed before ``r`` (a prefix of its descending values). The kept count ``c``
    becomes a size through one ``truncation_indices`` node on ``[2, 2 * kept mask]`` with
    cutoff 1: it keeps ``c + 1`` values (its symbol ``k`` >= 1), and the first ``k - 1``
    positions are the sector's."""
    qs = list(svals)
    ss = [ops.stop_gradient(svals[q]) for q in qs]
    merged = ss[0] if len(ss) == 1 else ops.concatenate(ss)
    ok = ops.greater_equal(merged, 0.0)
    if cutoff is not None:
        ok = ops.logical_and(ok, ops.greater_equal(merged, cutoff))
    if relative_cutoff is not None:
        ok = ops.logical_and(ok, ops.greater_equal(merged, relative_cutoff * ops.max(merged)))
    r = ops.maximum(ops.sum(ops.cast(ok, np.int64)), 1)
    if max_rank is not None:
        r = ops.minimum(r, int(max_rank))
    place = ops.argsort(ops.argsort(-merged))  # the inverse of the stable descending order
    kept = ops.cast(ops.less(place, r), merged.dtype)
    two = ops.full((1,), 2.0, dtype=merged.dtype)
    out, off = {}, 0
    for q, sq in zip(qs, ss):
        n = sq.shape[0]
        step = ops.concatenate([two, 2.0 * kept[off:off + n]])
        off = off + n
        bound = bound_of(n) if max_rank is None else min(bound_of(n), int(max_rank))
        idx = bind(P.truncation_indices_p, step, max_rank=None, cutoff=1.0,
                   relative_cutoff=None, size=Sym.new(bound + 1))
        out[q] = idx[:-1]
    return out


def _global_ranks(svals: dict, values: list, max_rank, cutoff, relative_cutoff):
    """Per-block kept counts from the merged spectrum (the dense truncation rule)."""
    vals, owner = [], []
    for q, v in zip(svals, values):
        vals.append(v)
        owner.extend([q] * len(v))
    if not vals:
        return {}
    merged = np.concatenate(vals)
    order = np.argsort(-merged, kind="stable")
    r = linalg.truncation_rank(merged[order], max_rank=max_rank, cutoff=cutoff,
                                  relative_cutoff=relative_cutoff)
    counts = {q: 0 for q in svals}
    for i in order[:r]:
        counts[owner[i]] += 1
    return counts


@arg.checked(where="symmetric.svd", max_rank=arg.OPTIONAL_SIZE, cutoff=arg.OPTIONAL_TOL,
             relative_cutoff=arg.OPTIONAL_TOL, eps=arg.OPTIONAL_TOL)
def svd(x: SymmetricTensor, row_axes, *, max_rank: int | None = None,
        cutoff: float | None = None, relative_cutoff: float | None = None,
        sector_ranks: dict | None = None, eps: float | None = None) -> SymmetricSVDResult:
    """``x = U S Vh`` with ``row_axes`` (an int n for the first n legs, or a sequence) as rows.

    ``U``: the row legs plus a new dual bond leg (one sector per row charge), charge identity;
    ``S``: a diagonal symmetric matrix (``diagonal(S)`` gives the values per sector); ``Vh``: the
    bond leg (flipped) plus the column legs, charge ``x.charge``. Truncation by ``max_rank``,
    ``cutoff`` or ``relative_cutoff`` acts on the merged spectrum of all sectors (module
    docstring). Under ``jit`` each sector's kept size is a run-time size (the same rule, decided
    when the graph runs; a ``jit`` result equals the eager one, empty sectors dropped).
    ``sector_ranks={charge: r}`` truncates each sector to a static rank instead (integers >= 0
    for sectors of the bond; unlisted sectors keep nothing; at least one value in all). ``eps``: the
    Lorentzian width of the dense SVD derivative (``tenferro.linalg.svd``)."""
    x, nr = _rows("svd", x, row_axes)
    m = _matricize(x, nr)
    parts = {}
    for (qr, qc), blk in m.blocks.items():
        parts[qr] = (qc, linalg.svd(blk, eps=eps))
    svals = {q: p[1].S for q, p in parts.items()}
    truncating = not (max_rank is None and cutoff is None and relative_cutoff is None)
    if truncating and sector_ranks is not None:
        raise ShapeError("symmetric.svd: give either max_rank/cutoff/relative_cutoff or "
                         "sector_ranks, not both.")
    if truncating:
        values = _concrete_values(svals) if svals else []
        if values is None:
            try:
                keep = _traced_keep(svals, max_rank, cutoff, relative_cutoff)
            except ShapeError as e:
                if not str(e).startswith("vmap"):
                    raise
                raise ShapeError(
                    "symmetric.svd: truncation across sectors (max_rank/cutoff) inside vmap "
                    "decides each member's sector sizes from its values, which one batch "
                    "cannot hold. Pass sector_ranks={charge: rank} (static per-sector ranks) "
                    "inside vmap, or loop over the batch.") from None
            return _svd_traced(x, m, parts, keep)
        ranks = _global_ranks(svals, values, max_rank, cutoff, relative_cutoff)
    elif sector_ranks is not None:
        ranks = sarg.sector_ranks("symmetric.svd", sector_ranks,
                                  {q: s.shape[0] for q, s in svals.items()})
    else:
        ranks = {q: s.shape[0] for q, s in svals.items()}
    sym = x.symmetry
    order = sorted(q for q in parts if ranks[q] > 0)
    bond = _bond_leg(sym, [(q, ranks[q]) for q in order])
    Ub, Sb, Vb = {}, {}, {}
    for q in order:
        qc, (u, s, vh) = parts[q]
        r = ranks[q]
        if r < s.shape[0]:
            u, s, vh = u[:, :r], s[:r], vh[:r]
        Ub[(q, q)], Sb[q], Vb[(q, qc)] = u, s, vh
    row_leg, col_leg = m.legs
    U = _structure_class((row_leg, bond), sym.identity)(Ub)
    Vh = _structure_class((bond.flip(), col_leg), x.charge)(Vb)
    U = split_legs(U, 0)
    Vh = split_legs(Vh, 1)
    return SymmetricSVDResult(U, _diag_tensor(bond.flip(), Sb), Vh)


def _svd_traced(x, m, parts, keep: dict) -> SymmetricSVDResult:
    """The truncated pieces with run-time bond sizes: each block gathers its kept positions
    (the dense truncated SVD's ``gather``, so its gradient has the kept/discarded coupling)."""
    sym = x.symmetry
    order = sorted(parts)
    bond = _bond_leg(sym, [(q, keep[q].shape[0]) for q in order])
    Ub, Sb, Vb = {}, {}, {}
    for q in order:
        qc, (u, s, vh) = parts[q]
        i = keep[q]
        Ub[(q, q)] = bind(P.gather_p, u, i, axis=1)
        Sb[q] = bind(P.gather_p, s, i, axis=0)
        Vb[(q, qc)] = bind(P.gather_p, vh, i, axis=0)
    row_leg, col_leg = m.legs
    U = split_legs(_structure_class((row_leg, bond), sym.identity)(Ub), 0)
    Vh = split_legs(_structure_class((bond.flip(), col_leg), x.charge)(Vb), 1)
    return SymmetricSVDResult(U, _diag_tensor(bond.flip(), Sb), Vh)


@arg.checked(where="symmetric.qr", positive=arg.FLAG)
def qr(x: SymmetricTensor, row_axes, *, positive: bool = False) -> SymmetricQRResult:
    """``x = Q R`` block by block (``tenferro.linalg.qr``, reduced): ``Q`` has the row legs plus
    a dual bond leg (sector q of dimension min(m_q, n_q)), charge identity; ``R`` the flipped bond
    and the column legs, charge ``x.charge``. ``positive``: non-negative diag(R)."""
    x, nr = _rows("qr", x, row_axes)
    m = _matricize(x, nr)
    sym = x.symmetry
    Qb, Rb, sizes = {}, {}, []
    for (q, qc), blk in sorted(m.blocks.items()):
        Q, R = linalg.qr(blk, positive=positive)
        Qb[(q, q)], Rb[(q, qc)] = Q, R
        sizes.append((q, Q.shape[1]))
    bond = _bond_leg(sym, sizes)
    row_leg, col_leg = m.legs
    Q = split_legs(_structure_class((row_leg, bond), sym.identity)(Qb), 0)
    R = split_legs(_structure_class((bond.flip(), col_leg), x.charge)(Rb), 1)
    return SymmetricQRResult(Q, R)


@arg.checked(where="symmetric.eigh", eps=arg.OPTIONAL_TOL)
def eigh(x: SymmetricTensor, row_axes, *, eps: float | None = None) -> SymmetricEighResult:
    """Eigen-decomposition of a Hermitian symmetric operator: the column legs must be the
    flips of the row legs and the charge the identity (so the matrix is block diagonal with
    square blocks). Returns ``eigenvalues`` (diagonal, ``diagonal()`` per sector, ascending in
    each) and ``eigenvectors`` (the row legs plus a dual bond leg)."""
    x, nr = _rows("eigh", x, row_axes)
    if x.ndim != 2 * nr or any(x.legs[nr + i] != x.legs[i].flip() for i in range(nr)) or \
            x.charge != x.symmetry.identity:
        raise ShapeError(f"symmetric.eigh: the column legs must be the flips of the row legs and "
                         f"the charge the identity; got legs {list(x.legs)}, charge "
                         f"{x.charge!r}.")
    m = _matricize(x, nr)
    sym = x.symmetry
    Vb, Wb, sizes = {}, {}, []
    for (q, _qc), blk in sorted(m.blocks.items()):
        w, V = linalg.eigh(blk, eps=eps)
        Vb[(q, q)], Wb[q] = V, w
        sizes.append((q, V.shape[1]))
    bond = _bond_leg(sym, sizes)
    V = split_legs(_structure_class((m.legs[0], bond), sym.identity)(Vb), 0)
    return SymmetricEighResult(_diag_tensor(bond.flip(), Wb), V)


