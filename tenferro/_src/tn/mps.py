"""Implementation of ``tenferro.tn.mps`` (its docstring is the user documentation)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from chainrules.dtypes import float64

from .. import linalg, ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import arguments as arg

__all__ = [
    "bond_dimensions",
    "expand_bond_dimension",
    "left_canonicalize",
    "max_bond_dimensions",
    "mixed_canonicalize",
    "mpo_expectation",
    "mpo_variance",
    "mps_norm",
    "mps_overlap",
    "mps_to_dense",
    "product_mps",
    "random_mps",
    "right_canonicalize",
    "two_site_update",
]


# ------------------------------------------------------------------------ construction
@arg.checked(L=arg.SIZE, D=arg.SIZE, d=arg.SIZE)
def max_bond_dimensions(L: int, D: int, d: int = 2) -> list[int]:
    """Largest useful bond dimensions ``[1, min(D, d), min(D, d^2), ..., min(D, d), 1]`` of an
    open chain: bond k (after site k) never needs more than ``min(d^k, d^(L-k))``."""
    return [min(D, d ** min(k, L - k)) for k in range(L + 1)]


@arg.checked(L=arg.SIZE, D=arg.SIZE, d=arg.SIZE, dtype=arg.DTYPE, seed=arg.SEED,
             canonical=arg.optional(arg.rule(arg.choice, options=("right", "left"))))
def random_mps(L: int, D: int, d: int = 2, *, dtype=float64, seed=None,
               canonical: str | None = "right", device=None) -> list:
    """A random MPS of ``L`` sites, bond dimension ``D`` (capped at ``max_bond_dimensions``) and
    local dimension ``d``, from Gaussian tensors (complex dtypes: independent real and imaginary
    parts). ``canonical``: "right" (default; normalised, right-canonical), "left", or None (raw
    Gaussian tensors, whose norm grows or shrinks exponentially with L). ``device``: where
    the tensors live (default: the default device)."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    dims = max_bond_dimensions(L, D, d)
    mps = []
    for i in range(L):
        shape = (dims[i], d, dims[i + 1])
        a = rng.standard_normal(shape)
        if dt.kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        mps.append(ops.asarray(a.astype(dt) / np.sqrt(dims[i] * d), device=device))
    if canonical is None:
        return mps
    if canonical == "right":
        return right_canonicalize(mps, normalize=True)
    return left_canonicalize(mps, normalize=True)


@arg.checked(states=arg.tensor, L=arg.OPTIONAL_SIZE, dtype=arg.DTYPE)
def product_mps(states, L: int | None = None, *, dtype=None, device=None) -> list:
    """The product state ``|v_1> (x) ... (x) |v_L>`` as a bond-dimension-1 MPS.

    ``states``: a list of L local vectors, or one vector repeated ``L`` times. Vectors are used
    as given (not normalised). Example: ``product_mps([[1, 0], [0, 1]] * 4)`` is the Neel state
    up-down-up-down... of 8 spins. The tensors live on ``device``, or on the device of
    ``states`` when it is a tensor."""
    if device is None and isinstance(states, Tensor):
        device = states.device
    arr = np.asarray(ops.stop_gradient(states) if isinstance(states, Tensor) else states)
    if arr.ndim == 1:
        if L is None:
            raise ShapeError("product_mps: one local vector given; pass the chain length L.")
        arr = np.broadcast_to(arr, (L, arr.shape[0]))
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ShapeError(
            f"product_mps: expected L local vectors of one dimension d (shape (L, d)), got an "
            f"array of shape {arr.shape}.")
    if L is not None and arr.shape[0] != L:
        raise ShapeError(f"product_mps: {arr.shape[0]} local vectors for L={L} sites.")
    dt = np.dtype(dtype) if dtype is not None else np.result_type(arr.dtype, np.float64)
    return [ops.asarray(v.astype(dt).reshape(1, -1, 1), device=device) for v in arr]


@arg.checked(mps=arg.MPS)
def bond_dimensions(mps: Sequence) -> list[int]:
    """``[D_0, D_1, ..., D_L]``: the bond dimensions including the two boundary bonds (1)."""
    return [mps[0].shape[0]] + [a.shape[2] for a in mps]


