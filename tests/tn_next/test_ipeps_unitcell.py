"""Unit-cell iPEPS and the directional CTMRG (tenferro.tn.ipeps, tn.ctmrg_directional).

References the assertions are checked against:
* exact: product states in a cell (every bond energy is a product-state expectation value),
  with a bond operator that is not symmetric under the exchange of its sites (orientation);
* the C4v CTMRG of tenferro._src.tn.ctmrg on C4v tensors (energy and ln Z per site), and Onsager
  (2D Ising ln Z through the directional CTMRG);
* the published single-site C4v D=2 optimum E = -0.6602310934799582 (Hasik, Poilblanc,
  Becca, SciPost Phys. 10, 012 (2021)), through the optimised tensor stored in
  data/ipeps_c4v_d2_optimum.txt (an input; its C4v energy is re-checked here);
* finite differences of the same function (4-point stencil) for AD gradients, real and complex.
"""

from pathlib import Path

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.ctmrg import ctm_lnz, ctmrg
from tenferro.errors import ConcretizationError, ShapeError
from tenferro.tn import (
    ctm_directional_lnz,
    ctmrg_directional,
    exact,
    ipeps,
    ising_tensor,
    peps,
)

pytestmark = pytest.mark.numpy_only

DATA = Path(__file__).resolve().parent / "data"
CHECKER = [[0, 1], [1, 0]]
FOUR = [[0, 1], [2, 3]]


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    import tenferro._src.progress as progress

    monkeypatch.setattr(progress, "_enabled", False)


def c4v_optimum():
    return tf.tensor(np.loadtxt(DATA / "ipeps_c4v_d2_optimum.txt").reshape((2,) * 5))


def fd4(F, eps):
    return (8 * (F(eps) - F(-eps)) - (F(2 * eps) - F(-2 * eps))) / (12 * eps)


# ------------------------------------------------------------------ exact checks
def test_product_states_in_a_cell_are_exact():
    """D=1 product state, a different spin on each site of a 2x3 cell, and a bond operator
    S^z x S^x (not symmetric under exchange): every rho is the product of the two sites'
    states, in the order (left, right) / (upper, lower)."""
    rng = np.random.default_rng(0)
    pattern = [[0, 1, 2], [3, 4, 5]]
    psis = [v / np.linalg.norm(v) for v in rng.standard_normal((6, 2))]
    tensors = [tf.tensor(v.reshape(2, 1, 1, 1, 1)) for v in psis]
    s = peps.spin_operators("spin")
    sx, sz = s["Sx"], s["Sz"]
    h = np.kron(sz, sx).real.reshape(2, 2, 2, 2)
    e, env = ipeps.unitcell_energy(tensors, pattern, 3, h=h, return_env=True)
    ref = 0.0
    for y in range(2):
        for x in range(3):
            p = psis[pattern[y][x]]
            ref += (p @ sz @ p) * (psis[pattern[y][(x + 1) % 3]] @ sx @
                                   psis[pattern[y][(x + 1) % 3]])
            ref += (p @ sz @ p) * (psis[pattern[(y + 1) % 2][x]] @ sx @
                                   psis[pattern[(y + 1) % 2][x]])
    assert abs(e.item() - ref / 6) < 1e-14
    assert env.converged


def test_neel_state_in_a_checkerboard_cell():
    """The Neel state with the plain Heisenberg bond, D=2 embedding: E = -1/2 exactly."""
    up = np.zeros((2, 2, 2, 2, 2))
    up[0, 0, 0, 0, 0] = 1.0
    down = np.zeros_like(up)
    down[1, 0, 0, 0, 0] = 1.0
    e = ipeps.unitcell_energy([tf.tensor(up), tf.tensor(down)], CHECKER, 4)
    assert abs(e.item() + 0.5) < 1e-14


