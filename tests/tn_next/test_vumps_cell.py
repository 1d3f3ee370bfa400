"""Multi-site unit-cell VUMPS (``tn.vumps(h, D, unit_cell=n)`` or a list of bond
Hamiltonians): it reproduces the single-site result where the ground state is translation
invariant, represents dimerised states that a single-site uniform MPS cannot (alternating
Heisenberg chain against exact diagonalisation), and finds the translation-breaking finite-D
optimum of the Heisenberg chain (Latorre & Pico, arXiv:0812.1761)."""

import math

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import tenferro as tf
import tenferro.tn  # noqa: F401
from tenferro.errors import ShapeError

E_BETHE = 0.25 - math.log(2)


def _cell_canonical_ok(r, tol):
    n = len(r.AL)
    for j in range(n):
        AL, AR, C, AC = (x.numpy() for x in (r.AL[j], r.AR[j], r.C[j], r.AC[j]))
        D, d = AL.shape[0], AL.shape[1]
        np.testing.assert_allclose(AL.reshape(D * d, D).conj().T @ AL.reshape(D * d, D),
                                   np.eye(D), atol=1e-10)
        np.testing.assert_allclose(AR.reshape(D, d * D) @ AR.reshape(D, d * D).conj().T,
                                   np.eye(D), atol=1e-10)
        assert np.linalg.norm(AC - np.einsum("asb,bc->asc", AL, C)) < tol
        assert np.linalg.norm(AC - np.einsum("ab,bsc->asc", r.C[j - 1].numpy(), AR)) < tol


def _alternating_ring_energy(L, J1, J2):
    """Ground-state energy per site of the periodic ring sum_i J_i S_i.S_{i+1}, J_i = J1 on
    even i and J2 on odd i (exact diagonalisation in the Sz = 0 sector)."""
    states = [s for s in range(1 << L) if bin(s).count("1") == L // 2]
    index = {s: k for k, s in enumerate(states)}
    rows, cols, vals = [], [], []
    for k, s in enumerate(states):
        diag = 0.0
        for i in range(L):
            j, J = (i + 1) % L, (J1 if i % 2 == 0 else J2)
            a, b = (s >> i) & 1, (s >> j) & 1
            diag += J * (0.25 if a == b else -0.25)
            if a != b:
                rows.append(index[s ^ (1 << i) ^ (1 << j)])
                cols.append(k)
                vals.append(J / 2)
        rows.append(k)
        cols.append(k)
        vals.append(diag)
    H = sp.csr_matrix((vals, (rows, cols)), shape=(len(states),) * 2)
    return float(sla.eigsh(H, 1, which="SA", tol=1e-13)[0][0]) / L


@pytest.mark.numpy_only
def test_two_site_cell_reproduces_single_site_tfim():
    """TFIM at g = 1.5 (translation-invariant ground state): a 2- and a 3-site cell reach the
    single-site energy to 1e-10 with equal bond energies (tol = 1e-11 on the gradient; the
    energy error follows the gradient linearly while the gauge error is comparable, measured
    difference 2e-14 for the 2-site cell). ``unit_cell=1`` is the single-site algorithm,
    returned as lists."""
    h = tf.tn.tfim_bond(1.5)
    one = tf.tn.vumps(h, 4, tol=1e-11, progress=False)
    assert one.converged and one.bond_energies == [one.energy]
    listed = tf.tn.vumps(h, 4, tol=1e-11, progress=False, unit_cell=1)
    assert isinstance(listed.AL, list) and len(listed.AL) == 1
    assert listed.energy == one.energy
    for n in (2, 3):
        r = tf.tn.vumps(h, 4, tol=1e-11, progress=False, unit_cell=n)
        assert r.converged and len(r.AL) == len(r.C) == len(r.bond_energies) == n
        assert abs(r.energy - one.energy) < 1e-10
        assert max(r.bond_energies) - min(r.bond_energies) < 1e-10
        _cell_canonical_ok(r, 1e-9)


@pytest.mark.numpy_only
def test_complex_cell():
    """Complex tensors in a 2-site cell: the real single-site TFIM energy to 1e-9."""
    real = tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=1e-9, progress=False)
    cplx = tf.tn.vumps(tf.tn.tfim_bond(1.5), 4, tol=1e-9, progress=False, unit_cell=2,
                       dtype=tf.complex128, seed=3)
    assert cplx.converged and cplx.AC[1].dtype == np.complex128
    assert abs(cplx.energy - real.energy) < 1e-9
    _cell_canonical_ok(cplx, 1e-8)


