"""VUMPS against exact infinite-chain energies: the Heisenberg chain (Bethe ansatz
1/4 - ln 2) and the critical transverse-field Ising chain (-4/pi), as a function of the bond
dimension; variational bounds, convergence, canonical-form identities, complex tensors."""

import math
import time

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError
from tenferro.tn import vumps as vumps_mod

E_BETHE = 0.25 - math.log(2)
E_TFIM = -4 / math.pi


def _canonical_ok(r, tol):
    D, d = r.AL.shape[0], r.AL.shape[1]
    AL = r.AL.numpy().reshape(D * d, D)
    AR = r.AR.numpy().reshape(D, d * D)
    np.testing.assert_allclose(AL.conj().T @ AL, np.eye(D), atol=1e-10)
    np.testing.assert_allclose(AR @ AR.conj().T, np.eye(D), atol=1e-10)
    C, AC = r.C.numpy(), r.AC.numpy()
    assert np.linalg.norm(AC - np.einsum("asb,bc->asc", r.AL.numpy(), C)) < tol
    assert np.linalg.norm(AC - np.einsum("ab,bsc->asc", C, r.AR.numpy())) < tol


@pytest.mark.numpy_only
def test_heisenberg_energy_improves_with_bond_dimension():
    """D = 2, 4: energies are variational (above the Bethe-ansatz value) and decrease; the
    errors measured when this test was written: 1.524e-2, 2.089e-3 -- we require each below
    1.2 x that (a regression in the algorithm shows up as a larger error or a failure to
    converge). D = 16, 32 are in the slow twin. (D = 8 converges slowly: its two smallest
    Schmidt values are nearly degenerate, a cut through an SU(2) multiplet; see
    design/tn-next.md.)"""
    errs = []
    for D, bound in [(2, 1.83e-2), (4, 2.6e-3)]:
        r = tf.tn.vumps(tf.tn.heisenberg_bond(), D, tol=1e-8, progress=False)
        assert r.converged and r.grad < 1e-8
        err = r.energy - E_BETHE
        assert 0 < err < bound, (D, err)
        errs.append(err)
        _canonical_ok(r, 1e-7)
    assert errs[0] > errs[1]


def test_critical_tfim_small_D():
    """Critical TFIM at D=4 (both backends): within 5.6e-5 of -4/pi (measured 4.68e-5), from
    above. tol=1e-6 on the gradient puts the energy within ~1e-12 of the D=4 optimum."""
    r = tf.tn.vumps(tf.tn.tfim_bond(1.0), 4, tol=1e-6, progress=False)
    assert r.converged
    assert 0 < r.energy - E_TFIM < 5.6e-5


@pytest.mark.slow
@pytest.mark.numpy_only
def test_critical_tfim_D8():
    """Critical TFIM at D=8: within 3e-6 of -4/pi (measured 2.61e-6), from above."""
    r = tf.tn.vumps(tf.tn.tfim_bond(1.0), 8, tol=1e-7, progress=False)
    assert r.converged
    assert 0 < r.energy - E_TFIM < 3e-6


@pytest.mark.numpy_only
def test_gapped_tfim_is_exact_at_small_D():
    """Away from criticality (g = 2) the entanglement is small and D=8 is exact to ~1e-12;
    against the free-fermion energy -(1/pi) int_0^pi sqrt(1 + g^2 + 2 g cos k) dk (J = 1)
    a gradient tolerance of 1e-6, reached in a few iterations, gives 1e-7 (measured 1.3e-8).
    (A tighter tol takes hundreds of iterations: the gradient decays slowly in the
    directions of the tiny Schmidt values, which hardly affect the energy.)"""
    g = 2.0
    from scipy.integrate import quad

    e_exact = -quad(lambda k: math.sqrt(1 + g * g + 2 * g * math.cos(k)), 0, math.pi,
                    epsabs=1e-13, epsrel=1e-13, limit=200)[0] / math.pi
    r = tf.tn.vumps(tf.tn.tfim_bond(g), 8, tol=1e-6, progress=False)
    assert r.converged and r.iterations < 20
    assert abs(r.energy - e_exact) < 1e-7


@pytest.mark.numpy_only
def test_complex_tensors():
    """Complex arithmetic: the same TFIM (g = 1.5) energy at D=4 as the real run, to what
    tol=1e-8 on the gradient leaves in the energy (1e-9; measured 5.6e-11)."""
    real = tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=1e-8, progress=False)
    cplx = tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=1e-8, progress=False,
                       dtype=tf.complex128)
    assert cplx.AC.dtype == np.complex128 and cplx.converged and real.converged
    assert abs(cplx.energy - real.energy) < 1e-9
    _canonical_ok(cplx, 1e-6)


def test_progress_records_and_callback():
    """The callback receives one record per iteration with the energy, dE and |grad|; the
    estimate of the iterations left is a number once the gradient decreases."""
    seen = []
    r = tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=1e-9, progress=False, callback=seen.append)
    assert len(seen) == r.iterations == len(r.records)
    assert seen[-1]["energy"] == r.energy and seen[-1]["grad"] == r.grad
    assert {"dE", "grad", "gauge_err", "step_time", "steps_left"} <= set(seen[-1])
    assert seen[-1]["steps_left"] == 0
    assert any(isinstance(s["steps_left"], int) and s["steps_left"] > 0 for s in seen[1:-1])


def test_errors():
    with pytest.raises(ShapeError, match="vumps"):
        tf.tn.vumps(tf.ones((2, 2, 2)), 4)
    with pytest.raises(ShapeError, match="vumps"):
        tf.tn.vumps(tf.tn.tfim_bond(), 4, AL0=tf.ones((3, 2, 3)))
    with pytest.raises(ShapeError, match="vumps"):
        tf.tn.vumps(tf.eye(3), 4)


@pytest.mark.slow
@pytest.mark.numpy_only
@pytest.mark.parametrize("D, bound", [(16, 5.6e-5), (32, 8.7e-6), (64, 1.26e-6), (80, 1e-6)])
def test_heisenberg_large_D_bethe_ansatz(D, bound):
    """The acceptance runs (design/tn-next.md has the numbers and times): measured
    E - E_Bethe = 4.661e-5 (D=16), 7.209e-6 (D=32), 1.2526e-6 (D=64), 7.24e-7 (D=80). D=64
    converges (|grad| < 1e-8, two seeds agree to 1e-15): the single-site uniform MPS optimum
    at D=64 misses the 1e-6 target; D=80 meets it."""
    t0 = time.perf_counter()
    r = tf.tn.vumps(tf.tn.heisenberg_bond(), D, tol=1e-8, progress=False, maxiter=1000)
    print(f"D={D}: E={r.energy!r} E-E_Bethe={r.energy - E_BETHE:.4e} "
          f"{r.iterations} it {time.perf_counter() - t0:.0f}s")
    assert r.converged
    assert 0 < r.energy - E_BETHE < bound


_ = vumps_mod
