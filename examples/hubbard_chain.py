"""The open Hubbard chain at half filling: two-site DMRG with U(1) x U(1) symmetric tensors.

    H = -t sum_{i, sigma} (c+_{i sigma} c_{i+1 sigma} + h.c.) + U sum_i n_{i up} n_{i down}

Fermions become a chain of 4-state sites by the Jordan-Wigner transformation (modes ordered
1up, 1down, 2up, 2down, ...): a hop carries the parity string of the modes it passes, which
for nearest neighbours is one on-site parity operator, so the MPO is an ordinary
nearest-neighbour MPO (``tenferro.tn.mpo.mpo_from_terms``, bond dimension 6). Every term
conserves the particle number N and 2 S_z, so ``tenferro.symmetric.mpo_from_dense`` turns it
into a U(1) x U(1) MPO (charges (N, 2 S_z) of the local states) and ``symmetric.dmrg`` finds
the ground state in the sector (N, 2 S_z) = (L, 0).

Checks: small chains against exact diagonalisation in the same sector (a sparse Hamiltonian
built independently from occupation bit strings, with the fermion signs counted directly;
agreement to 1e-8), and longer chains against the Bethe-ansatz (Lieb-Wu) energy per site of
the infinite chain. An open chain of L sites has E(L) = L e_inf + e_boundary + O(1/L): E/L
differs from e_inf by about e_boundary / L, while the bulk estimate (E(L) - E(L')) / (L - L'),
with L' = L/2 rounded down to an even length (computed when it is not in the lists), cancels
the boundary term. Writes a plot of E/L against 1/L with the Bethe-ansatz limit.

Run:  python examples/hubbard_chain.py                      (L = 8, 10 against ED; L = 16, 32
                                                              against Lieb-Wu)
      python examples/hubbard_chain.py --ed-L 8 --L 24 48 --D 160 --U 8
"""

from __future__ import annotations

import os

for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")  # small blocks: one BLAS thread is fastest

import argparse  # noqa: E402
import itertools  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402
import scipy.sparse  # noqa: E402
import scipy.sparse.linalg  # noqa: E402
import scipy.special  # noqa: E402

import tenferro.symmetric as S  # noqa: E402
from tenferro.tn.mpo import mpo_from_terms  # noqa: E402

# local basis |n_up n_down>, index 2 n_up + n_down: |0>, |down>, |up>, |up down>
CHARGES = [(0, 0), (1, -1), (1, 1), (2, 0)]  # (N, 2 S_z) of each local state
U1xU1 = S.product(S.U1, S.U1)


def site_operators() -> dict:
    """4 x 4 matrices on one site: annihilators c_up, c_down (the site's own Jordan-Wigner
    sign included: up before down), their number operators and the site parity F."""
    a = np.array([[0.0, 1.0], [0.0, 0.0]])  # one mode: |1> -> |0>
    f = np.diag([1.0, -1.0])  # (-1)^n of one mode
    i2 = np.eye(2)
    c_up, c_dn = np.kron(a, i2), np.kron(f, a)
    return {"c_up": c_up, "c_dn": c_dn, "n_up": c_up.T @ c_up, "n_dn": c_dn.T @ c_dn,
            "F": np.kron(f, f), "I": np.eye(4)}


def hubbard_mpo(L: int, t: float = 1.0, U: float = 4.0) -> list:
    """Dense MPO (``tenferro.tn.mpo`` convention) of the open Hubbard chain. With the parity
    strings of modes before site i cancelling, c+_i c_{i+1} = (c+ F)_i c_{i+1} and
    c+_{i+1} c_i = (F c)_i c+_{i+1}."""
    o = site_operators()
    bonds = []
    for s in ("c_up", "c_dn"):
        c = o[s]
        bonds += [(-t * c.T @ o["F"], c), (-t * o["F"] @ c, c.T)]
    return mpo_from_terms(L, U * o["n_up"] @ o["n_dn"], bonds)


def symmetric_hubbard_mpo(L: int, t: float = 1.0, U: float = 4.0) -> list:
    """The same MPO as U(1) x U(1) symmetric tensors (charges (N, 2 S_z))."""
    return S.mpo_from_dense(hubbard_mpo(L, t, U), CHARGES, symmetry=U1xU1)


