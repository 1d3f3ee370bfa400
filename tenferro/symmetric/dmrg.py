"""Two-site DMRG with an abelian symmetry (U(1) for the Heisenberg chain's S_z, ...).

Conventions (charges flow left to right):

* MPS tensor ``A[l, s, r]``: legs (ordinary, ordinary, dual), so ``q_r = q_l + q_s``; the
  first left leg is ``{identity: 1}``, the last right leg ``{charge: 1}``: the state's total
  charge sits on the right boundary and every tensor has charge identity.
* MPO tensor ``W[l, r, out, in]``: legs (ordinary, dual, ordinary, dual), so
  ``q_r = q_l + q_out - q_in``: the MPO bond carries the charge an operator string has moved
  so far. ``mpo_from_dense`` infers those bond charges from a dense MPO and the local charges.

The local problem is solved on the two-site tensor matricised as ``theta[(l s), (t r)]``,
which is block diagonal (one block per charge of ``(l s)``). The effective Hamiltonian is
applied as ``sum_v LW[v] theta WR[v]^T`` with the enlarged environments ``LW = L W_i`` and
``WR = W_{i+1} R``, built once per environment update: a product is a few dozen dense block
matmuls instead of the hundreds a contraction leg by leg would need (per-block Python
overhead, not flops, bounds the run at D ~ 100). The ground-state search is not
differentiated, so it runs on the blocks' backend arrays (``_blockops``) with a small
Lanczos on the flat vector of theta's blocks. The split is a block-wise SVD truncated on the
merged spectrum of all sectors (``tenferro.linalg.truncation_rank``). design/symmetric.md
has the details and the measurements.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence

import numpy as np

import tenferro as tf

from ..errors import ShapeError
from ._blockops import ops_for
from .contract import tensordot
from .fusion import fuse_legs, split_legs
from .groups import U1, Symmetry
from .legs import Leg, fused_leg, leg_from_charges
from .tensor import SymmetricTensor, _structure_class, allowed_keys, from_dense

__all__ = ["dmrg", "mpo_from_dense"]


# ----------------------------------------------------------------------------- MPO
def mpo_from_dense(mpo: Sequence, charges: Sequence, symmetry: Symmetry = U1,
                   atol: float = 1e-13) -> list:
    """A symmetric MPO from a dense one (``tenferro.tn.mpo`` convention
    ``W[left, right, phys_out, phys_in]``) and the charge of each local basis state.

    The bond charges are inferred from the non-zero entries (``q_r = q_l + q_out - q_in``,
    starting from the identity on the left); an entry that contradicts them means the MPO
    does not conserve the charge (``ShapeError``). The local basis is reordered by charge
    (``leg_from_charges``), as the bonds are: results are the same operator in another basis
    order."""
    phys, pperm = leg_from_charges(symmetry, list(charges))
    pc = [list(charges)[i] for i in range(len(charges))]
    out, ql = [], [symmetry.identity]
    lleg, lperm = leg_from_charges(symmetry, ql)
    for i, w in enumerate(mpo):
        wn = np.asarray(w.numpy() if isinstance(w, tf.Tensor) else w)
        if wn.ndim != 4 or wn.shape[0] != len(ql) or wn.shape[2] != len(pc) or \
                wn.shape[3] != len(pc):
            raise ShapeError(f"mpo_from_dense: tensor {i} has shape {wn.shape}; expected "
                             f"({len(ql)}, right, {len(pc)}, {len(pc)}).")
        qr = []
        for j in range(wn.shape[1]):
            found = None
            for a, o, b in zip(*np.nonzero(np.abs(wn[:, j]) > atol)):
                q = symmetry.fuse(symmetry.fuse(ql[a], pc[o]), symmetry.dual(pc[b]))
                if found is None:
                    found = q
                elif q != found:
                    raise ShapeError(f"mpo_from_dense: tensor {i}, right bond index {j}: entries "
                                     f"imply charges {found!r} and {q!r}; the MPO does not "
                                     f"conserve the charge with these local charges.")
            qr.append(symmetry.identity if found is None else found)
        rleg, rperm = leg_from_charges(symmetry, qr, dual=True)
        wp = wn[lperm][:, rperm][:, :, pperm][:, :, :, pperm]
        out.append(from_dense(tf.asarray(wp), [lleg, rleg, phys, phys.flip()], atol=atol))
        ql, lleg, lperm = qr, rleg.flip(), rperm
    if out[-1].legs[1].charges != (symmetry.identity,):
        raise ShapeError("mpo_from_dense: the right boundary bond must carry the identity "
                         "charge (a charge-conserving MPO).")
    return out


# ------------------------------------------------------------------ raw blocks
def _raw(t):
    """The backend array of an eager tensor (DMRG's inner loop runs on arrays, see
    ``_blockops``)."""
    v = getattr(t, "_value", None)
    return v if v is not None else np.asarray(tf.stop_gradient(t).numpy())


def _to_raw(x: SymmetricTensor) -> SymmetricTensor:
    return type(x)._trusted({k: _raw(b) for k, b in x.blocks.items()})


def _to_tensors(x: SymmetricTensor, device) -> SymmetricTensor:
    return type(x)({k: tf.asarray(b, device=device) for k, b in x.blocks.items()})


# ------------------------------------------------------------------ environments
# LW[(qv, q', q)]: array [R, v, C] = sum_w L[b, w, k] W[w, v, s', s], rows (b s') fused into
# theta's row leg, columns (k s) into its flip; WR[(qv, qd, qc)]: array [v, R', C] =
# sum_u W[v, u, t', t] R[d, u, c], R' = (t' d) as theta's column leg, C = (t c). Built block
# pair by block pair into place, so a product H_eff theta is two matrix products per term.
def _offsets(leg):
    return {sub: (qf, off) for qf, (entries, _) in leg.fusion_map().items()
            for sub, off, _dims in entries}


def _mpo_matrices(W):
    """Per MPO block: as [v s' s, w] (for the left build) and [v t' t, u] (right build)."""
    left, right = {}, {}
    for k, b in W.blocks.items():
        w, v, d2, d = b.shape
        left.setdefault(k[0], []).append((k, b.transpose(1, 2, 3, 0).reshape(v * d2 * d, w)))
        right.setdefault(k[1], []).append((k, b.transpose(0, 2, 3, 1).reshape(w * d2 * d, v)))
    return left, right


def _build_lw(L, W, Wm, xp):
    """LW[(qv, q', q)] = [R, v, C] from L[b, w, k] and W[w, v, s', s] (module comment)."""
    row = fused_leg((L.legs[0], W.legs[2]), False)
    col = fused_leg((L.legs[2], W.legs[3]), True)
    rmap, cmap = _offsets(row), _offsets(col)
    out = {}
    for (qb, qw, qk), lb in L.blocks.items():
        b, w, k = lb.shape
        lm = lb.transpose(1, 0, 2).reshape(w, b * k)
        for (_, qv, qs2, qs), wm in Wm.get(qw, ()):
            q2, ro = rmap[(qb, qs2)]
            q, co = cmap[(qk, qs)]
            d2, d = W.legs[2].sector_dim(qs2), W.legs[3].sector_dim(qs)
            v = wm.shape[0] // (d2 * d)
            t = (wm @ lm).reshape(v, d2, d, b, k).transpose(3, 1, 0, 4, 2)
            key = (qv, q2, q)
            blk = out.get(key)
            if blk is None:
                blk = out[key] = xp.zeros((row.sector_dim(q2), v, col.sector_dim(q)),
                                          dtype=t.dtype)
            blk[ro:ro + b * d2, :, co:co + k * d] += t.reshape(b * d2, v, k * d)
    return out


def _build_wr(W, R, Wm, xp):
    """WR[(qv, qd, qc)] = [v, R', C] from W[v, u, t', t] and R[d, u, c] (module comment)."""
    row = fused_leg((W.legs[2], R.legs[0]), True)  # (t' d): theta's column leg
    col = fused_leg((W.legs[3], R.legs[2]), False)  # (t c): its flip
    rmap, cmap = _offsets(row), _offsets(col)
    out = {}
    for (qd, qu, qc), rb in R.blocks.items():
        dd, u, c = rb.shape
        rm = rb.transpose(1, 0, 2).reshape(u, dd * c)
        for (qv, _, qt2, qt), wm in Wm.get(qu, ()):
            q2, ro = rmap[(qt2, qd)]
            q, co = cmap[(qt, qc)]
            d2, d = W.legs[2].sector_dim(qt2), W.legs[3].sector_dim(qt)
            v = wm.shape[0] // (d2 * d)
            t = (wm @ rm).reshape(v, d2, d, dd, c).transpose(0, 1, 3, 2, 4)
            key = (qv, q2, q)
            blk = out.get(key)
            if blk is None:
                blk = out[key] = xp.zeros((v, row.sector_dim(q2), col.sector_dim(q)),
                                          dtype=t.dtype)
            blk[:, ro:ro + d2 * dd, co:co + d * c] += t.reshape(v, d2 * dd, d * c)
    return out


def _next_left(LW, U, wleg):
    """L'[b', v, k'] = conj(U)[(b s'), b'] LW[(b s'), v, (k s)] U[(k s), k']."""
    bond = U.legs[1]
    ub = {k[0]: b for k, b in U.blocks.items()}
    out = {}
    for (qv, q2, q), lw in LW.items():
        if q2 not in ub or q not in ub:
            continue
        R, v, C = lw.shape
        u2, u = ub[q2], ub[q]
        t = u2.conj().T @ lw.reshape(R, v * C)  # [b', v * C]
        t = (t.reshape(-1, C) @ u).reshape(u2.shape[1], v, u.shape[1])
        out[(q2, qv, q)] = t
    return _structure_class((bond.flip(), wleg, bond), bond.symmetry.identity)._trusted(out)


def _next_right(WR, Vh, uleg):
    """R'[d', v, c'] = Vh[c', (t c)] WR[v, (t' d), (t c)] conj(Vh)[d', (t' d)]."""
    bond = Vh.legs[0]
    vb = {k[1]: (k[0], b) for k, b in Vh.blocks.items()}
    out = {}
    for (qv, q2, q), wr in WR.items():
        if q not in vb or q2 not in vb:
            continue
        (qc, vc), (qd, vd) = vb[q], vb[q2]
        t = (vd.conj() @ wr) @ vc.T  # [v, d', c']
        out[(qd, qv, qc)] = t.transpose(1, 0, 2)
    return _structure_class((bond.flip(), uleg, bond), bond.symmetry.identity)._trusted(out)


class _Heff:
    """theta -> H_eff theta = sum_v LW[v] theta WR[v]^T on the blocks of theta. Per theta
    block: one matrix product with the LW blocks of every MPO sector stacked, then one with
    each WR block."""

    def __init__(self, LW, WR, xp):
        wr = {}
        for (qv, qd, qc), b in WR.items():
            v, n2, n = b.shape
            wr.setdefault((qv, qc), []).append((qd, b.transpose(0, 2, 1).reshape(v * n, n2)))
        by_q: dict = {}
        for (qv, q2, q), b in LW.items():
            by_q.setdefault(q, []).append((qv, q2, b))
        self.terms = {}
        for q, items in by_q.items():
            rows, off, mats = [], 0, []
            for qv, q2, b in items:
                m2, v, m = b.shape
                rows.append((qv, q2, m2, off, off + m2 * v))
                mats.append(b.reshape(m2 * v, m))
                off += m2 * v
            stacked = mats[0] if len(mats) == 1 else xp.concatenate(mats, axis=0)
            self.terms[q] = (stacked, rows)
        self.wr = wr

    def __call__(self, blocks: dict, out: dict):
        """Adds H_eff theta into ``out`` (views of the result vector) block by block."""
        wr = self.wr
        for (q, qc), th in blocks.items():
            hit = self.terms.get(q)
            if hit is None:
                continue
            stacked, rows = hit
            t = stacked @ th
            for qv, q2, m2, lo, hi in rows:
                ws = wr.get((qv, qc))
                if not ws:
                    continue
                tq = t[lo:hi].reshape(m2, -1)
                for qd, w in ws:
                    o = out.get((q2, qd))
                    if o is not None:
                        o += tq @ w


class _Packing:
    """theta (a block-diagonal matrix of arrays) <-> one flat array (blocks concatenated)."""

    def __init__(self, cls, xp):
        self.cls, self.xp = cls, xp
        self.keys = allowed_keys(cls.legs, cls.charge)
        self.shapes = [tuple(l.sector_dim(q) for l, q in zip(cls.legs, k)) for k in self.keys]
        sizes = [math.prod(s) for s in self.shapes]
        self.offsets = list(itertools.accumulate(sizes, initial=0))

    def pack(self, x: SymmetricTensor, like):
        return self.pack_blocks(x.blocks, like)

    def pack_blocks(self, blocks: dict, like):
        parts = []
        for k, s in zip(self.keys, self.shapes):
            b = blocks.get(k)
            parts.append(self.xp.reshape(b, (-1,)) if b is not None
                         else self.xp.zeros((math.prod(s),), dtype=like.dtype))
        return parts[0] if len(parts) == 1 else self.xp.concatenate(parts)

    def views(self, v) -> dict:
        """The blocks of the flat array ``v`` as views (writing to them writes to ``v``)."""
        o = self.offsets
        return {k: v[o[i]:o[i + 1]].reshape(s)
                for i, (k, s) in enumerate(zip(self.keys, self.shapes))}

    def unpack(self, v) -> SymmetricTensor:
        o = self.offsets
        return self.cls._trusted({k: self.xp.reshape(v[o[i]:o[i + 1]], s)
                                  for i, (k, s) in enumerate(zip(self.keys, self.shapes))})


def _lowest(mv, v0, tol, ncv, xp, maxiter=100):
    """Lowest eigenpair of the Hermitian map ``mv`` on flat arrays: Lanczos with full
    reorthogonalisation, restarted from the Ritz vector (warm starts make one or two restarts
    the rule). Converged when ||H x - e x|| <= tol * max(1, |e|). Returns (e, x, products).
    Forward only, on the array namespace: the tenferro Krylov solvers' per-operation cost
    (they are differentiable and device-generic through tensors) would dominate the small
    symmetric blocks' products."""
    n = v0.shape[0]
    m = max(1, min(ncv, n))
    x = v0 / float(np.linalg.norm(_host(v0))) if n else v0
    nmv = 0
    e = 0.0
    for _ in range(maxiter):
        V = xp.zeros((m, n), dtype=v0.dtype)
        V[0] = x
        alphas, betas = [], []
        w = mv(x)
        nmv += 1
        for j in range(m):
            a = float(np.real(_host(xp.sum(xp.conj(V[j]) * w))))
            alphas.append(a)
            w = w - a * V[j] - (betas[-1] * V[j - 1] if j else 0)
            w = w - (xp.conj(V[: j + 1]) @ w) @ V[: j + 1]  # full reorthogonalisation
            b = float(np.linalg.norm(_host(w)))
            T = np.diag(alphas) + np.diag(betas, 1) + np.diag(betas, -1)
            evals, evecs = np.linalg.eigh(T)
            e, y = float(evals[0]), evecs[:, 0]
            res = b * abs(y[-1])
            if res <= tol * max(1.0, abs(e)) or b <= 1e-14 * max(1.0, abs(e)) or j == m - 1:
                break
            betas.append(b)
            V[j + 1] = w / b
            w = mv(V[j + 1])
            nmv += 1
        x = xp.asarray(y.astype(V.dtype)) @ V[: len(alphas)]
        x = x / float(np.linalg.norm(_host(x)))
        if res <= tol * max(1.0, abs(e)) or b <= 1e-14 * max(1.0, abs(e)):
            break
    return e, x, nmv


def _host(a):
    return a if isinstance(a, np.ndarray) else np.asarray(a.get() if hasattr(a, "get") else a)


def _split_theta(theta, xp, max_rank, cutoff):
    """Block-wise SVD of the block-diagonal theta[(l s), (t r)], truncated on the merged
    spectrum (``tenferro.linalg.truncation_rank``), singular values renormalised. Returns
    (U[(l s), bond], s per sector, Vh[bond, (t r)], discarded weight)."""
    parts = {}
    for (q, qc), blk in theta.blocks.items():
        u, s, vh = xp.linalg.svd(blk, full_matrices=False)
        parts[q] = (qc, u, np.asarray(s), vh)
    merged = np.concatenate([p[2] for p in parts.values()])
    owner = np.concatenate([[i] * len(p[2]) for i, p in enumerate(parts.values())])
    order = np.argsort(-merged, kind="stable")
    total = float(np.sum(merged ** 2))
    r = tf.linalg.truncation_rank(merged[order] / math.sqrt(total) if total > 0 else
                                  merged[order], max_rank=max_rank, cutoff=cutoff)
    counts = np.bincount(owner[order[:r]], minlength=len(parts))
    kept = float(np.sum(merged[order[:r]] ** 2))
    scale = 1.0 / math.sqrt(kept) if kept > 0 else 1.0
    sym = theta.symmetry
    row, col = theta.legs
    secs, Ub, Sb, Vb = [], {}, {}, {}
    for n, (q, (qc, u, s, vh)) in zip(counts, parts.items()):
        n = int(n)
        if n == 0:
            continue
        secs.append((q, n))
        Ub[(q, q)], Sb[q], Vb[(q, qc)] = u[:, :n], s[:n] * scale, vh[:n]
    bond = Leg(sym, tuple(sorted(secs)), dual=True)
    U = _structure_class((row, bond), sym.identity)._trusted(Ub)
    Vh = _structure_class((bond.flip(), col), theta.charge)._trusted(Vb)
    return U, Sb, Vh, max(0.0, 1.0 - kept / total) if total > 0 else 0.0


def _scale_rows(Vh, s, xp):
    return type(Vh)._trusted({k: xp.asarray(s[k[0]], dtype=b.dtype)[:, None] * b
                              for k, b in Vh.blocks.items()})


def _scale_cols(U, s, xp):
    return type(U)._trusted({k: b * xp.asarray(s[k[1]], dtype=b.dtype)[None, :]
                             for k, b in U.blocks.items()})


class _Sites:
    """The MPS during the sweep, each tensor kept in the grouping it was made in: A[(l s), r]
    (a left factor) or A[l, (s r)] (a right factor); regrouped only when the other one is
    needed, and split to A[l, s, r] at the end."""

    def __init__(self, mps):
        self.forms = [{"plain": a} for a in mps]

    def plain(self, i):
        f = self.forms[i]
        if "plain" not in f:
            f["plain"] = split_legs(f["left"], 0) if "left" in f else split_legs(f["right"], 1)
        return f["plain"]

    def left(self, i):
        f = self.forms[i]
        if "left" not in f:
            f["left"] = fuse_legs(self.plain(i), [0, 1])
        return f["left"]

    def right(self, i):
        f = self.forms[i]
        if "right" not in f:
            f["right"] = fuse_legs(self.plain(i), [1, 2], dual=True)
        return f["right"]

    def set_left(self, i, a):
        self.forms[i] = {"left": a}

    def set_right(self, i, a):
        self.forms[i] = {"right": a}

    def max_bond(self):
        dims = []
        for f in self.forms:
            if "plain" in f:
                dims += [f["plain"].legs[0].dim, f["plain"].legs[2].dim]
            elif "left" in f:
                dims.append(f["left"].legs[1].dim)
            else:
                dims.append(f["right"].legs[0].dim)
        return max(dims)


# ----------------------------------------------------------------- initial state
def _random_mps(mpo, charge, D, dtype, seed):
    """A random MPS with every bond sector reachable from both ends, sector dimension
    max(1, D // number of sectors), right-canonical (tensors of arrays)."""
    sym = mpo[0].symmetry
    phys = [w.legs[2] for w in mpo]
    L = len(mpo)
    left = [{sym.identity}]
    for i in range(L):
        left.append({sym.fuse(q, s) for q in left[-1] for s in phys[i].charges})
    right = [None] * (L + 1)
    right[L] = {charge}
    for i in range(L - 1, -1, -1):
        right[i] = {sym.fuse(q, sym.dual(s)) for q in right[i + 1] for s in phys[i].charges}
    bonds = []
    for k in range(L + 1):
        qs = sorted(left[k] & right[k])
        if not qs:
            raise ShapeError(f"symmetric.dmrg: no state of total charge {charge!r} exists for "
                             f"this chain.")
        dim = max(1, D // len(qs))
        bonds.append(Leg(sym, tuple((q, 1 if k in (0, L) else dim) for q in qs)))
    rng = np.random.default_rng(seed)
    mps = []
    for i in range(L):
        legs = (bonds[i], phys[i], bonds[i + 1].flip())
        blocks = {}
        for key in allowed_keys(legs, sym.identity):
            shape = tuple(l.sector_dim(q) for l, q in zip(legs, key))
            x = rng.standard_normal(shape)
            if np.dtype(dtype).kind == "c":
                x = x + 1j * rng.standard_normal(shape)
            blocks[key] = x.astype(dtype)
        mps.append(_structure_class(legs, sym.identity)._trusted(blocks))
    return mps


# --------------------------------------------------------------------------- DMRG
def dmrg(mpo: Sequence[SymmetricTensor], max_rank: int = 64, *, charge=None, schedule=None,
         cutoff: float = 1e-10, max_sweeps: int = 40, tol: float = 1e-10, ncv: int = 12,
         seed: int = 0, dtype=None, progress=None):
    """Two-site DMRG ground state of a symmetric MPO (``mpo_from_dense``) in the sector of
    total ``charge`` (default: the identity, e.g. S_z = 0). Parameters and result
    (``tenferro.tn.DMRGResult``; its ``mps`` is a list of ``SymmetricTensor``) as
    ``tenferro.tn.dmrg``: ``max_rank`` bounds the total bond dimension (summed over sectors,
    truncated on the merged spectrum), ``cutoff`` drops singular values of the normalised
    two-site tensor below it, ``schedule`` gives the bond dimension per sweep. The ground
    state search is forward only: it runs on the blocks' arrays (module docstring)."""
    from .._progress import Progress
    from ..tn.dmrg import DMRGResult, default_schedule, sweep_outcome

    mpo = list(mpo)
    if len(mpo) < 2 or not all(isinstance(w, SymmetricTensor) and w.ndim == 4 for w in mpo):
        raise ShapeError("symmetric.dmrg: the Hamiltonian must be a list of at least two "
                         "symmetric MPO tensors W[l, r, out, in] (see mpo_from_dense).")
    sym = mpo[0].symmetry
    charge = sym.identity if charge is None else sym.validate(charge, "symmetric.dmrg")
    L = len(mpo)
    device = mpo[0].device
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(*[w.dtype for w in mpo])
    W = [_to_raw(w.astype(dtype)) for w in mpo]
    xp = ops_for(next(iter(W[0].blocks.values()))).xp
    sched = [min(int(x), int(max_rank)) for x in (schedule or default_schedule(max_rank))]
    mps = _random_mps(mpo, charge, sched[0], dtype, seed)
    if xp is not np:
        mps = [type(a)._trusted({k: xp.asarray(b) for k, b in a.blocks.items()}) for a in mps]
    t0 = time.perf_counter()

    def one(legs):
        cls = _structure_class(tuple(legs), sym.identity)
        return cls._trusted({tuple(l.charges[0] for l in legs): xp.ones((1, 1, 1), dtype=dtype)})

    a0, al = mps[0].legs[0], mps[-1].legs[2]
    # LW[i] = L_i W_i (sites < i contracted), WR[i] = W_i R_i (sites > i contracted)
    LW, WR = [None] * L, [None] * L
    Wm = [_mpo_matrices(w) for w in W]
    LW[0] = _build_lw(one([a0, W[0].legs[0].flip(), a0.flip()]), W[0], Wm[0][0], xp)
    WR[L - 1] = _build_wr(W[L - 1], one([al, W[-1].legs[1].flip(), al.flip()]),
                          Wm[L - 1][1], xp)
    # right-canonicalise the random start and build the right environments on the way
    for i in range(L - 1, 0, -1):
        f = fuse_legs(mps[i], [1, 2], dual=True)
        U, s, Vh, _ = _split_theta(f, xp, None, None)
        mps[i] = split_legs(Vh, 1)
        mps[i - 1] = tensordot(mps[i - 1], _scale_cols(U, s, xp), ([2], [0]))
        WR[i - 1] = _build_wr(W[i - 1], _next_right(WR[i], Vh, W[i].legs[0]), Wm[i - 1][1],
                              xp)
    sites = _Sites(mps)
    energies, energy, prev = [], math.nan, math.nan
    converged, disc_max, sweep = False, 0.0, 0
    local_tol = 1e-4
    with Progress("symmetric DMRG", max_sweeps, progress) as p:
        for sweep in range(max_sweeps):
            D = sched[min(sweep, len(sched) - 1)]
            disc_max, nmv = 0.0, 0
            order = ([(i, True) for i in range(L - 1)] if sweep % 2 == 0
                     else [(i, False) for i in range(L - 2, -1, -1)])
            for i, right in order:
                # theta[(l s), (t r)] from A_i as [(l s), r] and A_{i+1} as [l, (t r)]
                theta = tensordot(sites.left(i), sites.right(i + 1), ([1], [0]))
                pk = _Packing(type(theta), xp)
                heff = _Heff(LW[i], WR[i + 1], xp)

                def mv(v, heff=heff, pk=pk):
                    out = xp.zeros_like(v)
                    heff(pk.views(v), pk.views(out))
                    return out

                v0 = pk.pack(theta, theta.blocks[next(iter(theta.blocks))])
                energy, v, k = _lowest(mv, v0, local_tol, ncv, xp)
                nmv += k
                U, s, Vh, disc = _split_theta(pk.unpack(v), xp, D, cutoff)
                disc_max = max(disc_max, disc)
                if right:
                    sites.set_left(i, U)
                    sites.set_right(i + 1, _scale_rows(Vh, s, xp))
                    LW[i + 1] = _build_lw(_next_left(LW[i], U, W[i].legs[1]), W[i + 1],
                                          Wm[i + 1][0], xp)
                else:
                    sites.set_left(i, _scale_cols(U, s, xp))
                    sites.set_right(i + 1, Vh)
                    WR[i] = _build_wr(W[i], _next_right(WR[i + 1], Vh, W[i + 1].legs[0]),
                                      Wm[i][1], xp)
            energies.append(energy)
            change = abs(energy - prev) if not math.isnan(prev) else math.inf
            p.update(sweep + 1, E=energy, dE=change, D=sites.max_bond(), products=nmv,
                     discarded=disc_max)
            converged, local_tol = sweep_outcome(energy, change, tol, local_tol,
                                                 D >= sched[-1] and sweep >= len(sched) - 1)
            if converged:
                break
            prev = energy
    mps = [_to_tensors(sites.plain(i), device) for i in range(L)]
    maxb = max(a.legs[2].dim for a in mps[:-1])
    return DMRGResult(energy, mps, energies, maxb, disc_max, sweep + 1, converged,
                      time.perf_counter() - t0)
