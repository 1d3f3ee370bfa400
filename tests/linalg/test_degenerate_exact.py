"""Exact derivatives at exact and near degeneracies, and loud ones where none exists.

The three probes of the degeneracy issue are here as regression tests. What each must do:

* a loss that is a smooth function of the matrix but is computed through the individual
  values/vectors of a degenerate multiplet (V diag(exp(w)) V^H through eigh, U diag(S) Vh, the
  Hessian of sum(S**2)) has no derivative the factors can express at an exact tie: a
  ``DegeneracyWarning`` says so (design/linalg.md proves no linear rule can do better);
* at resolved near-degeneracies (splits 1e-9, 1e-6) the same losses are exact (the old
  Lorentzian broadening biased them by up to 8%);
* gauge-invariant losses (symmetric functions of whole multiplets, projectors onto them,
  U_k Vh_k) are exact everywhere, silently;
* ``funm`` / ``expm(hermitian=True)`` are exact everywhere.

References are closed forms or central finite differences at step 1e-4, Richardson-extrapolated.
"""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import DegeneracyWarning, TenferroError
from tests.linalg._util import (
    DTYPES,
    T,
    fd_gradient_extrapolated,
    hermitian,
    rand,
    rel_err,
    split_pair,
    with_singular_values,
)

# The degeneracy checks read values on the host, so on an accelerator they run only when
# TENFERRO_DEGENERACY is set (design/linalg.md); these tests are about the CPU default, and
# the opt-in on a stand-in device has its own test (test_checks_on_an_accelerator_only_on_request).
pytestmark = pytest.mark.default_device_cpu

PAIR = [3.0, 2.0, 2.0, 1.0]  # the probes' singular values
SPLITS = [0.0, 1e-12, 1e-9, 1e-6]
RESOLVED = [1e-9, 1e-6]  # above the default tie tolerance (1e-10 * max)


