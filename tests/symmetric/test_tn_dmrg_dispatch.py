"""``tenferro._src.tn.dmrg`` on a symmetric MPO runs the block-sparse DMRG: same call, same result
type, the sector chosen by ``mps0``."""

import itertools

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
import tenferro.tn  # noqa: F401
from tenferro.errors import ConvergenceWarning, ShapeError
from tenferro.tn import mpo as M

UP_DOWN = [1, -1]  # 2 S_z of (up, down)


def _sector_ground(L, two_sz):
    H = M.mpo_to_dense(M.heisenberg_mpo(L)).numpy()
    idx = [i for i, s in enumerate(itertools.product([1, -1], repeat=L)) if sum(s) == two_sz]
    return float(np.linalg.eigvalsh(H[np.ix_(idx, idx)])[0])


def test_tn_dmrg_dispatches_on_symmetric_mpo():
    L = 10
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    r = tf.tn.dmrg(Hs, 32, schedule=[8, 16, 32], progress=False)
    assert isinstance(r, tf.tn.DMRGResult)
    assert all(isinstance(a, S.SymmetricTensor) for a in r.mps)
    assert r.converged
    assert abs(r.energy - _sector_ground(L, 0)) < 1e-9
    ref = S.dmrg(Hs, 32, schedule=[8, 16, 32], progress=False)
    assert abs(r.energy - ref.energy) < 1e-12


def test_mps0_selects_the_sector_and_warm_starts():
    L = 10
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    with pytest.warns(ConvergenceWarning, match="not converged after 2 sweeps"):  # a start
        first = S.dmrg(Hs, 16, charge=2, schedule=[8, 16], max_sweeps=2, progress=False)
    assert first.mps[-1].legs[2].charges == (2,)
    r = tf.tn.dmrg(Hs, 32, mps0=first.mps, schedule=[32], progress=False)
    assert r.mps[-1].legs[2].charges == (2,)
    assert abs(r.energy - _sector_ground(L, 2)) < 1e-9
    # a converged start needs few products: the warm start is used
    again = tf.tn.dmrg(Hs, 32, mps0=r.mps, schedule=[32], progress=False)
    assert abs(again.energy - r.energy) < 1e-9 and again.sweeps <= 3


def test_mps0_errors():
    L = 6
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    r = S.dmrg(Hs, 8, charge=2, schedule=[8], max_sweeps=2, tol=0.0, progress=False)
    with pytest.raises(ShapeError, match="total charge 2 but charge=0"):
        S.dmrg(Hs, 8, charge=0, mps0=r.mps, progress=False)
    with pytest.raises(ShapeError, match="must be 6 symmetric tensors"):
        tf.tn.dmrg(Hs, 8, mps0=r.mps[:-1], progress=False)
    with pytest.raises(ShapeError, match="symmetric MPO tensors"):
        tf.tn.dmrg([Hs[0]] + list(M.heisenberg_mpo(L))[1:], 8, progress=False)


# Not SciPy-bound: the start under test is drawn on the host whatever the backend, and the
# sweep itself runs on array_api_strict in the tests above; this one's 3 x L=48 runs take
# 13 s there (the strict wrapper validates every small block operation), 1 s on NumPy.
@pytest.mark.numpy_only
def test_random_start_does_not_freeze_the_charge_profile():
    """The random start keeps a few central charges per bond: a start spread over every
    reachable sector (dozens of dimension 1 mid-chain) took 8-9 sweeps here, depending on the
    seed, where a connected central window converges in 7 for every seed."""
    L = 48
    Hs = S.mpo_from_dense(M.heisenberg_mpo(L), UP_DOWN)
    energies = []
    for seed in range(3):
        r = S.dmrg(Hs, 32, schedule=[8, 16, 32], seed=seed, progress=False)
        assert r.converged and r.sweeps <= 7
        energies.append(r.energy)
    assert max(energies) - min(energies) < 1e-8
