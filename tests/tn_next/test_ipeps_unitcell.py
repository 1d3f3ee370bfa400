"""Unit-cell iPEPS and the directional CTMRG (tenferro.tn.ipeps, tenferro.tn.ctmrg_directional).

References the assertions are checked against:
* exact: product states in a cell (every bond energy is a product-state expectation value),
  with a bond operator that is not symmetric under the exchange of its sites (orientation);
* the C4v CTMRG of tenferro.tn.ctmrg on C4v tensors (energy and ln Z per site), and Onsager
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
from tenferro.errors import ConcretizationError, ShapeError
from tenferro.tn import (
    ctm_directional_lnz,
    ctmrg_directional,
    exact,
    ipeps,
    ising_tensor,
    peps,
)
from tenferro.tn.ctmrg import ctm_lnz, ctmrg

pytestmark = pytest.mark.numpy_only

DATA = Path(__file__).resolve().parent / "data"
CHECKER = [[0, 1], [1, 0]]
FOUR = [[0, 1], [2, 3]]


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    import tenferro._progress as progress

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
    sx, _, sz = peps.spin_operators()
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
    with pytest.raises(ShapeError, match="A\\[s, u, l, d, r\\]"):
        ipeps.unitcell_energy([a], [[0]], 4)
    with pytest.raises(ValueError, match="both sublattices"):
        ipeps.tile_unitcell(A, [[0, 0], [0, 0]], sublattice_rotation=True)
