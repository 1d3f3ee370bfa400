"""Infinite chains with VUMPS: energy per site against exact results, as a function of D.

Two critical chains, where the bond dimension D limits the accuracy (finite-entanglement
scaling) and the exact answers are known:
  * the spin-1/2 Heisenberg chain  h = S_i . S_{i+1}   (Bethe ansatz: e = 1/4 - ln 2);
  * the transverse-field Ising chain  h = -Z Z - (X_1 + X_2)/2  at g = 1 (e = -4/pi).
For each D the table gives the energy per site (all digits), its error (positive: VUMPS is
variational), the entanglement entropy S and the largest/smallest Schmidt value across a bond,
the iterations to |grad| < tol and the wall time.

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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--D", type=int, nargs="+", default=[4, 16, 32])
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--tol", type=float, default=1e-7, help="gradient-norm tolerance")
    ap.add_argument("--progress", action="store_true", help="a progress line per iteration")
    ap.add_argument("--unit-cell", type=int, default=1, help="sites in the repeated cell")
    ap.add_argument("--frame", choices=["rotated", "original"], default="rotated",
                    help="Heisenberg: every second spin rotated (default) or not")
    ap.add_argument("--no-dimer", action="store_true", help="skip the dimerised chain")
    args = ap.parse_args(argv)
    cell = None if args.unit_cell == 1 else args.unit_cell
    for name in args.models:
        make_h, e_exact, label = MODELS[name]
        print(f"\n{name}: exact e = {label} = {e_exact!r}"
              + ("" if cell is None else f"  ({cell}-site unit cell)"))
        print(f"{'D':>4} {'energy per site':>21} {'E - E_exact':>12} {'S':>7} "
              f"{'s_min':>9} {'iters':>6} {'time':>7}")
        for D in args.D:
            t0 = time.perf_counter()
            r = tf.tn.vumps(make_h(args.frame == "rotated"), D, tol=args.tol, maxiter=2000,
                            progress=args.progress, unit_cell=cell)
            C = r.C if cell is None else r.C[0]  # bond 0 of the cell
            s = tf.tn.entanglement_spectrum(C)
            S = float(tf.tn.entanglement_entropy(C))
            flag = "" if r.converged else "  (not converged)"
            print(f"{D:>4} {r.energy:>21.16f} {r.energy - e_exact:>12.3e} {S:>7.4f} "
                  f"{float(s[-1]):>9.2e} {r.iterations:>6} "
                  f"{time.perf_counter() - t0:>6.1f}s{flag}", flush=True)
    if not args.no_dimer:
        dimerised_chain(8, 1e-9)
    return 0


if __name__ == "__main__":
    sys.exit(main())