@pytest.mark.parametrize("vertical", [False, True])
def test_dimer_state_with_unequal_bond_dimensions_is_exact(vertical):
    """Every second bond carries an entangled pair |psi> = sum M[s1, s2] |s1 s2> (random,
    not symmetric): a PEPS with D=2 on the dimer bonds and D=1 elsewhere (legs of unequal
    dimension). rho of a dimer bond is |psi><psi| in the order (left, right) / (upper,
    lower); every other bond is a product of the two sites' reduced states. Checks the
    orientation of both rho with D > 1 and a non-trivial (though exact) environment."""
    rng = np.random.default_rng(2)
    M = rng.standard_normal((2, 2))
    M /= np.linalg.norm(M)
    A = np.eye(2).reshape(2, 1, 1, 1, 2)  # A[s, u, l, d, r] = delta(s, r)
    B = M.T.reshape(2, 1, 2, 1, 1)  # B[s, u, l, d, r] = M[l, s]
    pattern = [[0, 1]]
    if vertical:  # the same pair on a vertical bond: r -> d, l -> u
        A, B = A.transpose(0, 2, 1, 4, 3), B.transpose(0, 2, 1, 4, 3)
        pattern = [[0], [1]]
    rng_h = rng.standard_normal((4, 4))
    h = (rng_h + rng_h.T).reshape(2, 2, 2, 2)  # a Hermitian, exchange-asymmetric bond
    tensors = [tf.tensor(A), tf.tensor(B)]
    env = ctmrg_directional(ipeps.unitcell_double_layers(tensors), pattern, 4)
    rhos = ipeps.bond_rdms(tensors, pattern, env)
    psi = M.reshape(4)
    rho_pair = np.outer(psi, psi).reshape(2, 2, 2, 2)
    r1, r2 = M @ M.T, M.T @ M  # reduced states of the left (upper) and right (lower) spin
    kind, other = ("v", "h") if vertical else ("h", "v")
    np.testing.assert_allclose(np.asarray(rhos[(kind, 0, 0)]), rho_pair, atol=1e-14)
    across = np.einsum("ac,bd->abcd", r2, r1)  # (B, A): the bond from B to the next A
    np.testing.assert_allclose(np.asarray(rhos[(kind, 0, 1) if vertical else (kind, 1, 0)]),
                               across, atol=1e-14)
    for key, rho in rhos.items():
        if key[0] == other:  # perpendicular bonds join a site to its own copy
            r = r1 if (key[2] if vertical else key[1]) == 0 else r2
            np.testing.assert_allclose(np.asarray(rho), np.einsum("ac,bd->abcd", r, r),
                                       atol=1e-14)
    e = ipeps.unitcell_energy([tf.tensor(A), tf.tensor(B)], pattern, 4, h=h).item()
    ref = (np.einsum("abcd,cdab->", rho_pair, h) + np.einsum("abcd,cdab->", across, h)
           + np.einsum("abcd,cdab->", np.einsum("ac,bd->abcd", r1, r1), h)
           + np.einsum("abcd,cdab->", np.einsum("ac,bd->abcd", r2, r2), h)) / 2
    assert abs(e - ref) < 1e-14


# ------------------------------------------------------------- against the C4v CTMRG
@pytest.mark.parametrize("chi", [12, 16])
def test_c4v_tensor_reproduces_the_c4v_ctmrg(chi):
    """On a C4v tensor the directional CTMRG (1x1 cell, and the same state as a 2x2 cell of
    four tensors with the sublattice rotation undone) gives the C4v CTMRG's energy to 1e-12
    (measured: below 1e-15)."""
    A = peps.random_c4v_peps(2, seed=1, noise=0.3)
    A = A / tf.norm(A)
    e4 = peps.heisenberg_energy(A, chi, tol=1e-13, max_iter=200, progress=False).item()
    e1, env = ipeps.unitcell_energy([A], [[0]], chi, h=peps.heisenberg_bond(), tol=1e-12,
                                    return_env=True)
    assert env.converged and env.iterations < 30
    assert abs(e1.item() - e4) < 1e-12
    tiles = ipeps.tile_unitcell(A, FOUR, sublattice_rotation=True)
    e2 = ipeps.unitcell_energy(tiles, FOUR, chi, tol=1e-12)
    assert abs(e2.item() - e4) < 1e-12


