"""C4v CTMRG and the D=2 iPEPS for the 2D Heisenberg antiferromagnet.

References the assertions are checked against:
* exact: product states (the environment is exact, E = -1/2 per site in the rotated frame);
  Onsager's solution of the 2D Ising model (ln Z, energy, spontaneous magnetisation);
* finite differences of the same algorithm (4-point stencil) for the AD gradients;
* the published optimum of the single-site C4v D=2 iPEPS, E = -0.6602310934799582,
  m = 0.3911237 (Hasik, Poilblanc, Becca, SciPost Phys. 10, 012 (2021), the ansatz of Liao,
  Liu, Wang, Xiang, PRX 9, 031041 (2019)); QMC: -0.669437(5) (Sandvik, PRB 56, 11678 (1997)).

Physics runs are NumPy-only (one backend: they are long and exercise no backend-specific
code beyond what tests/linalg and tests/einsum cover on both backends).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.ctmrg import (
    ctm_init,
    ctm_lnz,
    ctm_site_expectation,
    ctmrg,
    ctmrg_step,
    multiplet_rank,
)
from tenferro.errors import ConcretizationError, DTypeError, ShapeError
from tenferro.tn import exact, ising_tensor, peps

pytestmark = pytest.mark.numpy_only

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def energy_fn(chi, **kw):
    kw.setdefault("progress", False)
    return lambda x: peps.heisenberg_energy(peps.symmetrize_c4v(x), chi, **kw)


def fd4(F, eps):
    """4-point central difference (error O(eps^4))."""
    return (8 * (F(eps) - F(-eps)) - (F(2 * eps) - F(-2 * eps))) / (12 * eps)


def sym_direction(shape, seed):
    r = np.random.default_rng(seed).standard_normal(shape)
    return np.asarray(peps.symmetrize_c4v(tf.tensor(r)))


def ising_spin_tensor(beta):
    """sum_s s W[s,l] W[s,u] W[s,r] W[s,d]: the Ising site tensor weighted by the spin."""
    c, s = np.sqrt(np.cosh(beta)), np.sqrt(np.sinh(beta))
    W = np.array([[c, s], [c, -s]])
    return tf.tensor(np.einsum("s,sl,su,sr,sd->lurd", [1.0, -1.0], W, W, W, W))


# ------------------------------------------------------------------- exact checks
@pytest.mark.parametrize("theta", [0.0, 0.3, 1.1, np.pi / 2])
def test_product_state_energy_is_exact(theta):
    """D=1: every real product state is a Neel state in the rotated frame (in the x-z plane):
    E = 2 x (-1/4) per site and |<S>| = 1/2, for any chi (the environment is exact)."""
    A = tf.tensor(np.array([np.cos(theta), np.sin(theta)]).reshape(2, 1, 1, 1, 1))
    for chi in (1, 3):
        e, env = peps.heisenberg_energy(A, chi, return_env=True, progress=False)
        assert abs(e.item() + 0.5) < 1e-14
        assert env.C.shape == (1, 1) and env.T.shape == (1, 1, 1)
        m = peps.staggered_magnetization(A, env).item()
        assert abs(m - 0.5) < 1e-14


def test_neel_state_in_bond_dimension_two():
    A = peps.neel_peps(2)
    e, env = peps.heisenberg_energy(A, 8, return_env=True, progress=False)
    assert abs(e.item() + 0.5) < 1e-14
    assert env.converged and env.spectrum[0] == 1.0 and np.all(env.spectrum[1:] < 1e-15)


def test_bond_operator_is_rotated_heisenberg():
    """h has the Heisenberg spectrum (singlet -3/4, triplet 1/4) and is real; its ground
    state in the rotated frame is (|00> + |11>)/sqrt(2)."""
    h = peps.heisenberg_bond().reshape(4, 4)
    w, v = np.linalg.eigh(h)
    assert np.allclose(w, [-0.75, 0.25, 0.25, 0.25], atol=1e-15)
    assert np.allclose(np.abs(v[:, 0]), [2**-0.5, 0, 0, 2**-0.5])
    h0 = peps.heisenberg_bond(rotate=False).reshape(4, 4)
    assert np.allclose(np.linalg.eigvalsh(h0), w)


def test_symmetrize_c4v_is_a_projector():
    r = np.random.default_rng(0).standard_normal((2, 3, 3, 3, 3))
    s1 = np.asarray(peps.symmetrize_c4v(tf.tensor(r)))
    s2 = np.asarray(peps.symmetrize_c4v(tf.tensor(s1)))
    assert np.allclose(s1, s2, atol=1e-15)
    for perm in [(0, 2, 3, 4, 1), (0, 1, 4, 3, 2), (0, 3, 2, 1, 4)]:
        assert np.allclose(s1, s1.transpose(perm), atol=1e-15)
    assert not np.allclose(r, r.transpose(0, 2, 3, 4, 1))


# ------------------------------------------------------------- environment checks
def test_environment_symmetry_convergence_and_fixed_point():
    A = peps.random_c4v_peps(2, seed=3, noise=1.0)
    a = peps.double_layer(A / tf.norm(A))
    env = ctmrg(a, 10, tol=1e-12, max_iter=300, progress=False)
    C, T = np.asarray(env.C), np.asarray(env.T)
    assert env.converged and env.delta < 1e-12 and env.iterations < 300
    assert C.shape == (10, 10) and T.shape == (10, 4, 10)
    assert np.abs(C - C.T).max() == 0 and np.abs(T - T.transpose(2, 1, 0)).max() == 0
    assert abs(np.linalg.norm(C) - 1) < 1e-14 and abs(np.linalg.norm(T) - 1) < 1e-14
    # a fixed point: one more step changes the normalised spectrum by about tol
    C2, T2, s = ctmrg_step(a, env.C, env.T, 10)
    assert np.abs(np.asarray(s) - env.spectrum).max() < 1e-11
    e1 = peps.bond_energy(A, env, peps.heisenberg_bond()).item()
    e2 = peps.bond_energy(A, type(env)(C2, T2), peps.heisenberg_bond()).item()
    assert abs(e1 - e2) < 1e-12
    # the reported spectrum: descending, normalised to a leading 1
    assert env.spectrum[0] == 1.0 and np.all(np.diff(env.spectrum) <= 0)


def test_svd_and_eigh_projectors_agree():
    A = peps.random_c4v_peps(2, seed=4, noise=0.5)
    vals, grads = [], []
    for proj in ("svd", "eigh"):
        v, g = tf.value_and_grad(energy_fn(10, tol=1e-12, projector=proj))(A)
        vals.append(v.item())
        grads.append(np.asarray(g))
    assert abs(vals[0] - vals[1]) < 1e-13  # measured: 0
    assert np.abs(grads[0] - grads[1]).max() < 1e-13  # measured: 3e-17


def test_multiplet_rank():
    s = np.array([1.0, 0.5, 0.5 * (1 - 1e-9), 0.2, 0.1])
    assert multiplet_rank(s, 2, 1e-6) == 1  # do not split the pair (0.5, 0.5)
    assert multiplet_rank(s, 3, 1e-6) == 3
    assert multiplet_rank(s, 2, 1e-12) == 2
    assert multiplet_rank(s, 10, 1e-6) == 5
    assert multiplet_rank(np.ones(4), 2, 1e-6) == 1


# ------------------------------------------------------ classical Ising vs Onsager
@pytest.mark.parametrize("beta", [0.35, 0.40, 0.50])
def test_ising_free_energy_and_energy_by_ad_vs_onsager(beta):
    """Single-layer path: ln Z per site of the Ising tensor from the CTM environment, and
    the internal energy -d lnZ/d beta by reverse-mode AD through every CTMRG iteration."""

    def lnz(b):
        a = ising_tensor(b)
        return ctm_lnz(a, ctmrg(a, 16, tol=1e-12, max_iter=400, progress=False))

    v, g = tf.value_and_grad(lnz)(tf.tensor(beta))
    assert abs(v.item() - exact.onsager_lnz(beta)) < 1e-12
    assert abs(-g.item() - exact.onsager_energy(beta)) < 1e-10


@pytest.mark.parametrize("beta", [0.50, 0.60])
def test_ising_spontaneous_magnetisation_vs_onsager(beta):
    """Warm start from a polarised environment (field h = 1), then h = 0: the symmetry-broken
    fixed point gives Onsager-Yang's m = (1 - sinh(2 beta)^-4)^(1/8)."""
    a = ising_tensor(beta)
    env = ctmrg(a, 16, env=ctm_init(ising_tensor(beta, h=1.0)), tol=1e-12, max_iter=400,
                progress=False)
    m = ctm_site_expectation(a, ising_spin_tensor(beta), env).item()
    assert abs(m - (1 - np.sinh(2 * beta) ** -4) ** 0.125) < 1e-12


