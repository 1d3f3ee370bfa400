"""Implementation of ``tenferro.testing`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np

from .autodiff.forward import jvp
from .autodiff.linearize import linear_transpose
from .autodiff.reverse import vjp
from .ops import asarray, tensor_of
from .pytree import tree_flatten, tree_unflatten

__all__ = [
    "check_grads",
    "check_jvp",
    "check_transpose",
    "check_vjp",
    "numerical_jvp",
    "real_inner",
    "tree_inner",
]


def _np(x):
    return np.asarray(tensor_of(x).detach().numpy() if hasattr(x, "numpy") else x)


def _rand_like(x, rng):
    x = tensor_of(x)
    shape, dt = x.shape, x.dtype
    if dt.kind == "c":
        a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        a = rng.standard_normal(shape)

    return asarray(np.asarray(a, dtype=dt), device=x.device)


def _inexact(x):
    return tensor_of(x).dtype.kind in "fc"


def real_inner(a, b) -> float:
    """<a, b> = Re sum conj(a) * b, in float64/complex128."""
    a, b = _np(a).astype(np.complex128), _np(b).astype(np.complex128)
    return float(np.real(np.vdot(a.ravel(), b.ravel())))


def tree_inner(a, b) -> float:
    la, lb = tree_flatten(a)[0], tree_flatten(b)[0]
    return sum(real_inner(x, y) for x, y in zip(la, lb))


def numerical_jvp(f, args, tangents, eps=1e-6):
    """Central difference (f(x + eps t) - f(x - eps t)) / (2 eps), leaf by leaf."""

    flat, tree = tree_flatten(tuple(args))
    tflat, _ = tree_flatten(tuple(tangents))

    def shifted(s):
        xs = []
        for x, t in zip(flat, tflat):
            x = tensor_of(x)
            if _inexact(x):
                xs.append(asarray(_np(x) + s * eps * _np(t), device=x.device))
            else:
                xs.append(x)
        return f(*tree_unflatten(tree, xs))

    plus, minus = shifted(1.0), shifted(-1.0)
    return _tree_combine(plus, minus, lambda p, m: (_np(p) - _np(m)) / (2 * eps))


def _tree_combine(a, b, fn):
    la, td = tree_flatten(a)
    lb = tree_flatten(b)[0]
    return tree_unflatten(td, [fn(x, y) for x, y in zip(la, lb)])


def _random_tangents(args, rng):
    flat, tree = tree_flatten(tuple(args))
    ts = [_rand_like(x, rng) if _inexact(x) else tensor_of(x) for x in flat]
    return tree_unflatten(tree, ts)


def _close(a, b, rtol, atol, what):
    if not abs(a - b) <= atol + rtol * max(abs(a), abs(b)):
        raise AssertionError(f"{what}: {a!r} vs {b!r} (diff {abs(a - b):.3e})")


def check_jvp(f, args, *, rtol=1e-6, atol=1e-8, eps=1e-6, seed=0):
    rng = np.random.default_rng(seed)
    args = tuple(args)
    ts = _random_tangents(args, rng)
    _, t_out = jvp(f, args, ts)
    t_num = numerical_jvp(f, args, ts, eps)
    probe = _tree_combine(t_out, t_out, lambda a, _: _rand_like(a, rng).numpy())
    _close(tree_inner(probe, t_out), tree_inner(probe, t_num), rtol, atol, "jvp vs finite diff")


def check_vjp(f, args, *, rtol=1e-6, atol=1e-8, eps=1e-6, seed=0, fd=True):
    rng = np.random.default_rng(seed)
    args = tuple(args)
    out, pull = vjp(f, *args)
    ct = _tree_combine(out, out, lambda a, _: _rand_like(a, rng))
    ts = _random_tangents(args, rng)
    g = pull(ct)
    _, t_out = jvp(f, args, ts)
    lhs, rhs = tree_inner(ct, t_out), tree_inner(g, _mask_int(ts))
    _close(lhs, rhs, rtol, atol, "<ct, J t> vs <J^T ct, t>")
    if fd:
        t_num = numerical_jvp(f, args, ts, eps)
        _close(tree_inner(ct, t_num), rhs, rtol, atol, "vjp vs finite diff")


def _mask_int(ts):
    flat, tree = tree_flatten(ts)
    return tree_unflatten(tree, [t if _inexact(t) else 0 * _np(t) for t in flat])


def check_transpose(f_lin, args, *, rtol=1e-8, atol=1e-10, seed=0):
    """Dot-product identity for a linear ``f_lin`` and its ``linear_transpose``."""
    rng = np.random.default_rng(seed)
    args = tuple(args)
    ts = _random_tangents(args, rng)
    out = f_lin(*ts)
    ct = _tree_combine(out, out, lambda a, _: _rand_like(a, rng))
    ft = linear_transpose(f_lin, *args)
    lhs, rhs = tree_inner(ct, out), tree_inner(ft(ct), ts)
    _close(lhs, rhs, rtol, atol, "transpose dot-product identity")


def check_grads(f, args, order=1, modes=("fwd", "rev"), *, rtol=1e-6, atol=1e-8, eps=1e-6,
                seed=0):
    """Check derivatives up to ``order``; order 2 differentiates the jvp/vjp maps again."""
    args = tuple(args)
    if "fwd" in modes:
        check_jvp(f, args, rtol=rtol, atol=atol, eps=eps, seed=seed)
    if "rev" in modes:
        check_vjp(f, args, rtol=rtol, atol=atol, eps=eps, seed=seed)
    if order > 1:
        rng = np.random.default_rng(seed + 1)
        ts = _random_tangents(args, rng)
        if "fwd" in modes:
            def f_jvp(*xs):
                return jvp(f, xs, ts)[1]

            check_grads(f_jvp, args, order - 1, modes, rtol=rtol, atol=atol, eps=eps,
                        seed=seed + 2)
        if "rev" in modes:
            out = f(*args)
            ct = _tree_combine(out, out, lambda a, _: _rand_like(a, rng))

            def f_vjp(*xs):
                return vjp(f, *xs)[1](ct)

            check_grads(f_vjp, args, order - 1, modes, rtol=rtol, atol=atol, eps=eps,
                        seed=seed + 3)
