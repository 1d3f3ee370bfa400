"""Infinite chains with VUMPS: energy per site against exact results, as a function of D.

Two critical chains, where the bond dimension D limits the accuracy (finite-entanglement
scaling) and the exact answers are known:
  * the spin-1/2 Heisenberg chain  h = S_i . S_{i+1}   (Bethe ansatz: e = 1/4 - ln 2);
  * the transverse-field Ising chain  h = -Z Z - (X_1 + X_2)/2  at g = 1 (e = -4/pi).
For each D the table gives the energy per site (all digits), its error (positive: VUMPS is
variational), the entanglement entropy S and the largest/smallest Schmidt value across a bond,
the iterations to |grad| < tol and the wall time; the plot shows the error and the entropy
against D.

``--unit-cell 2`` repeats a 2-site cell instead of one site (``tn.vumps(h, D, unit_cell=2)``):
the finite-D optimum of the Heisenberg chain may break translation symmetry (it dimerises
slightly at D = 16 and 64, Latorre & Pico, arXiv:0812.1761), and without the sublattice
rotation (``--frame original``) the antiferromagnet needs two sites. The default run ends with a
chain only a 2-site cell can hold: the dimerised Heisenberg chain J1 = 1, J2 = 1/4, one bond
Hamiltonian per bond of the cell, against exact diagonalisation of a 20-site ring.

A D that cuts through a degenerate multiplet of the Schmidt spectrum (Heisenberg D=8: its
two smallest Schmidt values are nearly equal) converges slowly: the energy settles in tens of
iterations, the gradient along the nearly flat direction in thousands. The default Ds avoid it.

Run:  python examples/vumps_chain.py                      (D = 4 16 32: 50 s measured on a
                                                             loaded 2-core machine)
      python examples/vumps_chain.py --D 64 --tol 1e-8    (Heisenberg D=64: E - E_Bethe =
                                                             1.25e-6, 44 s measured loaded)
      python examples/vumps_chain.py --D 16 --unit-cell 2 --models heisenberg
                                                          (2-site cell: 4.623e-5 against
                                                             4.661e-5 for one site)
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import tenferro as tf
import tenferro.tn  # noqa: F401

MODELS = {
    "heisenberg": (lambda rotate: tf.tn.heisenberg_bond(rotate=rotate), 0.25 - math.log(2),
                   "1/4 - ln 2"),
    "tfim": (lambda rotate: tf.tn.tfim_bond(1.0), -4 / math.pi, "-4/pi"),
}
# dimerised chain J1 = 1, J2 = 1/4: exact diagonalisation of the periodic 20-site ring (Sz = 0
# sector); the finite-size error shrinks ~80x per 4 sites (E(16) is 2.65e-9 below E(20)), so
# this is the infinite chain to ~3e-11 (tests/tn_next/test_vumps_cell.py recomputes L = 16)
E_DIMER_ED20 = -0.3781272996098929


def dimerised_chain(D: int, tol: float) -> None:
    hs = [tf.tn.heisenberg_bond(1.0), tf.tn.heisenberg_bond(0.25)]
    t0 = time.perf_counter()
    r = tf.tn.vumps(hs, D, tol=tol, progress=False)  # a list of bonds: a 2-site cell
    print(f"\ndimerised Heisenberg J1 = 1, J2 = 1/4, 2-site cell, D = {D}: "
          f"exact (ED, 20-site ring) e = {E_DIMER_ED20!r}")
    print(f"  e = {r.energy:.16f}  E - E_ED = {r.energy - E_DIMER_ED20:.2e}  bond energies "
          f"{r.bond_energies[0]:.6f} (J1), {r.bond_energies[1]:.6f} (J2)  {r.iterations} iters "
          f"{time.perf_counter() - t0:.1f}s", flush=True)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--D", type=int, nargs="+", default=[4, 16, 32],
                    help="bond dimensions (default 4 16 32)")
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS),
                    help="chains to run (default: heisenberg tfim)")
    ap.add_argument("--tol", type=float, default=1e-7,
                    help="gradient-norm tolerance (default %(default)s)")
    ap.add_argument("--progress", action="store_true", help="a progress line per iteration")
    ap.add_argument("--unit-cell", type=int, default=1,
                    help="sites in the repeated cell (default %(default)s)")
    ap.add_argument("--frame", choices=["rotated", "original"], default="rotated",
                    help="Heisenberg: every second spin rotated (default) or not")
    ap.add_argument("--no-dimer", action="store_true", help="skip the dimerised chain")
    ap.add_argument("--plot", default="vumps_chain.png",
                    help="PNG file for the energy error and entropy against D "
                         "(default %(default)s)")
    ap.add_argument("--no-plot", action="store_true", help="skip the plot")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    cell = None if args.unit_cell == 1 else args.unit_cell
    results = {}
    for name in args.models:
        make_h, e_exact, label = MODELS[name]
        print(f"\n{name}: exact e = {label} = {e_exact!r}"
              + ("" if cell is None else f"  ({cell}-site unit cell)"))
        print(f"{'D':>4} {'energy per site':>21} {'E - E_exact':>12} {'S':>7} "
              f"{'s_min':>9} {'iters':>6} {'time':>7}")
        rows = results[name] = []
        for D in args.D:
            t0 = time.perf_counter()
            r = tf.tn.vumps(make_h(args.frame == "rotated"), D, tol=args.tol, maxiter=2000,
                            progress=args.progress, unit_cell=cell)
            C = r.C if cell is None else r.C[0]  # bond 0 of the cell
            s = tf.tn.entanglement_spectrum(C)
            S = float(tf.tn.entanglement_entropy(C))
            rows.append((D, r.energy - e_exact, S, r.converged))
            flag = "" if r.converged else "  (not converged)"
            print(f"{D:>4} {r.energy:>21.16f} {r.energy - e_exact:>12.3e} {S:>7.4f} "
                  f"{float(s[-1]):>9.2e} {r.iterations:>6} "
                  f"{time.perf_counter() - t0:>6.1f}s{flag}", flush=True)
    if not args.no_dimer:
        dimerised_chain(8, 1e-9)
    if not args.no_plot and results:
        plot(results, args)
    return 0


def plot(results: dict, args) -> None:
    """Finite-entanglement scaling: the energy error against D (log-log) and the entanglement
    entropy against ln D, one line per chain (open markers: not converged)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for name, rows in results.items():
        Ds = [r[0] for r in rows]
        (line,) = ax1.loglog(Ds, [max(r[1], 1e-16) for r in rows], "o-",
                             label=f"{name}: E - ({MODELS[name][2]})")
        ax2.semilogx(Ds, [r[2] for r in rows], "o-", color=line.get_color(), label=name)
        bad = [r for r in rows if not r[3]]
        for ax, k in ((ax1, 1), (ax2, 2)):
            ax.plot([r[0] for r in bad], [max(r[k], 1e-16) for r in bad], "o", ms=10,
                    mfc="none", color="C3")
    all_D = sorted({r[0] for rows in results.values() for r in rows})
    for ax in (ax1, ax2):
        ax.set_xticks(all_D, [str(D) for D in all_D])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlabel("bond dimension D")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    ax1.set_ylabel("energy per site above the exact value")
    ax2.set_ylabel("entanglement entropy S across a bond")
    cell = "" if args.unit_cell == 1 else f", {args.unit_cell}-site cell"
    fig.suptitle(f"VUMPS on critical infinite chains{cell}: finite-entanglement scaling",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