# ------------------------------------------------------------------ gradients
@pytest.mark.parametrize("kw", [dict(tol=1e-13, max_iter=500), dict(tol=None, max_iter=25)],
                         ids=["converged", "fixed-25-iterations"])
def test_ctmrg_gradient_matches_finite_difference(kw):
    """dE/dA by reverse mode (and forward mode) through CTMRG vs a 4-point finite difference
    of the same function along a random symmetric direction (chi = 12). The FD error is
    O(eps^4): measured 4.8e-8, 3.0e-9, 1.9e-10 at eps = 2e-3, 1e-3, 5e-4."""
    A = peps.random_c4v_peps(2, seed=5, noise=0.5)
    dA = sym_direction(A.shape, 1)
    f = energy_fn(12, **kw)
    g = np.asarray(tf.grad(f)(A))
    ad = float((g * dA).sum())
    _, fwd = tf.jvp(f, (A,), (tf.tensor(dA),))
    assert abs(fwd.item() - ad) < 1e-13
    x0 = np.asarray(A)
    fd = fd4(lambda t: f(tf.tensor(x0 + t * dA)).item(), 5e-4)
    assert abs(ad - fd) < 1e-9, (ad, fd)
    assert abs(ad) > 0.1  # a non-trivial direction


def test_checkpointing_gives_identical_gradients_and_saves_memory():
    A = peps.random_c4v_peps(2, seed=6, noise=0.5)
    kw = dict(tol=1e-12, max_iter=200)
    v0, g0 = tf.value_and_grad(energy_fn(12, **kw))(A)
    v1, g1 = tf.value_and_grad(energy_fn(12, checkpoint=True, **kw))(A)
    assert v0.item() == v1.item()
    assert np.allclose(np.asarray(g1), np.asarray(g0), rtol=1e-12, atol=1e-15)
    # memory: the tape keeps C, T per iteration instead of each decomposition's residuals
    kw = dict(tol=None, max_iter=20)
    full = tf.saved_residuals(energy_fn(12, **kw), A).total_bytes
    ck = tf.saved_residuals(energy_fn(12, checkpoint=True, **kw), A).total_bytes
    assert ck < full / 3, (ck, full)
    # the Ising path too
    def lnz(b, ckp):
        a = ising_tensor(b)
        return ctm_lnz(a, ctmrg(a, 8, tol=None, max_iter=100, checkpoint=ckp, progress=False))

    ga = tf.grad(lambda b: lnz(b, False))(tf.tensor(0.42)).item()
    gb = tf.grad(lambda b: lnz(b, True))(tf.tensor(0.42)).item()
    assert abs(ga - gb) < 1e-13 * abs(ga)


