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
differentiated, so it runs on the blocks' backend arrays with a small Lanczos on the flat
vector of theta's blocks, through the backend's array-API namespace (``_Arrays``: NumPy,
CuPy or array_api_strict; on NumPy through ndarray's methods, as fast). The split is a
block-wise SVD truncated on the merged spectrum of all sectors
(``tenferro.linalg.truncation_rank``). design/symmetric.md has the details and the
measurements.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .. import linalg, ops
from ..caches import BoundedCache
from ..errors import ShapeError
from ..linalg.vectors import ArrayVectors
from ..tn import arguments as arg
from ..tn.dispatch import register
from ..tn.dmrg_sweep import run, schedule_of
from . import arguments as sarg
from .fusion import fuse_legs, split_legs
from .groups import U1, Symmetry
from .legs import Leg, fused_leg, leg_from_charges
from .tensor import SymmetricTensor, _structure_class, allowed_keys, from_dense

__all__ = ["dmrg", "mpo_from_dense"]


# ----------------------------------------------------------------------------- MPO
@arg.checked(mpo=arg.MPO, charges=sarg.charges, symmetry=sarg.SYMMETRY, atol=arg.TOL)
def mpo_from_dense(mpo: Sequence, charges: Sequence, symmetry: Symmetry = U1,
                   atol: float = 1e-13) -> list:
    """A symmetric MPO from a dense one (``tenferro.tn.mpo`` convention
    ``W[left, right, phys_out, phys_in]``) and the charge of each local basis state.

    The bond charges are inferred from the non-zero entries (``q_r = q_l + q_out - q_in``,
    starting from the identity on the left); an entry that contradicts them means the MPO
    does not conserve the charge (``ShapeError``). The local basis is reordered by charge
    (``leg_from_charges``), as the bonds are: results are the same operator in another basis
    order."""
    phys, pperm = leg_from_charges(symmetry, charges)
    pc = charges
    out, ql = [], [symmetry.identity]
    lleg, lperm = leg_from_charges(symmetry, ql)
    for i, w in enumerate(mpo):
        wn = np.asarray(ops.stop_gradient(w))
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
        out.append(from_dense(ops.asarray(wp), [lleg, rleg, phys, phys.flip()], atol=atol))
        ql, lleg, lperm = qr, rleg.flip(), rperm
    if out[-1].legs[1].charges != (symmetry.identity,):
        raise ShapeError("mpo_from_dense: the right boundary bond must carry the identity "
                         "charge (a charge-conserving MPO).")
    return out


# ------------------------------------------------------------------ raw blocks
def _raw(t):
    """The backend array of an eager tensor (DMRG's inner loop runs on arrays, see
    ``_Arrays``)."""
    v = getattr(t, "_value", None)
    return v if v is not None else np.asarray(ops.stop_gradient(t).numpy())


def _to_raw(x: SymmetricTensor) -> SymmetricTensor:
    return type(x)._trusted({k: _raw(b) for k, b in x.blocks.items()})


def _to_tensors(x: SymmetricTensor, device) -> SymmetricTensor:
    return type(x)._trusted({k: ops.asarray(b, device=device) for k, b in x.blocks.items()})


class _Arrays:
    """The array operations of the inner loop, for one backend. Generic: the backend's
    array-API namespace (``permute_dims``, ``reshape``, ``conj``, ``concat``, creation on the
    backend's device); NumPy: the same operations as ndarray's unbound methods, which cost
    a third of the module functions' argument handling (the loop does hundreds of thousands
    of small block operations). Code using it indexes every axis (``a[lo:hi, :]``), keeps to
    ``@``, ``.T`` on matrices and in-place updates of slices, all in the standard; small host
    problems (the merged spectrum) go through ``to_host``; the local eigensolver gets
    ``vectors`` (``linalg.vectors.ArrayVectors``, the same backend)."""

    def __init__(self, backend):
        self.numpy = backend is None
        if self.numpy:
            self.xp = xp = np
            self.reshape, self.permute = np.ndarray.reshape, np.ndarray.transpose
            self.conj = np.ndarray.conj
            self.to_host = np.asarray
            self.concat = np.concatenate
        else:
            self.xp = xp = backend.xp
            self.reshape, self.permute, self.conj = xp.reshape, xp.permute_dims, xp.conj
            self.to_host = backend.to_numpy
            self.concat = xp.concat
        self.zeros, self.asarray, self.svd = xp.zeros, xp.asarray, xp.linalg.svd
        self.vectors = ArrayVectors(backend)  # the local eigensolver's vector operations



# ------------------------------------------------------------------ environments
# The enlarged environments are stored in the layouts the matvec multiplies with, so a product
# H_eff theta does no copying or regrouping:
#
# * left, ``LW = L W_i``: per input row charge ``q`` of theta (columns ``(k s)``), one array
#   ``[(sum over (qv, q') of m' v), m]`` stacking the blocks ``LW[(b s'), v, (k s)]`` of every
#   MPO sector ``qv`` and output row charge ``q'`` (``rows[q]`` gives their ranges);
# * right, ``WR = W_{i+1} R``: per ``(qv, qc)`` (qc the input column charge ``(t c)``) a list
#   of ``(qd, array [v n, n'])``, ``n'`` the output column sector ``(t' d)``.
#
# Built block pair by block pair into place (every output entry gets exactly one term).
_PAIRS = BoundedCache("symmetric DMRG block pairs", 4096)


def _pair_fusion(a: Leg, b: Leg, dual: bool):
    """Where each sector pair of legs ``a``, ``b`` sits in their fusion (as
    ``legs.fused_leg((a, b), dual)`` lays it out: fused charges sorted, pairs in C order):
    ``({(qa, qb): (fused charge, offset)}, {fused charge: dim})``. The environment builds
    need only this, not the fused ``Leg``: a bond's sector dimensions change with every
    truncation, so each step fuses new legs, and building them (with their validation)
    was a tenth of the run. Cached by value."""
    key = (a, b, dual)
    hit = _PAIRS.get(key)
    if hit is not None:
        return hit
    sym = a.symmetry
    groups: dict = {}
    for qa, da in a.sectors:
        ea = sym.dual(qa) if a.dual else qa
        for qb, db in b.sectors:
            q = sym.fuse(ea, sym.dual(qb) if b.dual else qb)
            groups.setdefault(sym.dual(q) if dual else q, []).append(((qa, qb), da * db))
    where, dims = {}, {}
    for qf in sorted(groups):
        off = 0
        for pair, n in groups[qf]:
            where[pair] = (qf, off)
            off += n
        dims[qf] = off
    hit = _PAIRS.put(key, (where, dims))
    return hit


def _mpo_matrices(W, ar):
    """W[w, v, s', s] grouped by its left (right) MPO charge, every block of a group stacked
    into one matrix: [(v s' s) stacked, w] for the left build, [(w t' t) stacked, v] for the
    right one; each entry (key, row range, dim of the free MPO leg, physical dims)."""
    groups = ({}, {})
    for k, b in W.blocks.items():
        w, v, d2, d = b.shape
        groups[0].setdefault(k[0], []).append(
            (k, ar.reshape(ar.permute(b, (1, 2, 3, 0)), (-1, w)), v, d2, d))
        groups[1].setdefault(k[1], []).append(
            (k, ar.reshape(ar.permute(b, (0, 2, 3, 1)), (-1, v)), w, d2, d))
    out = []
    for g in groups:
        side = {}
        for q, items in g.items():
            mats, ents, off = [], [], 0
            for k, m, f, d2, d in items:
                ents.append((k, off, off + m.shape[0], f, d2, d))
                mats.append(m)
                off += m.shape[0]
            side[q] = (mats[0] if len(mats) == 1 else ar.concat(mats, axis=0), ents)
        out.append(side)
    return out


class _LeftEnv:
    """``LW`` stacked per input row charge (module comment), with the row ranges."""

    __slots__ = ("arrays", "rows")

    def __init__(self, arrays, rows):
        self.arrays, self.rows = arrays, rows


def _lw_plan(L, W, Wl, cache):
    key = ("lw", type(L), tuple(L.blocks), id(W))
    hit = cache.get(key)
    if hit is not None:
        return hit
    rmap, rdim = _pair_fusion(L.legs[0], W.legs[2], False)
    cmap, cdim = _pair_fusion(L.legs[2], W.legs[3], True)
    vdim = dict(W.legs[1].sectors)
    ops, groups = [], {}
    for lkey in L.blocks:
        qb, qw, qk = lkey
        hit = Wl.get(qw)
        if hit is None:
            continue
        ents = []
        for (_, qv, qs2, qs), r0, r1, v, d2, d in hit[1]:
            q2, ro = rmap[(qb, qs2)]
            q, co = cmap[(qk, qs)]
            groups.setdefault(q, set()).add((qv, q2))
            ents.append((r0, r1, v, d2, d, (q, qv, q2), ro, co))
        ops.append((lkey, hit[0], ents))
    shapes, place = {}, {}
    for q, g in groups.items():
        off = 0
        m = cdim[q]
        for qv, q2 in sorted(g):
            m2, v = rdim[q2], vdim[qv]
            place[(q, qv, q2)] = (q, off, off + m2 * v, (m2, v, m))
            off += m2 * v
        shapes[q] = (off, m)
    plan = (shapes, place, ops)
    cache[key] = plan
    return plan


def _build_lw(L, W, Wl, ar, cache) -> _LeftEnv:
    """LW[(b s'), v, (k s)] = sum_w L[b, w, k] W[w, v, s', s], stacked (module comment)."""
    shapes, place, ops = _lw_plan(L, W, Wl, cache)
    dtype = next(iter(L.blocks.values())).dtype
    reshape, permute = ar.reshape, ar.permute
    arrays = {q: ar.zeros(s, dtype=dtype) for q, s in shapes.items()}
    views, rows = {}, {}
    for g, (q, lo, hi, shape) in place.items():
        views[g] = reshape(arrays[q][lo:hi, :], shape)  # a view: writes go to arrays[q]
        rows.setdefault(q, []).append((g[1], g[2], shape[0], shape[1], lo, hi))
    for lkey, wcat, ents in ops:
        lb = L.blocks[lkey]
        b, w, k = lb.shape
        t = wcat @ reshape(permute(lb, (1, 0, 2)), (w, b * k))  # [(v s' s) stacked, b k]
        for r0, r1, v, d2, d, g, ro, co in ents:  # every entry of LW has one term: assign
            if d2 == d == 1:
                views[g][ro:ro + b, :, co:co + k] = permute(reshape(t[r0:r1, :], (v, b, k)),
                                                            (1, 0, 2))
            else:
                views[g][ro:ro + b * d2, :, co:co + k * d] = reshape(permute(reshape(
                    t[r0:r1, :], (v, d2, d, b, k)), (3, 1, 0, 4, 2)), (b * d2, v, k * d))
    return _LeftEnv(arrays, rows)


def _wr_plan(W, R, Wr, cache):
    key = ("wr", type(R), tuple(R.blocks), id(W))
    hit = cache.get(key)
    if hit is not None:
        return hit
    rmap, rdim = _pair_fusion(W.legs[2], R.legs[0], True)  # (t' d): theta's column leg
    cmap, cdim = _pair_fusion(W.legs[3], R.legs[2], False)  # (t c): its flip
    ops, shapes = [], {}
    for rkey in R.blocks:
        qd, qu, qc = rkey
        hit = Wr.get(qu)
        if hit is None:
            continue
        ents = []
        for (qv, _, qt2, qt), r0, r1, v, d2, d in hit[1]:
            q2, ro = rmap[(qt2, qd)]
            q, co = cmap[(qt, qc)]
            shapes[(qv, q, q2)] = (v, cdim[q], rdim[q2])
            ents.append((r0, r1, v, d2, d, (qv, q, q2), ro, co))
        ops.append((rkey, hit[0], ents))
    plan = (shapes, ops)
    cache[key] = plan
    return plan


def _build_wr(W, R, Wr, ar, cache) -> dict:
    """WR: {(qv, qc): [(qd, [v n, n'])]} from W[v, u, t', t] and R[d, u, c] (module
    comment)."""
    shapes, ops = _wr_plan(W, R, Wr, cache)
    dtype = next(iter(R.blocks.values())).dtype
    reshape, permute = ar.reshape, ar.permute
    out = {k: ar.zeros(s, dtype=dtype) for k, s in shapes.items()}
    for rkey, wcat, ents in ops:
        rb = R.blocks[rkey]
        dd, u, c = rb.shape
        t = wcat @ reshape(permute(rb, (1, 2, 0)), (u, c * dd))  # [(w t' t) stacked, c d]
        for r0, r1, v, d2, d, k, ro, co in ents:  # every entry of WR has one term: assign
            if d2 == d == 1:
                out[k][:, co:co + c, ro:ro + dd] = reshape(t[r0:r1, :], (v, c, dd))
            else:
                out[k][:, co:co + d * c, ro:ro + d2 * dd] = reshape(permute(reshape(
                    t[r0:r1, :], (v, d2, d, c, dd)), (0, 2, 3, 1, 4)), (v, d * c, d2 * dd))
    groups: dict = {}
    for (qv, q, q2), a in out.items():
        v, n, n2 = a.shape
        groups.setdefault((qv, q), []).append((q2, reshape(a, (v * n, n2))))
    return groups


def _next_left(LW: _LeftEnv, U, wleg, ar):
    """L'[b', v, k'] = conj(U)[(b s'), b'] LW[(b s'), v, (k s)] U[(k s), k']."""
    bond = U.legs[1]
    ub = {k[0]: b for k, b in U.blocks.items()}
    out = {}
    for q, arr in LW.arrays.items():
        u = ub.get(q)
        if u is None:
            continue
        au = arr @ u  # [(m' v) stacked, k']
        kk = u.shape[1]
        for qv, q2, m2, v, lo, hi in LW.rows[q]:
            u2 = ub.get(q2)
            if u2 is None:
                continue
            out[(q2, qv, q)] = ar.reshape(ar.conj(u2).T @ ar.reshape(au[lo:hi, :], (m2, v * kk)),
                                          (u2.shape[1], v, kk))
    return _structure_class((bond.flip(), wleg, bond), bond.symmetry.identity)._trusted(out)


def _next_right(WR: dict, Vh, uleg, ar):
    """R'[d', v, c'] = Vh[c', (t c)] WR[v, (t' d), (t c)] conj(Vh)[d', (t' d)]."""
    bond = Vh.legs[0]
    vb = {k[1]: (k[0], b) for k, b in Vh.blocks.items()}
    out = {}
    for (qv, q), items in WR.items():
        hit = vb.get(q)
        if hit is None:
            continue
        qc, vc = hit
        for q2, a in items:
            hit2 = vb.get(q2)
            if hit2 is None:
                continue
            qd, vd = hit2
            n = vc.shape[1]
            t = ar.reshape(a @ ar.conj(vd).T, (-1, n, vd.shape[0]))  # [v, (t c), d']
            out[(qd, qv, qc)] = ar.permute(vc @ t, (2, 0, 1))  # [d', v, c']
    return _structure_class((bond.flip(), uleg, bond), bond.symmetry.identity)._trusted(out)


class _Packing:
    """theta (a block-diagonal matrix of arrays) <-> one flat array (blocks concatenated)."""

    def __init__(self, cls, ar):
        self.cls, self.ar = cls, ar
        self.keys = allowed_keys(cls.legs, cls.charge)
        self.shapes = [tuple(l.sector_dim(q) for l, q in zip(cls.legs, k)) for k in self.keys]
        sizes = [math.prod(s) for s in self.shapes]
        self.offsets = list(itertools.accumulate(sizes, initial=0))
        self.index = {k: i for i, k in enumerate(self.keys)}

    def pack(self, x: SymmetricTensor, dtype):
        parts = []
        for k, s in zip(self.keys, self.shapes):
            b = x.blocks.get(k)
            parts.append(self.ar.reshape(b, (-1,)) if b is not None
                         else self.ar.zeros((math.prod(s),), dtype=dtype))
        return parts[0] if len(parts) == 1 else self.ar.concat(parts)

    def views(self, v) -> list:
        """The blocks of the flat array ``v`` as views (writing to them writes to ``v``)."""
        o = self.offsets
        reshape = self.ar.reshape
        return [reshape(v[o[i]:o[i + 1]], s) for i, s in enumerate(self.shapes)]

    def unpack(self, v) -> SymmetricTensor:
        return self.cls._trusted(dict(zip(self.keys, self.views(v))))


class _Heff:
    """theta -> H_eff theta = sum_v LW[v] theta WR[v]^T on the flat vector of theta's blocks,
    with a plan made once per local problem: per theta block, one product with the stacked
    LW of its row charge, then one per (MPO sector, output block) with a WR block."""

    def __init__(self, LW: _LeftEnv, WR: dict, pk: _Packing, ar):
        self.pk, self.reshape = pk, ar.reshape
        o = pk.offsets
        plan = []
        for i, (q, qc) in enumerate(pk.keys):
            arr = LW.arrays.get(q)
            if arr is None:
                continue
            ops = []
            for qv, q2, m2, _v, lo, hi in LW.rows[q]:
                for qd, w in WR.get((qv, qc), ()):
                    j = pk.index.get((q2, qd))
                    if j is not None:
                        ops.append((lo, hi, m2, w, j))
            if ops:
                plan.append((o[i], o[i + 1], pk.shapes[i], arr, ops))
        self.plan = plan
        self.out = ar.zeros((o[-1],), dtype=next(iter(LW.arrays.values())).dtype)
        self.outs = pk.views(self.out)

    def __call__(self, v):
        """H_eff v into a buffer this object owns: valid until the next call."""
        out, outs, reshape = self.out, self.outs, self.reshape
        out[:] = 0
        for a, b, shape, arr, terms in self.plan:
            t = arr @ reshape(v[a:b], shape)
            for lo, hi, m2, w, j in terms:
                outs[j] += reshape(t[lo:hi, :], (m2, -1)) @ w
        return out


def _truncate(spectra, max_rank, cutoff):
    """Per block, how many of its values (descending) survive the truncation of the merged
    spectrum of the normalised state (``tenferro.linalg.truncation_rank``); also the kept
    and the total weight."""
    merged = np.concatenate(spectra)
    owner = np.repeat(np.arange(len(spectra)), [len(x) for x in spectra])
    order = np.argsort(-merged, kind="stable")
    total = float(np.sum(merged ** 2))
    r = linalg.truncation_rank(merged[order] / math.sqrt(total) if total > 0 else
                                  merged[order], max_rank=max_rank, cutoff=cutoff)
    counts = np.bincount(owner[order[:r]], minlength=len(spectra))
    return counts, float(np.sum(merged[order[:r]] ** 2)), total


def _split_theta(theta, ar, max_rank, cutoff, right):
    """Split the block-diagonal theta[(l s), (t r)] into A[(l s), bond] B[bond, (t r)] by a
    block-wise SVD truncated on the merged spectrum of all sectors, the state renormalised.
    ``right``: A is the isometry and B carries the singular values (moving right), else the
    reverse. Returns (A, B, discarded weight). (The eigenvectors of the Gram matrices would
    be cheaper, but at D = 128 the kept spectrum reaches 1e-6 of the largest value, where
    their square roots are rounding noise.)"""
    parts = []
    for (q, qc), blk in theta.blocks.items():
        u, sv, vh = ar.svd(blk, full_matrices=False)
        parts.append((q, qc, u, ar.to_host(sv), vh))
    counts, kept, total = _truncate([p[3] for p in parts], max_rank, cutoff)
    scale = 1.0 / math.sqrt(kept) if kept > 0 else 1.0
    sym = theta.symmetry
    row, col = theta.legs
    secs, Ab, Bb = [], {}, {}
    for n, (q, qc, u, sv, vh) in zip(counts, parts):
        n = int(n)
        if n == 0:
            continue
        secs.append((q, n))
        sn = ar.asarray(sv[:n] * scale, dtype=u.dtype)
        if right:
            Ab[(q, q)], Bb[(q, qc)] = u[:, :n], sn[:, None] * vh[:n, :]
        else:
            Ab[(q, q)], Bb[(q, qc)] = u[:, :n] * sn[None, :], vh[:n, :]
    bond = Leg(sym, tuple(sorted(secs)), dual=True)
    A = _structure_class((row, bond), sym.identity)._trusted(Ab)
    B = _structure_class((bond.flip(), col), theta.charge)._trusted(Bb)
    return A, B, max(0.0, 1.0 - kept / total) if total > 0 else 0.0


def _right_to_left(x, ar):
    """A[l, (s r)] -> A[(l s), r]: the same entries regrouped (every entry has one place)."""
    lleg, col = x.legs
    sleg, rleg = col.fused_from
    row = fused_leg((lleg, sleg), False)
    rmap, cfmap = _pair_fusion(lleg, sleg, False)[0], col.fusion_map()
    out = {}
    for (ql, qf), blk in x.blocks.items():
        dl = blk.shape[0]
        for (qs, qr), off, (ds, dr) in cfmap[qf][0]:
            q, ro = rmap[(ql, qs)]
            o = out.get((q, qr))
            if o is None:
                o = out[(q, qr)] = ar.zeros((row.sector_dim(q), dr), dtype=blk.dtype)
            o[ro:ro + dl * ds, :] = ar.reshape(blk[:, off:off + ds * dr], (dl * ds, dr))
    return _structure_class((row, rleg), x.charge)._trusted(out)


def _left_to_right(x, ar):
    """A[(l s), r] -> A[l, (s r)] (the inverse regrouping)."""
    row, rleg = x.legs
    lleg, sleg = row.fused_from
    col = fused_leg((sleg, rleg), True)
    cmap, rfmap = _pair_fusion(sleg, rleg, True)[0], row.fusion_map()
    out = {}
    for (qf, qr), blk in x.blocks.items():
        dr = blk.shape[1]
        for (ql, qs), off, (dl, ds) in rfmap[qf][0]:
            q, co = cmap[(qs, qr)]
            o = out.get((ql, q))
            if o is None:
                o = out[(ql, q)] = ar.zeros((dl, col.sector_dim(q)), dtype=blk.dtype)
            o[:, co:co + ds * dr] = ar.reshape(blk[off:off + dl * ds, :], (dl, ds * dr))
    return _structure_class((lleg, col), x.charge)._trusted(out)


def _theta(a, b):
    """theta[(l s), (t r)] = A[(l s), m] B[m, (t r)], both block diagonal: one product per
    sector of the shared bond."""
    bb = {k[0]: (k[1], blk) for k, blk in b.blocks.items()}
    out = {}
    for (q, qm), blk in a.blocks.items():
        hit = bb.get(qm)
        if hit is not None:
            out[(q, hit[0])] = blk @ hit[1]
    sym = a.symmetry
    return _structure_class((a.legs[0], b.legs[1]), sym.fuse(a.charge, b.charge))._trusted(out)


class _Sites:
    """The MPS during the sweep, each tensor kept in the grouping it was made in: A[(l s), r]
    (a left factor) or A[l, (s r)] (a right factor); regrouped only when the other one is
    needed, and split to A[l, s, r] at the end."""

    def __init__(self, rights, ar):
        self.forms = [{"right": a} for a in rights]
        self.ar = ar

    def plain(self, i, device) -> SymmetricTensor:
        """A[l, s, r] as a tensor of tenferro tensors on ``device``."""
        f = self.forms[i]
        x, axis = (f["left"], 0) if "left" in f else (f["right"], 1)
        return _to_tensors(split_legs(x, axis), device)

    def left(self, i):
        f = self.forms[i]
        if "left" not in f:
            f["left"] = _right_to_left(f["right"], self.ar)
        return f["left"]

    def right(self, i):
        f = self.forms[i]
        if "right" not in f:
            f["right"] = _left_to_right(f["left"], self.ar)
        return f["right"]

    def set_left(self, i, a):
        self.forms[i] = {"left": a}

    def set_right(self, i, a):
        self.forms[i] = {"right": a}

    def max_bond(self):
        return max(f["left"].legs[1].dim if "left" in f else f["right"].legs[0].dim
                   for f in self.forms)


# ----------------------------------------------------------------- initial state
def _random_mps(mpo, charge, D, dtype, seed):
    """A random MPS in the sector ``charge``: on every bond the ``max(1, D // 4)`` central
    charges of those reachable from both ends (fewer kept sectors than D, each of dimension
    D // their number), right-canonicalised by the caller (tensors of arrays).

    Why central and few: two-site DMRG moves a bond's charge distribution only slowly, so a
    start spread over every reachable sector (dozens of dimension 1 mid-chain) can freeze
    into a poor charge profile for several sweeps (Heisenberg L=64, D=128: 7-12 sweeps over
    seeds 0-3, against 7 for every seed with this start and for the dense DMRG). If the
    windows do not connect into a state (no path through them), every reachable sector is
    used."""
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
    reach = [sorted(left[k] & right[k]) for k in range(L + 1)]
    if not all(reach):
        raise ShapeError(f"symmetric.dmrg: no state of total charge {charge!r} exists for this "
                         f"chain.")
    keep = max(1, D // 4)
    window = [qs[(len(qs) - keep) // 2:(len(qs) - keep) // 2 + keep] if len(qs) > keep
              else qs for qs in reach]
    # keep only charges on a path through the windows, from both ends
    for i in range(L):
        nxt = {sym.fuse(q, s) for q in window[i] for s in phys[i].charges}
        window[i + 1] = [q for q in window[i + 1] if q in nxt]
    for i in range(L - 1, -1, -1):
        prv = {sym.fuse(q, sym.dual(s)) for q in window[i + 1] for s in phys[i].charges}
        window[i] = [q for q in window[i] if q in prv]
    if not all(window):
        window = reach
    bonds = []
    for k, qs in enumerate(window):
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


def _check_mps0(mpo, mps0, charge):
    """mps0 must be a symmetric MPS on the MPO's physical legs (module conventions); returns
    its total charge (the charge of the last right leg), which must agree with ``charge``."""
    where = "symmetric.dmrg: mps0"
    if not isinstance(mps0, Sequence) or len(mps0) != len(mpo) or not all(
            isinstance(a, SymmetricTensor) and a.ndim == 3 for a in mps0):
        raise ShapeError(f"{where} must be {len(mpo)} symmetric tensors A[l, s, r] (one per "
                         f"MPO tensor).")
    mps0 = list(mps0)
    sym = mpo[0].symmetry
    for i, (a, w) in enumerate(zip(mps0, mpo)):
        if a.symmetry != sym or a.charge != sym.identity:
            raise ShapeError(f"{where}[{i}]: symmetry {a.symmetry}, charge {a.charge!r}; "
                             f"expected {sym} and the identity (the state's charge sits on "
                             f"the last right leg).")
        if a.legs[1] != w.legs[2]:
            raise ShapeError(f"{where}[{i}]: physical leg {a.legs[1]!r} is not the MPO's "
                             f"output leg {w.legs[2]!r}.")
        if i and not mps0[i - 1].legs[2].can_contract(a.legs[0]):
            raise ShapeError(f"{where}: bond {i - 1} does not contract: "
                             f"{mps0[i - 1].legs[2]!r} then {a.legs[0]!r}.")
    first, last = mps0[0].legs[0], mps0[-1].legs[2]
    if first.sectors != ((sym.identity, 1),) or first.dual or not last.dual or \
            len(last.sectors) != 1 or last.sectors[0][1] != 1:
        raise ShapeError(f"{where}: the boundary legs must be {{identity: 1}} (ordinary) on "
                         f"the left and one sector of dimension 1 (dual) on the right; got "
                         f"{first!r} and {last!r}.")
    q = last.charges[0]
    if charge is not None and charge != q:
        raise ShapeError(f"{where} has total charge {q!r} but charge={charge!r} was asked "
                         f"for.")
    return q


# --------------------------------------------------------------------------- DMRG
class _BlockChain:
    """The block-sparse DMRG's state for ``tn.dmrg_sweep.run``: the MPO and the MPS on raw
    block arrays (``_Sites``), the enlarged environments ``LW[i] = L_i W_i`` (sites < i
    contracted) and ``WR[i] = W_i R_i`` (sites > i), and the plans and packings reused
    across bond steps."""

    name = "symmetric DMRG"
    op = "symmetric.dmrg"

    def __init__(self, W: list, mps: list, ar: _Arrays, dtype, device):
        self.W, self.start, self.ar, self.dtype, self.device = W, mps, ar, dtype, device
        self.sites = len(W)
        self.vectors = ar.vectors

    def prepare(self) -> None:
        W, mps, ar, L = self.W, self.start, self.ar, self.sites
        sym = W[0].symmetry

        def one(legs):
            cls = _structure_class(tuple(legs), sym.identity)
            return cls._trusted({tuple(leg.charges[0] for leg in legs):
                                 ar.xp.ones((1, 1, 1), dtype=self.dtype)})

        a0, al = mps[0].legs[0], mps[-1].legs[2]
        self.LW, self.WR = LW, WR = [None] * L, [None] * L
        self.Wm = Wm = [_mpo_matrices(w, ar) for w in W]
        self.plans = plans = {}  # environment-build plans per block structure (this run)
        self.packings = {}
        LW[0] = _build_lw(one([a0, W[0].legs[0].flip(), a0.flip()]), W[0], Wm[0][0], ar, plans)
        WR[L - 1] = _build_wr(W[L - 1], one([al, W[-1].legs[1].flip(), al.flip()]),
                              Wm[L - 1][1], ar, plans)
        # right-canonicalise the start (kept as right factors A[l, (s r)]) and build the
        # right environments on the way
        rights = [None] * L
        cur = fuse_legs(mps[L - 1], [1, 2], dual=True)
        for i in range(L - 1, 0, -1):
            US, rights[i], _ = _split_theta(cur, ar, None, None, False)
            cur = _left_to_right(_theta(fuse_legs(mps[i - 1], [0, 1]), US), ar)
            WR[i - 1] = _build_wr(W[i - 1], _next_right(WR[i], rights[i], W[i].legs[0], ar),
                                  Wm[i - 1][1], ar, plans)
        rights[0] = cur
        self.mps = _Sites(rights, ar)

    def local(self, i: int) -> tuple:
        # theta[(l s), (t r)] from A_i as [(l s), r] and A_{i+1} as [l, (t r)]
        theta = _theta(self.mps.left(i), self.mps.right(i + 1))
        pk = self.packings.get(type(theta))
        if pk is None:
            pk = self.packings[type(theta)] = _Packing(type(theta), self.ar)
        return pk.pack(theta, self.dtype), _Heff(self.LW[i], self.WR[i + 1], pk, self.ar), pk

    def split(self, i: int, v, pk, max_rank: int, cutoff: float, right: bool) -> float:
        W, ar = self.W, self.ar
        A, B, disc = _split_theta(pk.unpack(v), ar, max_rank, cutoff, right)
        self.mps.set_left(i, A)
        self.mps.set_right(i + 1, B)
        if right:
            self.LW[i + 1] = _build_lw(_next_left(self.LW[i], A, W[i].legs[1], ar), W[i + 1],
                                       self.Wm[i + 1][0], ar, self.plans)
        else:
            self.WR[i] = _build_wr(W[i], _next_right(self.WR[i + 1], B, W[i + 1].legs[0], ar),
                                   self.Wm[i][1], ar, self.plans)
        return disc

    def max_bond(self) -> int:
        return self.mps.max_bond()

    def result(self) -> tuple:
        mps = [self.mps.plain(i, self.device) for i in range(self.sites)]
        return mps, max(a.legs[2].dim for a in mps[:-1])


@arg.checked(where="symmetric.dmrg", max_rank=arg.SIZE,
             schedule=arg.rule(arg.size_list, none=True),
             cutoff=arg.TOL, max_sweeps=arg.SIZE, tol=arg.TOL,
             ncv=arg.rule(arg.size, minimum=2), seed=arg.SEED, dtype=arg.DTYPE,
             progress=arg.FLAG, callback=arg.FUNCTION)
def dmrg(mpo: Sequence[SymmetricTensor], max_rank: int = 64, *, charge=None, mps0=None,
         schedule=None, cutoff: float = 1e-10, max_sweeps: int = 40, tol: float = 1e-10,
         ncv: int = 12, seed: int = 0, dtype=None, progress=None, callback=None):
    """Two-site DMRG ground state of a symmetric MPO (``mpo_from_dense``) in the sector of
    total ``charge`` (default: the charge of ``mps0`` if given, else the identity, e.g.
    S_z = 0). Parameters and result (``tenferro.tn.DMRGResult``; its ``mps`` is a list of
    ``SymmetricTensor``) as ``tenferro.tn.dmrg``, which dispatches here for symmetric MPOs:
    ``max_rank`` bounds the total bond dimension (summed over sectors, truncated on the merged
    spectrum), ``cutoff`` drops singular values of the normalised two-site tensor below it,
    ``schedule`` gives the bond dimension per sweep, ``mps0`` is an initial symmetric MPS
    ``A[l, s, r]`` (charge conventions in the module docstring; default random in the
    sector). The ground state search is forward only: it runs on the blocks' arrays (module
    docstring). ``progress``/``callback``: the per-sweep record of ``tenferro.tn.dmrg``, whose
    sweep (schedule, local solver, convergence test) this one shares."""

    if not isinstance(mpo, Sequence) or len(mpo) < 2 or not all(
            isinstance(w, SymmetricTensor) and w.ndim == 4 for w in mpo):
        raise ShapeError("symmetric.dmrg: the Hamiltonian must be a list of at least two "
                         "symmetric MPO tensors W[l, r, out, in] (see mpo_from_dense).")
    sym = mpo[0].symmetry
    charge = None if charge is None else sym.validate(charge, "symmetric.dmrg")
    device = mpo[0].device
    mpo = list(mpo)
    if mps0 is not None:
        charge = _check_mps0(mpo, mps0, charge)
    charge = sym.identity if charge is None else charge
    dtype = np.dtype(dtype) if dtype is not None else np.result_type(
        *[w.dtype for w in list(mpo) + list(mps0 or [])])
    first = next(iter(mpo[0].blocks.values()))
    W = [_to_raw(w.astype(dtype)) for w in mpo]
    ar = _Arrays(None if isinstance(next(iter(W[0].blocks.values())), np.ndarray)
                 else first.backend)
    sched = schedule_of(max_rank, schedule)
    if mps0 is not None:
        mps = [_to_raw(a.astype(dtype)) for a in mps0]
    else:
        mps = _random_mps(mpo, charge, sched[0], dtype, seed)
    if not ar.numpy and mps0 is None:
        mps = [type(a)._trusted({k: ar.asarray(b) for k, b in a.blocks.items()}) for a in mps]
    return run(_BlockChain(W, mps, ar, dtype, device), sched, cutoff=cutoff,
               max_sweeps=max_sweeps, tol=tol, ncv=ncv, seed=seed, progress=progress,
               callback=callback)


register("dmrg", SymmetricTensor, dmrg)
