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
   ``H_C`` (``tenferro.linalg.eigsh``, warm-started, tolerance following the gradient);
4. AL and AR are the best isometries with ``AL C ~ AC ~ C AR``: products of polar factors,
   ``AL = polar(AC) polar(C)^H``, ``AR = polar(C)^H polar(AC)``.

The convergence measure is the norm of the energy gradient in the tangent space,
``||H_AC(AC) - AL H_C(C)||`` (zero exactly at a variational optimum); the energy error is
quadratic in it. Everything is tenferro operations (any backend, real or complex).
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

import tenferro as tf

from ..errors import ShapeError
from ..linalg import LinearOperator, eigsh, linsolve
from .mpo import spin_operators
from .progress import Progress

__all__ = ["VUMPSResult", "heisenberg_bond", "tfim_bond", "uniform_canonical", "vumps"]


class VUMPSResult(NamedTuple):
    """Energy per site, the mixed canonical uniform MPS (AL, AR, C, AC), the tangent-space
    gradient norm reached, iterations, whether it reached ``tol``, the energy after each
    iteration, the wall time in seconds, and the progress records."""

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


# ------------------------------------------------------------------- Hamiltonians
def heisenberg_bond(J: float = 1.0, *, rotate: bool = True, dtype=None, device=None):
    """The Heisenberg bond ``J S_1 . S_2`` (S = sigma/2) as h[s1', s2', s1, s2].

    ``rotate=True`` (default) rotates every second spin by pi about the y axis, giving
    ``J (-Sx Sx + Sy Sy - Sz Sz)`` (real): the same spectrum, and the antiferromagnetic ground
    state (two-site periodic in the original frame) becomes translation invariant, as a
    single-site uniform MPS needs to represent it well."""
    s = spin_operators("spin")
    sign = -1.0 if rotate else 1.0
    h = J * (sign * np.kron(s["Sx"], s["Sx"]) + np.kron(s["Sy"], s["Sy"])
             + sign * np.kron(s["Sz"], s["Sz"]))
    return _bond(h, dtype, device)


def tfim_bond(g: float = 1.0, J: float = 1.0, *, dtype=None, device=None):
    """The transverse-field Ising bond ``-J Z_1 Z_2 - g (X_1 + X_2) / 2`` (Pauli matrices; the
    field is split between the two sites of each bond), critical at g = J."""
    p = spin_operators("pauli")
    h = -J * np.kron(p["Z"], p["Z"]) - g / 2 * (np.kron(p["X"], p["I"])
                                                + np.kron(p["I"], p["X"]))
    return _bond(h, dtype, device)


def _bond(h, dtype, device):
    if np.abs(np.imag(h)).max() == 0:
        h = np.real(h)
    dt = np.dtype(dtype) if dtype is not None else h.dtype
    return tf.asarray(h.astype(dt).reshape(2, 2, 2, 2), device=device)


# --------------------------------------------------------------- small building blocks
def _polar(m):
    """The unitary (isometric) polar factor U V^H of m = U S V^H."""
    u, _, vh = tf.linalg.svd(m)
    return u @ vh


def _normalize(x):
    return x / tf.linalg.norm(x)


def _left_transfer(x, a, b=None):
    """x'[k', b'] = sum conj(B)[k, s, k'] x[k, b] A[b, s, b'] (bra index first)."""
    b = a if b is None else b
    return tf.einsum("kb,bsc,ksl->lc", x, a, tf.conj(b), optimize=[(0, 1), (0, 1)])


def _right_transfer(y, a, b=None):
    """y'[b, k] = sum A[b, s, b'] y[b', k'] conj(B)[k, s, k'] (ket index first)."""
    b = a if b is None else b
    return tf.einsum("bsc,cl,ksl->bk", a, y, tf.conj(b), optimize=[(0, 1), (0, 1)])


def uniform_canonical(AL, *, tol: float = 1e-14, seed: int = 0):
    """From a left isometry AL (D, d, D): (AL, AR, C) with ``AL C = C AR``, AR a right isometry
    and ``||C|| = 1``. C = U sqrt(w) from the right fixed point ``r = U w U^H`` of AL's
    transfer matrix (``tenferro.linalg.eigs``, largest magnitude)."""
    D = AL.shape[0]
    dt = AL.dtype
    op = LinearOperator(lambda v: tf.reshape(_right_transfer(tf.reshape(v, (D, D)), AL),
                                             (D * D,)), (D * D, D * D), dt)
    res = tf.linalg.eigs(op, 1, "LM", tol=tol, seed=seed)
    r = tf.reshape(res.eigenvectors[:, 0], (D, D))
    r = (r + tf.conj(r.T)) / 2
    r = r / tf.einsum("aa->", r)
    if dt.kind != "c":
        r = tf.real(r)
    w, U = tf.linalg.eigh(r)
    w = tf.maximum(w, 0.0)
    C = U * tf.sqrt(w).astype(U.dtype)[None, :]
    Cinv = (1 / tf.sqrt(w)).astype(U.dtype)[:, None] * tf.conj(U.T)
    AR = tf.einsum("ab,bsc,cd->asd", Cinv, AL, C)
    C = C / tf.linalg.norm(C)
    return AL, AR, C.astype(dt)