def test_gradients_finite_on_exactly_degenerate_spectra():
    """At the Neel state every corner value but the first is exactly zero (a massively
    degenerate spectrum, cut by the truncation). The gradient (zero: a stationary point) and
    the Hessian-vector product (forward-over-reverse) through CTMRG must be finite and right."""
    A = peps.neel_peps(2)
    dA = sym_direction(A.shape, 1)
    f = energy_fn(8, tol=1e-12, max_iter=100)
    g = np.asarray(tf.grad(f)(A))
    assert np.isfinite(g).all() and np.abs(g).max() < 1e-14
    _, hv = tf.jvp(tf.grad(f), (A,), (tf.tensor(dA),))
    hv = np.asarray(hv)
    assert np.isfinite(hv).all()
    x0 = np.asarray(A)
    F = lambda t: f(tf.tensor(x0 + t * dA)).item()  # noqa: E731
    e = 2e-3
    d2 = (-F(2 * e) + 16 * F(e) - 30 * F(0) + 16 * F(-e) - F(-2 * e)) / (12 * e * e)
    ad2 = float((hv * dA).sum())
    # 5-point stencil, error O(e^4): measured 1.9e-8, 1.2e-9, 1.2e-10 at e = 4e-3, 2e-3, 1e-3
    assert abs(ad2 - d2) < 1e-8 * abs(d2), (ad2, d2)
    assert ad2 < -1  # the Neel state is not a minimum: negative curvature along dA


def test_jit_matches_eager():
    A = peps.random_c4v_peps(2, seed=7, noise=0.5)
    f = energy_fn(10, tol=None, max_iter=30)
    v0, g0 = tf.value_and_grad(f)(A)
    v1, g1 = tf.jit(tf.value_and_grad(f))(A)
    assert abs(v0.item() - v1.item()) < 1e-13
    assert np.abs(np.asarray(g0) - np.asarray(g1)).max() < 1e-12
    fc = energy_fn(10, tol=None, max_iter=30, checkpoint=True)
    v2, g2 = tf.jit(tf.value_and_grad(fc))(A)
    assert np.abs(np.asarray(g0) - np.asarray(g2)).max() < 1e-12
    with pytest.raises(ConcretizationError, match="tol=None"):
        tf.jit(energy_fn(10, tol=1e-10, max_iter=30))(A)


