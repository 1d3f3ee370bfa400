"""Sliced contractions: same values and gradients as unsliced ones in every mode, and the
memory they hold at once stays within ``max_memory``."""

import tracemalloc

import numpy as np
import opt_einsum as oe
import pytest

import tenferro as tf
from tests.einsum.networks import arrays_for, interleaved, peps_norm


def _sliced_plan(eq, shapes, limit):
    p = tf.contract_path(eq, *shapes, shapes=True, max_memory=limit)
    assert p.n_slices > 1, "the test needs a sliced plan"
    return p


# an open index (a) kept, summed indices sliced; a hyper-edge (h); a repeated index (ii)
CASES = [
    ("ab,bc,cd,da->", [(6, 8), (8, 8), (8, 6), (6, 6)], 40),
    ("ab,bc,cd->ad", [(3, 8), (8, 8), (8, 3)], 30),
    ("hab,hbc,hca,ii->h", [(2, 5, 6), (2, 6, 7), (2, 7, 5), (4, 4)], 40),
]


@pytest.mark.parametrize("eq,shapes,limit", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_sliced_values_and_gradients_match_unsliced_in_every_mode(eq, shapes, limit, dtype):
    _sliced_plan(eq, shapes, limit)
    arrays = arrays_for(shapes, seed=5, dtype=dtype)
    rng = np.random.default_rng(6)
    out_shape = np.einsum(eq, *arrays).shape
    w = rng.standard_normal(out_shape)

    def loss(*xs, **kw):
        y = tf.einsum(eq, *xs, **kw)
        return tf.sum(tf.abs2(y) * tf.tensor(w))

    ts = [tf.tensor(a) for a in arrays]
    ref_val = loss(*ts).item()
    ref = [g.numpy() for g in tf.grad(loss, argnums=(0, 1, 2, 3)[: len(ts)])(*ts)]
    np.testing.assert_allclose(
        tf.einsum(eq, *ts, max_memory=limit).numpy(), np.einsum(eq, *arrays), rtol=1e-12
    )

    # eager tape
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
    val = loss(*leaves, max_memory=limit)
    val.backward()
    np.testing.assert_allclose(val.item(), ref_val, rtol=1e-12)
    for x, r in zip(leaves, ref, strict=True):
        np.testing.assert_allclose(x.grad.numpy(), r, rtol=1e-12, atol=1e-14)

    # grad, and jit(grad)
    argnums = tuple(range(len(ts)))
    for g in (tf.grad(lambda *xs: loss(*xs, max_memory=limit), argnums=argnums),
              tf.jit(tf.grad(lambda *xs: loss(*xs, max_memory=limit), argnums=argnums))):
        for got, r in zip(g(*ts), ref, strict=True):
            np.testing.assert_allclose(got.numpy(), r, rtol=1e-12, atol=1e-14)


def test_sliced_peps_norm_gradient_and_hvp():
    """A 2x3 PEPS norm sliced 4+ ways: gradient and a Hessian-vector product through the
    checkpointed slices equal the unsliced ones."""
    shapes, labels = peps_norm(2, 3)
    limit = 60
    p = tf.contract_path(*interleaved(shapes, labels), shapes=True, max_memory=limit)
    assert p.n_slices >= 4
    ts = [tf.tensor(a) for a in arrays_for(shapes, seed=7)]

    def norm(x, *rest, **kw):
        return tf.einsum(*interleaved([x, *rest], labels), **kw)

    g_ref = tf.grad(norm)(*ts).numpy()
    g = tf.grad(lambda *xs: norm(*xs, max_memory=limit))(*ts).numpy()
    np.testing.assert_allclose(g, g_ref, rtol=1e-12, atol=1e-15)
    v = tf.tensor(np.random.default_rng(8).standard_normal(shapes[0]))
    h_ref = tf.hvp(lambda x: norm(x, *ts[1:]), (ts[0],), (v,))[1].numpy()
    h = tf.hvp(lambda x: norm(x, *ts[1:], max_memory=limit), (ts[0],), (v,))[1].numpy()
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-15)


@pytest.mark.numpy_only  # NumPy allocations are what tracemalloc sees
def test_peak_memory_of_a_sliced_contraction_respects_the_limit():
    """The complete graph on four tensors, every bond of size 20: any first product is a
    20^4 intermediate (160_000 elements); sliced, each slice holds far less. Measured with
    tracemalloc (NumPy reports its buffers to it)."""
    n = 20
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal((n, n, n)) / n for _ in range(4)]
    eq = "abc,ade,bdf,cef->"
    ref = np.einsum(eq, *arrays, optimize=True)
    limit = 20_000  # elements
    plan = tf.contract_path(eq, *arrays, max_memory=limit)
    free = tf.contract_path(eq, *arrays)
    assert plan.n_slices > 1 and plan.peak_memory <= limit < free.peak_memory
    ts = [tf.tensor(a) for a in arrays]

    def measured(**kw):
        tf.einsum(eq, *ts, **kw)  # plan first: planning allocates too
        tracemalloc.start()
        try:
            out = tf.einsum(eq, *ts, **kw)
            return out.item(), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    val_free, peak_free = measured()
    val, peak = measured(max_memory=limit)
    np.testing.assert_allclose([val_free, val], ref, rtol=1e-11)
    assert peak_free > n**4 * 8  # the premise: an n^4 intermediate
    assert peak <= limit * 8, (peak, limit * 8)
    # bytes work too
    val_b, peak_b = measured(max_memory="160kB")
    assert peak_b <= 160_000 and val_b == pytest.approx(ref, rel=1e-11)

    # with gradients each slice is checkpointed: the reverse pass holds one slice's
    # residuals next to the operand-sized gradients, not every slice's residuals
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]

    def backward_peak(**kw):
        tf.einsum(eq, *leaves, **kw).backward()  # plan and warm up
        for x in leaves:
            x.grad = None
        tracemalloc.start()
        try:
            tf.einsum(eq, *leaves, **kw).backward()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    grads_peak_free = backward_peak()
    grads_peak = backward_peak(max_memory=limit)
    operand_bytes = sum(a.nbytes for a in arrays)
    # the gradients themselves (and, per slice, their zero-padded pieces and the running
    # sums) are operand-sized: that part cannot be sliced away
    assert grads_peak <= 4 * operand_bytes + 2 * limit * 8, (grads_peak, operand_bytes)
    assert grads_peak < grads_peak_free / 3, (grads_peak, grads_peak_free)


def test_traced_sliced_graph_values_and_live_memory():
    eq = "abc,ade,bdf,cef->"
    n = 8
    arrays = [tf.tensor(a) for a in arrays_for([(n, n, n)] * 4, seed=10)]
    limit = 600
    graph = tf.make_graph(lambda *xs: tf.einsum(eq, *xs, max_memory=limit), *arrays)
    free = tf.make_graph(lambda *xs: tf.einsum(eq, *xs), *arrays)
    ref = oe.contract(eq, *[a.numpy() for a in arrays])
    np.testing.assert_allclose(graph(*arrays).item(), ref, rtol=1e-12)
    inputs = 4 * n**3 * 8
    # the graph's own liveness accounting (which counts views as buffers too) stays within
    # twice the limit, while the unsliced graph holds an n^4 intermediate
    assert graph.peak_live_bytes() - inputs <= 2 * limit * 8
    assert free.peak_live_bytes() - inputs >= n**4 * 8
