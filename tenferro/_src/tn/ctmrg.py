"""C4v-symmetric corner-transfer-matrix renormalisation group (CTMRG) for one site tensor.

The infinite square-lattice network of one tensor ``a[u, l, d, r]`` (up, left, down, right;
the double-layer tensor of an iPEPS, or a classical site tensor such as the Ising one) that is
invariant under the point group C4v (90-degree rotations and reflections permuting its legs)
is contracted by an environment of one corner ``C`` (chi x chi, symmetric) and one edge ``T``
(chi x d x chi, symmetric in its two chi legs), the same in all four directions:

    C T T C
    T a a T          one iteration:  M[(b r), (c d)] = C[x y] T[x u b] T[y l c] a[u l d r]
    T a a T                          M = (M + M^T)/2 (symmetric by C4v; made exactly so)
    C T T C                          P = the chi leading singular (= eigen) vectors of M
                                     C' = P^T M P
                                     T'[α r β] = P[x u α] T[x l y] a[u l d r] P[y d β]
                                     C', T' normalised (Frobenius), symmetrised

``P`` comes from a truncated ``tenferro.linalg.svd`` of the symmetric ``M`` by default (its
singular values are |eigenvalues|, so corners with negative eigenvalues are handled), or from
``eigh`` with the eigenvalues ranked by magnitude (``projector="eigh"``). Convergence is
measured on the corner spectrum (the kept singular values of ``M``, normalised by the largest):
the iteration stops when it changes by less than ``tol`` (2-norm), or after ``max_iter``.

Costs per iteration (d = a.shape[0], i.e. D^2 for an iPEPS): O(chi^3 d^2 + chi^2 d^4) for the
contractions (explicit pairwise order below) and O((chi d)^3) for the decomposition.

Everything is written with tenferro operations, so the environment (and anything computed from
it) differentiates with respect to ``a`` by unrolling the iterations: the truncated SVD/eigh
derivatives include the kept/discarded coupling and Lorentzian broadening, so degenerate corner
spectra give finite gradients. ``checkpoint=True`` recomputes each iteration in the backward
pass instead of keeping its residuals (memory per iteration drops from the decomposition's
(chi d)^2 matrices to the carried C and T).

``implicit=True`` differentiates the converged environment instead (``tenferro.fixed_point``):
the forward pass iterates to a fixed point in the environment tensors themselves, made exact
by ``ctm_gauge_fix`` (the SVD leaves the sign of each projector column free, so successive
iterates can differ by T -> S T S, C -> S C S with S = diag(+-1)), and the backward pass
solves the adjoint fixed-point equation of one CTMRG step with GMRES. Memory no longer grows
with the number of iterations, and the derivative is that of the converged environment.

Also here: the classical free energy per site (``ctm_lnz``) and one-site expectation values
(``ctm_site_expectation``) from a converged environment, for single-layer tensors.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from chainrules.dtypes import float64

from .. import linalg, ops
from ..autodiff.checkpoint import checkpoint as remat
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ConcretizationError, DTypeError, ShapeError
from ..fixed_point import fixed_point
from ..progress import warn_unconverged
from . import arguments as arg
from .dispatch import implementation
from .progress import Progress

__all__ = [
    "CTMEnv",
    "corner_spectrum",
    "ctm_gauge_fix",
    "ctm_init",
    "ctm_lnz",
    "ctm_site_expectation",
    "ctmrg",
    "ctmrg_step",
    "multiplet_rank",
]

PROJECTORS = ("svd", "eigh")

# the symmetry group of the square acting on the cyclically ordered legs (u, l, d, r):
# rotations i -> i + k and reflections i -> k - i (mod 4)
C4V = [tuple((i + k) % 4 for i in range(4)) for k in range(4)] + [
    tuple((k - i) % 4 for i in range(4)) for k in range(4)
]


@dataclass(frozen=True)
class CTMEnv:
    """A converged (or last) C4v environment and how it was obtained.

    ``C`` (chi x chi) and ``T`` (chi x d x chi) are tensors (they carry gradients); the rest is
    diagnostic: iterations run, whether the spectrum converged to ``tol``, the last spectrum
    change ``delta`` and the normalised corner spectrum (NumPy, descending, leading = 1).
    """

    C: Tensor
    T: Tensor
    iterations: int = 0
    converged: bool = False
    delta: float = math.nan
    spectrum: np.ndarray | None = field(default=None, repr=False)

    @property
    def chi(self) -> int:
        return int(self.C.shape[0])


# --------------------------------------------------------------------------- checks
def _check_site(op: str, a) -> Tensor:
    a = arg.tensor(op, "the site tensor", a)
    if a.ndim != 4 or len(set(a.shape)) != 1:
        raise ShapeError(
            f"{op}: the site tensor must be a[u, l, d, r] with four legs of equal dimension "
            f"(C4v symmetry); got shape {tuple(a.shape)}."
        )
    if a.dtype.kind == "c":
        raise DTypeError(
            f"{op}: the C4v CTMRG works with a real site tensor (got {a.dtype}); its enlarged "
            "corner must be real symmetric. For an iPEPS, use a real A (the Heisenberg "
            "Hamiltonian in the rotated sublattice basis is real)."
        )
    if a.dtype.kind not in "f":
        a = a.astype(float64)
    return a


def check_c4v(op: str, a, rtol: float = 1e-8) -> None:
    """Raise ``ShapeError`` if the (concrete) tensor ``a[u, l, d, r]`` is not C4v symmetric.

    Skipped silently when ``a`` has no value yet (traced graphs)."""
    try:
        x = np.asarray(ops.stop_gradient(a))  # a check on the value, not part of the function
    except ConcretizationError:
        return
    scale = max(float(np.abs(x).max()), 1e-300)
    rot = np.abs(x - x.transpose(1, 2, 3, 0)).max()  # a[u,l,d,r] = a[l,d,r,u]
    ref = np.abs(x - x.transpose(0, 3, 2, 1)).max()  # a[u,l,d,r] = a[u,r,d,l]
    if max(rot, ref) > rtol * scale:
        raise ShapeError(
            f"{op}: the site tensor is not C4v symmetric (rotation residual {rot / scale:.1e}, "
            f"reflection residual {ref / scale:.1e}, relative). Symmetrise it first, e.g. "
            "with tenferro.tn.symmetrize_c4v for an iPEPS tensor."
        )


def _env_rule(op, name, value):
    """A ``CTMEnv``, or a pair ``(C, T)`` of tensors (or of a type with its own CTMRG, such as
    symmetric tensors)."""
    if value is None or isinstance(value, CTMEnv):
        return value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(x, Tensor) or implementation("ctmrg", x) is not None for x in value):
        C, T = value
        if C.ndim != 2 or T.ndim != 3:
            raise ShapeError(f"{op}: {name} = (C, T) needs a corner C[x, y] and an edge "
                             f"T[x, u, y], got shapes {tuple(C.shape)} and {tuple(T.shape)}.")
        return CTMEnv(C, T)
    raise DTypeError(f"{op}: {name} must be a CTMEnv or a pair (C, T) of tensors, got "
                     f"{arg.describe(value)}.")


def _pair_rule(op, name, value):
    env = _env_rule(op, name, value)
    if env is None:
        raise DTypeError(f"{op}: {name} must be a pair (C, T) of tensors, got None.")
    return env.C, env.T


_SITE = arg.rule(arg.tensor, legs="a[u, l, d, r]")


def c4v_part(a, first: int = 0) -> Tensor:
    """The C4v-symmetric part of ``a[u, l, d, r]`` (legs ``first .. first + 3``; the legs
    before them, e.g. an iPEPS tensor's physical leg, stay): the average of its eight leg
    permutations (rotations and reflections of the square). Linear, so its derivative
    projects a cotangent onto the symmetric subspace.

    The C4v algorithms use one corner and one edge for all four directions, which is right
    only for a symmetric ``a``; they are therefore functions of ``c4v_part(a)``. At a
    symmetric ``a`` the value is unchanged and the gradient is that of the physical quantity
    (symmetric there, as the quantity is invariant under the group), not the projection-free
    derivative of a formula that assumes the symmetry in directions that break it."""
    out, lead = None, tuple(range(first))
    for p in C4V:
        t = ops.transpose(a, lead + tuple(first + i for i in p))
        out = t if out is None else out + t
    return out / len(C4V)


# ---------------------------------------------------------------------------- pieces
def ctm_init(a):
    """The initial environment: the site tensor with its outward legs summed (free boundary
    for a classical model; for a double-layer tensor, the product boundary state of
    all-ones vectors, which is positive). ``C[d, r] = sum_{u,l} a``, ``T[u, r, d] = sum_l a``.
    Both are normalised."""
    a = _check_site("ctm_init", a)
    C = ops.sum(a, axis=(0, 1))
    T = ops.transpose(ops.sum(a, axis=1), (0, 2, 1))
    return C / linalg.norm(C), T / linalg.norm(T)


def _enlarged_corner(a, C, T):
    """M[(b, r), (c, d)] = C[x, y] T[x, u, b] T[y, l, c] a[u, l, d, r] (chi^3 d^2 + chi^2 d^4)."""
    chi, d = T.shape[0], a.shape[0]
    ct = ops.tensordot(C, T, ([0], [0]))  # [y, u, b]
    ctt = ops.tensordot(ct, T, ([0], [0]))  # [u, b, l, c]
    m = ops.tensordot(ctt, a, ([0, 2], [0, 1]))  # [b, c, d, r]
    return ops.reshape(ops.transpose(m, (0, 3, 1, 2)), (chi * d, chi * d))


def _renormalised_edge(a, T, P):
    """T'[α, r, β] = P[x, u, α] T[x, l, y] a[u, l, d, r] P[y, d, β] (chi^3 d^2 + chi^2 d^4)."""
    pt = ops.tensordot(P, T, ([0], [0]))  # [u, α, l, y]
    pta = ops.tensordot(pt, a, ([0, 2], [0, 1]))  # [α, y, d, r]
    return ops.tensordot(pta, P, ([1, 2], [0, 1]))  # [α, r, β]


def _values(op, name, value) -> np.ndarray:
    """A 1-d array of real numbers (a spectrum)."""
    try:
        v = np.asarray(ops.stop_gradient(value) if isinstance(value, Tensor) else value,
                       dtype=np.float64)
    except (TypeError, ValueError):
        v = None
    if v is None or v.ndim != 1:
        raise ShapeError(f"{op}: {name} must be a 1-d array of real numbers, got "
                         f"{arg.describe(value)}.")
    return v


@arg.checked(s=_values, chi=arg.SIZE, multiplet_tol=arg.TOL)
def multiplet_rank(s: np.ndarray, chi: int, multiplet_tol: float) -> int:
    """The largest k <= chi such that the k-th and (k+1)-th values of the descending ``s``
    differ by more than ``multiplet_tol`` relative to the k-th: truncation then never splits a
    (near-)degenerate multiplet (keeps at least one value)."""
    k = min(int(chi), s.size)
    while 1 < k < s.size and s[k - 1] - s[k] <= multiplet_tol * s[k - 1]:
        k -= 1
    return k


def _concrete(x, what: str):
    try:
        return np.asarray(ops.stop_gradient(x), dtype=np.float64)
    except ConcretizationError as e:
        raise ConcretizationError(
            f"ctmrg: {what} needs the values of the spectrum, which a traced graph does not "
            "have; under jit use projector='svd' with multiplet_tol=None and tol=None."
        ) from e


def _projector(M, chi: int, projector: str, multiplet_tol):
    """(P, kept spectrum, C') for the symmetric matrix M."""
    if projector == "svd":
        if multiplet_tol is None:
            U, S, _ = linalg.svd(M, max_rank=chi)
        else:
            U, S, _ = linalg.svd(M)
            k = multiplet_rank(_concrete(S, "multiplet_tol"), chi, multiplet_tol)
            U, S = U[:, :k], S[:k]
        return U, S, U.T @ (M @ U)
    w, V = linalg.eigh(M)
    mags = np.abs(_concrete(w, "projector='eigh' (ranking eigenvalues by magnitude)"))
    order = np.argsort(-mags, kind="stable")
    k = min(chi, mags.size)
    if multiplet_tol is not None:
        k = multiplet_rank(mags[order], chi, multiplet_tol)
    keep = order[:k]
    wk = ops.take(w, keep)
    return ops.take(V, keep, axis=1), ops.abs(wk), ops.diag(wk)


@arg.checked(a=_SITE, C=arg.rule(arg.tensor, legs="C[x, y]"),
             T=arg.rule(arg.tensor, legs="T[x, u, y]"), chi=arg.SIZE,
             projector=arg.rule(arg.choice, options=PROJECTORS),
             multiplet_tol=arg.OPTIONAL_TOL)
def ctmrg_step(a, C, T, chi: int, projector: str = "svd", multiplet_tol: float | None = None):
    """One C4v CTMRG iteration; returns ``(C', T', s)`` with ``s`` the kept spectrum of the
    enlarged corner (descending), normalised by its largest value. ``multiplet_tol``: keep
    fewer than ``chi`` values rather than split a multiplet (``multiplet_rank``)."""
    M = _enlarged_corner(a, C, T)
    M = (M + M.T) / 2
    P, s, Cn = _projector(M, chi, projector, multiplet_tol)
    k = P.shape[1]
    P = ops.reshape(P, (T.shape[0], a.shape[0], k))
    Tn = _renormalised_edge(a, T, P)
    Cn = (Cn + Cn.T) / 2
    Tn = (Tn + ops.transpose(Tn, (2, 1, 0))) / 2
    return Cn / linalg.norm(Cn), Tn / linalg.norm(Tn), s / ops.max(s)


@arg.checked(C=arg.rule(arg.tensor, legs="C[x, y]"))
def corner_spectrum(C) -> np.ndarray:
    """Singular values of the corner, descending, normalised by the largest (NumPy)."""
    s = np.linalg.svd(np.asarray(ops.stop_gradient(C)), compute_uv=False)
    return s / s[0]


def _distance(s, prev) -> float:
    n = max(s.size, prev.size)
    return float(np.linalg.norm(np.pad(s, (0, n - s.size)) - np.pad(prev, (0, n - prev.size))))


def _multiplets(c: np.ndarray, rtol: float) -> list[np.ndarray]:
    """Consecutive index blocks of (near-)equal corner values |C| (row norms of the
    block-diagonal corner, descending as the SVD orders them)."""
    r = np.linalg.norm(c, axis=1)
    scale = max(float(r.max()), 1e-300)
    blocks, start = [], 0
    for i in range(1, r.size + 1):
        if i == r.size or abs(r[i] - r[i - 1]) > rtol * scale:
            blocks.append(np.arange(start, i))
            start = i
    return blocks


def _polar(m: np.ndarray) -> np.ndarray:
    w, _, zt = np.linalg.svd(m)
    return w @ zt


def _gauge_matrix(t_new: np.ndarray, t_old: np.ndarray, c_old: np.ndarray,
                  rtol: float = 1e-7) -> np.ndarray:
    """The orthogonal U, block diagonal over the corner's multiplets, with
    T'[:, r, :] ~ U T[:, r, :] U^T. The leading block is the reference (U = 1 there); each
    further block is aligned to all blocks already known by orthogonal Procrustes:
    U_c = polar(sum_{a known, r} T'_r[a, c]^T U_a T_r[a, c]). For one-dimensional blocks this
    is a sign; for a degenerate multiplet it fixes the rotation the SVD leaves free."""
    chi = t_new.shape[0]
    blocks = _multiplets(c_old, rtol)
    U = np.zeros((chi, chi))
    U[np.ix_(blocks[0], blocks[0])] = np.eye(blocks[0].size)
    # m[c] = sum over known blocks a of T'_r[a, c]^T U_a T_r[a, c], accumulated as blocks
    # become known: one (chi x chi) contraction per block, O(chi^3 d) in all
    ms = {bi: np.zeros((blocks[bi].size,) * 2) for bi in range(1, len(blocks))}

    def learn(a):
        full = np.einsum("arx,ab,bry->xy", t_new[a], U[np.ix_(a, a)], t_old[a])
        for bi in ms:
            c = blocks[bi]
            ms[bi] += full[np.ix_(c, c)]

    learn(blocks[0])
    while ms:
        best = max(ms, key=lambda bi: np.linalg.norm(ms[bi]))
        m = ms.pop(best)
        c = blocks[best]
        U[np.ix_(c, c)] = _polar(m) if np.linalg.norm(m) > 0 else np.eye(c.size)
        learn(c)
    return U


@arg.checked(new=_pair_rule, old=_pair_rule)
def ctm_gauge_fix(new, old):
    """``new = (C', T')`` brought into the gauge of ``old = (C, T)``: C' -> U^T C' U,
    T'[:, r, :] -> U^T T'[:, r, :] U with U orthogonal and block diagonal over the corner's
    multiplets (signs for non-degenerate values, rotations inside degenerate multiplets,
    which the SVD leaves free), computed from the values as a constant (``_gauge_matrix``).
    At a converged environment this makes one CTMRG step an exact fixed point, which
    ``tenferro.fixed_point`` needs (convergence test and adjoint equation)."""
    (Cn, Tn), (Co, To) = new, old
    if tuple(Cn.shape) != tuple(Co.shape) or tuple(Tn.shape) != tuple(To.shape):
        return new
    what = "the gauge fix (implicit=True)"
    U = _gauge_matrix(_concrete(Tn, what), _concrete(To, what), _concrete(Co, what))
    U = ops.asarray(U.astype(np.dtype(Tn.dtype)), device=Tn.device)
    Cg = U.T @ Cn @ U
    Tg = einsum("ai,arb,bj->irj", U, Tn, U)
    return (Cg + Cg.T) / 2, (Tg + ops.transpose(Tg, (2, 1, 0))) / 2


def _ctmrg_implicit(a, C, T, chi, max_iter, tol, projector, p):
    """The fixed point of one CTMRG step, differentiated implicitly. Warm-up iterations on
    ``stop_gradient(a)`` first let chi grow to its final value (the fixed-point map must keep
    its shapes) and converge the corner spectrum to ``tol`` (cheap plain steps, no gauge fix);
    the gauge-fixed fixed-point iteration then only polishes the tensors. The fixed point does
    not depend on where it starts."""
    if tol is None:
        raise ShapeError("ctmrg: implicit=True needs a convergence tolerance (tol); it "
                         "differentiates the converged environment.")
    a0 = ops.stop_gradient(a)
    C, T = ops.stop_gradient(C), ops.stop_gradient(T)
    warm, prev = 0, None
    while warm < max(1, max_iter // 2):  # leave the fixed point at least half
        Cn, Tn, s = arg.unchecked(ctmrg_step)(a0, C, T, chi, projector)
        warm += 1
        grew = Cn.shape[0] != C.shape[0]
        C, T = Cn, Tn
        sv = _concrete(s, "implicit=True")
        delta = _distance(sv, prev) if prev is not None else math.nan
        done = not grew and prev is not None and delta < tol
        prev = sv
        p.update(warm, chi=C.shape[0], delta=delta)
        if done:
            break

    def step(env, site):
        Cn, Tn, _ = arg.unchecked(ctmrg_step)(site, env[0], env[1], chi, projector)
        return Cn, Tn

    last = {"hist": []}

    def spectrum_stalled(new, old):
        # a chi that cuts a multiplet leaves the tensors rotating at the level of the
        # splitting: then stop once the corner spectrum is converged to tol and has stopped
        # improving (the tensors, whose error is the square root of the spectrum's, are
        # otherwise iterated to tol themselves)
        sn, so = corner_spectrum(new[0]), corner_spectrum(old[0])
        last["delta"] = d = _distance(sn, so)
        h = last["hist"]
        h.append(d)
        p.update(warm + len(h), chi=new[0].shape[0], delta=d)
        return len(h) > 3 and d < tol and min(h[-4:-1]) < 2 * d

    (C, T), info = fixed_point(step, (C, T), a, tol=tol, maxiter=max(1, max_iter - warm),
                                  gauge_fix=arg.unchecked(ctm_gauge_fix),
                                  converged=spectrum_stalled, return_info=True)
    its = warm + (info.iterations if info is not None else 0)
    delta = last.get("delta", math.nan)
    converged = bool(info is not None and info.converged)
    return CTMEnv(C, T, its, converged, delta, corner_spectrum(C))



@arg.checked(chi=arg.SIZE, max_iter=arg.SIZE, tol=arg.OPTIONAL_TOL, env=_env_rule,
             projector=arg.rule(arg.choice, options=PROJECTORS),
             multiplet_tol=arg.OPTIONAL_TOL, checkpoint=arg.FLAG, implicit=arg.FLAG,
             progress=arg.FLAG, check_symmetry=arg.FLAG, callback=arg.FUNCTION)
def ctmrg(a, chi: int, *, max_iter: int = 100, tol: float | None = 1e-10, env=None,
          projector: str = "svd", multiplet_tol: float | None = None,
          checkpoint: bool = False, implicit: bool = False, progress=None,
          check_symmetry: bool = True,
          callback: Callable[[dict], object] | None = None) -> CTMEnv:
    """Converge the C4v corner-transfer-matrix environment of ``a[u, l, d, r]``, differentiably.

    The corner transfer matrix renormalisation group (Nishino-Okunishi, in the C4v
    single-site form): one corner ``C`` and one edge ``T`` of bond dimension ``chi``
    approximate the infinite square-lattice network of ``a`` around one site. Local
    quantities then follow (``ctm_lnz``, ``ctm_site_expectation``, iPEPS energies in
    ``tenferro.tn.peps``), and so do their gradients with respect to ``a``: unrolled through
    the iterations (optionally checkpointed) or implicitly at the fixed point.

    Parameters
    ----------
    a : Tensor
        The real site tensor ``a[u, l, d, r]``, four legs of equal dimension, C4v symmetric
        (to 1e-8 relative): e.g. ``tenferro.tn.ising_tensor(beta)`` or the double-layer
        tensor of an iPEPS (``tenferro.tn.double_layer``). A
        ``tenferro.symmetric.SymmetricTensor`` with self-dual charges (e.g. Z2) runs the
        block-sparse C4v CTMRG (with ``max_iter``, ``tol``, ``env``, ``progress``,
        ``callback``).
    chi : int
        The environment's bond dimension.
    max_iter : int, optional
        The most iterations (default 100).
    tol : float or None, optional
        Stop when the normalised corner spectrum changes by less than ``tol`` (2-norm;
        default 1e-10). ``None`` always runs ``max_iter`` (needed under ``jit``, where values
        are unknown while tracing); ``0`` also runs ``max_iter`` without a warning.
    env : CTMEnv or (C, T), optional
        A warm start (default ``ctm_init(a)``). Its own dependence on ``a`` is whatever its
        tensors carry: start from None for exact gradients.
    projector : {"svd", "eigh"}, optional
        How the enlarged corner is truncated ("eigh": eigenvalues ranked by magnitude).
    multiplet_tol : float, optional
        Truncating inside a (near-)degenerate multiplet of the corner spectrum makes the
        environment gauge-dependent and stalls convergence at the level of the splitting;
        with e.g. 1e-6 fewer than ``chi`` values are kept instead (chi may then vary).
    checkpoint : bool, optional
        Recompute each iteration in the backward pass (memory O(chi^2 d) per iteration
        instead of O(chi^2 d^2)).
    implicit : bool, optional
        Differentiate the converged environment implicitly (``tenferro.fixed_point`` with
        ``ctm_gauge_fix``; memory independent of the number of iterations; ``tol`` then
        bounds the relative change of C and T per iteration, and ``checkpoint`` and
        ``multiplet_tol`` do not apply).
    progress : bool, optional
        Print a line per iteration (None: the global setting).
    check_symmetry : bool, optional
        Check that ``a`` is C4v symmetric (default True).
    callback : callable, optional
        ``callback(record)`` receives every iteration's record: ``chi``, ``delta`` (the
        corner-spectrum change, NaN on the first iteration; absent with ``tol=None``),
        ``step_time`` and ``steps_left``.

    Returns
    -------
    CTMEnv
        ``C`` (chi x chi) and ``T`` (chi x d x chi) as tensors that carry gradients, and
        diagnostics: ``iterations``, ``converged``, ``delta`` and the normalised corner
        spectrum.

    Raises
    ------
    tenferro.errors.ShapeError
        ``a`` is not a four-leg tensor of equal dimensions or not C4v symmetric (symmetrise
        it, e.g. ``tenferro.tn.symmetrize_c4v``); ``env`` does not fit ``a`` and ``chi``;
        ``implicit=True`` without ``tol``.
    tenferro.errors.DTypeError
        A complex site tensor (the C4v corner must be real symmetric), or ``env`` not a
        ``CTMEnv`` or a pair of tensors.
    tenferro.errors.ConcretizationError
        Under ``jit``, an option that needs the spectrum's values (``multiplet_tol``,
        ``projector="eigh"``, a ``tol``).

    Warns
    -----
    tenferro.errors.ConvergenceWarning
        ``max_iter`` reached with ``tol > 0`` unmet (naming the change reached).

    Notes
    -----
    The environment is that of ``c4v_part(a)`` (equal to ``a`` within the symmetry check),
    so derivatives with respect to ``a`` are those of the C4v-symmetric network, projected
    onto the symmetric subspace. Unrolled derivatives go through every truncated
    decomposition (``tenferro.linalg.svd``/``eigh`` conventions at degeneracies); implicit
    ones solve the fixed-point equation of the gauge-fixed step.

    Each iteration is one ``ctmrg_step``; the convergence measure, the stopping rule and
    the diagnostics are those described for ``tol``, ``max_iter`` and ``callback`` above.

    Examples
    --------
    ln Z per site of the 2D Ising model at beta = 0.3, against Onsager's solution, and the
    internal energy by AD through the converged environment:

    >>> import tenferro as tf
    >>> from tenferro.tn import exact
    >>> a = tf.tn.ising_tensor(0.3)
    >>> env = tf.tn.ctmrg(a, chi=8, progress=False)
    >>> env.converged
    True
    >>> abs(float(tf.tn.ctm_lnz(a, env)) - exact.onsager_lnz(0.3)) < 1e-8
    True
    >>> def lnz(beta):
    ...     a = tf.tn.ising_tensor(beta)
    ...     return tf.tn.ctm_lnz(a, tf.tn.ctmrg(a, chi=8, max_iter=40, tol=None,
    ...                                         progress=False))
    >>> abs(-float(tf.grad(lnz)(0.3)) - exact.onsager_energy(0.3)) < 1e-6
    True
    """
    # ---- other tensor types (symmetric site tensors: the block-sparse C4v CTMRG)
    impl = implementation("ctmrg", a)
    if impl is not None:
        return impl(a, chi, max_iter=max_iter, tol=tol, env=env, progress=progress,
                              projector=projector, multiplet_tol=multiplet_tol,
                              checkpoint=checkpoint, implicit=implicit, callback=callback)
    # ---- dense site tensors
    a = _check_site("ctmrg", a)
    if check_symmetry:
        check_c4v("ctmrg", a)
    a = c4v_part(a)
    if env is None:
        C, T = ctm_init(a)
    else:
        C, T = (env.C, env.T) if isinstance(env, CTMEnv) else env
        if tuple(T.shape[1:2]) != (a.shape[0],) or C.shape[0] != T.shape[0]:
            raise ShapeError(f"ctmrg: env (C {tuple(C.shape)}, T {tuple(T.shape)}) does not "
                             f"fit the site tensor {tuple(a.shape)}: T[x, u, y] needs "
                             f"dim u = {a.shape[0]} and C the dimension of x.")
    if implicit:
        if multiplet_tol is not None:
            raise ShapeError("ctmrg: implicit=True keeps chi fixed at the fixed point; it "
                             "cannot be combined with multiplet_tol.")
        with Progress("CTMRG", max_iter, progress, monitor="delta", tol=tol,
                      callback=callback, unit="iteration") as p:
            return _ctmrg_implicit(a, C, T, chi, max_iter, tol, projector, p)
    step = functools.partial(arg.unchecked(ctmrg_step), chi=chi, projector=projector,
                             multiplet_tol=multiplet_tol)
    if checkpoint:
        step = remat(step)
    env, s = iterate_c4v(lambda C, T: step(a, C, T), C, T, max_iter, tol, progress, callback,
                     lambda s: _concrete(s, "the convergence test (tol; pass tol=None to run "
                                            "max_iter)"))
    if env.spectrum is None:  # tol=None: report the last spectrum when it has values
        try:
            env = dataclasses.replace(env, spectrum=np.asarray(ops.stop_gradient(s),
                                                               dtype=np.float64))
        except ConcretizationError:
            pass
    return env


def iterate_c4v(step, C, T, max_iter: int, tol, progress, callback, values):
    """Run ``C, T, s = step(C, T)`` until the corner spectrum ``values(s)`` (host floats,
    descending) changes by less than ``tol`` (``tol=None``: exactly ``max_iter`` steps),
    reporting each step to the progress line / ``callback``, and warning if ``tol > 0`` is
    not met within ``max_iter``. Shared by the dense and the symmetric C4v CTMRG. Returns
    ``(CTMEnv, last s)``."""
    prev, delta, converged, it, s = None, math.nan, False, 0, None
    watch = dict(fixed=True) if tol is None else dict(monitor="delta", tol=tol)
    with Progress("CTMRG", max_iter, progress, callback=callback, unit="iteration",
                  **watch) as p:
        for it in range(1, max_iter + 1):
            C, T, s = step(C, T)
            if tol is None:
                p.update(it, chi=C.shape[0])
                continue
            sv = values(s)
            if prev is not None:
                delta = _distance(sv, prev)
            prev = sv
            p.update(it, chi=C.shape[0], delta=delta)
            if delta < tol:
                converged = True
                break
    if tol is not None and tol > 0 and not converged:
        warn_unconverged(f"ctmrg: not converged after {it} iterations (max_iter): the corner "
                         f"spectrum changed by {delta:.1e} in the last one, above tol={tol:g}. "
                         f"Raise max_iter or loosen tol (env.converged is False; tol=None "
                         f"runs exactly max_iter iterations without this warning).")
    return CTMEnv(C, T, it, converged, delta, prev), s


# ------------------------------------------------------------------ observables
def _column(C, T):
    """The left column C T C: L[q, k, s] = C[p, q] T[p, k, r] C[r, s]."""
    ct = ops.tensordot(C, T, ([0], [0]))  # [q, k, r]
    return ops.tensordot(ct, C, ([2], [0]))  # [q, k, s]


def _site_network(a, C, T):
    """<a> in the 3x3 environment (one site surrounded by 4 C and 4 T), for a tensor
    ``a[u, l, d, r]`` of the environment's bond dimension (chi^3 d^2 + chi^2 d^3)."""
    L = _column(C, T)  # [q, k, s]
    x = ops.tensordot(L, T, ([0], [0]))  # [k, s, u, q']
    x = ops.tensordot(x, T, ([1], [0]))  # [k, u, q', d, s']
    x = ops.tensordot(x, a, ([0, 1, 3], [1, 0, 2]))  # [q', s', r]
    return einsum("qsr,qrs->", x, L)


@arg.checked(a=_SITE, a_op=_SITE, env=_pair_rule)
def ctm_site_expectation(a, a_op, env) -> Tensor:
    """``<a_op> / <a>``: the one-site impurity ``a_op`` (e.g. the Ising tensor weighted by the
    spin) in place of one ``a`` of the converged network."""
    C, T = env
    return _site_network(a_op, C, T) / _site_network(a, C, T)


@arg.checked(a=_SITE, env=_pair_rule)
def ctm_lnz(a, env) -> Tensor:
    """ln Z per site of the network of ``a`` from its converged C4v environment:
    ln kappa = ln Z_site + ln Z_corners - 2 ln Z_edge, with Z_site the 3x3 network (one a,
    four C, four T), Z_corners = Tr C^4 and Z_edge the 2x3 network C T C / C T C. The ratio is
    independent of how C and T are normalised."""
    C, T = env
    L = _column(C, T)
    z_edge = ops.sum(L * L)
    cc = C @ C
    z_corner = ops.sum(cc * cc.T)
    return ops.log(_site_network(a, C, T)) + ops.log(z_corner) - 2 * ops.log(z_edge)