def test_full_projector_where_the_spectrum_is_resolved():
    """projector="full" (four enlarged corners) on the same C4v state at chi = 8, where the
    corner spectrum stays above ~1e-4 of its largest value (its fourth power is then
    resolved): the C4v energy to 1e-12 (measured 4e-14). Beyond that it stalls; see the
    module docstring."""
    A = peps.random_c4v_peps(2, seed=1, noise=0.3)
    A = A / tf.norm(A)
    e4 = peps.heisenberg_energy(A, 8, tol=1e-13, max_iter=200, progress=False).item()
    e, env = ipeps.unitcell_energy([A], [[0]], 8, h=peps.heisenberg_bond(), tol=1e-10,
                                   projector="full", return_env=True)
    assert env.converged
    assert abs(e.item() - e4) < 1e-12


@pytest.mark.parametrize("beta", [0.35, 0.5])
def test_ising_lnz_matches_c4v_and_onsager(beta):
    """Single-layer 2D Ising tensor (classical, C4v): ln Z per site of the directional
    environment equals ctm_lnz of the C4v one to 1e-10 and Onsager's to 1e-12."""
    a = ising_tensor(beta)
    env4 = ctmrg(a, 16, tol=1e-13, max_iter=300, progress=False)
    env = ctmrg_directional([a], [[0]], 16, tol=1e-12, max_iter=300)
    lnz = ctm_directional_lnz(a, env).item()
    assert abs(lnz - ctm_lnz(a, env4).item()) < 1e-10
    assert abs(lnz - exact.onsager_lnz(beta)) < 1e-12


def test_tiled_c4v_optimum_matches_c4v_energy():
    """The optimised C4v D=2 tensor, tiled over a 2x2 cell with the sublattice rotation
    undone and the plain Heisenberg bond (the cell holds the Neel order by itself): the
    energy equals the C4v one at the same chi to 1e-10 and the published optimum to 1e-8."""
    A = c4v_optimum()
    e4 = peps.heisenberg_energy(A, 12, tol=1e-12, progress=False).item()
    assert abs(e4 - peps.D2_REFERENCE_ENERGY) < 1e-8  # the input is the optimum
    for pattern in (CHECKER, FOUR):
        tiles = ipeps.tile_unitcell(A, pattern, sublattice_rotation=True)
        e = ipeps.unitcell_energy(tiles, pattern, 12, tol=1e-10).item()
        assert abs(e - e4) < 1e-10
        assert abs(e - peps.D2_REFERENCE_ENERGY) < 1e-8


def test_translation_invariant_state_same_in_every_cell():
    """A non-C4v tensor (Neel + 0.3 random): the 1x1 cell and the same tensor tiled over
    2x2, 1x2 and 2x1 cells give the same energy (the bookkeeping does not change the state;
    measured differences 1e-12). For a fully random D=2 tensor the truncation error at
    chi = 10 is ~5e-5 and the cells converge to fixed points that differ at the 1e-6 level."""
    (R,) = ipeps.random_unitcell_peps(2, 1, seed=4)
    A = peps.neel_peps(2) + 0.3 * R / tf.max(tf.abs(R))
    h = peps.heisenberg_bond()
    e1 = ipeps.unitcell_energy([A], [[0]], 12, h=h, tol=1e-11, max_iter=300).item()
    for pattern in (FOUR, [[0, 1]], [[0], [1]]):
        tiles = ipeps.tile_unitcell(A, pattern)
        e = ipeps.unitcell_energy(tiles, pattern, 12, h=h, tol=1e-11, max_iter=300).item()
        assert abs(e - e1) < 1e-10


