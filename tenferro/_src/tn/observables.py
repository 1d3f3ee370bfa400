"""Implementation of ``tenferro.tn.observables`` (its docstring is the user documentation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import linalg, ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import arguments as arg
from .mps import mixed_canonicalize

__all__ = [
    "correlation_matrix",
    "uniform_correlations",
    "uniform_structure_factor",
    "entanglement_entropy",
    "entanglement_spectrum",
    "expectation_values",
    "structure_factor",
]


def _schmidt(mps: Sequence, bond: int):
    """Schmidt values across bond ``bond`` (between sites bond-1 and bond, 1..L-1) of a finite
    MPS, or the singular values of a uniform MPS's C when ``mps`` is a matrix."""
    if isinstance(mps, Tensor) and mps.ndim == 2:
        s = linalg.svd(mps)[1]
        return s / linalg.norm(s)
    L = len(mps)
    if not 1 <= bond <= L - 1:
        raise ShapeError(f"entanglement_spectrum: bond must be in 1..{L - 1} (the cut between "
                         f"sites bond-1 and bond), got {bond}.")
    c = mixed_canonicalize(mps, bond - 1)
    a = c[bond - 1]
    _, s, _ = linalg.svd(ops.reshape(a, (a.shape[0] * a.shape[1], a.shape[2])))
    return s / linalg.norm(s)


def _state(op, name, value):
    """A finite MPS, or the bond matrix C of a uniform MPS (a 2-d tensor)."""
    if isinstance(value, Tensor) and value.ndim == 2:
        return value
    return arg.mps(op, name, value)


@arg.checked(mps=_state, bond=arg.OPTIONAL_SIZE)
def entanglement_spectrum(mps, bond: int | None = None):
    """The Schmidt values s_k (descending, sum s_k^2 = 1) across a cut: of a finite MPS between
    sites ``bond-1`` and ``bond`` (default: the middle), or of a uniform MPS given its bond
    matrix C. The entanglement spectrum in the usual sense is ``-2 ln s_k``."""
    if bond is None and not (isinstance(mps, Tensor) and mps.ndim == 2):
        bond = len(mps) // 2
    return _schmidt(mps, bond)


@arg.checked(mps=_state, bond=arg.OPTIONAL_SIZE, alpha=arg.rule(arg.number, minimum=0.0))
def entanglement_entropy(mps, bond: int | None = None, *, alpha: float = 1.0):
    """Von Neumann (``alpha=1``) or Renyi-``alpha`` entanglement entropy across a cut (natural
    logarithm); arguments as ``entanglement_spectrum``."""
    p = entanglement_spectrum(mps, bond) ** 2
    if alpha == 1:
        tiny = np.finfo(np.dtype(p.dtype)).tiny
        return -ops.sum(p * ops.log(ops.maximum(p, tiny)))
    return ops.log(ops.sum(p ** alpha)) / (1 - alpha)


def _op_tensor(op, d, dtype, device, name):
    op = arg.tensor(name, "the local operator", op)
    op = op if op.device == device else op.to(device)
    if tuple(op.shape) != (d, d):
        raise ShapeError(f"{name}: the local operator must be a ({d}, {d}) matrix, got shape "
                         f"{tuple(op.shape)}.")
    return op.astype(np.result_type(dtype, op.dtype))


@arg.checked(mps=arg.MPS)
def expectation_values(mps: Sequence, op):
    """``<psi|O_i|psi> / <psi|psi>`` for every site i (a length-L tensor), O a (d, d) matrix."""
    L = len(mps)
    op = _op_tensor(op, mps[0].shape[1], mps[0].dtype, mps[0].device, "expectation_values")
    out = []
    c = mixed_canonicalize(mps, 0)
    for i in range(L):
        a = c[i]
        n = ops.sum(ops.abs2(a))
        out.append(einsum("lsr,ts,ltr->", ops.conj(a), op, a) / n)
        if i < L - 1:
            q, r = linalg.qr(ops.reshape(a, (-1, a.shape[2])), positive=True)
            c[i] = ops.reshape(q, (a.shape[0], a.shape[1], q.shape[1]))
            c[i + 1] = einsum("kr,rsb->ksb", r, c[i + 1])
    return ops.stack(out)