# ---------------------------------------------------------------------- environments
class _Env(NamedTuple):
    G1: object  # G1[k, T, y, t]: h with the AL pair on the left contracted (site-2 open)
    G2: object  # G2[T, m, t, y]: h with the AR pair on the right contracted (site-1 open)
    HL: object  # HL[k, b]
    HR: object  # HR[b, k]


def _h_left(AL, h):
    """G1[k, T, y, t] = sum conj(AL)[x, s', k] AL[x, s, y] h[s', T, s, t]."""
    t = tf.einsum("xsk,xuy->ksuy", tf.conj(AL), AL)
    return tf.einsum("ksuy,sTut->kTyt", t, h)


def _h_right(AR, h):
    """G2[T, m, t, y] = sum AR[y, s, z] conj(AR)[m, s', z] h[T, s', t, s]."""
    t = tf.einsum("ysz,muz->ysmu", AR, tf.conj(AR))
    return tf.einsum("ysmu,Tuts->Tmty", t, h)


def _block_solve(apply_transfer, rhs, fixed, D, x0, tol):
    """Solve X - E(X) + tr(X fixed) 1 = rhs - tr(rhs fixed) 1 for the block X (D, D)."""
    eye = tf.eye(D, dtype=rhs.dtype, device=rhs.device)
    rhs = rhs - tf.einsum("ab,ba->", rhs, fixed) * eye

    def mv(v):
        x = tf.reshape(v, (D, D))
        y = x - apply_transfer(x) + tf.einsum("ab,ba->", x, fixed) * eye
        return tf.reshape(y, (D * D,))

    op = LinearOperator(mv, (D * D, D * D), rhs.dtype)
    x = linsolve(op, tf.reshape(rhs, (D * D,)), x0=None if x0 is None else
                 tf.reshape(x0, (D * D,)), tol=tol, restart=min(40, D * D), maxiter=1000)
    return tf.reshape(x, (D, D))


def _environment(AL, AR, C, h, prev, tol):
    D = AL.shape[0]
    G1, G2 = _h_left(AL, h), _h_right(AR, h)
    CAR = tf.einsum("yz,ztw->ytw", C, AR)
    e = tf.real(tf.einsum("kTyt,ytw,kTw->", G1, CAR, tf.conj(CAR)))
    # h~ = h - e: the effective Hamiltonians then have the same eigenvalue (0 at the
    # optimum), so H_AC(AC) - AL H_C(C) is the tangent-space gradient
    d = h.shape[0]
    ht = h - e.astype(h.dtype) * tf.reshape(tf.eye(d * d, dtype=h.dtype, device=h.device),
                                            (d, d, d, d))
    G1, G2 = _h_left(AL, ht), _h_right(AR, ht)
    # two-site blocks: hL[k, b] (left identity fixed point), hR[b, k] (right identity)
    hL = tf.einsum("kTyt,ytb,kTl->lb", G1, AL, tf.conj(AL))
    hR = tf.einsum("Tmty,bty,kTm->bk", G2, AR, tf.conj(AR))
    r = C @ tf.conj(C.T)  # right fixed point of E_L, as [b, k]
    lfix = tf.conj(C.T) @ C  # left fixed point of E_R, as [k, b]
    HL = _block_solve(lambda x: _left_transfer(x, AL), hL, r, D,
                      None if prev is None else prev.HL, tol)
    HR = _block_solve(lambda y: _right_transfer(y, AR), hR, lfix, D,
                      None if prev is None else prev.HR, tol)
    HL = (HL + tf.conj(HL.T)) / 2
    HR = (HR + tf.conj(HR.T)) / 2
    return float(tf.stop_gradient(e)), _Env(G1, G2, HL, HR)


def _apply_hac(env, AL, AR, AC):
    t1 = tf.einsum("kTyt,ytm->kTm", env.G1, AC)
    t2 = tf.einsum("kty,Tmty->kTm", AC, env.G2)
    return t1 + t2 + tf.einsum("kb,bTm->kTm", env.HL, AC) + tf.einsum("kTb,bm->kTm", AC,
                                                                         env.HR)


def _apply_hc(env, AL, AR, C):
    CAR = tf.einsum("yz,ztw->ytw", C, AR)
    t = tf.einsum("kTyt,ytw,mTw->km", env.G1, CAR, tf.conj(AR), optimize=[(0, 1), (0, 1)])
    return t + env.HL @ C + C @ env.HR


def _lowest(apply, x, tol, seed):
    shape = tuple(x.shape)
    n = int(np.prod(shape))
    op = LinearOperator(lambda v: tf.reshape(apply(tf.reshape(v, shape)), (n,)), (n, n),
                        x.dtype)
    res = eigsh(op, 1, "SA", v0=tf.reshape(x, (n,)), tol=tol, seed=seed, ncv=min(20, n))
    v = tf.reshape(res.eigenvectors[:, 0], shape)
    # eigsh fixes the phase of the largest entry; align with x instead so AC and C keep
    # their relative phase (AL = polar(AC) polar(C)^H needs it)
    ov = tf.sum(tf.conj(v) * x)
    mag = float(tf.abs(ov))
    return v * (ov / mag).astype(v.dtype) if mag > 0 else v