@pytest.fixture
def strict():
    """Fail on any DegeneracyWarning (for losses that must be exact and silent)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        yield


def _pair(y, x):
    """Re sum(conj(y) * x) of two tensors."""
    return tf.real(tf.sum(tf.conj(y) * x))


def _inner(w, x):
    """Re sum(conj(W) * X): a real loss whose gradient in X is W (both dtypes)."""
    return tf.real(tf.sum(tf.conj(T(w)) * x))


# ------------------------------------------------------------------ probe 1: exp spectrum
def _spectral_h(case, dtype, rng):
    n = 4
    if case == "eye":
        return np.eye(n, dtype=dtype)
    if case == "zero":
        return np.zeros((n, n), dtype=dtype)
    return hermitian(rng, n, dtype, [0.5, 1.5, 1.5, 2.5])


def _expected_spectral_gradient(h, w):
    """The gradient of Re<W, exp(herm(h))>: the Hermitian part of the Frechet adjoint,
    computed by the general (block-triangular) expm."""
    g = tf.grad(lambda x: _inner(w, la.expm((x + tf.conj(x.T)) / 2)))(T(h)).numpy()
    return g


@pytest.mark.parametrize("case", ["eye", "zero", "pair"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_spectral_loss_through_eigh_warns(case, dtype, rng):
    """sum(W * (V diag(exp(w)) V^T)) with w, V = eigh(h): the old rule filled only the
    diagonal of the gradient (off by up to 4.85) without a word."""
    h = _spectral_h(case, dtype, rng)
    w = rand(rng, h.shape, dtype)

    def loss(x):
        ev, v = la.eigh(x)
        return _inner(w, (v * tf.astype(tf.exp(ev), v.dtype)[None, :]) @ tf.conj(v.T))

    with pytest.warns(DegeneracyWarning, match=r"eigh: the loss depends on individual "
                                               r"eigenvalues of a \d-fold degenerate"):
        tf.grad(loss)(T(h))


@pytest.mark.parametrize("fn", ["funm", "expm_hermitian", "funm_callable_name"])
@pytest.mark.parametrize("case", ["eye", "zero", "pair"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_spectral_loss_through_funm_is_exact(fn, case, dtype, rng, strict):
    h = _spectral_h(case, dtype, rng)
    w = rand(rng, h.shape, dtype)
    f = {"funm": lambda x: la.funm(x, "exp"),
         "expm_hermitian": lambda x: la.expm(x, hermitian=True),
         "funm_callable_name": lambda x: la.funm(x, tf.exp)}[fn]
    g = tf.grad(lambda x: _inner(w, f(x)))(T(h)).numpy()
    if case in ("eye", "zero"):  # closed form: e^c (W + W^H)/2
        c = 1.0 if case == "eye" else 0.0
        want = np.exp(c) * (w + w.conj().T) / 2
    else:
        want = _expected_spectral_gradient(h, w)
    assert rel_err(g, want) < 1e-12


# ----------------------------------------------------------- probe 2: SVD reconstruction
def _reconstruction(w, **svd_kw):
    def loss(x):
        u, s, vh = la.svd(x, **svd_kw)
        return _inner(w, (u * tf.expand_dims(tf.astype(s, u.dtype), -2)) @ vh)

    return loss


@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_reconstruction_at_exact_tie_warns(dtype, rng):
    """grad(sum(W * ((U * S) @ Vh))) at singular values (3, 2, 2, 1): the exact gradient is W;
    the old rule was off by 0.73 silently. No rule on (U, S, Vh) can produce it at an exact
    tie (design/linalg.md), so it is reported."""
    a = with_singular_values(rng, 4, 4, PAIR, dtype)
    w = rand(rng, (4, 4), dtype)
    with pytest.warns(DegeneracyWarning, match=r"svd: the loss depends on individual singular "
                                               r"values of a 2-fold degenerate singular value 2 "
                                               r"\(S\[1:3\]\)"):
        tf.grad(_reconstruction(w))(T(a))


@pytest.mark.parametrize("split", RESOLVED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_reconstruction_near_tie_is_exact(split, dtype, rng, strict):
    a = with_singular_values(rng, 4, 4, split_pair(PAIR, 1, split), dtype)
    w = rand(rng, (4, 4), dtype)
    g = tf.grad(_reconstruction(w))(T(a)).numpy()
    assert rel_err(g, w) < 1e-15 / split * 100


@pytest.mark.parametrize("dtype", DTYPES)
def test_reconstruction_at_1e12_split(dtype, rng):
    """A split of 1e-12 is a tie under the default tolerance (reported); a smaller ``eps``
    resolves it, with the accuracy ~1e-16/split that floating point allows."""
    a = with_singular_values(rng, 4, 4, split_pair(PAIR, 1, 1e-12), dtype)
    w = rand(rng, (4, 4), dtype)
    with pytest.warns(DegeneracyWarning):
        tf.grad(_reconstruction(w))(T(a))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(_reconstruction(w, eps=1e-14))(T(a)).numpy()
    assert rel_err(g, w) < 1e-2


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_reconstruction(split, dtype, rng):
    """Rank-3 truncation keeps the whole pair: exact when resolved, reported at a tie."""
    a = with_singular_values(rng, 5, 4, split_pair(PAIR, 1, split), dtype)
    w = rand(rng, (5, 4), dtype)
    loss = _reconstruction(w, max_rank=3)
    if split in RESOLVED:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DegeneracyWarning)
            g = tf.grad(loss)(T(a)).numpy()
        assert rel_err(g, fd_gradient_extrapolated(loss, a)) < 1e-15 / split * 100
    else:
        with pytest.warns(DegeneracyWarning, match="individual singular values"):
            tf.grad(loss)(T(a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncation_through_a_tie_is_reported(dtype, rng):
    """Keeping one of two equal singular values: the convention keeps exactly max_rank values
    (LAPACK's arbitrary half of the multiplet) and says so, in the forward pass."""
    a = with_singular_values(rng, 5, 4, PAIR, dtype)
    with pytest.warns(DegeneracyWarning, match=r"truncating to 2 singular values cuts through a "
                                               r"2-fold degenerate singular value 2 \(S\[1:3\]\)"
                                               r".*keep 1 or 3"):
        u, s, vh = la.svd(T(a), max_rank=2)
    assert s.shape == (2,)
    with warnings.catch_warnings():  # a cut between multiplets is silent
        warnings.simplefilter("error", DegeneracyWarning)
        la.svd(T(a), max_rank=3)
        la.svd(T(a), max_rank=1)


def test_truncation_through_a_tie_is_reported_in_traced_graphs(rng):
    a = with_singular_values(rng, 5, 4, PAIR, "float64")
    f = tf.jit(lambda x: la.svd(x, relative_cutoff=0.5, max_rank=2).S)
    with pytest.warns(DegeneracyWarning, match="cuts through"):
        f(T(a))


# ---------------------------------------------------------- probe 3: Hessian of sum(S^2)
def _sum_s2(x):
    return tf.sum(la.svd(x).S ** 2)


@pytest.mark.parametrize("split", [0.0, 1e-12])
@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_hessian_of_sum_s2_at_exact_tie_warns(split, dtype, rng):
    """sum(S**2) = ||A||_F^2 has Hessian 2I; through the factors it was off by 0.69. Its
    second derivative needs the individual values of the pair: reported (a 1e-12 split is a
    tie under the default tolerance)."""
    a = with_singular_values(rng, 4, 4, split_pair(PAIR, 1, split), dtype)
    t = rand(rng, (4, 4), dtype)
    with pytest.warns(DegeneracyWarning, match="individual singular values"):
        tf.hvp(_sum_s2, (T(a),), (T(t),))
    if dtype == "float64":
        with pytest.warns(DegeneracyWarning, match="individual singular values"):
            tf.hessian(_sum_s2)(T(a))


@pytest.mark.parametrize("split", RESOLVED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_hessian_of_sum_s2_near_tie_is_exact(split, dtype, rng, strict):
    """Split by 1e-9 the old rule was still 1.3% off (the broadening bias)."""
    a = with_singular_values(rng, 4, 4, split_pair(PAIR, 1, split), dtype)
    t = rand(rng, (4, 4), dtype)
    hv = tf.hvp(_sum_s2, (T(a),), (T(t),)).numpy()
    assert rel_err(hv, 2 * t) < 1e-15 / split * 100
    if dtype == "float64":
        h = tf.hessian(_sum_s2)(T(a)).numpy().reshape(16, 16)
        assert np.abs(h - 2 * np.eye(16)).max() < 1e-15 / split * 100


# ----------------------------------------------------- gauge-invariant losses: exact, silent
def _invariant_losses(m, n, dtype, rng):
    c = T(rand(rng, (m, m), dtype))
    e = T(rand(rng, (m, n), dtype))
    k = 3  # the pair (1, 2) lies inside the top 3

    def sum_s(x):
        return tf.sum(la.svd(x).S)

    def sum_s2(x):
        return tf.sum(la.svd(x).S ** 2)

    def projector(x):
        u = la.svd(x).U[:, :k]
        return tf.real(tf.sum(c * (u @ tf.conj(u.T))))

    def joint_uv(x):
        u, _, vh = la.svd(x)
        return tf.real(tf.sum(tf.conj(e) * (u[:, :k] @ vh[:k])))

    return {"sum_s": sum_s, "sum_s2": sum_s2, "projector": projector, "joint_uv": joint_uv}


@pytest.mark.parametrize("loss_name", ["sum_s", "sum_s2", "projector", "joint_uv"])
@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gauge_invariant_svd_losses(loss_name, split, dtype, rng, strict):
    a = with_singular_values(rng, 5, 4, split_pair(PAIR, 1, split), dtype)
    loss = _invariant_losses(5, 4, dtype, rng)[loss_name]
    g = tf.grad(loss)(T(a)).numpy()
    tol = 1e-8 if split in (0.0, 1e-12) else max(1e-8, 1e-15 / split * 10)
    assert rel_err(g, fd_gradient_extrapolated(loss, a)) < tol


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_hvp_of_top_values_through_a_pair(split, dtype, rng, strict):
    """Second order of a symmetric function of a whole multiplet: exact at every split."""
    a = with_singular_values(rng, 5, 4, split_pair(PAIR, 1, split), dtype)
    t = rand(rng, (5, 4), dtype)

    def loss(x):
        return tf.sum(la.svd(x).S[:3])

    hv = tf.hvp(loss, (T(a),), (T(t),)).numpy()
    g = tf.grad(loss)
    h = 1e-4

    def d(step):
        return (g(T(a + step * t)).numpy() - g(T(a - step * t)).numpy()) / (2 * step)

    fd = (4 * d(h / 2) - d(h)) / 3
    tol = 1e-7 if split in (0.0, 1e-12) else max(1e-7, 1e-15 / split * 10)
    assert rel_err(hv, fd) < tol


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_projector_and_block_sum(split, dtype, rng, strict):
    a = hermitian(rng, 5, dtype, split_pair([-1.0, 2.0, 2.0, 3.0, 5.0], 1, split))
    c = T(rand(rng, (5, 5), dtype))

    def loss(x):
        w, v = la.eigh(x)
        p = v[:, :3] @ tf.conj(v[:, :3].T)
        return tf.sum(w[:3] ** 2) + tf.real(tf.sum(c * p))

    g = tf.grad(loss)(T(a)).numpy()
    tol = 1e-8 if split in (0.0, 1e-12) else max(1e-8, 1e-15 / split * 10)
    assert rel_err(g, fd_gradient_extrapolated(loss, a)) < tol


@pytest.mark.parametrize("split", RESOLVED)
@pytest.mark.parametrize("dtype", DTYPES)
def test_spectral_loss_through_eigh_near_tie_is_exact(split, dtype, rng, strict):
    h = hermitian(rng, 4, dtype, split_pair([0.5, 1.5, 1.5, 2.5], 1, split))
    w = rand(rng, h.shape, dtype)

    def loss(x):
        ev, v = la.eigh(x)
        return _inner(w, (v * tf.astype(tf.exp(ev), v.dtype)[None, :]) @ tf.conj(v.T))

    g = tf.grad(loss)(T(h)).numpy()
    assert rel_err(g, _expected_spectral_gradient(h, w)) < 1e-15 / split * 100


# ------------------------------------------------------------ gauge-dependent: reported
@pytest.mark.parametrize("dtype", DTYPES)
def test_loss_depending_on_the_basis_in_a_multiplet_is_reported(dtype, rng):
    a = with_singular_values(rng, 4, 4, PAIR, dtype)
    with pytest.warns(DegeneracyWarning, match="choice of singular vectors"):
        tf.grad(lambda x: tf.abs2(la.svd(x).U[0, 1]))(T(a))
    h = hermitian(rng, 4, dtype, [1.0, 1.0, 2.0, 3.0])
    with pytest.warns(DegeneracyWarning, match="choice of eigenvectors"):
        tf.grad(lambda x: tf.abs2(la.eigh(x).eigenvectors[0, 0]))(T(h))


def test_switch(rng, monkeypatch):
    a = T(with_singular_values(rng, 4, 4, PAIR, "float64"))
    w = rand(rng, (4, 4), "float64")
    loss = _reconstruction(w)
    monkeypatch.setenv("TENFERRO_DEGENERACY", "raise")
    with pytest.raises(DegeneracyWarning, match="svd: the loss depends"):
        tf.grad(loss)(a)
    assert issubclass(DegeneracyWarning, TenferroError)
    monkeypatch.setenv("TENFERRO_DEGENERACY", "ignore")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g_ignored = tf.grad(loss)(a).numpy()
    monkeypatch.setenv("TENFERRO_DEGENERACY", "warn")
    with pytest.warns(DegeneracyWarning):
        g_warned = tf.grad(loss)(a).numpy()
    np.testing.assert_array_equal(g_ignored, g_warned)
    monkeypatch.setenv("TENFERRO_DEGENERACY", "loud")
    with pytest.raises(TenferroError, match="TENFERRO_DEGENERACY must be one of warn, raise"):
        tf.grad(loss)(a)


def test_check_is_free_without_degeneracy(rng, monkeypatch):
    """Nothing degenerate: the check compares neighbouring values and returns its input; the
    O(k^2) inspection never runs."""
    import chainrules.primitives.degeneracy as deg

    def boom(*args, **kwargs):
        raise AssertionError("inspected a non-degenerate spectrum")

    monkeypatch.setattr(deg, "_inspect", boom)
    a = T(rand(rng, (6, 5), "complex128"))
    tf.grad(lambda x: tf.sum(tf.abs2(tf.stack(tuple(la.svd(x)[0:1])))))(a)
    tf.grad(lambda x: tf.real(tf.sum(la.eigh(x).eigenvectors[0])))(T(hermitian(rng, 5,
                                                                              "complex128")))


def test_warning_names_the_batch_member(rng):
    a = np.stack([rand(rng, (4, 4), "float64"), with_singular_values(rng, 4, 4, PAIR,
                                                                     "float64")])
    w = rand(rng, (2, 4, 4), "float64")
    with pytest.warns(DegeneracyWarning, match=r"matrix 1 of the batch, S\[1:3\]"):
        tf.grad(_reconstruction(w))(T(a))


# ---------------------------------------------------------------------- traced graphs
def test_traced_gradient_checks_at_run_time(rng, tmp_path):
    """The check is a node of the gradient graph: every run inspects its own data, DCE/CSE
    keep it (its output is the cotangent), and a saved graph keeps it too."""
    w = rand(rng, (4, 4), "float64")
    loss = _reconstruction(w)
    good = T(rand(rng, (4, 4), "float64"))
    bad = T(with_singular_values(rng, 4, 4, PAIR, "float64"))
    f = tf.jit(tf.grad(loss))
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        f(good)
    with pytest.warns(DegeneracyWarning):
        f(bad)
    graph = tf.make_graph(tf.grad(loss), good)
    assert "degeneracy_check" in str(graph)
    path = tmp_path / "grad.tfg"
    graph.save(path)
    loaded = tf.load(path)
    with pytest.warns(DegeneracyWarning):
        loaded(bad)


# ------------------------------------------------------------------------------ TRG
def _clock_tensor(beta, q=4, breaking=0.0):
    """The q-state clock model's site tensor: its Z_q symmetry makes singular values exactly
    degenerate (pairs k, q - k); ``breaking`` adds a small symmetry-breaking field. The bond
    weights are cos(2 pi r / q) of the distance r = min(|a - b| mod q, q - ...) on the ring,
    so that differences d and q - d give the same floating-point number (cos(pi/2) and
    cos(3 pi/2) differ by 2.4e-16: the Z_q symmetry of the input is then exact)."""
    a = np.arange(q)
    d = (a[:, None] - a[None, :]) % q
    c = np.cos(2 * np.pi * np.minimum(d, q - d) / q)
    w = tf.exp(beta * T(c))
    lam, v = la.eigh(w)
    m = v * tf.sqrt(lam)[None, :]
    t = tf.einsum("sl,su,sr,sd->lurd", m, m, m, m)
    if breaking:
        t = t * (1 + breaking * T(np.random.default_rng(7).standard_normal(t.shape)))
    return t


@pytest.mark.parametrize("chi", [5, 6])
@pytest.mark.parametrize("breaking", [0.0, 1e-12, 1e-9, 1e-6])
def test_small_trg_loss(chi, breaking):
    """d lnZ / d beta of a 3-step TRG of the 4-state clock model (no multiplet cut): exact
    against extrapolated finite differences, at exact and near degeneracies, and silent.
    With a symmetry-breaking field the exactly zero singular values split into a ~1e-11 tail
    that the truncation cuts, which makes lnZ itself noisy at ~1e-10; a larger finite-
    difference step (1e-3, still extrapolated) keeps that noise below the tolerance."""
    from tenferro.tn import trg

    def f(b):
        return trg(_clock_tensor(b, breaking=breaking), chi, 3, progress=False)

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(f)(T(0.5)).item()
    h, tol = (1e-4, 1e-9) if breaking == 0 else (1e-3, 2e-6)

    def d(step):
        return (f(T(0.5 + step)).item() - f(T(0.5 - step)).item()) / (2 * step)

    assert abs(g - (4 * d(h / 2) - d(h)) / 3) < tol * abs(g)


def test_trg_cutting_a_multiplet_is_reported():
    from tenferro.tn import trg

    with pytest.warns(DegeneracyWarning, match="cuts through"):
        trg(_clock_tensor(T(0.5)), 4, 2, progress=False)


# ---------------------------------------------------------------------------- CTMRG
@pytest.mark.parametrize("projector", ["svd", "eigh"])
def test_small_ctmrg_loss_at_exact_degeneracy(projector):
    """d lnZ / d beta of 20 unrolled C4v CTMRG steps of the 4-state clock model at chi = 6: the
    corner spectrum is exactly 2-fold degenerate (Z_4 pairs) and chi keeps whole multiplets.
    The gradient is exact against extrapolated finite differences, and silent.

    The pair is degenerate at the fixed point only: the first steps (the initial environment,
    truncations of a growing corner) split it by 7e-2, and the split decays geometrically,
    about 6x per step (1e-2, 4e-3, ... 7e-7 at step 8, 2.5e-12 at 15, 1e-14 at 18); from step
    20 on it is rounding (1e-16..1e-15). So 20 steps, not 15 (which left ~2e-12 depending on
    the BLAS: still a tie for the rules, 1e-10, but not the exact degeneracy claimed here)."""
    from tenferro._src.tn.ctmrg import corner_spectrum, ctm_lnz, ctmrg

    steps = 20

    def f(b):
        a = _clock_tensor(b)
        return ctm_lnz(a, ctmrg(a, 6, tol=None, max_iter=steps, projector=projector,
                                progress=False))

    a0 = _clock_tensor(T(0.5))
    s = corner_spectrum(ctmrg(a0, 6, tol=None, max_iter=steps, projector=projector,
                              progress=False).C)
    # the probe really is exactly degenerate: the Z_4 pair differs only by the rounding that 15
    # iterations accumulate (1.4e-12 with OpenBLAS 0.3.31), eight orders below every other gap
    split = abs(s[1] - s[2])
    assert split < 1e-10 * s[0]
    assert split < 1e-8 * min(s[0] - s[1], s[2] - s[3], s[3] - s[4])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(f)(T(0.5)).item()

    def d(step):
        return (f(T(0.5 + step)).item() - f(T(0.5 - step)).item()) / (2 * step)

    assert abs(g - (4 * d(5e-5) - d(1e-4)) / 3) < 1e-8 * abs(g)


# ------------------------------------------------------------------------ accelerators
@pytest.mark.default_device_cpu
def test_checks_on_an_accelerator_only_on_request(rng, monkeypatch):
    """Looking at the spectrum costs a device-to-host read on an accelerator (the "strict:1"
    stand-in): by default nothing is read back (rank-only truncation and the backward check
    both stay on the device); TENFERRO_DEGENERACY=warn asks for the checks there too."""
    from tenferro._src.backends import host_reads

    a = with_singular_values(rng, 5, 4, PAIR, "float64")
    w = rand(rng, (5, 4), "float64")

    def run():
        with tf.default_device("strict:1"):
            x = tf.tensor(a)
            tf.grad(_reconstruction(w, max_rank=2))(x)

    monkeypatch.delenv("TENFERRO_DEGENERACY", raising=False)
    before = host_reads["strict:1"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        run()
    assert host_reads["strict:1"] == before
    monkeypatch.setenv("TENFERRO_DEGENERACY", "warn")
    with pytest.warns(DegeneracyWarning) as rec:
        run()
    messages = [str(r.message) for r in rec]
    assert any("cuts through" in m for m in messages)  # forward: the truncation
    assert any("choice of singular vectors" in m for m in messages)  # backward: the check
    assert host_reads["strict:1"] > before


# ------------------------------------------- zero singular values (the zero matrix included)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,svals", [((3, 3), [0.0, 0.0, 0.0]), ((4, 4), [3.0, 2.0, 0.0, 0.0]),
                                         ((5, 4), [3.0, 2.0, 1.0, 0.0])])
def test_reconstruction_at_zero_singular_values_warns(shape, svals, dtype, rng):
    """sum(W * (U*S) @ Vh) is <W, A>, gradient W. At A = 0 the old rule returned
    diag(U^H W V) (diag(0, 4, 8) for W = arange(9)) silently: the vectors of zero singular
    values are free, and their motion is multiplied by s = 0. Reported now (also at a
    rank-deficient matrix, and for a single zero of a tall matrix, whose left vector may
    rotate into the complement)."""
    a = (np.zeros(shape, dtype) if not any(svals)
         else with_singular_values(rng, *shape, svals, dtype))
    w = np.arange(np.prod(shape), dtype=float).reshape(shape).astype(dtype)
    with pytest.warns(DegeneracyWarning, match=r"zero singular value"):
        tf.grad(_reconstruction(w))(T(a))


def test_single_zero_of_a_real_square_matrix_is_exact(rng, strict):
    """The exception: a real square matrix's single zero singular value has a signed branch
    (u and v fixed up to a common sign), which the rule differentiates; the reconstruction
    through it is exact and silent."""
    a = with_singular_values(rng, 4, 4, [3.0, 2.0, 1.0, 0.0], "float64")
    w = rand(rng, (4, 4), "float64")
    g = tf.grad(_reconstruction(w))(T(a)).numpy()
    assert rel_err(g, w) < 1e-12


# ----------------------------------- a loss that uses the factors and the matrix: <U M V^H, A>
def _l1(ms, scale=2.0, eigh=False):
    """L1(A) = <U M V^H, A> / scale with M symmetric, zero diagonal: = sum_i M_ii s_i / scale
    = 0 for every A (smooth, gradient 0)."""

    def loss(x):
        if eigh:
            _, v = la.eigh(x)
            return _pair(v @ T(ms) @ tf.conj(v.T), x) / scale
        u, _, vh = la.svd(x)
        return _pair(u @ T(ms) @ vh, x) / scale

    return loss


def _sym_zero_diag(rng, n):
    m = rng.standard_normal((n, n))
    m = m + m.T
    np.fill_diagonal(m, 0)
    return m


def test_factors_and_matrix_loss_at_a_tie_is_invisible_to_the_node(rng):
    """Why <U M V^H, A> at A = s I cannot be reported by the backward check (design/linalg.md,
    "What one backward pass cannot see"): the svd node receives the same cotangents from it
    as from the smooth projector loss (<C, U U^H> + <D, V V^H>) / 2 with C = U M U^H and
    D = V M V^H fixed, which the rule differentiates exactly (its gradient is 0: the projector
    onto the whole space is I). L1's true gradient is 0 as well, but the rule returns its
    direct part U M V^H / s (the svd part is 0, as for the projector loss): the node would
    have to return -U M V^H / s for one and 0 for the other from the same inputs."""
    n, s = 3, 2.0
    ms = _sym_zero_diag(rng, n)
    a = s * np.eye(n)
    u, _, vh = (x.numpy() for x in la.svd(T(a)))
    c, d = u @ ms @ u.T, vh.T @ ms @ vh

    def cotangents(loss_of_factors):
        _, pull = tf.vjp(loss_of_factors, T(u), T(vh))
        return [x.numpy() for x in pull(tf.tensor(1.0))]

    def l1_at_fixed_a(uu, vvh):  # the node's view of L1: A enters on its own
        return tf.sum((uu @ T(ms) @ vvh) * T(a)) / s

    def projectors(uu, vvh):
        return (tf.sum(T(c) * (uu @ uu.T)) + tf.sum(T(d) * (vvh.T @ vvh))) / 2

    for x, y in zip(cotangents(l1_at_fixed_a), cotangents(projectors)):
        np.testing.assert_allclose(x, y, atol=1e-12)

    def projector_loss(x):
        uu, _, vvh = la.svd(x)
        return projectors(uu, vvh)

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        np.testing.assert_allclose(tf.grad(projector_loss)(T(a)).numpy(), 0.0, atol=1e-12)
        g = tf.grad(_l1(ms, s))(T(a)).numpy()  # silent: the node saw nothing wrong ...
    np.testing.assert_allclose(g, u @ ms @ vh / s, atol=1e-12)  # ... and 0 is right


@pytest.mark.parametrize("eigh", [False, True])
@pytest.mark.parametrize("a_kind", ["scalar", "pair"])
def test_factors_and_matrix_loss_is_found_by_check_gauge_invariance(eigh, a_kind, rng):
    """What detects it: the gradient in another basis of the tie (``tie_gauge``) differs;
    ``tenferro.linalg.check_gauge_invariance`` reports that. Exact losses pass it."""
    n = 4
    ms = _sym_zero_diag(rng, n)
    ms[0, :] = ms[:, 0] = 0.0  # the pair below is S[1:3]: keep M inside the tied block(s)
    ms[3, :] = ms[:, 3] = 0.0
    if a_kind == "scalar":
        a = 2.0 * np.eye(n)
    elif eigh:
        a = hermitian(rng, n, "float64", [3.0, 2.0, 2.0, 1.0])
    else:
        a = with_singular_values(rng, n, n, PAIR, "float64")
    loss = _l1(ms, 2.0, eigh)
    with pytest.warns(DegeneracyWarning, match="check_gauge_invariance: the gradient"):
        assert la.check_gauge_invariance(loss, T(a)) > 1e-3
    # an exact loss at the same point: silent, and 0 difference
    c = rand(rng, (n, n), "float64")

    def projector(x):
        u = la.eigh(x)[1] if eigh else la.svd(x)[0]
        return _inner(c, u[:, 1:3] @ u[:, 1:3].T) if a_kind == "pair" else _inner(c, u @ u.T)

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        assert la.check_gauge_invariance(projector, T(a)) < 1e-10


@pytest.mark.parametrize("dtype", DTYPES)
def test_factors_and_matrix_loss_at_a_small_split(dtype, rng):
    """At a split inside the tie width (1e-12 < eps = 1e-10) the rule cuts the pair and drops
    E_ij (C_ij - conj C_ji) / 2, a 0 * inf whose limit L1 needs (its cotangent's
    anti-Hermitian part is ~ the split). No basis is free there (the split fixes it), but the
    gradient changes with the tie tolerance: check_gauge_invariance tries eps * 1e-3 and
    reports it. With a smaller eps the same loss is exact (gradient 0)."""
    n = 4
    ms = _sym_zero_diag(rng, n)
    a = with_singular_values(rng, n, n, split_pair(PAIR, 1, 1e-12), dtype)
    loss = _l1(ms.astype(dtype))
    with pytest.warns(DegeneracyWarning, match="check_gauge_invariance"):
        assert la.check_gauge_invariance(loss, T(a), seeds=()) > 1e-2

    def resolved(x):
        u, _, vh = la.svd(x, eps=1e-15)
        return _pair(u @ T(ms.astype(dtype)) @ vh, x) / 2.0

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(resolved)(T(a)).numpy()
    assert np.abs(g).max() < 1e-2


# ------------------------------------------- a basis-dependent eigh loss at s I, I and 0
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [2.0, 1.0, 0.0])
@pytest.mark.parametrize("loss_name", ["v00", "sym_weights", "squares"])
def test_basis_dependent_eigh_loss_at_full_degeneracy_warns(loss_name, scale, dtype, rng):
    """At s I every basis is an eigenbasis; LAPACK returns the coordinate axes, where these
    losses are stationary (their rotation cotangent has no anti-Hermitian part), so the check
    was blind and the gradient 0 came back silently (warned at partial degeneracies, where the
    basis is not special). The decompositions now return a generic basis inside exact ties
    (``tie_gauge``), where a basis-dependent loss is not stationary: reported."""
    n = 4
    wsym = rng.standard_normal((n, n))
    wsym = wsym + wsym.T
    losses = {
        "v00": lambda x: tf.real(la.eigh(x)[1][0, 0]),
        "sym_weights": lambda x: tf.real(tf.sum(la.eigh(x)[1] * T(wsym.astype(dtype)))),
        "squares": lambda x: tf.sum(tf.abs2(la.eigh(x)[1]) * T(wsym)),
    }
    with pytest.warns(DegeneracyWarning, match="choice of eigenvectors"):
        tf.grad(losses[loss_name])(T(scale * np.eye(n, dtype=dtype)))