@pytest.mark.numpy_only
def test_alternating_heisenberg_against_exact_diagonalisation():
    """The dimerised chain J1 = 1, J2 = 1/4 (bond Hamiltonians alternate, so only a 2-site cell
    can hold its ground state). Reference: exact diagonalisation of the periodic ring, L = 16;
    measured E(L=20) - E(L=16) = 2.65e-9 and the finite-size error shrinks ~80x per 4 sites,
    so E(L=16) is 2.7e-9 below the infinite chain. D = 8 VUMPS (variational) measured
    E - E(L=16) = 2.72e-9 (6e-11 above E(L=20)); we require 0 < E - E(L=16) < 3e-9.
    The best translation-invariant (single-site) uniform MPS sees the average bond
    (J1 + J2)/2 on every bond: its energy is 0.1 higher (-0.2767 against -0.3781)."""
    J1, J2 = 1.0, 0.25
    hs = [tf.tn.heisenberg_bond(J1), tf.tn.heisenberg_bond(J2)]
    r = tf.tn.vumps(hs, 8, tol=1e-9, progress=False)
    assert r.converged and len(r.AL) == 2
    e16 = _alternating_ring_energy(16, J1, J2)
    assert 0 < r.energy - e16 < 3e-9, r.energy - e16
    # the strong bond carries nearly a singlet (-3/4 J1), the weak one little
    assert r.bond_energies[0] < -0.74 and -0.02 < r.bond_energies[1] < 0
    _cell_canonical_ok(r, 1e-8)
    uniform = tf.tn.vumps((hs[0] + hs[1]) / 2, 4, tol=1e-6, progress=False)
    assert uniform.energy > r.energy + 0.1


@pytest.mark.numpy_only
def test_original_frame_needs_a_two_site_cell():
    """Heisenberg without the sublattice rotation: the antiferromagnet's MPS is two-site
    periodic there. At D = 4 a single-site cell stops at E - E_Bethe = 1.52e-2 (measured), a
    2-site cell reaches the rotated single-site optimum (2.089e-3) to 1e-8."""
    rotated = tf.tn.vumps(tf.tn.heisenberg_bond(), 4, tol=1e-8, progress=False)
    single = tf.tn.vumps(tf.tn.heisenberg_bond(rotate=False), 4, tol=1e-8, progress=False)
    cell = tf.tn.vumps(tf.tn.heisenberg_bond(rotate=False), 4, tol=1e-8, progress=False,
                       unit_cell=2)
    assert rotated.converged and cell.converged
    assert single.energy - E_BETHE > 1e-2
    assert abs(cell.energy - rotated.energy) < 1e-8


@pytest.mark.slow
@pytest.mark.numpy_only
def test_heisenberg_D16_cell_breaks_translation():
    """Latorre & Pico: the optimal finite-D MPS of the Heisenberg chain need not be translation
    invariant. At D = 16 the 2-site cell dimerises (bond energies -0.43890, -0.44730) and lies
    below the single-site optimum: measured E - E_Bethe = 4.6232e-5 (2-site, both frames)
    against 4.6611e-5 (single site)."""
    one = tf.tn.vumps(tf.tn.heisenberg_bond(), 16, tol=1e-8, progress=False)
    for rotate in (True, False):
        r = tf.tn.vumps(tf.tn.heisenberg_bond(rotate=rotate), 16, tol=1e-8, progress=False,
                        unit_cell=2)
        assert r.converged
        assert 0 < r.energy - E_BETHE < 4.63e-5 < one.energy - E_BETHE
        assert abs(r.bond_energies[0] - r.bond_energies[1]) > 5e-3


