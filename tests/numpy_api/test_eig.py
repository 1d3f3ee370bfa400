"""linalg.eig / eigvals / matrix_power: NumPy's values, the eigenvector gauge, derivatives
against finite differences and against closed forms (real and complex, batched), degenerate
spectra, eager == jit, both backends (array_api_strict computes eig on the host)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import DTypeError, ShapeError
from tenferro.testing import check_grads
from tests.numpy_api._util import sample

DTYPES = ["float64", "complex128"]


def _gauge(v):
    """NumPy's eigenvectors in tenferro's gauge: unit norm, largest entry real positive."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    p = np.argmax(np.abs(v), axis=-2)
    vp = np.take_along_axis(v, p[..., None, :], axis=-2)
    return v * (np.abs(vp) / vp)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (2, 3, 4, 4)])
def test_values_match_numpy(shape, dtype, rng):
    a = sample(rng, shape, dtype)
    w, v = la.eig(tf.tensor(a))
    wn, vn = np.linalg.eig(a)
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(v.numpy(), _gauge(vn), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(a @ v.numpy(), v.numpy() * w.numpy()[..., None, :], atol=1e-12)
    np.testing.assert_allclose(la.eigvals(tf.tensor(a)).numpy(), wn, rtol=1e-12, atol=1e-12)
    jw, jv = tf.jit(la.eig)(tf.tensor(a))
    np.testing.assert_allclose(jw.numpy(), w.numpy(), rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(jv.numpy(), v.numpy(), rtol=1e-14, atol=1e-14)


def test_gauge_convention(rng):
    v = la.eig(tf.tensor(sample(rng, (6, 6), "complex128"))).eigenvectors.numpy()
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-14)
    vp = v[np.argmax(np.abs(v), axis=0), np.arange(6)]
    assert np.all(np.abs(vp.imag) < 1e-15) and np.all(vp.real > 0)


def test_single_precision_gives_complex64():
    a = tf.tensor(np.array([[0.0, 1.0], [-1.0, 0.0]], np.float32))
    w, v = la.eig(a)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(w.numpy()), [-1j, 1j], atol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_derivatives_match_finite_differences(dtype, rng):
    a = tf.tensor(sample(rng, (4, 4), dtype))
    check_grads(lambda m: la.eig(m).eigenvalues, (a,), order=2, rtol=1e-5, atol=1e-7)
    check_grads(lambda m: la.eig(m).eigenvectors, (a,))
    check_grads(lambda m: la.eigvals(m), (a,))


def test_batched_derivatives(rng):
    a = tf.tensor(sample(rng, (2, 3, 3), "complex128"))
    check_grads(lambda m: tf.concatenate([la.eig(m)[0][..., None, :], la.eig(m)[1]], -2), (a,))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigenvalue_gradients_match_closed_forms(dtype, rng):
    """sum w = tr A and sum w^2 = tr A^2, so their gradients are I and 2 conj(A)^T."""
    a = sample(rng, (5, 5), dtype)
    g1 = tf.grad(lambda m: tf.real(tf.sum(la.eigvals(m))))(tf.tensor(a))
    np.testing.assert_allclose(g1.numpy(), np.eye(5), atol=1e-12)
    g2 = tf.grad(lambda m: tf.real(tf.sum(la.eigvals(m) ** 2)))(tf.tensor(a))
    np.testing.assert_allclose(g2.numpy(), 2 * a.conj().T, atol=1e-11)


def test_eager_tape_equals_functional_and_jit(rng):
    a = sample(rng, (4, 4))

    def loss(m):
        w, v = la.eig(m)
        return tf.sum(tf.abs2(v[:2])) + tf.real(tf.sum(w * w.conj() * tf.arange(4.0)))

    g = tf.grad(loss)(tf.tensor(a))
    leaf = tf.tensor(a, requires_grad=True)
    loss(leaf).backward()
    np.testing.assert_allclose(leaf.grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tf.jit(tf.grad(loss))(tf.tensor(a)).numpy(), g.numpy(),
                               rtol=1e-12, atol=1e-13)


def test_degenerate_eigenvalues_give_finite_gauge_invariant_gradients():
    """A diagonalizable matrix with a repeated eigenvalue: the derivative of the spectrum's
    symmetric functions is finite and exact (the broadening drops the 1/0 pairs)."""
    p = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    a = p @ np.diag([2.0, 2.0, -1.0]) @ np.linalg.inv(p)
    g = tf.grad(lambda m: tf.real(tf.sum(la.eigvals(m) ** 2)))(tf.tensor(a))
    assert np.isfinite(g.numpy()).all()
    np.testing.assert_allclose(g.numpy(), 2 * a.T, atol=1e-8)


def test_real_matrix_with_complex_pairs(rng):
    a = np.array([[0.0, -2.0, 0.5], [2.0, 0.0, 0.1], [0.3, 0.2, 1.0]])
    w = la.eigvals(tf.tensor(a)).numpy()
    np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                               atol=1e-13)
    assert np.abs(w.imag).max() > 1
    check_grads(lambda m: la.eig(m).eigenvectors, (tf.tensor(a),))


def test_errors():
    with pytest.raises(ShapeError, match="square"):
        la.eig(tf.tensor(np.ones((2, 3))))
    with pytest.raises(DTypeError, match="float16"):
        la.eig(tf.tensor(np.ones((2, 2), np.float16)))


# ----------------------------------------------------------------------- matrix_power
@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5, 8])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_power_matches_numpy(n, dtype, rng):
    a = sample(rng, (2, 3, 3), dtype) + 2 * np.eye(3)
    out = la.matrix_power(tf.tensor(a), n)
    np.testing.assert_allclose(out.numpy(), np.linalg.matrix_power(a, n), rtol=1e-11,
                               atol=1e-11)
    np.testing.assert_allclose(tf.jit(lambda m: la.matrix_power(m, n))(tf.tensor(a)).numpy(),
                               out.numpy(), rtol=1e-14, atol=1e-14)
    if n != 0:
        check_grads(lambda m: la.matrix_power(m, n), (tf.tensor(a),))


def test_matrix_power_of_integer_matrices_stays_integer():
    a = np.array([[1, 1], [1, 0]])
    for n in (0, 1, 10):
        out = la.matrix_power(tf.tensor(a), n)
        assert out.dtype == np.linalg.matrix_power(a, n).dtype
        np.testing.assert_array_equal(out.numpy(), np.linalg.matrix_power(a, n))


def test_matrix_power_errors():
    with pytest.raises(ShapeError, match="integer"):
        la.matrix_power(tf.tensor(np.eye(2)), 1.5)
    with pytest.raises(ShapeError, match="square"):
        la.matrix_power(tf.tensor(np.ones((2, 3))), 2)


def test_device_is_kept(rng):
    """array_api_strict has no eig: the host computes it and the result returns to the device."""
    a = tf.tensor(sample(rng, (3, 3)), device="strict:1")
    w, v = la.eig(a)
    assert w.device == "strict:1" and v.device == "strict:1"
    g = tf.grad(lambda m: tf.real(tf.sum(la.eigvals(m))))(a)
    assert g.device == "strict:1"
    np.testing.assert_allclose(g.numpy(), np.eye(3), atol=1e-12)
