"""A quantum quench in the transverse-field Ising chain: TEBD and TDVP against free fermions.

The open chain H = -J sum Z_i Z_{i+1} - g sum X_i starts in the all-up state (the g = 0 ground
state) and evolves at g = 1 (critical). The Jordan-Wigner free-fermion solution gives
<X_i>(t) and <Z_i Z_{i+1}>(t) exactly (tenferro.tn.exact_dynamics); TEBD (fourth-order
Trotter-Suzuki) and two-site TDVP (second order, tenferro.linalg.expm_multiply) evolve a
complex MPS of bond dimension D. The table: max |error| over all sites of both observables at
each printed time, the half-chain entanglement entropy, and the wall time. The plot shows
<X_L/2>(t) against the exact curve, the error and the entanglement entropy against time.

Run:  python examples/tfim_quench.py                (L=16, D=16, t <= 2: about 1 minute
                                                      measured on a loaded 2-core machine)
      python examples/tfim_quench.py --L 24 --D 32 --tmax 3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import tenferro as tf
import tenferro.tn  # noqa: F401
from tenferro.tn import exact_dynamics, mpo, observables, tdvp, tebd, tfim_bond_terms

P = mpo.spin_operators("pauli")


def measure(psi, t):
    x = observables.expectation_values(psi, P["X"]).numpy().real
    zz = np.real(np.diagonal(observables.correlation_matrix(psi, P["Z"]).numpy(), 1))
    S = observables.entanglement_entropy(psi, len(psi) // 2).item()
    return np.concatenate([x, zz]), S


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--L", type=int, default=16, help="chain length (default %(default)s)")
    ap.add_argument("--D", type=int, default=16,
                    help="maximal MPS bond dimension (default %(default)s)")
    ap.add_argument("--g", type=float, default=1.0,
                    help="transverse field after the quench (default %(default)s: critical)")
    ap.add_argument("--tmax", type=float, default=2.0,
                    help="final time (default %(default)s)")
    ap.add_argument("--dt-tebd", type=float, default=0.05,
                    help="TEBD time step (default %(default)s)")
    ap.add_argument("--dt-tdvp", type=float, default=0.1,
                    help="TDVP time step (default %(default)s)")
    ap.add_argument("--every", type=float, default=0.5,
                    help="time between printed rows (default %(default)s); the plot samples "
                         "every 0.1 or every step, whichever is longer")
    ap.add_argument("--methods", nargs="+", default=["tebd", "tdvp"], choices=["tebd", "tdvp"],
                    help="integrators to run (default: tebd tdvp)")
    ap.add_argument("--plot", default="tfim_quench.png",
                    help="PNG file for <X_L/2>(t), the error and S(L/2)(t) "
                         "(default %(default)s)")
    ap.add_argument("--no-plot", action="store_true", help="skip the plot")
    return ap


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    L, g = args.L, args.g
    psi0 = tf.tn.product_mps([[1.0, 0.0]] * L)
    print(f"quench all-up -> g={g}, L={L}, D={args.D}; errors against free fermions")
    runs = {}
    for method in args.methods:
        dt = args.dt_tebd if method == "tebd" else args.dt_tdvp
        steps, every = round(args.tmax / dt), max(1, round(args.every / dt))
        sample = max(1, round(min(args.every, 0.1) / dt))  # finer, for the plot
        t0 = time.perf_counter()
        if method == "tebd":
            r = tebd(psi0, tfim_bond_terms(L, g), dt, steps, max_rank=args.D, measure=measure,
                     measure_every=sample, progress=False)
        else:
            r = tdvp(psi0, mpo.tfim_mpo(L, g), dt, steps, max_rank=args.D, measure=measure,
                     measure_every=sample, progress=False)
        wall = time.perf_counter() - t0
        xe, zze = exact_dynamics.tfim_quench(L, r.times, g, initial="z+")
        exact = np.hstack([xe, zze])
        obs = np.array([m[0] for m in r.measurements])
        entropy = np.array([m[1] for m in r.measurements]) + 0.0  # no "-0.0000" at t = 0
        errors = np.abs(obs - exact).max(axis=1)
        runs[method] = dict(times=np.asarray(r.times), x_mid=obs[:, L // 2], errors=errors,
                            entropy=entropy, dt=dt)
        print(f"\n{method.upper()} (dt={dt}, {wall:.1f}s, discarded weight "
              f"{r.truncation_error:.1e})")
        print(f"{'t':>5} {'max |error|':>12} {'S(L/2)':>8} {'<X_L/2>':>10}")
        for k in range(0, len(r.times), max(1, every // sample)):
            print(f"{r.times[k]:>5.2f} {errors[k]:>12.2e} {entropy[k]:>8.4f} "
                  f"{obs[k, L // 2]:>10.6f}")
    if not args.no_plot and runs:
        plot(runs, args)
    return 0


def plot(runs: dict, args) -> None:
    """<X> in the middle of the chain against time (exact curve and both integrators), the
    largest error over all sites and observables, and the half-chain entanglement entropy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    L = args.L
    ts = np.linspace(0.0, args.tmax, 201)
    x_exact = exact_dynamics.tfim_quench(L, ts, args.g, initial="z+")[0][:, L // 2]
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 3.9))
    ax1.plot(ts, x_exact, "k-", lw=1, label="free fermions (exact)")
    for (method, run), m in zip(runs.items(), ("o", "x")):
        label = f"{method.upper()}, dt={run['dt']:g}"
        ax1.plot(run["times"], run["x_mid"], m, mfc="none", label=label)
        ax2.semilogy(run["times"][1:], np.maximum(run["errors"][1:], 1e-16), m + "-", ms=4,
                     label=label)
        ax3.plot(run["times"], run["entropy"], m + "-", ms=4, label=label)
    ax1.set_ylabel(rf"$\langle X_{{{L // 2}}} \rangle$")
    ax2.set_ylabel(r"max error of $\langle X_i \rangle$, $\langle Z_i Z_{i+1} \rangle$")
    ax3.set_ylabel("half-chain entanglement entropy S(L/2)")
    for ax in (ax1, ax2, ax3):
        ax.set_xlabel("time t / J")
        ax.legend(fontsize=8)
    ax2.grid(True, which="both", alpha=0.3)
    fig.suptitle(f"TFIM quench all-up -> g={args.g:g}, L={L}, D={args.D}", fontsize=11)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot written to {args.plot}")


if __name__ == "__main__":
    sys.exit(main())