# ------------------------------------------------------------------- gradients
@pytest.mark.parametrize("dtype", [tf.float64, tf.complex128])
def test_unrolled_gradient_matches_finite_differences(dtype):
    """A random 2x2 cell (four distinct tensors), real and complex: the AD derivative along a
    random direction matches the 4-point finite difference. For complex tensors the
    gradient is the conjugate-Wirtinger one (d E = Re <g, dA>)."""
    tensors = ipeps.random_unitcell_peps(2, 4, seed=3, dtype=dtype)

    def f(*ts):
        return ipeps.unitcell_energy(list(ts), FOUR, 8, tol=None, max_iter=8)

    _, g = tf.value_and_grad(f, argnums=(0, 1, 2, 3))(*tensors)
    rng = np.random.default_rng(0)
    dirs = [rng.standard_normal(t.shape) for t in tensors]
    if dtype == tf.complex128:
        dirs = [d + 1j * rng.standard_normal(d.shape) for d in dirs]

    def F(eps):
        return f(*[tf.tensor(np.asarray(t) + eps * d, dtype=dtype)
                   for t, d in zip(tensors, dirs)]).item()

    ad = sum(np.real(np.vdot(np.asarray(gi), d)) for gi, d in zip(g, dirs))
    fd = fd4(F, 1e-4)
    assert abs(ad - fd) < 1e-8 * max(1.0, abs(ad)), (ad, fd)


def test_jit_and_checkpoint_match_eager_complex():
    """A complex 1x2 cell: jit gives the eager value and gradient (1e-12); checkpointed
    CTMRG iterations give the same gradient."""
    tensors = ipeps.random_unitcell_peps(2, 2, seed=5, dtype=tf.complex128)

    def f(checkpoint):
        return lambda *ts: ipeps.unitcell_energy(list(ts), [[0, 1]], 4, tol=None,
                                                 max_iter=4, checkpoint=checkpoint)

    v0, g0 = tf.value_and_grad(f(False), argnums=(0, 1))(*tensors)
    v1, g1 = tf.jit(tf.value_and_grad(f(False), argnums=(0, 1)))(*tensors)
    _, g2 = tf.value_and_grad(f(True), argnums=(0, 1))(*tensors)
    assert abs(v0.item() - v1.item()) < 1e-12
    for a, b, c in zip(g0, g1, g2):
        assert np.abs(np.asarray(a) - np.asarray(b)).max() < 1e-12
        assert np.abs(np.asarray(a) - np.asarray(c)).max() < 1e-12


# --------------------------------------------------------------------- errors
def cd_energy(A):
    return ipeps.unitcell_energy([A], [[0]], 4, h=peps.heisenberg_bond(), implicit=True)


def test_bad_input_errors():
    A = peps.random_c4v_peps(2, seed=0)
    a = peps.double_layer(A)
    with pytest.raises(ShapeError, match="rectangular"):
        ctmrg_directional([a], [[0, 0], [0]], 4)
    with pytest.raises(ShapeError, match="refers to tensor 1"):
        ctmrg_directional([a], [[0, 1]], 4)
    b = tf.tensor(np.ones((4, 9, 4, 9)))
    with pytest.raises(ShapeError, match="bond dimensions do not match"):
        ctmrg_directional([a, b], [[0, 1]], 4)
    with pytest.raises(ValueError, match="projector"):
        ctmrg_directional([a], [[0]], 4, projector="qr")
    with pytest.raises(ConcretizationError, match="tol=None"):
        tf.jit(lambda t: ctmrg_directional([t], [[0]], 4, tol=1e-8).C[0][0][0])(a)
    with pytest.raises(ConcretizationError, match="implicit=True needs the values"):
        tf.jit(lambda t: cd_energy(t))(A)
    with pytest.raises(ValueError, match="needs a convergence tolerance"):
        ctmrg_directional([a], [[0]], 4, tol=None, implicit=True)
    with pytest.raises(ShapeError, match="A\\[s, u, l, d, r\\]"):
        ipeps.unitcell_energy([a], [[0]], 4)
    with pytest.raises(ValueError, match="both sublattices"):
        ipeps.tile_unitcell(A, [[0, 0], [0, 0]], sublattice_rotation=True)


# ----------------------------------------------------------------- optimisation
@pytest.fixture(scope="module")
def example():
    from tests.physics.test_examples import load

    return load("ipeps_unitcell")


