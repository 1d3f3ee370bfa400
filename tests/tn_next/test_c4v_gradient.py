"""Gradients of the C4v algorithms are the physical quantities' gradients.

The C4v CTMRG and the reduced density matrices of ``tenferro.tn.peps`` use one corner, one
edge and mirror images of half networks: formulas that are right for a C4v-symmetric tensor
only. Differentiated naively they give a wrong derivative in symmetry-breaking directions
(for the Heisenberg energy, a symmetry-breaking part twice the size of the symmetric one).
They are functions of the symmetric part of their argument, so at a symmetric point the
gradient must equal the gradient of the physical energy, computed independently through a
general (directional) CTMRG of a 1x1 cell, which assumes no symmetry."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro import tn
from tenferro._src.symmetric import ctmrg as SC
from tenferro._src.tn.ctmrg import C4V
from tenferro.tn import peps

pytestmark = pytest.mark.numpy_only  # the same code on every backend; a few seconds each

CHI = 6
CTM = dict(tol=1e-10, max_iter=300, progress=False)


def _asymmetry(g) -> float:
    """|g - P g| / |g| with P the projection onto the C4v-symmetric subspace."""
    g = tf.tensor(np.asarray(g))
    return float(tf.norm(g - peps.symmetrize_c4v(g)) / tf.norm(g))


@pytest.fixture
def A():
    return peps.random_c4v_peps(2, seed=1, noise=0.3)


def test_heisenberg_gradient_equals_the_directional_ctmrg_gradient(A):
    e, g = tf.value_and_grad(lambda x: peps.heisenberg_energy(x, CHI, **CTM))(A)
    h = tn.heisenberg_bond()  # the rotated bond on every bond of a 1x1 cell
    e_ref, g_ref = tf.value_and_grad(
        lambda x: tn.ipeps.unitcell_energy([x], [[0]], CHI, h=h, **CTM))(A)
    assert abs(e.item() - e_ref.item()) < 1e-10
    g, g_ref = g.numpy(), g_ref.numpy()
    assert np.linalg.norm(g_ref) > 0.1
    # (2e-8 here, the environments' convergence; without the projection: 2.0 |g_ref|)
    assert np.linalg.norm(g - g_ref) < 1e-6 * np.linalg.norm(g_ref)
    assert _asymmetry(g) < 1e-12


def test_j1j2_gradient_is_symmetric_and_matches_finite_differences(A):
    def energy(x, J2):
        env = tn.ctmrg(peps.double_layer(x / tf.norm(x)), CHI, **CTM)
        return peps.j1j2_energy(x / tf.norm(x), env, J2)

    g = tf.grad(lambda x: energy(x, 0.5))(A).numpy()
    assert _asymmetry(g) < 1e-12
    # the derivative along a symmetric direction, by central differences
    d = peps.symmetrize_c4v(tf.tensor(np.random.default_rng(7).standard_normal(A.shape)))
    d = (d / tf.norm(d)).numpy()
    h = 1e-4
    fd = (energy(tf.tensor(A.numpy() + h * d), 0.5).item()
          - energy(tf.tensor(A.numpy() - h * d), 0.5).item()) / (2 * h)
    assert abs(float(np.sum(g * d)) - fd) < 1e-6
    # J2 = 0: the nearest-neighbour energy and its gradient
    g0 = tf.grad(lambda x: energy(x, 0.0))(A).numpy()
    gh = tf.grad(lambda x: peps.heisenberg_energy(x, CHI, **CTM))(A).numpy()
    assert np.linalg.norm(g0 - gh) < 1e-8 * np.linalg.norm(gh)


def test_rdms_and_magnetisation_are_functions_of_the_symmetric_part(A):
    env = tn.ctmrg(peps.double_layer(A), CHI, **CTM)
    noise = tf.tensor(np.random.default_rng(3).standard_normal(A.shape))
    B = A + 0.1 * (noise - peps.symmetrize_c4v(noise))  # A plus a symmetry-breaking part
    for f in (peps.two_site_rdm, peps.one_site_rdm, peps.diagonal_rdm):
        np.testing.assert_allclose(f(B, env).numpy(), f(A, env).numpy(), atol=1e-13)
    m = peps.staggered_magnetization
    assert abs(m(B, env).item() - m(A, env).item()) < 1e-13


def test_correlation_length_gradient_is_symmetric():
    a = tn.ising_tensor(0.35)
    g = tf.grad(lambda a: tn.correlation_length(a, chi=8, tol=1e-12))(a).numpy()
    r = np.linalg.norm(g - sum(np.transpose(g, p) for p in C4V) / len(C4V))
    assert r < 1e-10 * np.linalg.norm(g)


def test_z2_heisenberg_gradient_is_symmetric():
    """The symmetric (Z2) C4v CTMRG: its gradient, as a dense tensor, is C4v symmetric."""
    phys = S.Leg(S.Z2, ((0, 1), (1, 1)))
    virt = S.Leg(S.Z2, ((0, 1), (1, 1)))
    A0 = S.random([phys] + [virt] * 4, 0, seed=1)
    Ad = peps.symmetrize_c4v(A0.to_dense())
    Ad = peps.neel_peps(2) + 0.3 * Ad / tf.max(tf.abs(Ad))
    As = S.from_dense(Ad, A0.legs, 0)
    g = tf.grad(lambda x: SC.heisenberg_energy(x, 6, tol=None, max_iter=8,
                                               progress=False))(As)
    assert _asymmetry(g.to_dense()) < 1e-12
