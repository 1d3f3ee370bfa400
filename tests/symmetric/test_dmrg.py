"""U(1) DMRG: the symmetric MPO is the dense one in a charge-ordered basis, and the ground
state energies equal exact diagonalisation in each S_z sector."""

import itertools

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
import tenferro.tn  # noqa: F401
from tenferro.errors import ShapeError
from tenferro.tn import mpo as M

UP_DOWN = [1, -1]  # 2 S_z of the basis (up, down)


def _dense_h(L):
    return M.mpo_to_dense(M.heisenberg_mpo(L)).numpy()


def _sector_ground(L, two_sz):
    """Lowest eigenvalue of the dense Heisenberg chain restricted to total 2 S_z."""
    H = _dense_h(L)
    idx = [i for i, s in enumerate(itertools.product([1, -1], repeat=L)) if sum(s) == two_sz]
    return float(np.linalg.eigvalsh(H[np.ix_(idx, idx)])[0])


def test_symmetric_mpo_is_the_dense_mpo_reordered():
    L = 4
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    assert Hs[0].legs[2].sectors == ((-1, 1), (1, 1))
    dense_from_sym = M.mpo_to_dense([S.to_dense(w) for w in Hs]).numpy()
    # the local basis is (down, up) after sorting by charge
    perm = [int("".join("1" if b == "0" else "0" for b in format(i, f"0{L}b")), 2)
            for i in range(2 ** L)]
    H = _dense_h(L)
    np.testing.assert_allclose(dense_from_sym, H[np.ix_(perm, perm)], atol=1e-14)


def test_non_conserving_mpo_is_rejected():
    with pytest.raises(ShapeError, match="does not conserve"):
        S.mpo_from_dense(M.tfim_mpo(4), UP_DOWN)


@pytest.mark.parametrize("two_sz", [0, 2])
def test_dmrg_matches_exact_diagonalisation_per_sector(two_sz):
    L = 10
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    r = S.dmrg(Hs, 32, charge=two_sz, schedule=[8, 16, 32], progress=False)
    assert r.converged
    assert abs(r.energy - _sector_ground(L, two_sz)) < 1e-9
    assert all(isinstance(a, S.SymmetricTensor) for a in r.mps)
    assert r.mps[-1].legs[2].charges == (two_sz,)
    # the MPS is normalised and its energy is the reported one
    psi = r.mps[0]
    for a in r.mps[1:]:
        psi = S.tensordot(psi, a, ([psi.ndim - 1], [0]))
    v = S.to_dense(psi).numpy().reshape(-1)
    perm = [int("".join("1" if b == "0" else "0" for b in format(i, f"0{L}b")), 2)
            for i in range(2 ** L)]
    H = _dense_h(L)[np.ix_(perm, perm)]
    assert abs(np.vdot(v, v) - 1) < 1e-10
    assert abs(np.vdot(v, H @ v) - r.energy) < 1e-9


def test_dmrg_agrees_with_dense_dmrg():
    L = 16
    H = M.heisenberg_mpo(L)
    r_sym = S.dmrg(S.mpo_from_dense(H, UP_DOWN), 24, schedule=[8, 16, 24], progress=False)
    r_dense = tf.tn.dmrg(H, 24, schedule=[8, 16, 24], progress=False)
    assert abs(r_sym.energy - r_dense.energy) < 1e-8
    assert r_sym.max_bond <= 24


def test_dmrg_errors():
    with pytest.raises(ShapeError, match="symmetric MPO tensors"):
        S.dmrg(M.heisenberg_mpo(4))
    Hs = S.mpo_from_dense(M.heisenberg_mpo(4), UP_DOWN)
    with pytest.raises(ShapeError, match="no state of total charge"):
        S.dmrg(Hs, 8, charge=10, progress=False)


def test_complex_dmrg_matches_the_real_one():
    """The complex path of the inner loop (conjugated Lanczos products and
    reorthogonalisation, complex blocks in the split) gives the real ground state; the MPS
    comes back as tensors on the MPO's backend."""
    L = 8
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    r = S.dmrg(Hs, 16, charge=2, schedule=[8, 16], dtype=np.complex128, progress=False)
    assert r.converged
    assert abs(r.energy - _sector_ground(L, 2)) < 1e-9
    block = next(iter(r.mps[3].blocks.values()))
    assert isinstance(block, tf.Tensor) and block.dtype == np.complex128
    assert block.device == next(iter(Hs[0].blocks.values())).device


def test_dmrg_on_a_non_cpu_device_stays_there():
    """MPO blocks on strict:1 (the stand-in for a GPU): the arrays the loop makes (zeros,
    environments, the start) are made on that device, or the first product would mix devices,
    and the MPS comes back there."""
    L = 8
    with tf.default_device("strict:1"):
        Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    assert next(iter(Hs[0].blocks.values())).device == "strict:1"
    r = S.dmrg(Hs, 16, schedule=[8, 16], progress=False)
    assert abs(r.energy - _sector_ground(L, 0)) < 1e-9
    assert all(b.device == "strict:1" for a in r.mps for b in a.blocks.values())
