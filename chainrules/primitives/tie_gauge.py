"""A generic basis inside exactly degenerate multiplets (the forward pass of svd, eigh, eig).

At an exact degeneracy every basis of the multiplet's subspace is an equally valid
decomposition, and LAPACK returns one that reflects the input's structure: for a diagonal or
block-diagonal matrix (s I, the identity, 0, a symmetric model's tensor) the coordinate axes.
Losses that depend on the basis are often *stationary* at such a special basis (tr V,
sum(V**2 * W), V[0, 0], sum(V * W) with W symmetric): their cotangent has no anti-Hermitian
part inside the block there, so the backward check, which sees first derivatives at one
basis, cannot tell them from gauge-invariant losses. Rotating every exactly degenerate block by
a fixed generic unitary makes that a coincidence of measure zero: a loss that is not constant
on the orbit of bases has, at a generic point of the orbit, a non-zero derivative along it,
which ``degeneracy_check`` reports (design/linalg.md, "A generic basis at exact ties"). The
rotation is small (0.5 rad), so the sign convention keeps it on its own branch (see
``_generic``).

Only ties at the level of rounding are rotated (neighbours closer than 16 n eps_machine times
the largest value; exact degeneracies come out of LAPACK split by about that much), so the
rotated vectors satisfy the decomposition to the accuracy LAPACK's own do. ``svd`` rotates U
and V of a block together (U S V^H does not change), and within a block of zero singular
values U and V independently (their pairing is free there). The rotations are fixed (one per
block size and dtype kind, from ``tie_gauge``'s seed), so results are reproducible.
``tie_gauge(seed)`` picks other rotations: a gradient that changes with the seed depends on the
gauge (``tenferro.linalg.check_gauge_invariance`` runs that test).

Looking at the values costs a device-to-host read on an accelerator, so there, as for the
checks, this happens only when ``TENFERRO_DEGENERACY`` is set to warn or raise
(``degeneracy.checks_on``); on the host it always happens (the mode changes the reporting
only, never the numbers).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools

import numpy as np

from .degeneracy import checks_on, eig_tie_groups, on_host, tie_blocks

_SEED = contextvars.ContextVar("tenferro_tie_gauge_seed", default=0)
_EPS_SCALE = contextvars.ContextVar("tenferro_tie_eps_scale", default=1.0)


@contextlib.contextmanager
def tie_gauge(seed: int = 0, eps_scale: float = 1.0):
    """Use the generic rotations numbered ``seed`` (default 0) inside exact ties, and scale
    the default tie tolerance ``eps`` of svd/eigh/eig by ``eps_scale`` (an ``eps`` passed
    explicitly is kept): both are choices a derivative must not depend on."""
    tokens = _SEED.set(int(seed)), _EPS_SCALE.set(float(eps_scale))
    try:
        yield
    finally:
        _SEED.reset(tokens[0])
        _EPS_SCALE.reset(tokens[1])


def eps_scale() -> float:
    """The factor ``tie_gauge`` puts on the default tie tolerance (1 outside it)."""
    return _EPS_SCALE.get()


def rounding_width(dtype, n: int) -> float:
    """Relative spread of an exact degeneracy after LAPACK: 16 n eps_machine."""
    return 16.0 * max(int(n), 1) * float(np.finfo(np.dtype(dtype)).eps)


_ANGLE = 0.5  # radians: every rotation angle of R is at most this


@functools.lru_cache(maxsize=256)
def _generic(d: int, cplx: bool, seed: int, role: int) -> np.ndarray:
    """A fixed generic d x d unitary (orthogonal if not ``cplx``): exp(X) for a random
    anti-Hermitian X of spectral norm 0.5. Not Haar: a rotation by at most 0.5 rad keeps R
    diagonally dominant, so the sign/phase convention (largest entry of each vector real and
    positive) picks the branch of R itself, not that of R times a reflection (or phase
    swap), on which losses like tr V are constant, and the first-order check blind."""
    import scipy.linalg as sla

    rng = np.random.default_rng([20240611, seed, d, role, int(cplx)])
    g = rng.standard_normal((d, d))
    if cplx:
        g = g + 1j * rng.standard_normal((d, d))
    x = g - np.conj(g.T)
    x *= _ANGLE / max(float(np.linalg.norm(x, 2)), 1e-300)
    r = sla.expm(x)
    return r.real.copy() if not cplx else r


def _rotation(d, dtype, role):
    cplx = np.dtype(dtype).kind == "c"
    seed = _SEED.get()
    if d == 1 and not cplx and role == _LEFT_ZERO:
        # the relative sign of a real null pair is a discrete gauge: odd seeds flip it
        return np.full((1, 1), -1.0 if seed % 2 else 1.0, dtype)
    return _generic(d, cplx, seed, role).astype(dtype)


_JOINT, _LEFT_ZERO, _RIGHT_ZERO = 0, 1, 2


def _host(xp, x):
    return x if isinstance(x, np.ndarray) else xp.to_numpy(x)


def _apply(xp, mats, plans):
    """Right-multiply column blocks: ``plans[i]`` lists (batch index, start, stop, R) for
    ``mats[i]`` (..., n, k). NumPy: in place on a copy; other namespaces: one product with a
    block-diagonal (..., k, k) built on the host."""
    out = []
    for m, plan in zip(mats, plans):
        if not plan:
            out.append(m)
            continue
        if isinstance(m, np.ndarray):
            m = m.copy()
            for idx, i, j, r in plan:
                m[idx + (slice(None), slice(i, j))] = m[idx + (slice(None), slice(i, j))] @ r
            out.append(m)
            continue
        k = m.shape[-1]
        full = np.broadcast_to(np.eye(k, dtype=xp.np_dtype(m.dtype)), m.shape[:-2] + (k, k))
        full = full.copy()
        for idx, i, j, r in plan:
            full[idx + (slice(i, j), slice(i, j))] = r
        out.append(xp.matmul(m, xp.asarray(full)))
    return out


def _active(s) -> bool:
    """On the host always (whatever TENFERRO_DEGENERACY says, so that the mode changes only
    the reporting); on an accelerator only when the checks run there (a host read)."""
    return s.shape[-1] > 1 and (on_host(s) or checks_on(False))


def generic_svd_basis(xp, u, s, vh):
    """``u`` (..., m, >= k), ``s`` (..., k) descending, ``vh`` (..., >= k, n): each exactly
    degenerate block rotated (U_b R, R^H Vh_b); blocks of zero singular values with
    independent rotations of U and V."""
    if not _active(s):
        return u, s, vh
    sn = _host(xp, s)
    k = sn.shape[-1]
    m, n = u.shape[-2], vh.shape[-1]
    tol = rounding_width(sn.dtype, max(m, n))
    width = tol * np.max(np.abs(sn), axis=-1, keepdims=True)
    if not (np.any(np.abs(np.diff(sn, axis=-1)) <= width) or np.any(sn <= width)):
        return u, s, vh
    dt = xp.np_dtype(u.dtype)
    plan_u, plan_v = [], []
    for idx in np.ndindex(sn.shape[:-1]):
        vals = sn[idx]
        w = tol * float(np.max(np.abs(vals)))
        zeros = int(np.count_nonzero(vals <= w))  # descending: the last ones
        for i, j in tie_blocks(vals[:k - zeros], w):
            r = _rotation(j - i, dt, _JOINT)
            plan_u.append((idx, i, j, r))
            plan_v.append((idx, i, j, r))
        if zeros:  # even a single one: the relative sign (phase) of u and v is free
            plan_u.append((idx, k - zeros, k, _rotation(zeros, dt, _LEFT_ZERO)))
            plan_v.append((idx, k - zeros, k, _rotation(zeros, dt, _RIGHT_ZERO)))
    if not plan_u:
        return u, s, vh
    uk, vk = u[..., :, :k], xp.conj(xp.matrix_transpose(vh[..., :k, :]))
    uk, vk = _apply(xp, [uk, vk], [plan_u, plan_v])
    u = uk if u.shape[-1] == k else xp.concat([uk, u[..., :, k:]], axis=-1)
    vhk = xp.conj(xp.matrix_transpose(vk))
    vh = vhk if vh.shape[-2] == k else xp.concat([vhk, vh[..., k:, :]], axis=-2)
    return u, s, vh


def generic_eigh_basis(xp, w, v):
    """``w`` (..., n) ascending, ``v`` (..., n, n): each exactly degenerate block rotated."""
    if not _active(w):
        return w, v
    wn = _host(xp, w)
    tol = rounding_width(wn.dtype, wn.shape[-1])
    width = tol * np.max(np.abs(wn), axis=-1, keepdims=True)
    if not np.any(np.abs(np.diff(wn, axis=-1)) <= width):
        return w, v
    dt = xp.np_dtype(v.dtype)
    plan = []
    for idx in np.ndindex(wn.shape[:-1]):
        vals = wn[idx]
        for i, j in tie_blocks(vals, tol * float(np.max(np.abs(vals)))):
            plan.append((idx, i, j, _rotation(j - i, dt, _JOINT)))
    return w, _apply(xp, [v], [plan])[0]


def generic_eig_basis(xp, w, v):
    """``w`` (..., n) complex in LAPACK's order, ``v`` (..., n, n): the eigenvectors of each
    group of exactly equal eigenvalues recombined by a generic rotation (the caller
    normalises them again). Defective groups (parallel eigenvectors, split by ~sqrt(rounding))
    are left as they are: the backward check reports them whatever the basis."""
    if not _active(w):
        return w, v
    wn = _host(xp, w)
    tol = rounding_width(wn.dtype, wn.shape[-1])
    dt = xp.np_dtype(v.dtype)
    cols = []
    for idx in np.ndindex(wn.shape[:-1]):
        vals = wn[idx]
        for g in eig_tie_groups(vals, np.ones(vals.shape), tol):
            cols.append((idx, g, _rotation(g.size, dt, _JOINT)))
    if not cols:
        return w, v
    vn = np.array(_host(xp, v), copy=True)
    for idx, g, r in cols:
        vn[idx + (slice(None), g)] = vn[idx + (slice(None), g)] @ r
    return w, (vn if isinstance(v, np.ndarray) else xp.asarray(vn))


__all__ = ["eps_scale", "generic_eig_basis", "generic_eigh_basis", "generic_svd_basis",
           "rounding_width", "tie_gauge"]