@pytest.mark.slow
@pytest.mark.numpy_only
def test_heisenberg_D64_cell_dimerises():
    """The acceptance question with a 2-site cell (design/tn-next.md has all runs): at D = 64
    (rotated frame, seed 0) the cell converges to a dimerised state (bond energies -0.44222,
    -0.44407) at E - E_Bethe = 1.249648e-6 (measured), 3e-9 below the single-site optimum
    1.2526e-6 and still above the 1e-6 target. We require 0 < E - E_Bethe < 1.2500e-6."""
    r = tf.tn.vumps(tf.tn.heisenberg_bond(), 64, tol=1e-8, progress=False, unit_cell=2,
                    maxiter=1000)
    assert r.converged
    assert 0 < r.energy - E_BETHE < 1.2500e-6
    assert abs(r.bond_energies[0] - r.bond_energies[1]) > 1e-3


def test_cell_progress_records():
    """One record per iteration with the cell's energy per site and gradient norm."""
    seen = []
    r = tf.tn.vumps(tf.tn.tfim_bond(1.5), 2, tol=1e-7, progress=False, unit_cell=2,
                    callback=seen.append)
    assert len(seen) == r.iterations and seen[-1]["energy"] == r.energy
    assert seen[-1]["grad"] == r.grad < 1e-7


def test_cell_on_a_device():
    dev = "strict:1"
    r = tf.tn.vumps(tf.tn.tfim_bond(1.5, device=dev), 2, tol=1e-6, progress=False,
                    unit_cell=2)
    assert r.converged and all(a.device == dev for a in r.AC + r.C)


def test_cell_errors():
    h = tf.tn.tfim_bond()
    with pytest.raises(ShapeError, match="unit_cell=3 but h lists 2"):
        tf.tn.vumps([h, h], 2, unit_cell=3)
    with pytest.raises(ShapeError, match="positive integer"):
        tf.tn.vumps(h, 2, unit_cell=0)
    with pytest.raises(ShapeError, match="empty"):
        tf.tn.vumps([], 2)
    with pytest.raises(ShapeError, match="AL0 lists 1 tensors for a unit cell of 2"):
        tf.tn.vumps(h, 2, unit_cell=2, AL0=[tf.ones((2, 2, 2))])
    with pytest.raises(ShapeError, match="same local dimension"):
        tf.tn.vumps([h, tf.eye(9)], 2)
    with pytest.raises(ShapeError, match="bond 1 of the unit cell"):
        tf.tn.vumps([h, tf.ones((2, 2, 2))], 2)


@pytest.mark.numpy_only
def test_example_unit_cell_option(capsys):
    """examples/vumps_chain.py with --unit-cell 2 in the unrotated frame gives the rotated
    single-site energy at D = 2 (to 1e-9; the table prints 16 digits), and its dimerised-chain
    line is within 1e-9 of the 20-site exact diagonalisation (measured 6.4e-11)."""
    from tests.physics.test_examples import load

    argv = ["--D", "2", "--models", "heisenberg", "--frame", "original", "--unit-cell", "2",
            "--tol", "1e-9", "--no-plot"]
    assert load("vumps_chain").main(argv) == 0
    out = capsys.readouterr().out
    assert "2-site unit cell" in out and "not converged" not in out
    row = [ln for ln in out.splitlines() if ln.strip().startswith("2 ")][0].split()
    rotated = tf.tn.vumps(tf.tn.heisenberg_bond(), 2, tol=1e-9, progress=False)
    assert abs(float(row[1]) - rotated.energy) < 1e-9
    dimer = [ln for ln in out.splitlines() if "E - E_ED" in ln][0]
    assert abs(float(dimer.split("E - E_ED =")[1].split()[0])) < 1e-9
