"""Generated vmap checks: for every program of tests/programs.py (every primitive) and the
decompositions below, ``vmap(f)(xs)`` equals stacking ``f(x)``, with in_axes 0, 1 and None
mixes, eagerly and under ``jit``; and ``grad(vmap(f))`` equals ``vmap(grad(f))``. A primitive
without a batch rule would fall back to a loop with a warning, which fails these tests."""

import warnings

import numpy as np
import pytest

import chainrules
import tenferro as tf
from tests.programs import PROGRAMS, Program

B = 3

LINALG = [
    Program("svd", lambda a: _svd_parts(a), ((5, 3),)),
    Program("svd_max_rank", lambda a: tf.abs(tf.linalg.svd(a, max_rank=2)[1]).sum()
            + tf.abs(tf.linalg.svd(a, max_rank=2)[0]).sum(), ((4, 4),)),
    Program("svdvals", lambda a: tf.linalg.svdvals(a), ((3, 4),)),
    Program("eigh", lambda a: _eigh_parts(a), ((4, 4),)),
    Program("eigvalsh", lambda a: tf.linalg.eigvalsh(a + tf.conj(a.T)), ((4, 4),)),
    Program("qr", lambda a: tf.concatenate(tf.linalg.qr(a), axis=0), ((3, 3),)),
    Program("cholesky", lambda a: tf.linalg.cholesky(a @ tf.conj(a.T) + 4 * tf.eye(3)), ((3, 3),)),
    Program("solve_inv", lambda a, b: tf.linalg.solve(a + 3 * tf.eye(3), b)
            + tf.linalg.inv(a + 3 * tf.eye(3)) @ b, ((3, 3), (3, 2))),
    Program("det_slogdet", lambda a: tf.linalg.det(a) + tf.linalg.slogdet(a + 3 * tf.eye(3))[1],
            ((3, 3),)),
    Program("expm", lambda a: tf.linalg.expm(0.3 * a), ((3, 3),)),
]


def _svd_parts(a):  # gauge-invariant pieces: singular values and projectors
    u, s, vh = tf.linalg.svd(a)
    return tf.concatenate([(u * s) @ vh, u @ tf.conj(u.T)[:, :3]], axis=0)


def _eigh_parts(a):
    w, v = tf.linalg.eigh(a + tf.conj(a.T))
    return (v * w) @ tf.conj(v.T)


ALL = PROGRAMS + LINALG
CASES = [(p, dt) for p in ALL for dt in p.dtypes]
IDS = [f"{p.name}-{dt}" for p, dt in CASES]


def _samples(prog, dtype, rng):
    """B argument tuples (the extra, non-differentiable arguments are shared)."""
    n = len(prog.shapes)
    draws = [prog.args(dtype, rng) for _ in range(B)]
    return [d[:n] for d in draws], draws[0][n:]


def _stack(xs, axis=0):
    return tf.tensor(np.stack([x.numpy() for x in xs], axis=axis))


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-10, atol=1e-10)


@pytest.fixture(autouse=True)
def _no_fallback():
    """The loop fallback warns: every primitive here must have a batch rule."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: primitive")
        yield


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_vmap_equals_stacked_loop(prog, dtype, rng):
    diffs, extra = _samples(prog, dtype, rng)
    n = len(diffs[0])
    fn = prog.fn
    want = np.stack([fn(*d, *extra).numpy() for d in diffs])
    axes0 = (0,) * n + (None,) * len(extra)
    stacked = [_stack([d[i] for d in diffs]) for i in range(n)]
    _close(tf.vmap(fn, in_axes=axes0)(*stacked, *extra).numpy(), want)
    _close(tf.jit(tf.vmap(fn, in_axes=axes0))(*stacked, *extra).numpy(), want)
    # first argument mapped along axis 1, the others shared (None)
    mix = (1,) + (None,) * (n - 1 + len(extra))
    first = _stack([d[0] for d in diffs], axis=1) if diffs[0][0].ndim else stacked[0]
    if not diffs[0][0].ndim:
        mix = (0,) + mix[1:]
    want_mix = np.stack([fn(d[0], *diffs[0][1:], *extra).numpy() for d in diffs])
    got = tf.vmap(fn, in_axes=mix)(first, *diffs[0][1:], *extra)
    _close(got.numpy(), want_mix)
    # the batch axis placed last in the output
    if want.ndim > 1:
        got_last = tf.vmap(fn, in_axes=axes0, out_axes=-1)(*stacked, *extra)
        _close(got_last.numpy(), np.moveaxis(want, 0, -1))


@pytest.mark.numpy_only  # the batched forward is checked on every backend above
@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_grad_of_vmap_equals_vmap_of_grad(prog, dtype, rng):
    diffs, extra = _samples(prog, dtype, rng)
    n = len(diffs[0])
    out0 = prog.fn(*diffs[0], *extra)
    w = tf.tensor(rng.standard_normal(out0.shape).astype(np.result_type(out0.dtype, 1.0)))

    def loss(*xs):
        return tf.real(tf.sum(prog.fn(*xs, *extra) * w))

    nums = tuple(range(n))
    stacked = [_stack([d[i] for d in diffs]) for i in range(n)]
    per_member = tf.vmap(tf.grad(loss, argnums=nums))(*stacked)
    of_batch = tf.grad(lambda *xs: tf.sum(tf.vmap(loss)(*xs)), argnums=nums)(*stacked)
    loop = [tf.grad(loss, argnums=nums)(*d) for d in diffs]
    results = [per_member, of_batch]
    if dtype == prog.dtypes[0]:  # traced: jit(vmap(grad)) (one dtype keeps the suite fast)
        results.append(tf.jit(tf.vmap(tf.grad(loss, argnums=nums)))(*stacked))
    for i in range(n):
        want = np.stack([g[i].numpy() for g in loop])
        for r in results:
            _close(r[i].numpy(), want)


def test_every_primitive_has_a_batch_rule():
    """Only constants (no operands) and the custom-rule calls (batched by the trace itself)
    lack a ``batch`` rule."""
    missing = {n for n, p in chainrules.PRIMITIVES.items() if p.batch is None}
    assert missing <= {"full", "iota", "custom_vjp_call", "custom_jvp_call"}, missing
