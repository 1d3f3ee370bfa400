"""VUMPS: variational uniform MPS ground states of infinite chains with a nearest-neighbour
Hamiltonian ``H = sum_i h_{i,i+1}`` (Zauner-Stauber, Vanderstraeten, Fishman, Verstraete,
Haegeman, PRB 97, 045145 (2018); the notation of Vanderstraeten, Haegeman, Verstraete,
SciPost Phys. Lect. Notes 7 (2019)).

A uniform MPS in mixed canonical form is (AL, AR, C, AC) with AL a left isometry, AR a right
isometry, ``AL C = AC = C AR``; tensors are ``A[left, phys, right]`` (as ``tenferro.tn.mps``),
``h[s1', s2', s1, s2]`` (out, out, in, in), C a (D, D) matrix with ``||C|| = 1``.

One iteration:

1. energy density ``e = <AL AC| h |AL AC>``; ``h~ = h - e`` so the infinite sums converge;
2. the left block ``HL`` (sum of all h~ terms left of the bond) solves
   ``HL (1 - E_L + |r)(1|) = hL`` and the right block ``HR`` solves
   ``(1 - E_R + |1)(l|) HR = hR`` (``E_L``/``E_R`` the transfer matrices of AL/AR, ``r = C
   C^H``, ``l = C^H C`` their non-trivial fixed points; the projector term removes the
   eigenvalue 1), both with ``tenferro.linalg.linsolve`` (GMRES, warm-started);
3. AC and C become the lowest eigenvectors of the effective Hamiltonians ``H_AC`` and
   ``H_C`` (Krylov-Schur, ``linalg.eigensolver.lowest_eigenpair``, as the DMRGs' local
   solver; warm-started, tolerance following the gradient);
4. AL and AR are the best isometries with ``AL C ~ AC ~ C AR``: products of polar factors,
   ``AL = polar(AC) polar(C)^H``, ``AR = polar(C)^H polar(AC)``.

The convergence measure is the norm of the energy gradient in the tangent space,
``||H_AC(AC) - AL H_C(C)||`` (zero exactly at a variational optimum); the energy error is
quadratic in it. Everything is tenferro operations (any backend, real or complex).

Unit cells (``unit_cell=n`` or a list of n bond Hamiltonians): n sites AL[j], AR[j], C[j],
AC[j] with ``AL[j] C[j] = AC[j] = C[j-1] AR[j]`` (C[j] on the bond right of site j, indices mod
n), one bond Hamiltonian per bond. Each bond's energy is subtracted from its own h; one block
per side is solved with the whole cell's transfer matrix, the others follow by one transfer
step each; all AC[j], C[j] are then updated from the same environments (the parallel update of
Zauner-Stauber et al., section on multi-site unit cells). For n = 1 this is the algorithm above.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from .. import linalg, ops
from ..contract.api import einsum
from ..errors import ShapeError
from ..linalg import LinearOperator, linsolve
from ..linalg.eigensolver import lowest_eigenpair
from ..progress import warn_unconverged
from . import arguments as arg
from .mpo import heisenberg_bond, tfim_bond  # noqa: F401  (the chain Hamiltonians)
from .progress import Progress

__all__ = ["VUMPSResult", "uniform_canonical", "vumps"]


class VUMPSResult(NamedTuple):
    """Energy per site, the mixed canonical uniform MPS (AL, AR, C, AC), the tangent-space
    gradient norm reached, iterations, whether it reached ``tol``, the energy after each
    iteration, the wall time in seconds, the progress records, and the energy of each bond
    of the unit cell (``bond_energies[b]`` on sites b, b+1; one entry for a single site).
    For a unit cell, AL, AR, C, AC are lists (see ``vumps``)."""

    energy: float
    AL: object
    AR: object
    C: object
    AC: object
    grad: float
    iterations: int
    converged: bool
    energies: list
    seconds: float
    records: list
    bond_energies: list


# --------------------------------------------------------------- small building blocks
def _polar(m):
    """The unitary (isometric) polar factor U V^H of m = U S V^H."""
    u, _, vh = linalg.svd(m)
    return u @ vh


def _normalize(x):
    return x / linalg.norm(x)


def _left_transfer(x, a, b=None):
    """x'[k', b'] = sum conj(B)[k, s, k'] x[k, b] A[b, s, b'] (bra index first)."""
    b = a if b is None else b
    return einsum("kb,bsc,ksl->lc", x, a, ops.conj(b), optimize=[(0, 1), (0, 1)])


def _right_transfer(y, a, b=None):
    """y'[b, k] = sum A[b, s, b'] y[b', k'] conj(B)[k, s, k'] (ket index first)."""
    b = a if b is None else b
    return einsum("bsc,cl,ksl->bk", a, y, ops.conj(b), optimize=[(0, 1), (0, 1)])


def _isometries(op, name, value):
    """A left isometry AL (D, d, D), or a list of them (a unit cell)."""
    legs = "AL[left, phys, right]"
    if isinstance(value, (list, tuple)):
        return arg.tensor_list(op, name, value, legs=legs)
    return arg.tensor(op, name, value, legs=legs)


@arg.checked(AL=_isometries, tol=arg.TOL, seed=arg.SEED)
def uniform_canonical(AL, *, tol: float = 1e-14, seed: int = 0):
    """From a left isometry AL (D, d, D): (AL, AR, C) with ``AL C = C AR``, AR a right isometry
    and ``||C|| = 1``. C = U sqrt(w) from the right fixed point ``r = U w U^H`` of AL's
    transfer matrix (``tenferro.linalg.eigs``, largest magnitude).

    ``AL`` may also be a list of the n left isometries of an n-site unit cell; the result is
    then three lists with ``AL[j] C[j] = C[j-1] AR[j]`` (``C[j]`` on the bond right of site j,
    indices mod n), from the fixed point of the whole cell's transfer matrix."""
    if isinstance(AL, (list, tuple)):
        return _cell_canonical(list(AL), tol, seed)
    ALs, ARs, Cs = _cell_canonical([AL], tol, seed)
    return ALs[0], ARs[0], Cs[0]


def _cell_canonical(ALs, tol, seed):
    n, D, dt = len(ALs), ALs[0].shape[0], ALs[0].dtype

    def cell_transfer(v):  # r on bond n-1, through sites n-1, ..., 0, back on bond n-1
        y = ops.reshape(v, (D, D))
        for j in reversed(range(n)):
            y = _right_transfer(y, ALs[j])
        return ops.reshape(y, (D * D,))

    op = LinearOperator(cell_transfer, (D * D, D * D), dt)
    res = linalg.eigs(op, 1, "LM", tol=tol, seed=seed)
    rs = [None] * n
    rs[n - 1] = ops.reshape(res.eigenvectors[:, 0], (D, D))
    for j in range(n - 1, 0, -1):  # r on bond j-1 = E_{AL[j]}(r on bond j)
        rs[j - 1] = _right_transfer(rs[j], ALs[j])
    Cs, Cinvs = [], []
    for r in rs:
        r = (r + ops.conj(r.T)) / 2
        r = r / einsum("aa->", r)
        if dt.kind != "c":
            r = ops.real(r)
        w, U = linalg.eigh(r)
        w = ops.maximum(w, 0.0)
        Cs.append(U * ops.sqrt(w).astype(U.dtype)[None, :])
        Cinvs.append((1 / ops.sqrt(w)).astype(U.dtype)[:, None] * ops.conj(U.T))
    ARs = [einsum("ab,bsc,cd->asd", Cinvs[j - 1], ALs[j], Cs[j]) for j in range(n)]
    Cs = [(c / linalg.norm(c)).astype(dt) for c in Cs]
    return ALs, ARs, Cs


# ---------------------------------------------------------------------- environments
# Unit cell of n sites j = 0..n-1 (n = 1: the uniform MPS); bond b joins sites b and b+1
# (mod n) and carries C[b] and the bond Hamiltonian h[b]; AC[j] = AL[j] C[j] = C[j-1] AR[j].
class _Env(NamedTuple):
    G1: list  # G1[b][k, T, y, t]: h~[b] with the AL[b] pair on the left contracted
    G2: list  # G2[b][T, m, t, y]: h~[b] with the AR[b+1] pair on the right contracted
    HL: list  # HL[b][k, b']: all h~ terms left of bond b
    HR: list  # HR[b][b', k]: all h~ terms right of bond b


def _h_left(AL, h):
    """G1[k, T, y, t] = sum conj(AL)[x, s', k] AL[x, s, y] h[s', T, s, t]."""
    t = einsum("xsk,xuy->ksuy", ops.conj(AL), AL)
    return einsum("ksuy,sTut->kTyt", t, h)


def _h_right(AR, h):
    """G2[T, m, t, y] = sum AR[y, s, z] conj(AR)[m, s', z] h[T, s', t, s]."""
    t = einsum("ysz,muz->ysmu", AR, ops.conj(AR))
    return einsum("ysmu,Tuts->Tmty", t, h)


def _block_solve(apply_transfer, rhs, fixed, D, x0, tol):
    """Solve X - E(X) + tr(X fixed) 1 = rhs - tr(rhs fixed) 1 for the block X (D, D)."""
    eye = ops.eye(D, dtype=rhs.dtype, device=rhs.device)
    rhs = rhs - einsum("ab,ba->", rhs, fixed) * eye

    def mv(v):
        x = ops.reshape(v, (D, D))
        y = x - apply_transfer(x) + einsum("ab,ba->", x, fixed) * eye
        return ops.reshape(y, (D * D,))

    op = LinearOperator(mv, (D * D, D * D), rhs.dtype)
    x = linsolve(op, ops.reshape(rhs, (D * D,)), x0=None if x0 is None else
                 ops.reshape(x0, (D * D,)), tol=tol, restart=min(40, D * D), maxiter=1000)
    return ops.reshape(x, (D, D))


def _hermitian_traceless(x, fixed):
    """(x + x^H)/2 with its expectation value in the fixed point removed: the blocks of h~
    then have expectation 0 on every bond, so H_AC and H_C share the eigenvalue 0 at the
    optimum (for n = 1 this only removes the solver's residual)."""
    x = (x + ops.conj(x.T)) / 2
    eye = ops.eye(x.shape[0], dtype=x.dtype, device=x.device)
    return x - einsum("ab,ba->", x, fixed) * eye


def _environment(AL, AR, C, hs, prev, tol):
    """Bond energies e[b] = <AL[b] C[b] AR[b+1]| h[b] |...> and the environments of h~ = h - e.

    HL on the cell boundary (bond n-1) solves ``HL (1 - T_L + |r)(1|) = X_L`` with T_L the
    cell's transfer matrix and X_L the h~ terms of one cell carried to that bond; the other
    bonds follow by ``HL[b] = E_{AL[b]}(HL[b-1]) + hL[b-1]``; HR mirrors it."""
    n, D = len(AL), AL[0].shape[0]
    d = hs[0].shape[0]
    eye4 = ops.reshape(ops.eye(d * d, dtype=hs[0].dtype, device=hs[0].device), (d, d, d, d))
    es, G1, G2, hL, hR = [], [], [], [], []
    for b in range(n):
        nb = (b + 1) % n
        g = _h_left(AL[b], hs[b])
        CAR = einsum("yz,ztw->ytw", C[b], AR[nb])
        e = ops.real(einsum("kTyt,ytw,kTw->", g, CAR, ops.conj(CAR)))
        es.append(float(ops.stop_gradient(e)))
        # h~ = h - e: the effective Hamiltonians then have the same eigenvalue (0 at the
        # optimum), so H_AC(AC) - AL H_C(C) is the tangent-space gradient
        ht = hs[b] - e.astype(hs[b].dtype) * eye4
        G1.append(_h_left(AL[b], ht))
        G2.append(_h_right(AR[nb], ht))
        # two-site blocks: hL[b] on bond b+1 (left identity), hR[b] on bond b-1 (right one)
        hL.append(einsum("kTyt,ytb,kTl->lb", G1[b], AL[nb], ops.conj(AL[nb])))
        hR.append(einsum("Tmty,bty,kTm->bk", G2[b], AR[b], ops.conj(AR[b])))
    r = [c @ ops.conj(c.T) for c in C]  # right fixed points of E_L, as [b, k]
    lfix = [ops.conj(c.T) @ c for c in C]  # left fixed points of E_R, as [k, b]
    last = n - 1

    def left_cell(x, add_terms=False):  # bond n-1 -> sites 0..n-1 -> bond n-1
        for j in range(n):
            x = _left_transfer(x, AL[j])
            if add_terms:
                x = x + hL[j - 1]
        return x

    def right_cell(y, add_terms=False):  # bond n-1 -> sites n-1..0 -> bond n-1
        for j in reversed(range(n)):
            y = _right_transfer(y, AR[j])
            if add_terms:
                y = y + hR[j]
        return y

    zero = ops.zeros((D, D), dtype=hL[0].dtype, device=hL[0].device)
    XL = hL[last] if n == 1 else left_cell(zero, True)
    XR = hR[0] if n == 1 else right_cell(zero, True)
    HL, HR = [None] * n, [None] * n
    HL[last] = _block_solve(left_cell, XL, r[last], D,
                            None if prev is None else prev.HL[last], tol)
    HR[last] = _block_solve(right_cell, XR, lfix[last], D,
                            None if prev is None else prev.HR[last], tol)
    for b in range(n - 1):  # HL[b] = E_{AL[b]}(HL[b-1]) + hL[b-1]
        HL[b] = _left_transfer(HL[b - 1], AL[b]) + hL[b - 1]
    for b in range(n - 2, -1, -1):  # HR[b] = E_{AR[b+1]}(HR[b+1]) + hR[b+1]
        HR[b] = _right_transfer(HR[b + 1], AR[b + 1]) + hR[b + 1]
    HL = [_hermitian_traceless(HL[b], r[b]) for b in range(n)]
    HR = [_hermitian_traceless(HR[b], lfix[b]) for b in range(n)]
    return es, _Env(G1, G2, HL, HR)


def _apply_hac(env, j, AC):
    """H_AC on site j: the bond terms (j-1, j) and (j, j+1) and the blocks beyond them."""
    t1 = einsum("kTyt,ytm->kTm", env.G1[j - 1], AC)
    t2 = einsum("kty,Tmty->kTm", AC, env.G2[j])
    return t1 + t2 + einsum("kb,bTm->kTm", env.HL[j - 1], AC) + einsum(
        "kTb,bm->kTm", AC, env.HR[j])


def _apply_hc(env, j, AR_next, C):
    """H_C on bond j: the bond term (j, j+1) and the blocks on either side."""
    CAR = einsum("yz,ztw->ytw", C, AR_next)
    t = einsum("kTyt,ytw,mTw->km", env.G1[j], CAR, ops.conj(AR_next),
                  optimize=[(0, 1), (0, 1)])
    return t + env.HL[j] @ C + C @ env.HR[j]


def _lowest(apply, x, tol, seed):
    """The lowest eigenvector of ``apply`` (forward only; the local solver of the DMRGs),
    warm-started from ``x``."""
    shape = tuple(x.shape)
    n = int(np.prod(shape))
    _, v, _ = lowest_eigenpair(lambda v: ops.reshape(apply(ops.reshape(v, shape)), (n,)),
                               ops.reshape(ops.stop_gradient(x), (n,)), tol=tol,
                               ncv=min(20, n), maxiter=300, rng=np.random.default_rng(seed))
    v = ops.reshape(v, shape)
    # align the phase with x so AC and C keep their relative phase (AL = polar(AC)
    # polar(C)^H needs it)
    ov = ops.sum(ops.conj(v) * x)
    mag = float(ops.abs(ov))
    return v * (ov / mag).astype(v.dtype) if mag > 0 else v


# ------------------------------------------------------------------------ VUMPS
def _bond_tensor(h, i):
    h = arg.tensor("vumps", "h" if i is None else f"h[{i}]", h)
    where = "" if i is None else f" (bond {i} of the unit cell)"
    if h.ndim == 2:
        d = int(round(math.sqrt(h.shape[0])))
        if d * d != h.shape[0] or h.shape[0] != h.shape[1]:
            raise ShapeError(f"vumps: a bond Hamiltonian matrix must be (d^2, d^2), got shape "
                             f"{tuple(h.shape)}{where}.")
        h = ops.reshape(h, (d, d, d, d))
    if h.ndim != 4 or len(set(h.shape)) != 1:
        raise ShapeError(f"vumps: the bond Hamiltonian must be h[s1', s2', s1, s2] with four "
                         f"equal dimensions d (or a (d^2, d^2) matrix), got shape "
                         f"{tuple(h.shape)}{where}.")
    return h


@arg.checked(D=arg.SIZE, unit_cell=arg.OPTIONAL_SIZE, AL0=arg.optional(_isometries),
             tol=arg.TOL, maxiter=arg.SIZE, seed=arg.SEED, dtype=arg.DTYPE,
             progress=arg.FLAG, callback=arg.FUNCTION)
def vumps(h, D: int, *, unit_cell: int | None = None, AL0=None, tol: float = 1e-10,
          maxiter: int = 500, seed: int = 0, dtype=None, progress=None,
          callback=None) -> VUMPSResult:
    """Ground state of the infinite chain ``H = sum_i h_{i,i+1}`` as a uniform MPS of bond
    dimension ``D`` (see the module docstring).

    ``h``: the bond Hamiltonian h[s1', s2', s1, s2] (or a (d^2, d^2) matrix), Hermitian, e.g.
    ``heisenberg_bond()``, ``tfim_bond(g)``; or a list of n of them, ``h[b]`` acting on sites
    b and b+1 of an n-site unit cell (the last one joins site n-1 to the next cell's site 0).
    ``unit_cell``: the number of sites n of the repeated cell (default: ``len(h)`` for a list,
    else a single site); a single ``h`` is then used on every bond. A cell of n sites can
    represent states that break translation symmetry down to n sites (dimerisation, Neel
    order in the unrotated Heisenberg frame); the update is the parallel one of Zauner-Stauber
    et al. (all AC[j], C[j] from the same environments), which for n = 1 is the single-site
    algorithm.
    ``AL0``: a starting left isometry (D, d, D), or a list of n for a cell (default: random ones
    from ``seed``, independent on each site). Stops when the tangent-space gradient norm (over
    the whole cell) is below ``tol`` (the energy is then accurate to about tol^2) or after
    ``maxiter`` iterations (then with a ``tenferro.errors.ConvergenceWarning`` naming the
    gradient reached; ``tol=0`` runs exactly ``maxiter`` iterations without it).
    ``progress``: a line per iteration (None: global setting), with the energy at full
    precision, dE, |grad|, the gauge error ||AC - AL C||, and an estimate of the iterations
    left; ``callback(record)`` receives the same record each iteration.

    Returns ``VUMPSResult``; its constants live on the device of ``h``. ``energy`` is the
    energy per site (the mean of ``bond_energies``). AL, AR, C, AC are tensors when called with
    a single ``h`` and no ``unit_cell``, else lists of n (``AL[j] C[j] = AC[j] = C[j-1] AR[j]``,
    ``C[j]`` on the bond right of site j), whatever n is."""
    is_cell = unit_cell is not None or isinstance(h, (list, tuple))
    if isinstance(h, (list, tuple)):
        if len(h) == 0:
            raise ShapeError("vumps: h is an empty list; give one bond Hamiltonian per bond of "
                             "the unit cell.")
        if unit_cell is not None and unit_cell != len(h):
            raise ShapeError(f"vumps: unit_cell={unit_cell!r} but h lists {len(h)} bond "
                             f"Hamiltonians; give one per bond of the cell (or a single h).")
        hs = [_bond_tensor(x, i) for i, x in enumerate(h)]
    else:
        hs = [_bond_tensor(h, None)] * (1 if unit_cell is None else unit_cell)
    n = len(hs)
    d = int(hs[0].shape[0])
    if any(int(x.shape[0]) != d for x in hs):
        raise ShapeError(f"vumps: every bond Hamiltonian of the cell must act on the same "
                         f"local dimension d; got shapes {[tuple(x.shape) for x in hs]}.")
    dt = np.dtype(dtype) if dtype is not None else np.result_type(*[x.dtype for x in hs],
                                                                   np.float64)
    if AL0 is not None:
        AL0 = list(AL0) if isinstance(AL0, (list, tuple)) else [AL0] * n
        if len(AL0) != n:
            raise ShapeError(f"vumps: AL0 lists {len(AL0)} tensors for a unit cell of {n} "
                             f"sites.")
        for a in AL0:
            if tuple(a.shape) != (D, d, D):
                raise ShapeError(f"vumps: AL0 must have shape {(D, d, D)} (D, d, D), got "
                                 f"{tuple(a.shape)}.")
        dt = np.result_type(dt, *[a.dtype for a in AL0])
    hs = [x.astype(dt) for x in hs]
    device = hs[0].device
    if AL0 is None:
        rng = np.random.default_rng(seed)
        AL0 = []
        for _ in range(n):
            x = rng.standard_normal((D * d, D))
            if dt.kind == "c":
                x = x + 1j * rng.standard_normal((D * d, D))
            q, _ = linalg.qr(ops.asarray(x.astype(dt), device=device))
            AL0.append(ops.reshape(q, (D, d, D)))
    AL, AR, C = _cell_canonical([a.astype(dt) for a in AL0], 1e-14, seed)
    AC = [einsum("asb,bc->asc", AL[j], C[j]) for j in range(n)]
    t0 = time.perf_counter()
    env, energies, grad, prev_e = None, [], math.inf, math.nan
    converged, it, es = False, 0, []
    with Progress("VUMPS", maxiter, progress, monitor="grad", tol=tol,
                  callback=callback, unit="iteration") as p:
        for it in range(1, maxiter + 1):
            inner = min(1e-6, max(tol * 1e-2, grad * 1e-3)) if math.isfinite(grad) else 1e-6
            es, env = _environment(AL, AR, C, hs, env, inner)
            e = sum(es) / n
            # tangent-space gradient at the current state, over the whole cell
            g2 = gauge2 = 0.0
            for j in range(n):
                hac = _apply_hac(env, j, AC[j])
                hc = _apply_hc(env, j, AR[(j + 1) % n], C[j])
                g2 += float(linalg.norm(hac - einsum("asb,bc->asc", AL[j], hc))) ** 2
                gauge2 += float(linalg.norm(AC[j] - einsum("asb,bc->asc", AL[j],
                                                                 C[j]))) ** 2
            grad = math.sqrt(g2)
            energies.append(e)
            p.update(it, energy=e, dE=e - prev_e if it > 1 else math.nan, grad=grad,
                     gauge_err=math.sqrt(gauge2))
            prev_e = e
            if grad < tol:
                converged = True
                break
            eig_tol = min(1e-6, max(1e-14, grad * 1e-3))
            AC = [_normalize(_lowest(lambda x, j=j: _apply_hac(env, j, x), AC[j], eig_tol,
                                     seed)) for j in range(n)]
            C = [_normalize(_lowest(lambda x, j=j: _apply_hc(env, j, AR[(j + 1) % n], x),
                                    C[j], eig_tol, seed)) for j in range(n)]
            UC = [_polar(c) for c in C]
            AL = [ops.reshape(_polar(ops.reshape(AC[j], (D * d, D))) @ ops.conj(UC[j].T),
                             (D, d, D)) for j in range(n)]
            AR = [ops.reshape(ops.conj(UC[j - 1].T) @ _polar(ops.reshape(AC[j], (D, d * D))),
                             (D, d, D)) for j in range(n)]
    if not converged and tol > 0:
        warn_unconverged(f"vumps: not converged after {it} iterations (maxiter): the "
                         f"tangent-space gradient is {grad:.1e}, above tol={tol:g}. Raise "
                         f"maxiter or loosen tol (the result has converged=False; tol=0 runs "
                         f"exactly maxiter iterations without this warning).")
    out = (AL, AR, C, AC) if is_cell else (AL[0], AR[0], C[0], AC[0])
    return VUMPSResult(e, *out, grad, it, converged, energies, time.perf_counter() - t0,
                       p.records, list(es))
