"""The Hubbard chain example: Jordan-Wigner MPO with U(1) x U(1) symmetry, DMRG against an
independent sparse exact diagonalisation, and the Bethe-ansatz energy."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tenferro.symmetric as S
from tenferro.tn.mpo import mpo_to_dense

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def hub():
    sys.path.insert(0, str(EXAMPLES))
    try:
        return __import__("hubbard_chain")
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.parametrize("n_up,n_dn", [(1, 1), (2, 1), (2, 2), (3, 1)])
def test_mpo_equals_exact_hamiltonian_in_each_sector(hub, n_up, n_dn):
    """The Jordan-Wigner MPO and the bit-string Hamiltonian (fermion signs counted
    directly) have the same ground energy in every (N_up, N_down) sector."""
    L = 4
    H = mpo_to_dense(hub.hubbard_mpo(L, t=1.0, U=3.0)).numpy()
    q = [(c[0], c[1]) for c in hub.CHARGES]
    states = [np.unravel_index(i, (4,) * L) for i in range(4 ** L)]
    idx = [i for i, st in enumerate(states)
           if sum(q[s][0] for s in st) == n_up + n_dn and sum(q[s][1] for s in st) == n_up - n_dn]
    e_mpo = np.linalg.eigvalsh(H[np.ix_(idx, idx)])[0]
    assert abs(e_mpo - hub.exact_ground_energy(L, n_up, n_dn, t=1.0, U=3.0)) < 1e-12


def test_dmrg_matches_exact_diagonalisation(hub):
    L = 8
    r = hub.ground_state(L, 128, U=4.0)
    assert r.converged
    assert r.mps[-1].legs[2].charges == ((L, 0),)
    assert abs(r.energy - hub.exact_ground_energy(L, L // 2, L // 2, U=4.0)) < 1e-8


def test_particle_number_only_symmetry_gives_the_same_ground_state(hub):
    """With U(1) (N) alone the singly occupied states form one sector of dimension 2."""
    L = 6
    Hs = S.mpo_from_dense(hub.hubbard_mpo(L, U=4.0), [c[0] for c in hub.CHARGES])
    assert Hs[0].legs[2].sectors == ((0, 1), (1, 2), (2, 1))
    r = S.dmrg(Hs, 64, charge=L, progress=False)
    assert abs(r.energy - hub.exact_ground_energy(L, L // 2, L // 2, U=4.0)) < 1e-8


def test_lieb_wu_limits(hub):
    assert hub.lieb_wu_energy(0.0) == -4 / math.pi
    # large U: the Heisenberg chain with J = 4 t^2 / U, plus the next order 9 zeta(3) t^4 / U^3
    U = 40.0
    zeta3 = 1.2020569031595942
    assert abs(hub.lieb_wu_energy(U) - (-4 * math.log(2) / U + 9 * zeta3 / U ** 3)) < 2e-6
    # small U: the free chain plus the Hartree term U <n_up n_down> = U / 4
    U = 0.05
    assert abs(hub.lieb_wu_energy(U) - (-4 / math.pi + U / 4)) < 1e-4


@pytest.mark.numpy_only  # the example's own run: the backends are covered by the tests above
def test_example_main_runs(hub, tmp_path, capsys):
    """Every column is a number: the bulk estimate of L = 8 needs L' = 4, which is in neither
    list (computed on demand), and that of L = 12 reuses the exact-diagonalisation chain L' = 6;
    the plot of E/L against 1/L is written."""
    png = tmp_path / "hubbard.png"
    assert hub.main(["--ed-L", "6", "--L", "8", "12", "--D", "64", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Lieb-Wu" in out and "largest |E_DMRG - E_exact|" in out
    assert "nan" not in out.lower()
    rows = [ln.split() for ln in out.splitlines() if ln.split()[:1] in (["8"], ["12"])]
    assert [r[4] for r in rows[-2:]] == ["4", "6"]  # L' of the bulk estimates
    assert png.stat().st_size > 10_000


@pytest.mark.numpy_only
def test_example_rejects_odd_lengths(hub, capsys):
    with pytest.raises(SystemExit) as e:
        hub.main(["--ed-L", "--L", "9"])
    assert e.value.code == 2 and "even" in capsys.readouterr().err


@pytest.mark.slow
def test_longer_chains_approach_the_bethe_ansatz(hub):
    """L = 10 against ED; the bulk energy (E(32) - E(16)) / 16 within the finite-size
    gap of the Lieb-Wu value, and closer to it than E(32)/32."""
    assert abs(hub.ground_state(10, 256).energy - hub.exact_ground_energy(10, 5, 5)) < 1e-8
    e16, e32 = hub.ground_state(16, 128).energy, hub.ground_state(32, 128).energy
    e_inf = hub.lieb_wu_energy(4.0)
    bulk = (e32 - e16) / 16
    assert abs(bulk - e_inf) < abs(e32 / 32 - e_inf)
    assert abs(bulk - e_inf) < 2e-3
