"""C4v CTMRG with symmetric (Z2) corners and edges against the dense ``tenferro._src.tn.ctmrg``:
the Heisenberg iPEPS energy and gradient, the classical Ising free energy (Onsager), jit, and
the errors for what it does not support."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro import tn
from tenferro._src.symmetric import ctmrg as SC
from tenferro.errors import ShapeError
from tenferro.tn import exact

from ._util import assert_close

Z2 = S.Z2


def z2_peps(D=2, seed=1, noise=0.3):
    """A real C4v-symmetric Z2 iPEPS near the Neel state (rotated frame): the physical charge
    is the spin's 'down' count, the virtual legs split D into even and odd sectors."""
    phys = S.Leg(Z2, ((0, 1), (1, 1)))
    virt = S.Leg(Z2, ((0, D - D // 2), (1, D // 2)))
    A0 = S.random([phys] + [virt] * 4, 0, seed=seed)
    Ad = tn.peps.symmetrize_c4v(A0.to_dense())  # C4v keeps the block structure (equal legs)
    Ad = tn.peps.neel_peps(D) + noise * Ad / tf.max(tf.abs(Ad))
    return S.from_dense(Ad, A0.legs, 0)


def dense_energy(legs, chi, **kw):
    """The dense C4v code (tn.heisenberg_energy) on to_dense, started from the same
    (symmetric) initial environment, differentiably in A."""
    def f(Ad):
        A = S.from_dense(Ad, legs, 0)
        a = SC.double_layer(A / S.norm(A))
        e0 = SC.to_dense_env(SC.ctm_init(a), a.legs[0])
        return tn.heisenberg_energy(Ad, chi, env=(e0.C, e0.T), progress=False, **kw)
    return f


def sym_energy(chi, **kw):
    return lambda A: SC.heisenberg_energy(A, chi, progress=False, **kw)


def test_z2_heisenberg_energy_and_gradient_match_dense():
    A = z2_peps()
    chi = 8
    # converged energy (the spectra agree step by step: same iterations)
    e_s, env = SC.heisenberg_energy(A, chi, tol=1e-11, max_iter=200, progress=False,
                                    return_env=True)
    assert env.converged and isinstance(env.C, S.SymmetricTensor)
    assert env.C.shape == (chi, chi) and env.T.shape == (chi, 4, chi)
    e_d = dense_energy(A.legs, chi, tol=1e-11, max_iter=200)(A.to_dense())
    assert abs(e_s.item() - e_d.item()) < 1e-10
    assert -0.67 < e_s.item() < -0.4
    # gradient through every iteration (a fixed number, so both unroll the same steps)
    kw = dict(tol=None, max_iter=20)
    gs = tf.grad(sym_energy(chi, **kw))(A)
    gd = tf.grad(dense_energy(A.legs, chi, **kw))(A.to_dense())
    assert isinstance(gs, S.SymmetricTensor) and gs.legs == A.legs
    # the dense gradient has no weight outside the blocks (a symmetric energy is even in
    # charge-changing perturbations), so the whole dense arrays agree
    assert_close(gs.to_dense().numpy(), gd.numpy(), 1e-10)
    assert np.abs(gd.numpy()).max() > 1e-3


def test_tn_ctmrg_dispatches_on_symmetric_site_tensors():
    A = z2_peps(seed=2)
    a = SC.double_layer(A / S.norm(A))
    env = tn.ctmrg(a, 6, tol=1e-10, max_iter=100, progress=False)
    assert isinstance(env.T, S.SymmetricTensor) and env.converged
    ad = a.to_dense()  # the dense network of the same (fused-order) site tensor
    e0 = SC.to_dense_env(SC.ctm_init(a))
    envd = tn.ctmrg(ad, 6, env=(e0.C, e0.T), tol=1e-10, max_iter=100, progress=False)
    np.testing.assert_allclose(env.spectrum, envd.spectrum, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="implicit=True is not supported"):
        tn.ctmrg(a, 6, implicit=True)


def test_symmetric_ctmrg_under_jit_equals_eager():
    """Under jit every projector's per-sector sizes are run-time sizes; values and gradients
    equal eager mode, in both orders."""
    A = z2_peps(seed=3)
    f = sym_energy(8, tol=None, max_iter=3)
    v, g = f(A), tf.grad(f)(A)
    assert_close(tf.jit(f)(A).numpy(), v.numpy())
    for h in (tf.grad(tf.jit(f)), tf.jit(tf.grad(f))):
        gj = h(A)
        for k in g.blocks:
            assert_close(gj.blocks[k].numpy(), g.blocks[k].numpy())


@pytest.mark.parametrize("beta", [0.3])
def test_z2_ising_free_energy_and_energy_vs_onsager(beta):
    """The Ising tensor in the bond basis (cosh, sinh) is Z2 symmetric; its symmetric CTMRG
    gives Onsager's ln Z and, by AD through every iteration, the internal energy."""
    leg = S.Leg(Z2, ((0, 1), (1, 1)))

    def lnz(b):
        a = S.from_dense(tn.ising_tensor(b), [leg] * 4, 0)
        env = SC.ctmrg(a, 16, tol=1e-12, max_iter=400, progress=False)
        return tn.ctm_lnz(a.to_dense(), SC.to_dense_env(env))

    v, g = tf.value_and_grad(lnz)(tf.tensor(beta))
    assert abs(v.item() - exact.onsager_lnz(beta)) < 1e-11
    assert abs(-g.item() - exact.onsager_energy(beta)) < 1e-9


def test_unsupported_site_tensors_raise():
    u1 = S.Leg(S.U1, ((-1, 1), (0, 1), (1, 1)))
    a = S.random([u1] * 4, 0, seed=0)
    with pytest.raises(ShapeError, match="self-dual"):
        SC.ctmrg(a, 4)
    leg = S.Leg(Z2, ((0, 1), (1, 1)))
    other = S.Leg(Z2, ((0, 2), (1, 1)))
    with pytest.raises(ShapeError, match="same leg"):
        SC.ctmrg(S.random([leg, leg, other, leg], 0, seed=0), 4)
    with pytest.raises(ShapeError, match="identity charge"):
        SC.ctmrg(S.random([leg] * 4, 1, seed=0), 4)