@arg.checked(mps=arg.MPS, D=arg.SIZE, noise=arg.TOL, seed=arg.SEED)
def expand_bond_dimension(mps: Sequence, D: int, *, noise: float = 1e-3, seed=None) -> list:
    """Enlarge every bond to ``min(D, max useful)`` by padding, with Gaussian noise of relative
    size ``noise`` in the new entries.

    Zero padding alone would be a saddle point of any variational energy: the gradient with
    respect to the new entries of A_i is proportional to the (zero) new entries of A_{i+1}.
    The noise (relative to each tensor's RMS entry) breaks it; the state changes by O(noise).
    Differentiable in ``mps`` and traceable (the noise is a constant drawn from ``seed``)."""
    L, d = len(mps), mps[0].shape[1]
    old = bond_dimensions(mps)
    new = [max(o, n) for o, n in zip(old, max_bond_dimensions(L, D, d))]
    rng = np.random.default_rng(seed)
    out = []
    for i, a in enumerate(mps):
        pads = ((0, new[i] - old[i]), (0, 0), (0, new[i + 1] - old[i + 1]))
        if pads[0][1] == 0 and pads[2][1] == 0:
            out.append(a)
            continue
        shape = (new[i], d, new[i + 1])
        r = rng.standard_normal(shape)
        if a.dtype.kind == "c":
            r = r + 1j * rng.standard_normal(shape)
        r[: old[i], :, : old[i + 1]] = 0  # noise only in the new entries
        scale = ops.stop_gradient(ops.sqrt(ops.mean(ops.abs2(a)))) * noise
        r = ops.asarray(r.astype(a.dtype), device=a.device)
        out.append(ops.pad(a, pads) + scale.astype(a.dtype, copy=False) * r)
    return out


# --------------------------------------------------------------------- canonical forms
def _qr_left(a):
    """A[l, s, r] = Q[l, s, k] R[k, r] with Q a left isometry (sum_{l,s} Q* Q = 1)."""
    Dl, d, Dr = a.shape
    q, r = linalg.qr(ops.reshape(a, (Dl * d, Dr)), positive=True)
    return ops.reshape(q, (Dl, d, q.shape[1])), r


def _qr_right(a):
    """A[l, s, r] = R[l, k] Q[k, s, r] with Q a right isometry (sum_{s,r} Q Q* = 1), from the
    QR decomposition of A^T (transpose, not adjoint: R is then lower triangular with a
    positive diagonal and Q = (Q')^T)."""
    Dl, d, Dr = a.shape
    q, r = linalg.qr(ops.reshape(a, (Dl, d * Dr)).T, positive=True)
    return r.T, ops.reshape(q.T, (q.shape[1], d, Dr))


@arg.checked(mps=arg.MPS, center=arg.COUNT, normalize=arg.FLAG)
def mixed_canonicalize(mps: Sequence, center: int, *, normalize: bool = False) -> list:
    """Mixed-canonical form with orthogonality centre ``center``: sites left of it are left
    isometries, sites right of it right isometries, and the state is unchanged (its norm is the
    Frobenius norm of the centre tensor; ``normalize=True`` divides it out).

    Each sweep step is a QR with non-negative diag(R) (unique for full-rank tensors), so the
    result is a smooth function of the input. Bonds larger than useful (``D_k > D_{k-1} d``)
    shrink to the rank the QR exposes."""
    L = len(mps)
    if not 0 <= center < L:
        raise ShapeError(f"mixed_canonicalize: center={center} is outside the chain 0..{L - 1}.")
    out = list(mps)
    for i in range(center):
        q, r = _qr_left(out[i])
        out[i] = q
        out[i + 1] = einsum("kr,rsb->ksb", r, out[i + 1])
    for i in range(L - 1, center, -1):
        r, q = _qr_right(out[i])
        out[i] = q
        out[i - 1] = einsum("asl,lk->ask", out[i - 1], r)
    if normalize:
        out[center] = out[center] / linalg.norm(out[center])
    return out