def exact_ground_energy(L: int, n_up: int, n_dn: int, t: float = 1.0, U: float = 4.0) -> float:
    """Lowest energy with n_up up and n_dn down electrons, by sparse exact diagonalisation.

    A state is a pair of bit strings (bit i: site i occupied). With the modes ordered 1up,
    1down, 2up, ..., an up electron hopping between sites i and i+1 passes mode (i, down) and
    a down electron passes mode (i+1, up): the hop's sign is (-1) to that occupation."""
    ups = [sum(1 << i for i in c) for c in itertools.combinations(range(L), n_up)]
    dns = [sum(1 << i for i in c) for c in itertools.combinations(range(L), n_dn)]
    index = {(u, d): k for k, (u, d) in enumerate(itertools.product(ups, dns))}
    rows, cols, vals = [], [], []
    for (u, d), k in index.items():
        rows.append(k)
        cols.append(k)
        vals.append(U * bin(u & d).count("1"))
        for i in range(L - 1):
            pair = (1 << i) | (1 << (i + 1))
            if bin(u & pair).count("1") == 1:  # an up electron can hop across bond i
                sign = -1.0 if (d >> i) & 1 else 1.0
                rows.append(index[(u ^ pair, d)])
                cols.append(k)
                vals.append(-t * sign)
            if bin(d & pair).count("1") == 1:
                sign = -1.0 if (u >> (i + 1)) & 1 else 1.0
                rows.append(index[(u, d ^ pair)])
                cols.append(k)
                vals.append(-t * sign)
    n = len(index)
    H = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    if n <= 400:
        return float(np.linalg.eigvalsh(H.toarray())[0])
    v0 = np.random.default_rng(0).standard_normal(n)
    return float(scipy.sparse.linalg.eigsh(H, k=1, which="SA", v0=v0, tol=1e-13)[0][0])


def lieb_wu_energy(U: float, t: float = 1.0) -> float:
    """Ground-state energy per site of the infinite chain at half filling (Lieb and Wu 1968):
    e = -4 t int_0^inf J0(w) J1(w) / (w (1 + exp(w U / (2 t)))) dw, for U > 0 (the
    integrand is cut where the exponential leaves less than 1e-17); U = 0 is the free
    chain, -4 t / pi."""
    if U == 0:
        return -4.0 * t / math.pi

    def f(w):
        return scipy.special.j0(w) * scipy.special.j1(w) / (w * (1.0 + math.exp(
            min(w * U / (2 * t), 700.0))))

    val, _ = scipy.integrate.quad(f, 0.0, 80.0 * t / U, limit=2000)
    return -4.0 * t * val


def ground_state(L: int, D: int, t: float = 1.0, U: float = 4.0, **kw):
    """Symmetric two-site DMRG at half filling, S_z = 0: a ``tenferro.tn.DMRGResult``."""
    kw.setdefault("progress", False)
    return S.dmrg(symmetric_hubbard_mpo(L, t, U), D, charge=(L, 0), **kw)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--U", type=float, default=4.0,
                   help="on-site repulsion U (default %(default)s)")
    p.add_argument("--t", type=float, default=1.0, help="hopping t (default %(default)s)")
    p.add_argument("--ed-L", type=int, nargs="*", default=[8, 10],
                   help="even chain lengths checked against exact diagonalisation "
                        "(default 8 10; 12 takes minutes)")
    p.add_argument("--L", type=int, nargs="*", default=[16, 32],
                   help="even chain lengths compared with the Bethe-ansatz energy "
                        "(default 16 32)")
    p.add_argument("--D", type=int, default=128,
                   help="DMRG bond dimension (default %(default)s)")
    p.add_argument("--plot", default="hubbard_chain.png",
                   help="PNG file for E/L against 1/L (default %(default)s)")
    p.add_argument("--no-plot", action="store_true", help="skip the plot")
    return p