# ----------------------------------------------------------------- optimisation
@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import ipeps_heisenberg
    finally:
        sys.path.remove(str(EXAMPLES))
    return ipeps_heisenberg


def test_optimisation_reaches_published_d2_energy_fast(example):
    """L-BFGS on AD gradients through (checkpointed) CTMRG at chi = 8: the energy decreases
    at every accepted iteration and converges to the published D=2 optimum. chi = 8 is not
    converged in chi (2e-11 above the chi = 16 value), far inside the 2e-3 requirement."""
    tf.tn.set_progress(False)
    A, hist, _ = example.optimise(D=2, chi=8, iters=80, seed=0, noise=0.3, verbose=False)
    es = np.array([h["e"] for h in hist])
    assert np.all(np.diff(es) <= 1e-12), es
    assert abs(es[-1] - peps.D2_REFERENCE_ENERGY) < 2e-3
    assert abs(es[-1] - peps.D2_REFERENCE_ENERGY) < 1e-8
    e, env = peps.heisenberg_energy(tf.tensor(A), 16, return_env=True, progress=False)
    assert abs(e.item() - peps.D2_REFERENCE_ENERGY) < 1e-8
    assert abs(peps.staggered_magnetization(tf.tensor(A), env).item() - 0.3911237) < 1e-4
    assert e.item() > peps.QMC_ENERGY  # variational


@pytest.mark.slow
@pytest.mark.parametrize("noise,seed,use_jit", [(0.3, 1, False), (0.6, 3, True),
                                                (1.0, 1, False)])
def test_optimisation_chi16_acceptance(example, noise, seed, use_jit):
    """The acceptance run at chi = 16 (checkpointed CTMRG; one run jitted with a fixed 60
    CTMRG iterations), evaluated at chi = 32. Starts: Neel + noise x random symmetric tensor,
    and one fully random start (noise = 1). Of 28 starts tried (noise 0.3: 10, noise 0.6: 10,
    random: 8), two (noise 0.6 seed 9, random seed 2) stopped instead in local minima
    (E = -0.641, and -0.646 where CTMRG does not converge); the example warns about them."""
    A, hist, _ = example.optimise(D=2, chi=16, iters=200, seed=seed, noise=noise,
                                  ctm_max_iter=60, use_jit=use_jit, verbose=False)
    e = peps.heisenberg_energy(tf.tensor(A), 32, tol=1e-12, progress=False).item()
    assert abs(e - peps.D2_REFERENCE_ENERGY) < 2e-3
    assert abs(e - peps.D2_REFERENCE_ENERGY) < 1e-8


def test_example_main_runs_at_reduced_size(example, tmp_path, capsys):
    png = tmp_path / "ipeps.png"
    rc = example.main(["--chi", "6", "--iters", "6", "--eval-chis", "6", "8",
                       "--plot", str(png)])
    out = capsys.readouterr().out
    assert rc == 0
    assert png.exists() and png.stat().st_size > 10_000
    assert "published D=2" in out and "QMC" in out and "energy/site" in out


# ----------------------------------------------------------------------- errors
def test_bad_input_errors():
    with pytest.raises(ShapeError, match="a\\[u, l, d, r\\]"):
        ctmrg(tf.ones((2, 2, 2)), 4)
    with pytest.raises(ShapeError, match="four legs of equal"):
        ctmrg(tf.ones((2, 2, 3, 2)), 4)
    with pytest.raises(DTypeError, match="real"):
        ctmrg(tf.ones((2, 2, 2, 2), dtype=tf.complex128), 4)
    r = np.random.default_rng(0).standard_normal((2, 2, 2, 2))
    with pytest.raises(ValueError, match="not C4v symmetric"):
        ctmrg(tf.tensor(r), 4)
    with pytest.raises(ValueError, match="projector"):
        ctmrg(ising_tensor(0.4), 4, projector="qr")
    with pytest.raises(ShapeError, match="A\\[s, u, l, d, r\\]"):
        peps.double_layer(tf.ones((2, 2, 2, 2)))


def test_progress_is_silenceable(capsys):
    a = ising_tensor(0.4)
    ctmrg(a, 4, max_iter=5, tol=None, progress=False)
    assert capsys.readouterr().err == ""
    ctmrg(a, 4, max_iter=5, tol=None, progress=True)
    assert "[CTMRG] 5/5" in capsys.readouterr().err