@arg.checked(mps=arg.MPS)
def correlation_matrix(mps: Sequence, op_a, op_b=None):
    """``G[i, j] = <A_i B_j>`` (normalised; ``op_b`` defaults to ``op_a``; on the diagonal the
    product A B on one site), an (L, L) tensor, O(L^2 D^3 d)."""
    L, d = len(mps), mps[0].shape[1]
    dt, dev = mps[0].dtype, mps[0].device
    A = _op_tensor(op_a, d, dt, dev, "correlation_matrix")
    B = A if op_b is None else _op_tensor(op_b, d, dt, dev, "correlation_matrix")
    dt = np.result_type(dt, A.dtype, B.dtype)
    mps = [a.astype(dt) for a in mps]
    A, B = A.astype(dt), B.astype(dt)
    # left environments with nothing inserted, right environments with nothing inserted
    one = ops.ones((1, 1), dtype=dt, device=dev)
    left = [one]
    for a in mps:
        left.append(einsum("kb,bsc,ksl->lc", left[-1], a, ops.conj(a)))
    right = [one]
    for a in reversed(mps):
        right.append(einsum("bsc,cl,ksl->bk", a, right[-1], ops.conj(a)))
    right = right[::-1]  # right[i]: sites i..L-1 contracted
    norm = ops.reshape(left[-1], ())
    rows = []
    for i in range(L):
        row = []
        ai = mps[i]
        # with A on site i, then walk right
        ea = einsum("kb,bsc,ts,ktl->lc", left[i], ai, A, ops.conj(ai))
        for j in range(L):
            if j < i:
                row.append(None)
                continue
            if j == i:
                ab = A @ B
                v = einsum("kb,bsc,ts,ktl,cl->", left[i], ai, ab, ops.conj(ai), right[i + 1])
                row.append(v / norm)
                continue
            aj = mps[j]
            v = einsum("kb,bsc,ts,ktl,cl->", ea, aj, B, ops.conj(aj), right[j + 1])
            row.append(v / norm)
            ea = einsum("kb,bsc,ksl->lc", ea, aj, ops.conj(aj))
        rows.append(row)
    # lower triangle: <A_i B_j> for j < i is <B_j A_i> (operators on different sites commute)
    for i in range(L):
        for j in range(i):
            if op_b is None:
                rows[i][j] = rows[j][i]
            else:
                rows[i][j] = _pair(mps, left, right, norm, j, B, i, A)
    return ops.stack([ops.stack(r) for r in rows])


def _pair(mps, left, right, norm, i, A, j, B):
    """<A_i B_j> for i < j."""
    ai = mps[i]
    ea = einsum("kb,bsc,ts,ktl->lc", left[i], ai, A, ops.conj(ai))
    for k in range(i + 1, j):
        ea = einsum("kb,bsc,ksl->lc", ea, mps[k], ops.conj(mps[k]))
    aj = mps[j]
    return einsum("kb,bsc,ts,ktl,cl->", ea, aj, B, ops.conj(aj), right[j + 1]) / norm


@arg.checked(mps=arg.MPS, op=arg.tensor, q=arg.optional(arg.real_values), connected=arg.FLAG)
def structure_factor(mps: Sequence, op, q=None, *, connected: bool = True):
    """Static structure factor ``S(q) = (1/L) sum_{ij} e^{i q (i - j)} <O_i^H O_j>_c`` of a
    finite MPS at wave numbers ``q`` (default: the L values 2 pi k / L), O a (d, d) matrix.
    ``connected``: subtract ``<O_i^H><O_j>``. Real (the correlation matrix is Hermitian)."""
    L = len(mps)
    op = op if op.device == mps[0].device else op.to(mps[0].device)
    if op.ndim != 2:
        raise ShapeError(f"structure_factor: the local operator must be a (d, d) matrix, got "
                         f"shape {tuple(op.shape)}.")
    opc = ops.conj(op.T)
    G = correlation_matrix(mps, opc, op)
    if connected:
        m = expectation_values(mps, op)
        G = G - ops.conj(m)[:, None] * m[None, :]
    qs = 2 * np.pi * np.arange(L) / L if q is None else q
    x = np.arange(L)
    phase = np.exp(1j * qs[:, None, None] * (x[None, :, None] - x[None, None, :]))
    cdt = np.result_type(G.dtype, np.complex64)
    S = einsum("qij,ij->q", ops.asarray(phase.astype(cdt), device=G.device), G.astype(cdt))
    return ops.real(S) / L