@arg.checked(mps=arg.MPS, normalize=arg.FLAG)
def left_canonicalize(mps: Sequence, *, normalize: bool = False) -> list:
    """Left-canonical form: every site but the last a left isometry (centre at the last site)."""
    return mixed_canonicalize(mps, len(mps) - 1, normalize=normalize)


@arg.checked(mps=arg.MPS, normalize=arg.FLAG)
def right_canonicalize(mps: Sequence, *, normalize: bool = False) -> list:
    """Right-canonical form: every site but the first a right isometry (centre at site 0)."""
    return mixed_canonicalize(mps, 0, normalize=normalize)


# ---------------------------------------------------------------- overlaps and norms
def _transfer(e, bra, ket):
    """One step of <bra|ket> from the left: E'[y, b] = sum E[x, a] conj(B)[x, s, y] A[a, s, b],
    contracted as (E A) then with conj(B): O(D^3 d)."""
    return einsum("xa,asb,xsy->yb", e, ket, ops.conj(bra), optimize=[(0, 1), (0, 1)])


@arg.checked(bra=arg.MPS, ket=arg.MPS)
def mps_overlap(bra: Sequence, ket: Sequence):
    """``<bra|ket>`` (the bra is complex-conjugated): a 0-d tensor, O(L D^3 d)."""
    if len(bra) != len(ket):
        raise ShapeError(f"mps_overlap: chains of different lengths {len(bra)} and {len(ket)}.")
    e = None
    for i, (b, a) in enumerate(zip(bra, ket)):
        if b.shape[1] != a.shape[1]:
            raise ShapeError(
                f"mps_overlap: local dimensions differ at site {i}: {b.shape} vs {a.shape}.")
        if e is None:  # boundary bonds have dimension 1: start from the first site directly
            e = einsum("xsy,xsb->yb", ops.conj(b), a)
        else:
            e = _transfer(e, b, a)
    return ops.reshape(e, ())


@arg.checked(mps=arg.MPS)
def mps_norm(mps: Sequence):
    """``sqrt(<psi|psi>)`` as a real 0-d tensor."""
    return ops.sqrt(ops.real(mps_overlap(mps, mps)))


@arg.checked(mps=arg.MPS)
def mps_to_dense(mps: Sequence):
    """The state vector (length d^L, site 1 slowest). Exponential in L: for tests and small
    chains only."""
    v = ops.reshape(mps[0], (mps[0].shape[1], mps[0].shape[2]))  # [s1, b]
    for a in mps[1:]:
        n, Dl = v.shape
        v = ops.reshape(ops.matmul(v, ops.reshape(a, (Dl, -1))), (n * a.shape[1], a.shape[2]))
    return ops.reshape(v, (v.shape[0],))


# ------------------------------------------------------------------ MPO expectation
def _mpo_transfer(e, a, w):
    """E'[y, v, b] = sum E[x, u, a] A[a, s, b] W[u, v, t, s] conj(A)[x, t, y], in the order
    (E A) -> (. W) -> (. conj A): O(D^3 d w + D^2 d^2 w^2)."""
    return einsum("xua,asb,uvts,xty->yvb", e, a, w, ops.conj(a),
                     optimize=[(0, 1), (0, 2), (0, 1)])


def _with_identity_channel(w):
    """W (wl, wr, d, d) -> blockdiag(W, 1) (wl+1, wr+1, d, d): one extra MPO channel that
    carries the identity, so one sweep contracts <psi|H|psi> and <psi|psi> together."""
    wl, wr, d, _ = w.shape
    corner = np.zeros((wl + 1, wr + 1, d, d), dtype=w.dtype)
    corner[wl, wr] = np.eye(d)
    return ops.pad(w, ((0, 1), (0, 1), (0, 0), (0, 0))) + ops.asarray(corner, device=w.device)


def _rescaled(e):
    """Divide an environment by its largest magnitude (no squares: no overflow), held constant
    under differentiation. Every ratio of channels read at the end is invariant under this
    scalar, so the gradient is the same as without it (and the backward pass skips it); it
    keeps long chains and far-from-normalised states (line-search trial points) from
    overflowing."""
    return e / ops.stop_gradient(ops.max(ops.abs(e)))


