"""``vmap`` over symmetric tensors that share one block structure: a batch is a
``SymmetricTensor`` with stacked blocks (``SymmetricTensor.stack``); contractions, untruncated
and statically truncated decompositions, grad inside vmap and symmetric results all equal a
loop over the members."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro.errors import ShapeError

from ._util import assert_close, legs


def _members(n=3, dtype=np.float64):
    return [S.random(legs("U1", [False, True, False]), 1, dtype=dtype, seed=s) for s in range(n)]


def _env(x):
    return S.random([x.legs[2].flip(), x.legs[1].flip(), x.legs[0].flip()], -1, dtype=x.dtype,
                    seed=9)


def _same(a, b, tol=1e-12):
    assert a.legs == b.legs and set(a.blocks) == set(b.blocks)
    for k in a.blocks:
        assert_close(a.blocks[k].numpy(), b.blocks[k].numpy(), tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_vmap_over_a_stack_equals_a_loop(dtype):
    xs = _members(dtype=dtype)
    e = _env(xs[0])

    def f(a):
        y = S.tensordot(a, e, ([2], [0]))
        u, s, vh = S.svd(y, 2)
        vals = tf.concatenate(list(S.diagonal(s).values()))
        return tf.sum(vals ** 3) + S.norm(S.tensordot(u, s, ([2], [0])))

    batch = S.SymmetricTensor.stack(xs)
    assert_close(tf.vmap(f)(batch).numpy(), np.array([f(x).numpy() for x in xs]))
    # grad inside vmap: a batch of symmetric gradients
    _same(tf.vmap(tf.grad(f))(batch), S.SymmetricTensor.stack([tf.grad(f)(x) for x in xs]))
    # static per-sector truncation and a symmetric result
    h = lambda a: S.svd(a, 2, sector_ranks={0: 1, 1: 2}).U  # noqa: E731
    _same(tf.vmap(h)(batch), S.SymmetricTensor.stack([h(x) for x in xs]))
    # a shared symmetric argument (in_axes=None) and a batched scalar
    ts = tf.asarray(np.array([0.5, 1.0, 2.0]))
    g = lambda t, a: S.norm(a * t)  # noqa: E731
    assert_close(tf.vmap(g, in_axes=(0, None))(ts, xs[0]).numpy(),
                 np.array([g(t, xs[0]).numpy() for t in ts]))


def test_vmap_truncation_across_sectors_names_sector_ranks():
    batch = S.SymmetricTensor.stack(_members())
    with pytest.raises(ShapeError, match="sector_ranks"):
        tf.vmap(lambda a: S.norm(S.svd(a, 2, max_rank=2).S))(batch)


def test_stack_rejects_different_structures():
    xs = _members(2)
    other = S.random(legs("U1", [False, True, False]), 0, seed=0)
    with pytest.raises(ShapeError, match="one block structure"):
        S.SymmetricTensor.stack([xs[0], other])
