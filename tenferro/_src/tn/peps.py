"""Implementation of ``tenferro.tn.peps`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np

from chainrules.dtypes import float64

from .. import linalg, ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import arguments as arg
from .ctmrg import CTMEnv, _column, _enlarged_corner, _pair_rule, c4v_part, ctmrg
from .mpo import heisenberg_bond, spin_operators

__all__ = [
    "QMC_ENERGY",
    "D2_REFERENCE_ENERGY",
    "J1J2_D2_REFERENCE_ENERGY",
    "J1J2_D3_REFERENCE_ENERGY",
    "bond_energy",
    "diagonal_rdm",
    "double_layer",
    "heisenberg_energy",
    "j1j2_energy",
    "neel_peps",
    "one_site_rdm",
    "random_c4v_peps",
    "staggered_magnetization",
    "symmetrize_c4v",
    "two_site_rdm",
]

#: Energy per site of the square-lattice S=1/2 Heisenberg antiferromagnet (J = 1) from quantum
#: Monte Carlo, extrapolated to the thermodynamic limit: -0.669437(5), A. W. Sandvik,
#: Phys. Rev. B 56, 11678 (1997).
QMC_ENERGY = -0.669437

#: Optimal energy per site of the single-site C4v-symmetric D=2 iPEPS (same ansatz as Liao,
#: Liu, Wang, Xiang, PRX 9, 031041 (2019)): -0.6602310934799582 (converged in chi), m = 0.39112,
#: from the published D=2 state of J. Hasik, D. Poilblanc, F. Becca, SciPost Phys. 10, 012
#: (2021) (dataset github.com/jurajHasik/j1j2_ipeps_states, J2 = 0, D = 2).
D2_REFERENCE_ENERGY = -0.6602310934799582

#: J1-J2 model at J2/J1 = 0.5: energy per site of the optimal single-site C4v-symmetric iPEPS
#: (the ansatz here) at D=2, -0.4703924326146889 (chi_obs = 32 ... 192 agree to 1e-16), from
#: the published states of J. Hasik's dataset github.com/jurajHasik/j1j2_ipeps_states
#: (single-site_pg-C4v-A1/j20.5/state_1s_A1_j20.5_D2_chi_opt48.dat; companion data of
#: Hasik, Poilblanc, Becca, SciPost Phys. 10, 012 (2021)).
J1J2_D2_REFERENCE_ENERGY = -0.4703924326146889

#: The same at D=3: -0.49105775959620757 at chi_obs = 216 (-0.4910464098 at chi 27,
#: -0.4910575406 at chi 54), same dataset (state_1s_A1_j20.5_D3_chi_opt72.dat).
J1J2_D3_REFERENCE_ENERGY = -0.49105775959620757

def _check_peps(op: str, A) -> Tensor:
    A = arg.tensor(op, "A", A)
    if A.ndim != 5 or len(set(A.shape[1:])) != 1:
        raise ShapeError(
            f"{op}: an iPEPS tensor is A[s, u, l, d, r] with four virtual legs of equal "
            f"dimension D; got shape {tuple(A.shape)}."
        )
    if A.dtype.kind not in "fc":
        A = A.astype(float64)
    return A


def symmetrize_c4v(A) -> Tensor:
    """Project ``A[s, u, l, d, r]`` onto the C4v-invariant subspace: the average of its eight
    leg permutations (rotations and reflections of the square). Linear, so gradients flow."""
    return c4v_part(_check_peps("symmetrize_c4v", A), first=1)


def _c4v_state(op: str, A) -> Tensor:
    """``A`` checked and projected onto the C4v-symmetric subspace: what every function
    here that assumes the symmetry computes with (see the module docstring)."""
    return c4v_part(_check_peps(op, A), first=1)


def double_layer(A) -> Tensor:
    """``a[(u u'), (l l'), (d d'), (r r')] = sum_s A[s,u,l,d,r] conj(A[s,u',l',d',r'])``."""
    A = _check_peps("double_layer", A)
    D = A.shape[1]
    a = ops.tensordot(A, ops.conj(A), ([0], [0]))  # [u, l, d, r, u', l', d', r']
    a = ops.transpose(a, (0, 4, 1, 5, 2, 6, 3, 7))
    return ops.reshape(a, (D * D,) * 4)


# ---------------------------------------------------------------- reduced density matrices
def _half(A, C, T):
    """The left half of the 2x1 network with the site's physical legs and right legs open:
    ``H[q, t, s, r, s', r']`` (q/t: top/bottom environment links to the right; s, r ket and
    s', r' bra). Cost O(chi^3 D^4 + chi^2 D^8 p) with an explicit pairwise order."""
    D = A.shape[1]
    chi = C.shape[0]
    L = _column(C, T)  # [q, k, s]
    x = ops.tensordot(L, T, ([0], [0]))  # [k, s, u, q']
    x = ops.tensordot(x, T, ([1], [0]))  # [k, u, q', d, s']
    x = ops.reshape(x, (D, D, D, D, chi, D, D, chi))  # [l, l', u, u', q', d, d', s']
    x = ops.tensordot(x, A, ([0, 2, 5], [2, 1, 3]))  # [l', u', q', d', s', s1, r]
    x = ops.tensordot(x, ops.conj(A), ([0, 1, 3], [2, 1, 3]))  # [q', s', s1, r, s1', r']
    return x, L


def two_site_rdm(A, env: CTMEnv) -> Tensor:
    """Normalised reduced density matrix of two horizontally adjacent sites,
    ``rho[s1, s2, s1', s2'] = <s1 s2|rho|s1' s2'>`` (trace 1)."""
    A = _c4v_state("two_site_rdm", A)
    C, T = _pair_rule("two_site_rdm", "env", env)
    h, _ = _half(A, C, T)
    # the right half is the mirror image of the left one (C4v): same tensor
    rho = einsum("qtarbz,qtcrdz->acbd", h, h)
    return rho / einsum("abab->", rho)


def one_site_rdm(A, env: CTMEnv) -> Tensor:
    """Normalised one-site reduced density matrix ``rho[s, s']`` (trace 1)."""
    A = _c4v_state("one_site_rdm", A)
    C, T = _pair_rule("one_site_rdm", "env", env)
    D = A.shape[1]
    h, L = _half(A, C, T)
    L = ops.reshape(L, (L.shape[0], D, D, L.shape[2]))  # [q, r, r', t]
    rho = einsum("qtarbz,qrzt->ab", h, L)
    return rho / einsum("aa->", rho)


def _open_site(A) -> Tensor:
    """The double-layer tensor with the physical legs open:
    ``a[(u u'), (l l'), (d d'), (r r'), s, s']`` (ket first, as in ``double_layer``)."""
    D, p = A.shape[1], A.shape[0]
    a = ops.tensordot(A, ops.conj(A), 0)  # [s, u, l, d, r, s', u', l', d', r']
    a = ops.transpose(a, (1, 6, 2, 7, 3, 8, 4, 9, 0, 5))
    return ops.reshape(a, (D * D,) * 4 + (p, p))


def diagonal_rdm(A, env: CTMEnv) -> Tensor:
    """Normalised reduced density matrix of two next-nearest-neighbour (diagonal) sites,
    ``rho[s1, s2, s1', s2'] = <s1 s2|rho|s1' s2'>`` (trace 1), from the 2x2 plaquette:
    four enlarged corners (``C T T a``) in a ring, the two on one diagonal with their
    physical legs open. With C4v symmetry every enlarged corner is the same symmetric
    matrix M (``ctmrg``'s), so rho = Tr(M_open M M_open M) / Tr(M^4); both diagonals are
    equivalent. Cost O(chi^3 D^4 p^2 + chi^2 D^8 p^2) for the open corner and
    O((chi D^2)^3 p^4) for the ring.

    In the sublattice-rotated frame of ``heisenberg_bond`` both diagonal sites belong to the
    same sublattice, so S_1.S_2 keeps its plain form there (``heisenberg_bond(rotate=False)``)."""
    A = _c4v_state("diagonal_rdm", A)
    C, T = _pair_rule("diagonal_rdm", "env", env)
    chi, D2, p = C.shape[0], A.shape[1] ** 2, A.shape[0]
    ao = _open_site(A)
    a = einsum("uldrss->uldr", ao)
    M = _enlarged_corner(a, C, T)  # [(b r), (c d)], symmetric by C4v
    M = (M + M.T) / 2
    # the open corner: M_open[(b r), (c d), s, s']
    ct = ops.tensordot(C, T, ([0], [0]))  # [y, u, b]
    ctt = ops.tensordot(ct, T, ([0], [0]))  # [u, b, l, c]
    mo = ops.tensordot(ctt, ao, ([0, 2], [0, 1]))  # [b, c, d, r, s, s']
    mo = ops.reshape(ops.transpose(mo, (0, 3, 1, 2, 4, 5)), (chi * D2, chi * D2, p, p))
    mo = (mo + ops.transpose(mo, (1, 0, 2, 3))) / 2
    half = ops.tensordot(mo, M, ([1], [0]))  # [x, s, s', z] = (M_open M)[x, z]
    rho = einsum("xabz,zcdx->acbd", half, half)  # [s1, s2, s1', s2']
    return rho / einsum("abab->", rho)


@arg.checked(J2=arg.NUMBER, J1=arg.NUMBER)
def j1j2_energy(A, env: CTMEnv, J2: float, J1: float = 1.0) -> Tensor:
    """Energy per site of the J1-J2 Heisenberg model H = J1 sum_<ij> S_i.S_j +
    J2 sum_<<ij>> S_i.S_j in the C4v iPEPS ``A`` (sublattice-rotated, see the module
    docstring) with the environment ``env`` of ``double_layer(A)`` (``ctmrg``): two
    nearest-neighbour bonds per site (``two_site_rdm``, rotated bond operator) and two
    diagonal bonds per site (``diagonal_rdm``, plain S.S: same sublattice).
    ``J2 = 0`` gives exactly ``2 * bond_energy(A, env, heisenberg_bond(J1))``, the
    nearest-neighbour Heisenberg energy of ``heisenberg_energy``.
    Differentiable in A (and in the environment's tensors)."""
    e = 2 * bond_energy(A, env, heisenberg_bond(J1))
    rho = diagonal_rdm(A, env)
    ss = ops.asarray(heisenberg_bond(1.0, rotate=False), dtype=rho.dtype,
                    device=rho.device)
    return e + 2 * J2 * einsum("abcd,cdab->", rho, ss)


@arg.checked(h=arg.rule(arg.tensor, legs="h[s1, s2, s1', s2']"))
def bond_energy(A, env: CTMEnv, h) -> Tensor:
    """<h> on one nearest-neighbour bond: Tr(rho h), h[s1, s2, s1', s2']."""
    rho = two_site_rdm(A, env)
    if tuple(h.shape) != tuple(rho.shape):
        raise ShapeError(f"bond_energy: h must have the shape {tuple(rho.shape)} of the bond's "
                         f"density matrix, got {tuple(h.shape)}.")
    h = h if h.device == rho.device else h.to(rho.device)
    return einsum("abcd,cdab->", rho, h.astype(rho.dtype))


def staggered_magnetization(A, env: CTMEnv) -> Tensor:
    """|<S>| in the sublattice-rotated frame = the staggered magnetisation of the
    antiferromagnet (<S^y> vanishes for a real A: rho is real symmetric)."""
    rho = one_site_rdm(A, env)
    s = spin_operators("spin")
    mx = ops.sum(rho * ops.asarray(s["Sx"].T, dtype=rho.dtype))
    mz = ops.sum(rho * ops.asarray(s["Sz"].T, dtype=rho.dtype))
    return ops.sqrt(mx * mx + mz * mz)


@arg.checked(chi=arg.SIZE, J=arg.NUMBER, return_env=arg.FLAG)
def heisenberg_energy(A, chi: int, *, J: float = 1.0, return_env: bool = False,
                      **ctmrg_options):
    """Energy per site of the Heisenberg antiferromagnet (sublattice-rotated) in the C4v iPEPS
    ``symmetrize_c4v(A)`` (``A`` itself when it is symmetric), with a CTMRG environment of bond
    dimension ``chi``; ``ctmrg_options`` go to ``tenferro.tn.ctmrg`` (max_iter, tol,
    checkpoint, projector, progress, env). Differentiable in A through the CTMRG iterations;
    the gradient is the physical energy's (projected onto the symmetric subspace, see the
    module docstring), ready for an optimiser without re-symmetrising.
    Returns the energy (and the ``CTMEnv`` with ``return_env=True``)."""
    A = _c4v_state("heisenberg_energy", A)
    A = A / linalg.norm(A)  # the state does not depend on the scale; keeps a = O(1)
    env = ctmrg(double_layer(A), chi, **ctmrg_options)
    e = 2 * bond_energy(A, env, heisenberg_bond(J))
    return (e, env) if return_env else e


# ------------------------------------------------------------------------- states
@arg.checked(D=arg.SIZE, dtype=arg.DTYPE)
def neel_peps(D: int = 2, dtype=float64) -> Tensor:
    """The Neel state (uniform spin up in the rotated frame) embedded in bond dimension D:
    A[0, 0, 0, 0, 0] = 1, all else 0 (C4v symmetric, product state)."""
    a = np.zeros((2,) + (D,) * 4)
    a[(0,) * 5] = 1.0
    return ops.tensor(a, dtype=dtype)


@arg.checked(D=arg.SIZE, seed=arg.SEED, noise=arg.TOL, dtype=arg.DTYPE)
def random_c4v_peps(D: int = 2, seed: int | None = None, noise: float = 1.0,
                    dtype=float64) -> Tensor:
    """A random C4v-symmetric real iPEPS tensor; ``noise < 1`` mixes the Neel state with
    ``noise`` times a random symmetric tensor (a good starting point for the Heisenberg
    antiferromagnet)."""
    rng = np.random.default_rng(seed)
    r = rng.standard_normal((2,) + (D,) * 4)
    r = np.asarray(symmetrize_c4v(ops.tensor(r)))
    if noise < 1.0:
        r = np.asarray(neel_peps(D)) + noise * r / np.abs(r).max()
    return ops.tensor(r, dtype=dtype)