@arg.checked(mps=arg.MPS, mpo=arg.MPO, normalize=arg.FLAG)
def mpo_expectation(mps: Sequence, mpo: Sequence, *, normalize: bool = True):
    """``<psi|H|psi> / <psi|psi>`` (or the unnormalised ``<psi|H|psi>`` with
    ``normalize=False``) for an MPO ``H`` (tensors ``W[left, right, out, in]``), as a 0-d tensor
    of the common dtype: take ``tenferro.real`` of it for a Hermitian H.

    One left-to-right sweep over environments ``E[bra, mpo, ket]``, O(L D^3 d w). Normalised,
    the MPO gets an extra identity channel so the same sweep yields <psi|psi>, and the
    environment is rescaled at every site: the value neither overflows nor underflows however
    long the chain or large the tensors."""
    arg.same_chain("mpo_expectation", mpo, mps)
    if not normalize:
        e = ops.ones((1, 1, 1), dtype=mps[0].dtype, device=mps[0].device)
        for a, w in zip(mps, mpo):
            e = _mpo_transfer(e, a, w)
        return ops.reshape(e, ())
    e = ops.ones((1, 2, 1), dtype=mps[0].dtype, device=mps[0].device)
    for i, (a, w) in enumerate(zip(mps, mpo)):
        e = _mpo_transfer(e, a, _with_identity_channel(w))
        if i < len(mps) - 1:
            e = _rescaled(e)
    return e[0, 0, 0] / ops.real(e[0, 1, 0])


def _mpo2_transfer(e, a, w):
    """E'[y, p, q, b] = sum E[x, u, v, a] A[a, s, b] W[v, q, t, s] W[u, p, r, t] conj(A)[x, r, y]
    (the lower W acts first on the ket): O(D^3 d w^2 + D^2 d^2 w^3 (1 + d))."""
    return einsum("xuva,asb,vqts,uprt,xry->ypqb", e, a, w, w, ops.conj(a),
                     optimize=[(0, 1), (0, 3), (0, 2), (0, 1)])


@arg.checked(mps=arg.MPS, mpo=arg.MPO)
def mpo_variance(mps: Sequence, mpo: Sequence):
    """The energy variance ``<H^2> - <H>^2`` of the normalised state (real 0-d tensor), for a
    Hermitian MPO: zero exactly for eigenstates, so it measures how far a variational state is
    from one without knowing the exact energy.

    One sweep with two layers of the MPO (each with an identity channel added) gives <H^2>,
    <H> and <psi|psi> together, O(L D^3 d w^2); the MPO is not squared. Rounding limits the
    result to ~1e-16 <H>^2."""
    arg.same_chain("mpo_variance", mpo, mps)
    e = ops.ones((1, 2, 2, 1), dtype=mps[0].dtype, device=mps[0].device)
    for i, (a, w) in enumerate(zip(mps, mpo)):
        e = _mpo2_transfer(e, a, _with_identity_channel(w))
        if i < len(mps) - 1:
            e = _rescaled(e)
    e = ops.real(ops.reshape(e, (2, 2)))
    h2, h1 = e[0, 0] / e[1, 1], e[0, 1] / e[1, 1]
    return h2 - h1 * h1


# --------------------------------------------------------------- two-site truncation
@arg.checked(a=arg.rule(arg.tensor, legs="a[l, s, m]"),
             b=arg.rule(arg.tensor, legs="b[m, t, r]"), max_rank=arg.OPTIONAL_SIZE,
             cutoff=arg.OPTIONAL_TOL, normalize=arg.FLAG,
             absorb=arg.rule(arg.choice, options=("right", "left", "both")))