def test_example_runs_and_lowers_the_energy(example, tmp_path, capsys):
    """The example at reduced size (chi = 4, two L-BFGS iterations from Neel + noise): it
    prints the energy at every iteration, decreasing, and the comparison lines, and writes
    its plot."""
    png = tmp_path / "unitcell.png"
    assert example.main(["--chi", "4", "--iters", "2", "--eval-chi", "4", "--plot",
                         str(png)]) == 0
    assert png.stat().st_size > 10_000
    out = capsys.readouterr().out
    es = [float(ln.split()[1]) for ln in out.splitlines()
          if ln.strip() and ln.split()[0].isdigit() and len(ln.split()) == 6]
    assert len(es) == 3 and es[1] < es[0] and es[2] < es[1]
    assert "Hasik" in out and "PEPSKit" in out and "QMC" in out


@pytest.mark.slow
def test_checkerboard_optimisation_goes_below_c4v_to_the_unrestricted_optimum(example):
    """2x2 checkerboard cell, D=2, chi=12, plain Heisenberg bond, L-BFGS from Neel + 0.3
    noise: the energy converges to the unrestricted D=2 optimum (the variational class of a
    single-site tensor without point-group symmetry: -0.6625142932, PEPSKit's Heisenberg
    example at chi=16), 2.3e-3 below the C4v optimum: at D=2 breaking C4v lowers the energy.
    chi = 12 is converged in chi for this state to 6e-9 (chi = 8 is not: an optimisation at
    chi = 8 exploits its truncation error and ends 6.8e-6 below the reference)."""
    tensors, hist, _ = example.optimise([[0, 1], [1, 0]], chi=12, iters=150, verbose=False)
    e = hist[-1]["e"]
    assert e < peps.D2_REFERENCE_ENERGY - 2e-3
    assert abs(e - example.REF_D2_FREE) < 1e-6
    e16 = ipeps.unitcell_energy([tf.tensor(t) for t in tensors], CHECKER, 16, tol=1e-12,
                                max_iter=300).item()
    assert abs(e16 - example.REF_D2_FREE) < 1e-6


@pytest.mark.slow
def test_c4v_restricted_cell_optimisation_matches_the_c4v_optimum(example):
    """The same 2x2 cell restricted to one C4v-symmetric tensor (``c4v=True``): the
    directional CTMRG optimisation reaches the published C4v D=2 optimum to 1e-8."""
    tensors, hist, _ = example.optimise([[0, 1], [1, 0]], chi=8, iters=150, c4v=True,
                                        verbose=False)
    assert abs(hist[-1]["e"] - peps.D2_REFERENCE_ENERGY) < 1e-8


def test_on_a_device_with_gradients():
    """array_api_strict's fake device stands in for a GPU: the energy, its gradient (unrolled
    and implicit) and the tiling stay on the tensors' device, equal to the CPU values."""
    dev = "strict:1"
    (R,) = ipeps.random_unitcell_peps(2, 1, seed=4)
    A = peps.neel_peps(2) + 0.3 * R / tf.max(tf.abs(R))
    tiles = ipeps.tile_unitcell(A, CHECKER, sublattice_rotation=True)
    on_dev = ipeps.tile_unitcell(tf.tensor(np.asarray(A), device=dev), CHECKER,
                                 sublattice_rotation=True)
    assert all(t.device == dev for t in on_dev)
    assert np.abs(np.asarray(tiles[1]) - on_dev[1].numpy()).max() == 0
    h = peps.heisenberg_bond()
    for implicit in (False, True):  # a 1x1 cell (rotated bond) keeps the test short
        def f(t):
            return ipeps.unitcell_energy([t], [[0]], 4, h=h, tol=1e-10, implicit=implicit)

        v0, g0 = tf.value_and_grad(f)(A)
        v1, g1 = tf.value_and_grad(f)(tf.tensor(np.asarray(A), device=dev))
        assert v1.device == dev and g1.device == dev
        assert abs(v0.item() - v1.item()) < 1e-12
        assert np.abs(np.asarray(g0) - g1.numpy()).max() < 1e-10
