"""C4v CTMRG + Heisenberg energy of a single-site iPEPS: forward and forward+backward time,
tenferro (eager and jit) side by side with the same algorithm in PyTorch and JAX (optional
peers). A fixed number of CTMRG iterations (no convergence test) so every implementation does
the same work; random C4v-symmetric real A (seeded). One BLAS thread; medians.

The peers use their own SVD backward (no broadening): on exactly degenerate spectra they give
NaN/inf, which the table reports; tenferro's is Lorentzian-broadened.

Run: python benchmarks/ctmrg.py [--iters 30] [--repeat 5]
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy
    os.environ.setdefault(_v, "1")
if hasattr(os, "sched_setaffinity"):  # one core for every library: a like-for-like race
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import argparse  # noqa: E402

import numpy as np  # noqa: E402
from _common import median_time, pin_torch, table, try_import  # noqa: E402

import tenferro as tf  # noqa: E402
from tenferro.tn import peps  # noqa: E402

torch = pin_torch()
jax = try_import("jax")
if jax is not None:
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

H = np.asarray(peps.heisenberg_bond())  # a NumPy constant, shared with the peers


# ------------------------------------------------------------------ tenferro
def tf_energy(n):
    return lambda A: peps.heisenberg_energy(A, CHI[0], tol=None, max_iter=n, progress=False,
                                            check_symmetry=False)


CHI = [16]


# ------------------------------------------------- the same algorithm for a peer
def make_peer(lib, einsum, svd, norm):
    def energy(A, chi, n):
        A = A / norm(A)
        D = A.shape[1]
        a = einsum("sulfr,svmgt->uvlmfgrt", A, A).reshape((D * D,) * 4)
        C = a.sum((0, 1))
        T = a.sum(1).transpose(1, 2) if lib == "torch" else a.sum(1).transpose(0, 2, 1)
        C, T = C / norm(C), T / norm(T)
        d = D * D
        for _ in range(n):
            k = T.shape[0]
            M = einsum("xy,xub,ylc,uldr->brcd", C, T, T, a).reshape(k * d, k * d)
            M = (M + M.T) / 2
            U, S, _ = svd(M)
            P = U[:, :chi]
            C = P.T @ M @ P
            P3 = P.reshape(k, d, P.shape[1])
            T = einsum("xua,xly,uldr,ydb->arb", P3, T, a, P3)
            C = (C + C.T) / 2
            T = (T + (T.permute(2, 1, 0) if lib == "torch" else T.transpose(2, 1, 0))) / 2
            C, T = C / norm(C), T / norm(T)
        chi_ = C.shape[0]
        L = einsum("pq,pkr,rs->qks", C, T, C)
        x = einsum("qks,qut,svw->kutvw", L, T, T).reshape(D, D, D, D, chi_, D, D, chi_)
        h = einsum("lmuvqfgs,aulfr,bvmgt->qsartb", x, A, A)
        rho = einsum("qsartb,qscrtd->acbd", h, h)
        rho = rho / einsum("abab->", rho)
        return 2 * einsum("abcd,cdab->", rho, HP[lib])

    return energy


HP = {}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args(argv)
    n = args.iters
    rows = []
    for D, chi in ((2, 16), (2, 32), (3, 27)):
        CHI[0] = chi
        A0 = np.asarray(peps.random_c4v_peps(D, seed=1, noise=1.0))
        At = tf.tensor(A0)
        f = tf_energy(n)
        vg = tf.value_and_grad(f)
        jvg = tf.jit(vg)
        e_ref = f(At).item()
        g_ref = np.asarray(vg(At)[1])
        res = {"tf fwd": median_time(lambda: f(At), args.repeat),
               "tf fwd+bwd": median_time(lambda: vg(At), args.repeat)}
        jvg(At)
        res["tf jit fwd+bwd"] = median_time(lambda: jvg(At), args.repeat)
        notes = []
        if torch is not None:
            HP["torch"] = torch.tensor(H)
            te = make_peer("torch", torch.einsum,
                           lambda m: torch.linalg.svd(m, full_matrices=False), torch.linalg.norm)

            def t_fb():
                x = torch.tensor(A0, requires_grad=True)
                e = te(x, chi, n)
                e.backward()
                return e, x.grad

            with torch.no_grad():
                res["torch fwd"] = median_time(lambda: te(torch.tensor(A0), chi, n), args.repeat)
            res["torch fwd+bwd"] = median_time(t_fb, args.repeat)
            e, g = t_fb()
            notes.append(f"torch dE={abs(e.item() - e_ref):.0e} "
                         f"dg={np.abs(g.numpy() - g_ref).max():.0e}")
        if jax is not None:
            HP["jax"] = jnp.asarray(H)
            je = make_peer("jax", jnp.einsum,
                           lambda m: jnp.linalg.svd(m, full_matrices=False), jnp.linalg.norm)
            jf = jax.jit(lambda x: je(x, chi, n))
            jg = jax.jit(jax.value_and_grad(lambda x: je(x, chi, n)))
            xj = jnp.asarray(A0)
            jf(xj).block_until_ready()
            res["jax jit fwd"] = median_time(lambda: jf(xj).block_until_ready(), args.repeat)
            jg(xj)[1].block_until_ready()
            res["jax jit fwd+bwd"] = median_time(lambda: jg(xj)[1].block_until_ready(),
                                                 args.repeat)
            e, g = jg(xj)
            notes.append(f"jax dE={abs(float(e) - e_ref):.0e} "
                         f"dg={np.abs(np.asarray(g) - g_ref).max():.0e}")
        peer = min([v for k, v in res.items() if "bwd" in k and not k.startswith("tf")],
                   default=float("nan"))
        rows.append((f"D={D} chi={chi}", *(f"{res.get(k, float('nan')) * 1e3:.0f}" for k in
                     ("tf fwd", "tf fwd+bwd", "tf jit fwd+bwd", "torch fwd", "torch fwd+bwd",
                      "jax jit fwd", "jax jit fwd+bwd")),
                     f"{res['tf fwd+bwd'] / peer:.2f}", f"{res['tf jit fwd+bwd'] / peer:.2f}",
                     "; ".join(notes)))
    print(f"C4v CTMRG ({n} iterations) + two-site energy, times in ms (median of "
          f"{args.repeat}); ratio = tenferro fwd+bwd / fastest peer fwd+bwd")
    print(table(rows, ["case", "tf fwd", "tf f+b", "tf jit f+b", "torch fwd", "torch f+b",
                       "jax fwd", "jax f+b", "ratio", "ratio jit", "peer agreement"]))


if __name__ == "__main__":
    main()