def two_site_update(a, b, op=None, *, max_rank: int | None = None, cutoff: float | None = None,
                    absorb: str = "right", normalize: bool = False):
    """Merge two neighbouring sites, apply an optional two-site operator, split by a truncated
    SVD. Returns ``(a_new, b_new, discarded_weight)``.

    * ``a[l, s, m]``, ``b[m, t, r]``: the tensors of sites i and i+1;
    * ``op``: ``op[s', t', s, t]`` (out, in) of shape (d, d, d, d), or a (d^2, d^2) matrix;
      e.g. a Trotter gate ``expm(-tau h_{i,i+1})`` for TEBD;
    * ``max_rank`` / ``cutoff``: passed to ``tenferro.linalg.svd`` (``cutoff`` acts on singular
      values, not their squares);
    * ``absorb``: where the singular values go: "right" (a_new is a left isometry, the centre
      moves to i+1), "left" (b_new a right isometry), or "both" (sqrt(S) each side);
    * ``normalize``: rescale the kept singular values to the norm of the merged tensor.

    ``discarded_weight`` = sum of the squared discarded singular values (a real 0-d tensor),
    computed as ||theta||^2 - sum_kept s^2 (so values below ~1e-16 ||theta||^2 are rounding).
    If the MPS is in mixed-canonical form with its centre on these two sites, it is exactly
    ``|| psi - psi_truncated ||^2`` (before ``normalize``)."""
    if a.shape[2] != b.shape[0]:
        raise ShapeError(
            f"two_site_update: expected neighbouring MPS tensors a[l, s, m] and b[m, t, r] with "
            f"a shared bond m, got shapes {a.shape} and {b.shape}.")
    Dl, d1, _ = a.shape
    _, d2, Dr = b.shape
    theta = einsum("lsm,mtr->lstr", a, b)
    if op is not None:
        op = arg.tensor("two_site_update", "op", op)
        op = op if op.device == a.device else op.to(a.device)
        if op.shape == (d1 * d2, d1 * d2):
            op = ops.reshape(op, (d1, d2, d1, d2))
        if op.shape != (d1, d2, d1, d2):
            raise ShapeError(
                f"two_site_update: op must have shape {(d1, d2, d1, d2)} (out, out, in, in) or "
                f"{(d1 * d2, d1 * d2)}, got {op.shape}.")
        theta = einsum("uvst,lstr->luvr", op, theta)
    m = ops.reshape(theta, (Dl * d1, d2 * Dr))
    total = ops.sum(ops.abs2(m))
    u, s, vh = linalg.svd(m, max_rank=max_rank, cutoff=cutoff)
    kept = ops.sum(s * s)
    discarded = ops.maximum(total - kept, 0.0)
    if normalize:
        s = s * ops.sqrt(total / kept)
    k = s.shape[0]
    if absorb == "right":
        left, right = u, s.astype(vh.dtype, copy=False)[:, None] * vh
    elif absorb == "left":
        left, right = u * s.astype(u.dtype, copy=False), vh
    else:
        r = ops.sqrt(s).astype(u.dtype, copy=False)
        left, right = u * r, r[:, None] * vh
    return ops.reshape(left, (Dl, d1, k)), ops.reshape(right, (k, d2, Dr)), discarded


def split_two_site(theta, max_rank, cutoff, right: bool, normalize: bool = False):
    """Split a two-site tensor ``theta[l, s, t, r]`` by a truncated SVD (``max_rank``, and
    ``cutoff`` on the singular values normalised to a unit state) into two site tensors,
    the singular values going right (centre moves right) or left; ``normalize`` rescales the
    kept ones to a unit state (DMRG's eigenvectors). Returns ``(a, b, discarded weight
    relative to the norm squared)``."""
    Dl, d1, d2, Dr = theta.shape
    u, s, vh = linalg.svd(ops.reshape(theta, (Dl * d1, d2 * Dr)))
    sv = np.asarray(ops.stop_gradient(s))
    norm2 = float(np.sum(sv ** 2))
    r = linalg.truncation_rank(sv / math.sqrt(norm2) if norm2 > 0 else sv,
                                  max_rank=max_rank, cutoff=cutoff)
    disc = float(np.sum(sv[r:] ** 2)) / norm2 if norm2 > 0 else 0.0
    u, s, vh = u[:, :r], s[:r], vh[:r]
    if normalize:
        s = s / linalg.norm(s)
    if right:
        return (ops.reshape(u, (Dl, d1, r)),
                ops.reshape(s.astype(vh.dtype, copy=False)[:, None] * vh, (r, d2, Dr)), disc)
    return ops.reshape(u * s.astype(u.dtype, copy=False)[None, :], (Dl, d1, r)), \
        ops.reshape(vh, (r, d2, Dr)), disc
