"""sort, argsort, partition, take_along_axis: NumPy's values (eager and jit), derivatives
that follow the permutation (ties broken by index), finite differences."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError, ShapeError
from tenferro.testing import check_grads
from tests.numpy_api._util import assert_matches_numpy, sample


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_match_numpy(axis, rng):
    x = sample(rng, (4, 5))
    x[1, 2] = x[3, 0] = x[0, 0]  # ties
    x[2, 1] = np.nan  # NaN sorts last
    assert_matches_numpy(lambda t: tf.sort(t, axis), lambda a: np.sort(a, axis), x)
    assert_matches_numpy(lambda t: tf.argsort(t, axis),
                         lambda a: np.argsort(a, axis, kind="stable").astype(np.int64), x,
                         rtol=0, atol=0)


def test_integer_input_sorts():
    i = np.array([[3, -1, 2], [0, 0, -5]])
    assert_matches_numpy(tf.sort, np.sort, i, rtol=0, atol=0)


def test_take_along_axis_matches_numpy(rng):
    x = sample(rng, (3, 4, 2))
    idx = rng.integers(-4, 4, size=(3, 6, 1))  # negative indices, broadcasting over axis 2
    assert_matches_numpy(lambda t: tf.take_along_axis(t, tf.tensor(idx), 1),
                         lambda a: np.take_along_axis(a, idx, 1), x)
    flat = rng.integers(0, 24, size=(5,))
    assert_matches_numpy(lambda t: tf.take_along_axis(t, tf.tensor(flat), None),
                         lambda a: np.take_along_axis(a, flat, None), x)


def test_partition_is_a_valid_partition(rng):
    x = sample(rng, (3, 7))
    for kth in (0, 3, -1, [1, 5]):
        p = tf.partition(tf.tensor(x), kth, axis=1).numpy()
        s = np.sort(x, axis=1)
        for k in np.atleast_1d(kth) % 7:
            np.testing.assert_array_equal(p[:, k], s[:, k])
            assert (p[:, :k] <= p[:, k : k + 1]).all() and (p[:, k:] >= p[:, k : k + 1]).all()
    with pytest.raises(ShapeError, match="kth=7"):
        tf.partition(tf.tensor(x), 7)


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_derivatives_match_finite_differences(axis, rng):
    check_grads(lambda t: tf.sort(t, axis), (tf.tensor(sample(rng, (4, 5))),))


def test_take_along_axis_derivative_complex(rng):
    z = tf.tensor(sample(rng, (3, 4), "complex128"))
    idx = tf.tensor(np.array([[0, 0, 3], [1, 2, 2], [3, 1, 0]]))
    check_grads(lambda t: tf.take_along_axis(t, idx, 1), (z,))


def test_sort_derivative_follows_the_permutation_with_ties_broken_by_index():
    x = tf.tensor([1.0, 1.0, 0.0, 1.0])
    # sorted: [0 (from 2), 1 (from 0), 1 (from 1), 1 (from 3)]
    g = tf.grad(lambda t: tf.sum(tf.sort(t) * tf.tensor([1.0, 2.0, 3.0, 4.0])))(x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 3.0, 1.0, 4.0])
    np.testing.assert_array_equal(tf.argsort(x).numpy(), [2, 0, 1, 3])
    gj = tf.jit(tf.grad(lambda t: tf.sum(tf.sort(t) * tf.tensor([1.0, 2.0, 3.0, 4.0]))))(x)
    np.testing.assert_array_equal(gj.numpy(), g.numpy())


def test_argsort_has_no_derivative():
    x = tf.tensor([3.0, 1.0, 2.0])
    g = tf.grad(lambda t: tf.sum(t * tf.argsort(t)))(x)
    np.testing.assert_array_equal(g.numpy(), [1.0, 2.0, 0.0])  # argsort(x), held constant


def test_bad_input():
    with pytest.raises(DTypeError, match="bool"):
        tf.sort(tf.tensor([True, False]))
    with pytest.raises(ShapeError, match="order"):
        tf.sort(tf.tensor([1.0]), order="x")
    with pytest.raises(DTypeError, match="integers"):
        tf.take_along_axis(tf.tensor([1.0]), tf.tensor([0.0]), 0)
    with pytest.raises(ShapeError, match="rank"):
        tf.take_along_axis(tf.tensor([[1.0]]), tf.tensor([0]), 0)
