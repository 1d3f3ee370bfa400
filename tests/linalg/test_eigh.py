"""eigh / eigvalsh: values, the Hermitian-part convention, the eigenvector gauge, and
derivatives through eigenvalues only and eigenvectors only; second order."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.testing import check_grads
from tests.linalg._util import DTYPES, T, fd_gradient, hermitian, rand, rel_err


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4)])
def test_forward(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    h = (a + np.swapaxes(a.conj(), -1, -2)) / 2
    w, v = (x.numpy() for x in la.eigh(T(a)))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h @ v, v * w[..., None, :], atol=1e-12)
    np.testing.assert_allclose(la.eigvalsh(T(a)).numpy(), w, rtol=1e-12, atol=1e-12)
    # gauge: the largest-magnitude entry of each eigenvector is real and positive
    p = np.argmax(np.abs(v), axis=-2)
    vp = np.take_along_axis(v, p[..., None, :], axis=-2)[..., 0, :]
    assert np.all(np.abs(vp.imag) < 1e-14) and np.all(vp.real > 0)


def test_uses_the_hermitian_part(rng):
    """eigh(A) = eigh((A + A^H)/2): NumPy would read one triangle only."""
    a = rand(rng, (4, 4), "complex128")
    h = (a + a.conj().T) / 2
    for x, y in zip(la.eigh(T(a)), la.eigh(T(h)), strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-13)


@pytest.mark.parametrize("branch", ["values", "vectors", "both"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_branch_isolated_gradients(branch, dtype, rng):
    n = 5
    a = T(hermitian(rng, n, dtype))
    hm = T(hermitian(rng, n, dtype))
    c = rng.standard_normal(n)

    def loss(x):
        w, v = la.eigh(x)
        out = 0.0
        if branch in ("values", "both"):
            out = out + tf.sum(w * T(c)) + tf.sum(w**2)
        if branch in ("vectors", "both"):
            psi = v[:, 0]
            out = out + tf.real(tf.sum(tf.conj(psi) * (hm @ psi)))
        return out

    check_grads(loss, (a,), order=1, modes=("fwd", "rev"))
    # also a non-Hermitian input (the function of its Hermitian part), entry by entry
    b = rand(rng, (n, n), dtype)
    assert rel_err(tf.grad(loss)(T(b)).numpy(), fd_gradient(loss, b)) < 1e-7


@pytest.mark.parametrize("dtype", DTYPES)
def test_phase_dependent_loss_matches_finite_differences(dtype, rng):
    """Re sum(c * v_0) depends on the phase of the eigenvector: the documented gauge makes it
    smooth, and its derivative matches finite differences."""
    a = T(hermitian(rng, 4, dtype))
    c = T(rand(rng, (4,), dtype))

    def loss(x):
        return tf.real(tf.sum(c * la.eigh(x)[1][:, 1]))

    check_grads(loss, (a,), order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_outputs_first_and_second_order(dtype, rng):
    a = T(rand(rng, (2, 4, 4), dtype))
    check_grads(la.eigh, (a,), order=2, rtol=1e-5, atol=1e-7)
    check_grads(la.eigvalsh, (a,), order=2, rtol=1e-5, atol=1e-7)


def test_hvp_specific_heat_like(rng):
    """d^2/dbeta^2 log tr exp(-beta H(x)) through eigh: Hessian-vector product vs finite
    differences of the gradient (the pattern of a specific heat)."""
    n = 5
    x = T(hermitian(rng, n, "complex128"))
    t = T(hermitian(rng, n, "complex128"))

    def free_energy(h):
        w = la.eigvalsh(h)
        v = la.eigh(h)[1]
        return tf.logsumexp(-0.7 * w) + tf.sum(tf.abs2(v[:, 0])[:2])

    hv = tf.hvp(free_energy, (x,), (t,)).numpy()
    g = tf.grad(free_energy)
    eps = 1e-5
    fd = (g(x + eps * t).numpy() - g(x - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-7