# ------------------------------------------------------------------------ VUMPS
def vumps(h, D: int, *, AL0=None, tol: float = 1e-10, maxiter: int = 500, seed: int = 0,
          dtype=None, progress=None, callback=None) -> VUMPSResult:
    """Ground state of the infinite chain ``H = sum_i h_{i,i+1}`` as a uniform MPS of bond
    dimension ``D`` (see the module docstring).

    ``h``: the bond Hamiltonian h[s1', s2', s1, s2] (or a (d^2, d^2) matrix), Hermitian, e.g.
    ``heisenberg_bond()``, ``tfim_bond(g)``. ``AL0``: a starting left isometry (D, d, D)
    (default: a random one from ``seed``). Stops when the tangent-space gradient norm is below
    ``tol`` (the energy is then accurate to about tol^2) or after ``maxiter`` iterations.
    ``progress``: a line per iteration (None: global setting), with the energy at full
    precision, dE, |grad|, the gauge error ||AC - AL C||, and an estimate of the iterations
    left; ``callback(record)`` receives the same record each iteration.
    Returns ``VUMPSResult``; its constants live on the device of ``h``."""
    h = tf.asarray(h) if not isinstance(h, tf.Tensor) else h
    if h.ndim == 2:
        d = int(round(math.sqrt(h.shape[0])))
        if d * d != h.shape[0] or h.shape[0] != h.shape[1]:
            raise ShapeError(f"vumps: a bond Hamiltonian matrix must be (d^2, d^2), got shape "
                             f"{tuple(h.shape)}.")
        h = tf.reshape(h, (d, d, d, d))
    if h.ndim != 4 or len(set(h.shape)) != 1:
        raise ShapeError(f"vumps: the bond Hamiltonian must be h[s1', s2', s1, s2] with four "
                         f"equal dimensions d (or a (d^2, d^2) matrix), got shape "
                         f"{tuple(h.shape)}.")
    d = int(h.shape[0])
    if int(D) != D or D < 1:
        raise ShapeError(f"vumps: the bond dimension D must be a positive integer, got {D!r}.")
    D = int(D)
    dt = np.dtype(dtype) if dtype is not None else np.result_type(h.dtype, np.float64)
    if AL0 is not None:
        dt = np.result_type(dt, AL0.dtype)
    h = h.astype(dt)
    device = h.device
    rng = np.random.default_rng(seed)
    if AL0 is None:
        x = rng.standard_normal((D * d, D))
        if dt.kind == "c":
            x = x + 1j * rng.standard_normal((D * d, D))
        q, _ = tf.linalg.qr(tf.asarray(x.astype(dt), device=device))
        AL0 = tf.reshape(q, (D, d, D))
    elif tuple(AL0.shape) != (D, d, D):
        raise ShapeError(f"vumps: AL0 must have shape {(D, d, D)} (D, d, D), got "
                         f"{tuple(AL0.shape)}.")
    AL, AR, C = uniform_canonical(AL0.astype(dt), seed=seed)
    AC = tf.einsum("asb,bc->asc", AL, C)
    t0 = time.perf_counter()
    env, energies, grad, prev_e = None, [], math.inf, math.nan
    converged, it = False, 0
    with Progress("VUMPS", maxiter, progress, monitor="grad", tol=tol,
                  callback=callback) as p:
        for it in range(1, maxiter + 1):
            inner = min(1e-6, max(tol * 1e-2, grad * 1e-3)) if math.isfinite(grad) else 1e-6
            e, env = _environment(AL, AR, C, h, env, inner)
            # tangent-space gradient at the current state
            hac = _apply_hac(env, AL, AR, AC)
            hc = _apply_hc(env, AL, AR, C)
            grad = float(tf.linalg.norm(hac - tf.einsum("asb,bc->asc", AL, hc)))
            energies.append(e)
            gauge = float(tf.linalg.norm(AC - tf.einsum("asb,bc->asc", AL, C)))
            p.update(it, energy=e, dE=e - prev_e if it > 1 else math.nan, grad=grad,
                     gauge_err=gauge)
            prev_e = e
            if grad < tol:
                converged = True
                break
            eig_tol = min(1e-6, max(1e-14, grad * 1e-3))
            AC = _normalize(_lowest(lambda x: _apply_hac(env, AL, AR, x), AC, eig_tol, seed))
            C = _normalize(_lowest(lambda x: _apply_hc(env, AL, AR, x), C, eig_tol, seed))
            UC = _polar(C)
            AL = tf.reshape(_polar(tf.reshape(AC, (D * d, D))) @ tf.conj(UC.T), (D, d, D))
            AR = tf.reshape(tf.conj(UC.T) @ _polar(tf.reshape(AC, (D, d * D))), (D, d, D))
    return VUMPSResult(e, AL, AR, C, AC, grad, it, converged, energies,
                       time.perf_counter() - t0, p.records)
