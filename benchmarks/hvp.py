"""Cost of one Hessian-vector product relative to one gradient, on a function with a few
hundred ops on 64x64 tensors. tenferro's hvp is forward-over-reverse (jvp of grad); the
theoretical ratio is about 2-3. Side by side: JAX (jax.jvp(jax.grad(f))) and PyTorch
(torch.func.jvp(torch.func.grad(f))) when installed.

Target ([forward]): hvp / grad <= 3x.   Run: python benchmarks/hvp.py
"""

from __future__ import annotations

import _common  # noqa: F401  (first: pins BLAS threads before NumPy loads)

# isort: split

import numpy as np
from _common import median_time, pin_torch, table, try_import

N, STEPS = 64, 50  # 6 ops per step -> 300 ops
rng = np.random.default_rng(0)
W0 = rng.standard_normal((N, N)) / np.sqrt(N)
X0 = rng.standard_normal((N, N)) * 0.1
V0 = rng.standard_normal((N, N))


def make_f(ns):
    def f(x, w):
        y = x
        for _ in range(STEPS):
            y = ns.tanh(y @ w + x) * ns.cos(y) + 0.1 * y
        return ns.sum(y * y)

    return f


def bench_tenferro():
    import tenferro as tf

    f = make_f(tf)
    x, w, v = tf.tensor(X0), tf.tensor(W0), tf.tensor(V0)
    g = tf.grad(f)
    t_g = median_time(lambda: g(x, w), repeat=5)
    t_h = median_time(lambda: tf.hvp(lambda a: f(a, w), (x,), (v,)), repeat=5)
    return t_g, t_h


def bench_jax(jax):
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    f = make_f(jnp)
    x, w, v = jnp.asarray(X0), jnp.asarray(W0), jnp.asarray(V0)
    g = jax.jit(jax.grad(f))
    h = jax.jit(lambda a, t: jax.jvp(jax.grad(lambda b: f(b, w)), (a,), (t,))[1])
    t_g = median_time(lambda: g(x, w).block_until_ready(), repeat=7)
    t_h = median_time(lambda: h(x, v).block_until_ready(), repeat=7)
    ge = jax.grad(f)
    he = lambda a, t: jax.jvp(jax.grad(lambda b: f(b, w)), (a,), (t,))[1]  # noqa: E731
    with jax.disable_jit():
        t_ge = median_time(lambda: ge(x, w).block_until_ready(), repeat=3)
        t_he = median_time(lambda: he(x, v).block_until_ready(), repeat=3)
    return (t_g, t_h), (t_ge, t_he)


def bench_torch(torch):
    from torch.func import grad, jvp

    class NS:
        tanh, cos, sum = torch.tanh, torch.cos, torch.sum

    f = make_f(NS)
    x, w, v = torch.tensor(X0), torch.tensor(W0), torch.tensor(V0)
    g = grad(f)
    t_g = median_time(lambda: g(x, w), repeat=5)
    t_h = median_time(lambda: jvp(grad(lambda a: f(a, w)), (x,), (v,))[1], repeat=5)
    return t_g, t_h


def main():
    rows = []
    t_g, t_h = bench_tenferro()
    rows.append(("tenferro (eager)", t_g, t_h))
    torch = pin_torch()
    if torch is not None:
        rows.append(("torch.func (eager)", *bench_torch(torch)))
    jax = try_import("jax")
    if jax is not None:
        jit, eager = bench_jax(jax)
        rows.append(("jax (eager, disable_jit)", *eager))
        rows.append(("jax (jit)", *jit))
    print(f"f: {STEPS * 6} ops on {N}x{N} float64; median seconds")
    print(table([(n, f"{g * 1e3:.2f} ms", f"{h * 1e3:.2f} ms", f"{h / g:.2f}x")
                 for n, g, h in rows], ["library", "grad", "hvp", "hvp/grad"]))
    print(f"tenferro hvp/grad = {t_h / t_g:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()
