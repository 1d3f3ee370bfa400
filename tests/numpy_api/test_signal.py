"""tenferro.signal.convolve/correlate: SciPy's values and output shapes for every mode and
method (N-d, real and complex, inputs of either size), derivatives against finite
differences, eager against jit."""

import numpy as np
import pytest
import scipy.signal as ss

import tenferro as tf
import tenferro.signal as sig
from tenferro.errors import ShapeError
from tenferro.testing import check_grads
from tests.helpers import rand

CASES = [((7,), (3,)), ((3,), (7,)), ((5, 6), (2, 3)), ((2, 3), (4, 5)), ((4, 5, 3), (2, 2, 2)),
         ((6,), (6,)), ((2, 6), (3, 2))]  # the last: 'valid' is refused (neither contains)
PAIRS = [(sig.convolve, ss.convolve), (sig.correlate, ss.correlate)]


@pytest.mark.parametrize("shapes", CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("method", ["direct", "fft", "auto"])
@pytest.mark.parametrize("fns", PAIRS, ids=["convolve", "correlate"])
def test_matches_scipy(shapes, dtype, mode, method, fns, rng):
    ours, theirs = fns
    a, b = rand(rng, shapes[0], dtype), rand(rng, shapes[1], dtype)
    try:
        want = theirs(a, b, mode=mode, method=method)
    except ValueError:
        with pytest.raises(ShapeError, match="at least as large"):
            ours(tf.tensor(a), tf.tensor(b), mode=mode, method=method)
        return
    got = ours(tf.tensor(a), tf.tensor(b), mode=mode, method=method)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("method", ["direct", "fft"])
@pytest.mark.parametrize("fn", [sig.convolve, sig.correlate])
def test_derivatives_in_both_inputs(dtype, mode, method, fn, rng):
    a, b = rand(rng, (5, 4), dtype), rand(rng, (2, 3), dtype)
    check_grads(lambda x, y: fn(x, y, mode, method), (tf.tensor(a), tf.tensor(b)), order=2,
                rtol=1e-6, atol=1e-8)


def test_jit_agrees_with_eager_and_methods_agree(rng):
    a, b = rand(rng, (6, 5), "float64"), rand(rng, (3, 2), "float64")

    def loss(x, y, method):
        return tf.sum(sig.correlate(x, y, "same", method) ** 2) + tf.sum(
            sig.convolve(x, y, "valid", method))

    for method in ("direct", "fft"):
        g = tf.grad(lambda x, y: loss(x, y, method), argnums=(0, 1))
        gj = tf.jit(g)
        eager, traced = g(tf.tensor(a), tf.tensor(b)), gj(tf.tensor(a), tf.tensor(b))
        for e, t in zip(eager, traced):
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-12, atol=1e-13)
        if method == "direct":
            first = eager
        else:
            for e, d in zip(eager, first):
                np.testing.assert_allclose(e.numpy(), d.numpy(), rtol=1e-10, atol=1e-12)


def test_auto_chooses_fft_for_large_kernels_and_bad_arguments_raise(rng):
    a, b = rand(rng, (300,), "float64"), rand(rng, (200,), "float64")
    np.testing.assert_allclose(sig.convolve(tf.tensor(a), tf.tensor(b)).numpy(),
                               np.convolve(a, b), rtol=1e-10, atol=1e-10)
    graph = tf.make_graph(lambda x, y: sig.convolve(x, y), tf.tensor(a), tf.tensor(b))
    assert "rfft" in str(graph) and "im2col" not in str(graph)
    small = tf.make_graph(lambda x, y: sig.convolve(x, y), tf.tensor(a), tf.tensor(b[:3]))
    assert "im2col" in str(small)
    with pytest.raises(ValueError, match="convolve: mode must be"):
        sig.convolve(tf.tensor(a), tf.tensor(b), mode="circular")
    with pytest.raises(ValueError, match="correlate: method must be"):
        sig.correlate(tf.tensor(a), tf.tensor(b), method="overlap-add")
    with pytest.raises(ShapeError, match="same number of axes"):
        sig.convolve(tf.ones((3, 3)), tf.ones(3))
    np.testing.assert_allclose(sig.convolve(2.0, 3.0).numpy(), 6.0)