# ------------------------------------------------------------------ uniform MPS
_UNIFORM = dict(AC=arg.rule(arg.tensor, legs="AC[left, phys, right]"),
                AR=arg.rule(arg.tensor, legs="AR[left, phys, right]"), rmax=arg.COUNT)


@arg.checked(**_UNIFORM)
def uniform_correlations(AC, AR, op_a, op_b=None, rmax: int = 10):
    """``<A_0 B_r>`` for r = 0..rmax of a uniform MPS in mixed canonical form (``AC`` the
    centre tensor with ``||AC|| = 1``, ``AR`` the right isometry, as ``vumps`` returns them);
    r = 0 is ``<(A B)_0>``. Costs O(rmax D^3 d). ``op_b`` defaults to ``op_a``. The
    connected part is ``<A_0 B_r> - <A><B>`` (``<A>`` = the r = 0 value with B = 1)."""
    if AR.shape != AC.shape or AC.shape[0] != AC.shape[2]:
        raise ShapeError(f"uniform_correlations: AC and AR must both be (D, d, D), got "
                         f"{tuple(AC.shape)} and {tuple(AR.shape)}.")
    d = AC.shape[1]
    A = _op_tensor(op_a, d, AC.dtype, AC.device, "uniform_correlations")
    B = A if op_b is None else _op_tensor(op_b, d, AC.dtype, AC.device,
                                          "uniform_correlations")
    dt = np.result_type(AC.dtype, A.dtype, B.dtype)
    AC, AR, A, B = AC.astype(dt), AR.astype(dt), A.astype(dt), B.astype(dt)
    out = [einsum("ksc,ts,ktc->", AC, A @ B, ops.conj(AC))]
    x = einsum("ksb,ts,ktl->lb", AC, A, ops.conj(AC))  # [bra, ket] after site 0
    for _ in range(int(rmax)):
        out.append(einsum("kb,bsc,ts,ktc->", x, AR, B, ops.conj(AR)))
        x = einsum("kb,bsc,ksl->lc", x, AR, ops.conj(AR))
    return ops.stack(out)


@arg.checked(where=arg.tensor, q=arg.optional(arg.real_values), **_UNIFORM)
def uniform_structure_factor(AC, AR, op, q, rmax: int = 50):
    """``S(q) = sum_r e^{i q r} <O_0^H O_r>_c`` of a uniform MPS, the sum cut at |r| <= rmax
    (the connected correlations decay exponentially at finite D: check convergence in
    rmax). Real for any O (the r and -r terms are complex conjugates)."""
    op = op if op.device == AC.device else op.to(AC.device)
    if op.ndim != 2:
        raise ShapeError(f"uniform_structure_factor: the local operator must be a (d, d) "
                         f"matrix, got shape {tuple(op.shape)}.")
    G = uniform_correlations(AC, AR, ops.conj(op.T), op, rmax)
    eye = ops.eye(op.shape[0], dtype=op.dtype, device=AC.device)
    m = uniform_correlations(AC, AR, op, eye, 0)[0]
    Gc = G - ops.conj(m) * m
    if q is None:
        raise ShapeError("uniform_structure_factor: give the wave numbers q.")
    qs = np.atleast_1d(q)
    r = np.arange(int(rmax) + 1)
    w = np.where(r == 0, 1.0, 2.0)[None, :] * np.ones_like(qs)[:, None]
    cdt = np.result_type(Gc.dtype, np.complex64)
    phase = ops.asarray((w * np.exp(1j * qs[:, None] * r[None, :])).astype(cdt),
                       device=AC.device)
    # sum_r e^{iqr} G_r with G_{-r} = conj(G_r): Re(G_0) + 2 Re sum_{r>0} e^{iqr} G_r
    return ops.real(einsum("qr,r->q", phase, Gc.astype(cdt)))
