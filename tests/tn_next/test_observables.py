"""Entanglement and correlation helpers against dense state vectors."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.tn  # noqa: F401
from tenferro.errors import ShapeError
from tenferro.tn import mpo, observables

P = mpo.spin_operators("pauli")


def _dense(psi):
    return psi_to_np(tf.tn.mps_to_dense(psi))


def psi_to_np(v):
    v = v.numpy()
    return v / np.linalg.norm(v)


def _site_op(op, i, L):
    out = np.eye(1)
    for k in range(L):
        out = np.kron(out, op if k == i else np.eye(2))
    return out


@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_entanglement_against_dense_schmidt_values(dtype):
    L = 7
    psi = tf.tn.random_mps(L, 5, seed=2, dtype=dtype, canonical=None)
    v = _dense(psi)
    for bond in (1, 3, 6):
        s = np.linalg.svd(v.reshape(2 ** bond, -1), compute_uv=False)
        s = s[s > 1e-14]
        got = observables.entanglement_spectrum(psi, bond).numpy()
        np.testing.assert_allclose(got[: len(s)], s, atol=1e-12)
        p = s ** 2
        np.testing.assert_allclose(observables.entanglement_entropy(psi, bond).item(),
                                   -np.sum(p * np.log(p)), atol=1e-12)
        np.testing.assert_allclose(observables.entanglement_entropy(psi, bond, alpha=2).item(),
                                   -np.log(np.sum(p ** 2)), atol=1e-12)
    with pytest.raises(ShapeError, match="bond"):
        observables.entanglement_spectrum(psi, 0)


def test_uniform_mps_spectrum_from_C():
    C = tf.tensor(np.diag([0.8, 0.6]))
    np.testing.assert_allclose(observables.entanglement_spectrum(C).numpy(), [0.8, 0.6])
    np.testing.assert_allclose(observables.entanglement_entropy(C).item(),
                               -(0.64 * np.log(0.64) + 0.36 * np.log(0.36)))


@pytest.mark.numpy_only
def test_correlations_and_structure_factor_against_dense():
    L = 6
    psi = tf.tn.random_mps(L, 4, seed=5, dtype=tf.complex128)
    v = _dense(psi)
    Z, Y = P["Z"], P["Y"]
    G = observables.correlation_matrix(psi, Z, Y).numpy()
    Gd = np.array([[np.vdot(v, _site_op(Z, i, L) @ _site_op(Y, j, L) @ v) if i != j else
                    np.vdot(v, _site_op(Z @ Y, i, L) @ v) for j in range(L)] for i in range(L)])
    np.testing.assert_allclose(G, Gd, atol=1e-12)
    m = observables.expectation_values(psi, Z).numpy()
    md = np.array([np.vdot(v, _site_op(Z, i, L) @ v) for i in range(L)])
    np.testing.assert_allclose(m, md, atol=1e-12)
    q = np.array([0.0, np.pi / 3, np.pi])
    S = observables.structure_factor(psi, Z, q).numpy()
    Gzz = np.array([[np.vdot(v, _site_op(Z, i, L) @ _site_op(Z, j, L) @ v)
                     for j in range(L)] for i in range(L)]) - np.outer(md.conj(), md)
    x = np.arange(L)
    Sd = [np.real(np.sum(np.exp(1j * qq * (x[:, None] - x[None, :])) * Gzz)) / L for qq in q]
    np.testing.assert_allclose(S, Sd, atol=1e-12)


def test_entropy_is_differentiable():
    """d S / d psi through the QR canonical form and the SVD (finite differences)."""
    L = 5
    psi = tf.tn.random_mps(L, 3, seed=1)

    def f(a2):
        return observables.entanglement_entropy(psi[:2] + [a2] + psi[3:], 2)

    g = tf.grad(f)(psi[2]).numpy()
    d = np.random.default_rng(0).standard_normal(psi[2].shape)
    h = 1e-6
    a = psi[2].numpy()
    fd = (f(tf.tensor(a + h * d)).item() - f(tf.tensor(a - h * d)).item()) / (2 * h)
    assert abs(fd - np.sum(g * d)) < 1e-6 * max(1, abs(fd))


def test_uniform_correlations_reproduce_the_vumps_energy():
    """The energy per site is a nearest-neighbour correlation: -<Z_0 Z_1> - g <X_0> for the
    TFIM (g = 1.5, D = 4). Connected correlations decay (gapped) and the structure factor
    averaged over the Brillouin zone is the connected on-site value."""
    g = 1.5
    r = tf.tn.vumps(tf.tn.tfim_bond(g), 4, tol=1e-9, progress=False)
    zz = observables.uniform_correlations(r.AC, r.AR, P["Z"], rmax=30).numpy()
    x = observables.uniform_correlations(r.AC, r.AR, P["X"], np.eye(2), rmax=0).numpy()
    assert abs(-zz[1] - g * x[0] - r.energy) < 1e-10
    assert abs(zz[0] - 1) < 1e-12 and abs(zz[30]) < 1e-6  # Z^2 = 1; no order at g > 1
    M = 64  # q grid finer than the 2 rmax + 1 = 61 distances
    q = 2 * np.pi * np.arange(M) / M
    S = observables.uniform_structure_factor(r.AC, r.AR, P["X"], q, rmax=30).numpy()
    xx = observables.uniform_correlations(r.AC, r.AR, P["X"], rmax=0).numpy()
    assert abs(S.mean() - (xx[0] - x[0] ** 2)) < 1e-12
    assert np.all(S > 0)  # a structure factor of a Hermitian operator is non-negative


@pytest.mark.numpy_only
def test_uniform_correlations_heisenberg_energy():
    """Rotated Heisenberg bond -SxSx + SySy - SzSz at r = 1 sums to the VUMPS energy (which
    is evaluated with AL and C AR: they differ from AC, AR by the gauge error, ~3e-10 here,
    hence 1e-9)."""
    s = mpo.spin_operators("spin")
    r = tf.tn.vumps(tf.tn.heisenberg_bond(), 4, tol=1e-9, progress=False)
    c = {k: observables.uniform_correlations(r.AC, r.AR, s[k], rmax=1).numpy()[1]
         for k in ("Sx", "Sy", "Sz")}
    e = -c["Sx"] + c["Sy"] - c["Sz"]
    assert abs(e - r.energy) < 1e-9