def half_length(L: int) -> int:
    """The shorter chain of the bulk estimate: L/2 rounded down to an even length (half
    filling with S_z = 0 needs an even number of electrons)."""
    return 2 * (L // 4)


def main(argv=None) -> int:
    p = parser()
    args = p.parse_args(argv)
    odd = [L for L in args.ed_L + args.L if L < 2 or L % 2]
    if odd:
        p.error(f"chain lengths must be even and >= 2 (half filling, S_z = 0): got {odd}")
    U, t = args.U, args.t
    print(f"Hubbard chain, open, half filling, S_z = 0, t = {t}, U = {U}; "
          f"U(1) x U(1) DMRG, D = {args.D}")
    runs = {}  # L -> (DMRG result, seconds)

    def dmrg(L):
        if L not in runs:
            t0 = time.perf_counter()
            r = ground_state(L, args.D, t, U)
            runs[L] = (r, time.perf_counter() - t0)
        return runs[L]

    worst = 0.0
    exact = {}
    if args.ed_L:
        print(f"{'L':>4} {'E DMRG':>18} {'E exact':>18} {'|diff|':>9} {'time':>7}")
    for L in args.ed_L:
        r, dt = dmrg(L)
        exact[L] = e = exact_ground_energy(L, L // 2, L // 2, t, U)
        worst = max(worst, abs(r.energy - e))
        print(f"{L:4d} {r.energy:18.12f} {e:18.12f} {abs(r.energy - e):9.1e} {dt:6.1f}s")
    e_inf = lieb_wu_energy(U, t)
    bulk = {}
    if args.L:
        print(f"Bethe ansatz (Lieb-Wu), infinite chain: e = {e_inf:.10f} per site")
        print("bulk estimate: (E(L) - E(L')) / (L - L') with L' = L/2 rounded down to even "
              "(the boundary energy cancels)")
        print(f"{'L':>4} {'E DMRG':>18} {'E/L':>13} {'E/L - e':>10} {'L prime':>7} "
              f"{'bulk est.':>13} {'- e':>10} {'bond':>5} {'time':>7}")
    for L in sorted(args.L):
        r, dt = dmrg(L)
        half = half_length(L)
        if half >= 2:
            bulk[L] = (r.energy - dmrg(half)[0].energy) / (L - half)
        b = bulk.get(L, math.nan)  # L = 2 has no shorter chain
        print(f"{L:4d} {r.energy:18.10f} {r.energy / L:13.8f} {r.energy / L - e_inf:10.2e} "
              f"{half:7d} {b:13.8f} {b - e_inf:10.2e} {r.max_bond:5d} {dt:6.1f}s")
    if args.ed_L:
        print(f"largest |E_DMRG - E_exact| = {worst:.1e} (target 1e-8)")
    if not args.no_plot and runs:
        plot({L: r.energy for L, (r, _) in runs.items()}, exact, bulk, e_inf, args)
    return 0 if worst < 1e-8 else 1


def plot(energies: dict, exact: dict, bulk: dict, e_inf: float, args) -> None:
    """E/L against 1/L (DMRG, exact diagonalisation, the bulk estimates) with the Bethe-ansatz
    energy at 1/L = 0: the open chain's E/L approaches it linearly in 1/L."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    Ls = sorted(energies)
    ax.plot([1 / L for L in Ls], [energies[L] / L for L in Ls], "o", mfc="none",
            label=f"E/L, U(1)xU(1) DMRG D={args.D}")
    if exact:
        ax.plot([1 / L for L in exact], [e / L for L, e in exact.items()], "+", ms=10,
                label="E/L, exact diagonalisation")
    if bulk:
        ax.plot([1 / L for L in bulk], list(bulk.values()), "s", ms=5,
                label="bulk estimate (E(L) - E(L')) / (L - L')")
    ax.axhline(e_inf, color="k", ls="--", lw=1, label=f"Bethe ansatz (Lieb-Wu): {e_inf:.6f}")
    if len(Ls) >= 2:  # linear fit of the two longest chains, to the infinite chain
        (a, b), x = np.polyfit([1 / L for L in Ls[-2:]], [energies[L] / L for L in Ls[-2:]], 1), \
            np.linspace(0, 1 / Ls[0], 50)
        ax.plot(x, a * x + b, ":", color="C0", lw=1, label=f"linear in 1/L: e = {b:.6f}")
    ax.set_xlim(left=0)
    ax.set_xlabel("1 / L")
    ax.set_ylabel("ground-state energy per site / t")
    ax.set_title(f"open Hubbard chain, half filling, U/t = {args.U / args.t:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
