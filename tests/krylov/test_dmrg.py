"""Two-site DMRG against exact results: exact diagonalisation (Heisenberg), free fermions
(transverse-field Ising), exactness at full bond dimension, complex MPOs, errors."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError
from tenferro.tn import exact, mpo


@pytest.mark.numpy_only
def test_heisenberg_L16_D16_against_exact_diagonalisation():
    """L=16 at D=16 (the slow benchmark is L=64, D=64: benchmarks/dmrg.py): the energy is
    variational and within the truncation error of the exact ground state."""
    r = tf.tn.dmrg(mpo.heisenberg_mpo(16), 16, progress=False)
    e0 = exact.heisenberg_ground_energy(16)
    assert r.converged
    assert e0 - 1e-12 <= r.energy <= e0 + 5e-6
    assert r.max_bond == 16
    # the returned MPS has this energy
    np.testing.assert_allclose(tf.tn.mpo_expectation(r.mps, mpo.heisenberg_mpo(16)).item(),
                               r.energy, rtol=1e-10)


def test_exact_at_full_bond_dimension():
    """L=10 with D=32 = 2^(L/2) represents every state: DMRG is exact."""
    r = tf.tn.dmrg(mpo.heisenberg_mpo(10), 32, progress=False)
    np.testing.assert_allclose(r.energy, exact.heisenberg_ground_energy(10), rtol=1e-11)


@pytest.mark.parametrize("g", [1.0, 1.5])  # (g < 1: a splitting of ~g^L between the
# symmetric and antisymmetric ground states lets DMRG settle in a symmetry-broken state)
def test_transverse_field_ising_against_free_fermions(g):
    L = 20
    r = tf.tn.dmrg(mpo.tfim_mpo(L, g=g), 32, progress=False)
    np.testing.assert_allclose(r.energy, exact.tfim_ground_energy(L, g=g), rtol=1e-9)


def test_complex_mpo():
    """A complex Hamiltonian (Heisenberg written with S^y) gives the same energy."""
    s = mpo.spin_operators("spin")
    bonds = [(s["Sx"], s["Sx"]), (s["Sy"], s["Sy"]), (s["Sz"], s["Sz"])]
    H = mpo.mpo_from_terms(10, None, bonds)
    assert H[1].dtype == np.complex128
    r = tf.tn.dmrg(H, 32, progress=False)
    np.testing.assert_allclose(r.energy, exact.heisenberg_ground_energy(10), rtol=1e-11)


def test_schedule_and_errors():
    r = tf.tn.dmrg(mpo.heisenberg_mpo(12), 8, schedule=[4, 8], progress=False)
    assert r.max_bond == 8
    with pytest.raises(ShapeError, match="dmrg"):
        tf.tn.dmrg([tf.ones((1, 2, 2))], 8)
    with pytest.raises(ShapeError, match="mps0"):
        tf.tn.dmrg(mpo.heisenberg_mpo(6), 8, mps0=tf.tn.random_mps(5, 4))


def test_a_warm_start_is_not_taken_for_convergence():
    """A good ``mps0`` barely moves under the first sweeps' loose local tolerance (1e-4): the
    unchanged energy must not end the run before the local solves have tightened. (L=10 at
    D=32 is exact; a run that stopped after the loose sweeps kept the start's 1e-7 error.)"""
    H = mpo.heisenberg_mpo(10)
    first = tf.tn.dmrg(H, 16, schedule=[8, 16], max_sweeps=2, progress=False)
    assert first.energy - exact.heisenberg_ground_energy(10) > 1e-9
    r = tf.tn.dmrg(H, 32, mps0=first.mps, schedule=[32], progress=False)
    assert r.converged
    np.testing.assert_allclose(r.energy, exact.heisenberg_ground_energy(10), rtol=1e-12)