def test_generic_basis_is_an_eigenbasis_and_reproducible(rng):
    """The generic basis is still an orthonormal eigenbasis (to rounding), the same on every
    call, and another ``tie_gauge`` seed gives another one."""
    a = np.diag([1.0, 1.0, 1.0, 2.0])
    w, v = la.eigh(T(a))
    v = v.numpy()
    np.testing.assert_allclose(a @ v, v * w.numpy()[None, :], atol=1e-14)
    np.testing.assert_allclose(v.T @ v, np.eye(4), atol=1e-14)
    assert np.abs(v[:3, :3]).max() < 0.999  # not the coordinate axes
    np.testing.assert_array_equal(v, la.eigh(T(a))[1].numpy())
    with la.tie_gauge(3):
        v3 = la.eigh(T(a))[1].numpy()
    assert np.abs(v3[:3, :3] - v[:3, :3]).max() > 1e-3
    np.testing.assert_array_equal(v3[:, 3], v[:, 3])  # a simple eigenvalue: unchanged
    u, s, vh = la.svd(T(2.0 * np.eye(3)))
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ vh.numpy(), 2 * np.eye(3), atol=1e-14)


# ------------------------------------------------------------------ the polar factor U Vh
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("svals", [PAIR, [2.0, 2.0, 2.0, 1.0], [2.0] * 4, [1.0] * 4,
                                   split_pair(PAIR, 1, 1e-12)])
@pytest.mark.parametrize("shape", [(4, 4), (5, 4), (4, 5)])
def test_polar_factor_is_exact_and_silent(shape, svals, dtype, rng, strict):
    """U Vh (the polar factor) is smooth wherever A has full rank, degenerate or not: exact
    against finite differences and never reported."""
    a = with_singular_values(rng, *shape, svals, dtype)
    e = rand(rng, shape, dtype)

    def loss(x):
        u, _, vh = la.svd(x)
        return _inner(e, u @ vh)

    g = tf.grad(loss)(T(a)).numpy()
    assert rel_err(g, fd_gradient_extrapolated(loss, a)) < 1e-8
