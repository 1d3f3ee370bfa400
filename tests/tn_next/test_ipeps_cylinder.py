"""The exact infinite-cylinder contraction (tests/tn_next/cylinder.py) against the CTMRG
energies: an independent contraction (no CTMRG, no truncation) of the same tensors, whose
circumference-L values converge to the 2D value as L grows (design/ipeps-general.md, "The
-0.664724 question").

References: the published C4v D=2 optimum (Hasik, Poilblanc, Becca, SciPost Phys. 10, 012
(2021)) through the stored optimal tensor; the directional CTMRG of the same non-C4v tensor.
"""

from pathlib import Path

import numpy as np
import pytest

import tenferro as tf
from tenferro.tn import heisenberg_bond, ipeps, peps

from .cylinder import cylinder_energy

pytestmark = pytest.mark.numpy_only

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    import tenferro._src.progress as progress

    monkeypatch.setattr(progress, "_enabled", False)


def test_cylinders_converge_to_the_c4v_optimum_and_tilings_agree():
    """The optimal C4v D=2 tensor: E(L=4, 6) approach the published energy (measured
    -3.9e-3, -1.6e-4, -6.9e-6 at L = 4, 6, 8: from below); the same state as a checkerboard
    of two tensors in the plain frame (plain S.S) gives the same cylinder energy."""
    A = np.loadtxt(DATA / "ipeps_c4v_d2_optimum.txt").reshape((2,) * 5)
    h = np.asarray(heisenberg_bond())
    e4 = cylinder_energy([A], [[0]], 4, h)["E"]
    e6 = cylinder_energy([A], [[0]], 6, h)["E"]
    ref = peps.D2_REFERENCE_ENERGY
    assert 0 < ref - e6 < (ref - e4) / 10 and ref - e6 < 3e-4
    ts = [np.asarray(t) for t in ipeps.tile_unitcell(tf.tensor(A), [[0, 1], [1, 0]],
                                                     sublattice_rotation=True)]
    e4c = cylinder_energy(ts, [[0, 1], [1, 0]], 4, np.asarray(heisenberg_bond(rotate=False)))
    assert abs(e4c["E"] - e4) < 1e-12


def test_cylinders_converge_to_the_directional_ctmrg_energy_of_a_non_c4v_tensor():
    """A non-symmetric tensor (Neel + 0.4 x random): the cylinder energies close in on the
    directional CTMRG's (measured differences 1.4e-1, -1.7e-2, -2.0e-3 at L = 2, 4, 6)."""
    rng = np.random.default_rng(4)
    A = np.zeros((2,) * 5)
    A[0, 0, 0, 0, 0] = 1
    A = A + 0.4 * rng.standard_normal(A.shape)
    h = np.asarray(heisenberg_bond())
    e = ipeps.unitcell_energy([tf.tensor(A)], [[0]], 16, h=tf.tensor(h), tol=1e-12,
                              max_iter=300).item()
    d = [cylinder_energy([A], [[0]], L, h)["E"] - e for L in (2, 4, 6)]
    assert abs(d[2]) < abs(d[1]) / 4 < abs(d[0]) / 16 and abs(d[2]) < 4e-3
