"""vmap: Jacobians, per-sample gradients and batched decompositions, batched vs loops.

* ``jacrev``/``jacfwd`` of a 200 -> 200 function of 50 operations (10 x [matvec, add, tanh,
  mul, sin]): tenferro's vmap-based Jacobians (one forward + one batched backward/forward)
  against the previous implementation (one ``vjp`` pull / one ``jvp`` per basis direction,
  written here with the public API) and ``torch.func.jacrev``/``jacfwd``; also under ``jit``.
* per-sample gradients of a small MLP (16 -> 64 -> 64 -> 1, tanh) over 256 samples:
  ``vmap(grad(loss))`` against a Python loop of ``grad`` (and ``torch.func.vmap(grad)``).
* 64 independent 16x16 complex SVDs with a gauge-invariant loss: ``vmap(grad(loss))`` against
  the loop (values checked equal).

float64, one thread, medians with the variants interleaved; ratio = loop / vmap.
Run: python benchmarks/vmap.py [--repeat 5]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import argparse

import numpy as np
from _common import interleaved_medians, pin_torch, table

import tenferro as tf

torch = pin_torch()
N, LAYERS = 200, 10  # 5 ops per layer: 50 ops


def _params(rng):
    ws = [rng.standard_normal((N, N)) / np.sqrt(N) for _ in range(LAYERS)]
    bs = [rng.standard_normal(N) * 0.1 for _ in range(LAYERS)]
    return ws, bs


def make_tf(ws, bs):
    W = [tf.tensor(w) for w in ws]
    Bv = [tf.tensor(b) for b in bs]

    def f(x):
        for w, b in zip(W, Bv):
            x = tf.sin(tf.tanh(w @ x + b) * 1.5)
        return x

    return f


def make_torch(ws, bs):
    W = [torch.tensor(w) for w in ws]
    Bv = [torch.tensor(b) for b in bs]

    def f(x):
        for w, b in zip(W, Bv):
            x = torch.sin(torch.tanh(w @ x + b) * 1.5)
        return x

    return f


def loop_jacrev(f, x):
    """The previous jacrev: one vjp pull per output element."""
    out, pull = tf.vjp(f, x)
    eye = np.eye(out.size)
    return tf.stack([pull(tf.tensor(eye[i]))[0] for i in range(out.size)])


def loop_jacfwd(f, x):
    """The previous jacfwd: one jvp per input element."""
    eye = np.eye(x.size)
    return tf.stack([tf.jvp(f, (x,), (tf.tensor(eye[i]),))[1] for i in range(x.size)], axis=1)


def _race(fns, repeat):
    """Median seconds of each callable, interleaved, after one warm-up call (jit tracing)."""
    for fn in fns.values():
        fn()
    return interleaved_medians(fns, repeat)


def bench_jacobians(rng, repeat):
    ws, bs = _params(rng)
    f = make_tf(ws, bs)
    x0 = rng.standard_normal(N)
    x = tf.tensor(x0)
    jr, jf = tf.jit(tf.jacrev(f)), tf.jit(tf.jacfwd(f))
    J = tf.jacrev(f)(x).numpy()
    checks = {"jacfwd": tf.jacfwd(f)(x).numpy(), "loop jacrev": loop_jacrev(f, x).numpy(),
              "loop jacfwd": loop_jacfwd(f, x).numpy(), "jit jacrev": jr(x).numpy()}
    fns = {"jacrev vmap": lambda: tf.jacrev(f)(x), "jacrev loop": lambda: loop_jacrev(f, x),
           "jacrev jit": lambda: jr(x),
           "jacfwd vmap": lambda: tf.jacfwd(f)(x), "jacfwd loop": lambda: loop_jacfwd(f, x),
           "jacfwd jit": lambda: jf(x)}
    if torch is not None:
        from torch.func import jacfwd as tjf
        from torch.func import jacrev as tjr

        g = make_torch(ws, bs)
        xt = torch.tensor(x0)
        checks["torch.func.jacrev"] = tjr(g)(xt).numpy()
        checks["torch.func.jacfwd"] = tjf(g)(xt).numpy()
        fns["jacrev torch.func"] = lambda: tjr(g)(xt)
        fns["jacfwd torch.func"] = lambda: tjf(g)(xt)
    for k, v in checks.items():
        err = np.abs(v - J).max()
        print(f"  max |J_{k} - J_jacrev| = {err:.1e}")
        assert err < 1e-10, k
    t = _race(fns, repeat)
    rows = []
    for mode in ("jacrev", "jacfwd"):
        v, lp, jt = t[f"{mode} vmap"], t[f"{mode} loop"], t[f"{mode} jit"]
        tt = t.get(f"{mode} torch.func")
        rows.append([mode, f"{v * 1e3:.1f}", f"{jt * 1e3:.1f}", f"{lp * 1e3:.1f}",
                     f"{lp / v:.1f}x", "-" if tt is None else f"{tt * 1e3:.1f}",
                     "-" if tt is None else f"{v / tt:.2f}"])
    print(table(rows, ["200->200, 50 ops", "vmap ms", "jit ms", "loop ms", "loop/vmap",
                       "torch.func ms", "vmap/torch"]))


def bench_per_sample(rng, repeat):
    sizes = [(16, 64), (64, 64), (64, 1)]
    p0 = {f"w{i}": rng.standard_normal(s) / np.sqrt(s[0]) for i, s in enumerate(sizes)}
    p = {k: tf.tensor(v) for k, v in p0.items()}
    xs0, ys0 = rng.standard_normal((256, 16)), rng.standard_normal(256)
    xs, ys = tf.tensor(xs0), tf.tensor(ys0)

    def loss(p, x, y):
        h = tf.tanh(x @ p["w0"])
        h = tf.tanh(h @ p["w1"])
        return ((h @ p["w2"])[0] - y) ** 2

    batched = tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))
    jb = tf.jit(batched)
    g = lambda p, x, y: tf.grad(loss)(p, x, y)  # noqa: E731

    def loop():
        return [g(p, xs[i], ys[i]) for i in range(256)]

    got, ref = batched(p, xs, ys), loop()
    for k in p:
        err = np.abs(got[k].numpy() - np.stack([r[k].numpy() for r in ref])).max()
        assert err < 1e-12, (k, err)
    fns = {"vmap": lambda: batched(p, xs, ys), "jit": lambda: jb(p, xs, ys), "loop": loop}
    if torch is not None:
        from torch.func import grad as tgrad
        from torch.func import vmap as tvmap

        pt = {k: torch.tensor(v) for k, v in p0.items()}
        xt, yt = torch.tensor(xs0), torch.tensor(ys0)

        def tloss(p, x, y):
            h = torch.tanh(x @ p["w0"])
            h = torch.tanh(h @ p["w1"])
            return ((h @ p["w2"])[0] - y) ** 2

        tg = tvmap(tgrad(tloss), in_dims=(None, 0, 0))
        terr = max(np.abs(tg(pt, xt, yt)[k].numpy() - got[k].numpy()).max() for k in p)
        assert terr < 1e-12, terr
        fns["torch.func"] = lambda: tg(pt, xt, yt)
    t = _race(fns, repeat)
    tt = t.get("torch.func")
    print(table([["MLP 16-64-64-1, 256 samples", f"{t['vmap'] * 1e3:.1f}",
                  f"{t['jit'] * 1e3:.1f}", f"{t['loop'] * 1e3:.1f}",
                  f"{t['loop'] / t['vmap']:.1f}x",
                  "-" if tt is None else f"{tt * 1e3:.1f}"]],
                ["per-sample grads", "vmap ms", "jit ms", "loop ms", "loop/vmap",
                 "torch.func ms"]))


def bench_svd(rng, repeat):
    a = tf.tensor(rng.standard_normal((64, 16, 16)) + 1j * rng.standard_normal((64, 16, 16)))

    def loss(m):
        u, s, vh = tf.linalg.svd(m)
        return tf.sum(tf.abs(u[:, :4] @ vh[:4, :]) ** 2 * s[0]) + tf.sum(s ** 3)

    batched = tf.vmap(tf.grad(loss))
    g = tf.grad(loss)

    def loop():
        return [g(a[i]) for i in range(64)]

    err = np.abs(batched(a).numpy() - np.stack([r.numpy() for r in loop()])).max()
    print(f"  max |batched - loop| gradient = {err:.1e}")
    t = _race({"vmap": lambda: batched(a), "loop": loop}, repeat)
    print(table([["64 x 16x16 complex SVD, grad", f"{t['vmap'] * 1e3:.1f}",
                  f"{t['loop'] * 1e3:.1f}", f"{t['loop'] / t['vmap']:.1f}x"]],
                ["gauge-invariant loss", "vmap ms", "loop ms", "loop/vmap"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    bench_jacobians(rng, args.repeat)
    print()
    bench_per_sample(rng, args.repeat)
    print()
    bench_svd(rng, args.repeat)


if __name__ == "__main__":
    main()
