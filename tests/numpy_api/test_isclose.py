"""isclose/allclose: NumPy's values at infinities, NaN (with and without equal_nan), mixed
dtypes, complex numbers and broadcasting; no NumPy warning (inf - inf is never computed)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, ShapeError

A = np.array([1.0, np.inf, np.nan, -np.inf, 1e-9, 2.0, np.inf, 0.0])
B = np.array([1.0 + 1e-6, np.inf, np.nan, np.inf, 0.0, 2.1, 1.0, -0.0])


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol,atol", [(1e-5, 1e-8), (0.1, 0.0), (0.0, 0.0)])
def test_isclose_is_numpys(rtol, atol, equal_nan):
    got = tf.isclose(tf.tensor(A), tf.tensor(B), rtol=rtol, atol=atol, equal_nan=equal_nan)
    np.testing.assert_array_equal(got.numpy(), np.isclose(A, B, rtol, atol, equal_nan))
    assert tf.allclose(tf.tensor(A), tf.tensor(B), rtol, atol, equal_nan) == np.allclose(
        A, B, rtol, atol, equal_nan)


def test_complex_integers_and_broadcasting():
    z = np.array([1 + 1j, 2 - 1j, np.inf + 0j])
    np.testing.assert_array_equal(tf.isclose(tf.tensor(z), 1 + 1.000001j).numpy(),
                                  np.isclose(z, 1 + 1.000001j))
    np.testing.assert_array_equal(tf.isclose(tf.tensor([1, 2]), tf.tensor([[1], [3]])).numpy(),
                                  np.isclose([1, 2], [[1], [3]]))
    assert tf.allclose(tf.tensor([1.0, 2.0]), tf.tensor([1.0, 2.0 + 1e-9]))


def test_bad_tolerances_and_jit():
    with pytest.raises(ShapeError, match="isclose: rtol"):
        tf.isclose(tf.ones(2), tf.ones(2), rtol=-1.0)
    with pytest.raises(ShapeError, match="isclose: atol"):
        tf.isclose(tf.ones(2), tf.ones(2), atol=float("nan"))
    np.testing.assert_array_equal(tf.jit(tf.isclose)(tf.tensor(A), tf.tensor(B)).numpy(),
                                  np.isclose(A, B))
    with pytest.raises(ConcretizationError):
        tf.jit(lambda a, b: tf.tensor(float(tf.allclose(a, b))))(tf.tensor(A), tf.tensor(B))
