"""tn helpers build their constants on the device of their inputs (array_api_strict's fake
devices stand in for a GPU): nothing needs a ``default_device`` block."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.tn  # noqa: F401
from tenferro._src.tn.tdvp import tdvp
from tenferro._src.tn.tebd import tebd, tfim_bond_terms
from tenferro.tn import mpo, observables

DEV = "strict:1"


def test_ising_tensor_follows_beta_and_differentiates():
    beta = tf.tensor(0.4, device=DEV)
    t = tf.tn.ising_tensor(beta, h=0.1)
    assert t.device == DEV
    np.testing.assert_allclose(t.numpy(), tf.tn.ising_tensor(0.4, h=0.1).numpy(), rtol=1e-14)
    g = tf.grad(lambda b: tf.sum(tf.tn.ising_tensor(b, h=0.1)))(beta)
    assert g.device == DEV
    lnz = tf.tn.trg(tf.tn.ising_tensor(beta), 4, 4, progress=False)
    assert lnz.device == DEV


def test_chain_constructors_and_mps_helpers_on_a_device():
    psi = tf.tn.random_mps(6, 4, seed=0, device=DEV)
    H = mpo.heisenberg_mpo(6, device=DEV)
    assert all(a.device == DEV for a in psi) and all(w.device == DEV for w in H)
    assert tf.tn.mpo_expectation(psi, H).device == DEV
    assert tf.tn.mpo_variance(psi, H).device == DEV
    a, b, _ = tf.tn.two_site_update(psi[2], psi[3], op=np.eye(4), max_rank=4)
    assert a.device == DEV and b.device == DEV
    prod = tf.tn.product_mps(tf.tensor([[1.0, 0.0]] * 4, device=DEV))
    assert prod[0].device == DEV
    assert observables.entanglement_entropy(psi, 3).device == DEV
    assert observables.structure_factor(psi, mpo.spin_operators("pauli")["Z"]).device == DEV


def test_vumps_on_a_device():
    r = tf.tn.vumps(tf.tn.tfim_bond(1.5, device=DEV), 2, tol=1e-6, progress=False)
    assert r.converged and r.AC.device == DEV and r.C.device == DEV


@pytest.mark.parametrize("method", ["tebd", "tdvp"])
def test_time_evolution_on_a_device(method):
    L = 4
    psi0 = tf.tn.product_mps([[1.0, 0.0]] * L, device=DEV)
    if method == "tebd":
        r = tebd(psi0, tfim_bond_terms(L), 0.1, 2, progress=False)
    else:
        r = tdvp(psi0, mpo.tfim_mpo(L, device=DEV), 0.1, 2, progress=False)
    assert all(a.device == DEV for a in r.mps)
