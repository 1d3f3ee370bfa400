"""Correlation length of the 2D Ising model from the channel transfer matrix of a CTMRG
environment: value against the exact result above T_c, derivative in beta by AD against
finite differences (and, with the chi extrapolation, against the exact derivative)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.correlation import channel_transfer_operator
from tenferro.tn import correlation_length, ctmrg, ising_tensor

BETA = 0.42  # above T_c (beta_c = 0.4407): xi = 11.9


def exact_xi(beta):
    """1/xi = 2 (K* - K), tanh K* = exp(-2K) (Onsager 1944; McCoy and Wu 1973), and its
    derivative d xi / d beta = 2 xi^2 (1 + 1/sinh 2K)."""
    k_dual = -0.5 * np.log(np.tanh(beta))
    xi = 1.0 / (2.0 * (k_dual - beta))
    return xi, 2.0 * xi**2 * (1.0 + 1.0 / np.sinh(2.0 * beta))


def _xi(chi, **kw):
    def f(beta):
        return correlation_length(ising_tensor(beta), chi=chi, tol=1e-12, max_iter=1000, **kw)
    return f


def _check(chi, rel_value, h=2e-5):
    f = _xi(chi, return_details=True)
    (xi, info), g = tf.value_and_grad(f, has_aux=True)(tf.tensor(BETA))
    ex, dex = exact_xi(BETA)
    assert abs(float(xi) / ex - 1) < rel_value
    fd = (float(f(tf.tensor(BETA + h))[0]) - float(f(tf.tensor(BETA - h))[0])) / (2 * h)
    assert abs(float(g) - fd) <= 1e-5 * abs(fd)
    return float(xi), float(g), ex, dex, info


@pytest.mark.numpy_only
def test_ising_correlation_length_extrapolated_and_its_beta_derivative():
    """chi = 8, 12, 16 extrapolated (Rams-Czarnik-Cincio): within 1% of the exact value (the
    largest chi alone is 7% low), d xi / d beta by AD equals the finite difference."""
    _, _, ex, _, info = _check([8, 12, 16], rel_value=0.01)
    single = 1 / float(info["eps2"][-1])
    assert abs(single / ex - 1) > 0.05  # the extrapolation is what gets it


@pytest.mark.slow
@pytest.mark.numpy_only
def test_ising_correlation_length_larger_chi():
    """chi = 12..24: within 0.2% of the exact xi, and the AD derivative of the extrapolated
    xi within 1% of the exact d xi / d beta."""
    xi, g, ex, dex, _ = _check([12, 16, 20, 24], rel_value=0.002)
    assert abs(g / dex - 1) < 0.01


@pytest.mark.numpy_only
def test_eigs_and_eigsh_agree_and_a_given_env_is_used():
    """The Arnoldi (non-Hermitian) path gives the Hermitian one's value and derivative; an
    environment passed in gives the same xi as one computed inside."""
    b = tf.tensor(0.36)
    vh, gh = tf.value_and_grad(_xi(8))(b)
    vg, gg = tf.value_and_grad(_xi(8, hermitian=False))(b)
    assert abs(float(vh) - float(vg)) <= 1e-10 * abs(float(vh))
    assert abs(float(gh) - float(gg)) <= 1e-7 * abs(float(gh))
    a = ising_tensor(0.36)
    env = ctmrg(a, 8, tol=1e-12, max_iter=1000, progress=False)
    xi, info = correlation_length(a, env, return_details=True)
    assert abs(float(xi) - float(vh)) <= 1e-7 * float(vh)
    assert info["chi"] == [8] and len(info["eigenvalues"][0]) == 3


@pytest.mark.numpy_only
def test_channel_transfer_operator_matches_the_dense_matrix():
    """The matrix-free E against E built by explicit einsum, and xi against numpy's eigvals."""
    a = ising_tensor(0.3)
    env = ctmrg(a, 6, tol=1e-12, max_iter=500, progress=False)
    T, an = env.T.numpy(), a.numpy()
    E = np.einsum("aub,uldr,cde->alcbre", T, an, T).reshape(T.shape[0] * 2 * T.shape[0], -1)
    op = channel_transfer_operator(a, env.T)
    x = np.random.default_rng(0).standard_normal(E.shape[0])
    np.testing.assert_allclose(op.matvec(tf.tensor(x)).numpy(), x @ E, rtol=1e-12, atol=1e-14)
    lam = np.sort(np.abs(np.linalg.eigvals(E)))[::-1]
    xi = correlation_length(a, env)
    np.testing.assert_allclose(float(xi), -1 / np.log(lam[1] / lam[0]), rtol=1e-9)


def test_correlation_length_bad_input():
    a = ising_tensor(0.3)
    with pytest.raises(ValueError, match="correlation_length: pass a converged env or"):
        correlation_length(a)
    with pytest.raises(ValueError, match="distinct"):
        correlation_length(a, chi=[8, 8])
    env = ctmrg(a, 4, progress=False)
    with pytest.raises(ValueError, match="not both"):
        correlation_length(a, env, chi=8)
    with pytest.raises(tf.errors.ShapeError, match="does not match the environment"):
        correlation_length(tf.ones((3, 3, 3, 3)), env)
