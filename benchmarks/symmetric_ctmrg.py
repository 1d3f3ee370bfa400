"""C4v CTMRG + Heisenberg bond energy of a Z2-symmetric iPEPS: the symmetric code
(``tenferro.symmetric.ctmrg``, block-sparse C and T) against the dense ``tenferro.tn`` code on
``to_dense`` (started from the same environment, same chi, fixed number of iterations), forward
and forward+backward. Interleaved medians, BLAS pinned to one thread and one core.

Run: python benchmarks/symmetric_ctmrg.py [--D 4] [--chi 32] [--iters 10] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys

from _common import interleaved_medians, table

os.environ.setdefault("TENFERRO_PROGRESS", "0")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tenferro as tf  # noqa: E402
import tenferro.symmetric as S  # noqa: E402
from tenferro import tn  # noqa: E402
from tenferro.symmetric import ctmrg as SC  # noqa: E402


def z2_peps(D, seed=4, noise=0.3):
    phys = S.Leg(S.Z2, ((0, 1), (1, 1)))
    virt = S.Leg(S.Z2, ((0, D - D // 2), (1, D // 2)))
    A0 = S.random([phys] + [virt] * 4, 0, seed=seed)
    Ad = tn.peps.symmetrize_c4v(A0.to_dense())
    Ad = tn.peps.neel_peps(D) + noise * Ad / tf.max(tf.abs(Ad))
    return S.from_dense(Ad, A0.legs, 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--D", type=int, default=4)
    ap.add_argument("--chi", type=int, default=32)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    A = z2_peps(args.D)
    kw = dict(tol=None, max_iter=args.iters, progress=False)

    def sym(A):
        return SC.heisenberg_energy(A, args.chi, **kw)

    def dense(Ad):
        As = S.from_dense(Ad, A.legs, 0)
        a = SC.double_layer(As / S.norm(As))
        e0 = SC.to_dense_env(SC.ctm_init(a), a.legs[0])
        return tn.heisenberg_energy(Ad, args.chi, env=(e0.C, e0.T), **kw)

    Ad = A.to_dense()
    diff = abs(sym(A).item() - dense(Ad).item())
    t = interleaved_medians({
        "sym fwd": lambda: sym(A), "dense fwd": lambda: dense(Ad),
        "sym fwd+bwd": lambda: tf.grad(sym)(A), "dense fwd+bwd": lambda: tf.grad(dense)(Ad),
    }, args.repeat)
    rows = [[what, f"{t['sym ' + what]:.3f}", f"{t['dense ' + what]:.3f}",
             f"{t['dense ' + what] / t['sym ' + what]:.2f}"] for what in ("fwd", "fwd+bwd")]
    print(f"Z2 iPEPS D={args.D}, chi={args.chi}, {args.iters} CTMRG iterations + energy; "
          f"|E_sym - E_dense| = {diff:.1e}")
    print(table(rows, ["", "symmetric [s]", "dense [s]", "dense/symmetric"]))


if __name__ == "__main__":
    main()
