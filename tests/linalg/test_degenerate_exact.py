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
    graph = tf.trace(tf.grad(loss), good)
    assert "degeneracy_check" in str(graph)
    path = tmp_path / "grad.tfg"
    graph.save(path)
    loaded = tf.load(path)
    with pytest.warns(DegeneracyWarning):
        loaded(bad)


# ------------------------------------------------------------------------------ TRG
def _clock_tensor(beta, q=4, breaking=0.0):
    """The q-state clock model's site tensor: its Z_q symmetry makes singular values exactly
    degenerate (pairs k, q - k); ``breaking`` adds a small symmetry-breaking field."""
    a = np.arange(q)
    c = np.cos(2 * np.pi * (a[:, None] - a[None, :]) / q)
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
    """d lnZ / d beta of 15 unrolled C4v CTMRG steps of the 4-state clock model at chi = 6: the
    corner spectrum is exactly 2-fold degenerate (Z_4 pairs) and chi keeps whole multiplets.
    The gradient is exact against extrapolated finite differences, and silent."""
    from tenferro._src.tn.ctmrg import corner_spectrum, ctm_lnz, ctmrg

    def f(b):
        a = _clock_tensor(b)
        return ctm_lnz(a, ctmrg(a, 6, tol=None, max_iter=15, projector=projector,
                                progress=False))

    a0 = _clock_tensor(T(0.5))
    s = corner_spectrum(ctmrg(a0, 6, tol=None, max_iter=15, projector=projector,
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
