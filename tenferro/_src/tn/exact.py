"""Implementation of ``tenferro.tn.exact`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np
from scipy import integrate, special

from . import arguments as arg

__all__ = [
    "heisenberg_ground_energy",
    "onsager_energy",
    "onsager_lnz",
    "onsager_lnz_double_integral",
    "onsager_specific_heat",
    "tfim_ground_energy",
    "tfim_ground_energy_ed",
]


BETA_C = float(np.log(1 + np.sqrt(2)) / 2)


def _k(beta):
    return 2 * np.sinh(2 * beta) / np.cosh(2 * beta) ** 2


@arg.checked(beta=arg.rule(arg.number, minimum=0.0))
def onsager_lnz(beta: float) -> float:
    """ln Z / N = ln(2 cosh 2b) + (1/pi) int_0^{pi/2} ln[(1 + sqrt(1 - k^2 sin^2 t)) / 2] dt."""
    k = _k(beta)
    val, _ = integrate.quad(
        lambda t: np.log((1 + np.sqrt(max(0.0, 1 - k**2 * np.sin(t) ** 2))) / 2),
        0, np.pi / 2, epsabs=1e-14, epsrel=1e-14, limit=200,
    )
    return float(np.log(2 * np.cosh(2 * beta)) + val / np.pi)


@arg.checked(beta=arg.rule(arg.number, minimum=0.0))
def onsager_lnz_double_integral(beta: float) -> float:
    """ln Z / N = ln 2 + (1 / 8 pi^2) int int ln[cosh^2 2b - sinh 2b (cos a + cos c)] da dc
    (the textbook form, for cross-checking)."""
    c2, s2 = np.cosh(2 * beta) ** 2, np.sinh(2 * beta)
    val, _ = integrate.dblquad(
        lambda a, c: np.log(c2 - s2 * (np.cos(a) + np.cos(c))), 0, 2 * np.pi, 0, 2 * np.pi,
        epsabs=1e-12, epsrel=1e-12,
    )
    return float(np.log(2) + val / (8 * np.pi**2))


@arg.checked(beta=arg.rule(arg.number, positive=True))
def onsager_energy(beta: float) -> float:
    """Energy per site u = -d(ln Z/N)/d beta = -coth 2b [1 + (2/pi)(2 tanh^2 2b - 1) K(k)]."""
    k = _k(beta)
    t2 = np.tanh(2 * beta) ** 2
    if k >= 1.0:  # at beta_c, K(k) diverges but 2 tanh^2 2b - 1 = 0: u = -coth(2 b_c) = -sqrt 2
        return float(-1 / np.tanh(2 * beta))
    K = special.ellipk(k**2)
    return float(-1 / np.tanh(2 * beta) * (1 + 2 / np.pi * (2 * t2 - 1) * K))


@arg.checked(beta=arg.rule(arg.number, positive=True))
def onsager_specific_heat(beta: float) -> float:
    """c = beta^2 d^2(ln Z/N)/d beta^2
    = (4/pi)(b coth 2b)^2 {K - E - (1 - tanh^2 2b)[pi/2 + (2 tanh^2 2b - 1) K]}."""
    k = _k(beta)
    K, E = special.ellipk(k**2), special.ellipe(k**2)
    t2 = np.tanh(2 * beta) ** 2
    pref = 4 / np.pi * (beta / np.tanh(2 * beta)) ** 2
    return float(pref * (K - E - (1 - t2) * (np.pi / 2 + (2 * t2 - 1) * K)))


# --------------------------------------------------------- transverse-field Ising chain
@arg.checked(L=arg.SIZE, g=arg.NUMBER, J=arg.NUMBER)
def tfim_ground_energy(L: int, g: float = 1.0, J: float = 1.0) -> float:
    """Ground-state energy of the open chain H = -J sum_{i<L} Z_i Z_{i+1} - g sum_i X_i.

    Jordan-Wigner maps it to free fermions: E0 = -(1/2) sum_k eps_k, with eps_k the singular
    values of the 2L x 2L Bogoliubov-de Gennes problem (here: of A - B with A, B the
    hopping/pairing matrices)."""
    A = np.zeros((L, L))
    B = np.zeros((L, L))
    for i in range(L):
        A[i, i] = -2 * g
    for i in range(L - 1):
        A[i, i + 1] = A[i + 1, i] = -J
        B[i, i + 1] = -J
        B[i + 1, i] = J
    eps = np.linalg.svd(A - B, compute_uv=False)
    return float(-np.sum(eps) / 2)


# --------------------------------------------------------------- exact diagonalisation
def _op(single, site, L):
    from scipy import sparse

    out = sparse.identity(1, format="csr")
    for i in range(L):
        out = sparse.kron(out, single if i == site else sparse.identity(2), format="csr")
    return out


@arg.checked(L=arg.rule(arg.size, minimum=2), J=arg.NUMBER)
def heisenberg_ground_energy(L: int, J: float = 1.0) -> float:
    """Ground-state energy of the open spin-1/2 Heisenberg chain H = J sum S_i . S_{i+1}
    by sparse Lanczos (scipy.sparse.linalg.eigsh); fine up to L ~ 16."""

    sx = np.array([[0, 0.5], [0.5, 0]])
    sy = np.array([[0, -0.5j], [0.5j, 0]])
    sz = np.array([[0.5, 0], [0, -0.5]])
    H = 0
    for i in range(L - 1):
        for s in (sx, sy, sz):
            H = H + J * (_op(s, i, L) @ _op(s, i + 1, L))
    H = H.real if np.iscomplexobj(H.data) and np.abs(H.data.imag).max() < 1e-14 else H
    return _lowest(H.astype(np.float64))


@arg.checked(L=arg.SIZE, g=arg.NUMBER, J=arg.NUMBER)
def tfim_ground_energy_ed(L: int, g: float = 1.0, J: float = 1.0) -> float:
    """The same chain by sparse exact diagonalisation (cross-check for small L)."""

    sx = np.array([[0.0, 1.0], [1.0, 0.0]])
    sz = np.array([[1.0, 0.0], [0.0, -1.0]])
    H = 0
    for i in range(L - 1):
        H = H - J * (_op(sz, i, L) @ _op(sz, i + 1, L))
    for i in range(L):
        H = H - g * _op(sx, i, L)
    return _lowest(H)


def _lowest(H) -> float:
    """The lowest eigenvalue of a sparse symmetric matrix (dense for small ones, where ARPACK
    may fail, e.g. on a zero matrix)."""
    from scipy.sparse.linalg import eigsh

    if H.shape[0] <= 64:
        return float(np.linalg.eigvalsh(H.toarray())[0])
    return float(eigsh(H, k=1, which="SA", tol=1e-12)[0][0])
