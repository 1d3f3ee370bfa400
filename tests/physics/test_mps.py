"""MPS utilities, MPO builders and the variational ground-state search.

Utilities are checked against dense vectors and dense Hamiltonians built here with numpy.kron
(independently of the MPO code), derivatives against finite differences, jit against eager;
the optimiser against exact diagonalisation and the free-fermion solution (the issue's
acceptance runs are fast enough for the default run; the L=64 and eager runs are slow)."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.variational import (
    _flatten,
    _unflatten,
    default_schedule,
    mps_energy,
    precondition,
    variational_ground_state,
)
from tenferro.errors import ConvergenceWarning, ShapeError
from tenferro.testing import check_grads
from tenferro.tn import exact
from tenferro.tn.mpo import (
    heisenberg_mpo,
    mpo_from_terms,
    mpo_to_dense,
    spin_operators,
    tfim_mpo,
)
from tenferro.tn.mps import (
    bond_dimensions,
    expand_bond_dimension,
    left_canonicalize,
    mixed_canonicalize,
    mpo_expectation,
    mpo_variance,
    mps_norm,
    mps_overlap,
    mps_to_dense,
    product_mps,
    random_mps,
    right_canonicalize,
    two_site_update,
)

pytestmark = pytest.mark.numpy_only  # physics runs: once, on the default backend

DTYPES = [tf.float64, tf.complex128]


def dense(mps):
    return np.asarray(mps_to_dense(mps).numpy())


def np_(t):
    return np.asarray(t.numpy())


# ------------------------------------------------------------ dense references (numpy)
def site_op(op, i, L):
    out = np.eye(1)
    for j in range(L):
        out = np.kron(out, op if j == i else np.eye(op.shape[0]))
    return out


def dense_heisenberg(L, J=1.0, h=0.0, delta=1.0):
    s = spin_operators("spin")
    H = sum(J * (site_op(s["Sx"], i, L) @ site_op(s["Sx"], i + 1, L)
                 + site_op(s["Sy"], i, L) @ site_op(s["Sy"], i + 1, L)
                 + delta * site_op(s["Sz"], i, L) @ site_op(s["Sz"], i + 1, L))
            for i in range(L - 1))
    return H - h * sum(site_op(s["Sz"], i, L) for i in range(L))


def dense_tfim(L, g=1.0, J=1.0):
    p = spin_operators("pauli")
    H = -J * sum(site_op(p["Z"], i, L) @ site_op(p["Z"], i + 1, L) for i in range(L - 1))
    return H - g * sum(site_op(p["X"], i, L) for i in range(L))


def random_hermitian(rng, d):
    a = rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d))
    return a + a.conj().T


# --------------------------------------------------------------------- construction
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_mps_shapes_norm_and_dtype(dtype):
    psi = random_mps(7, 5, d=3, dtype=dtype, seed=1)
    assert bond_dimensions(psi) == [1, 3, 5, 5, 5, 5, 3, 1]  # capped by d^min(k, L-k)
    assert all(a.dtype == np.dtype(dtype) for a in psi)
    assert abs(mps_norm(psi).item() - 1) < 1e-13
    v = dense(psi)
    assert v.shape == (3**7,) and abs(np.linalg.norm(v) - 1) < 1e-13
    if np.dtype(dtype).kind == "c":
        assert np.abs(v.imag).max() > 1e-3  # genuinely complex
    raw = random_mps(7, 5, d=3, dtype=dtype, seed=1, canonical=None)
    np.testing.assert_allclose(dense(right_canonicalize(raw, normalize=True)), v, atol=1e-13)


def test_product_mps_neel_state():
    up, dn = [1.0, 0.0], [0.0, 1.0]
    L = 6
    neel = product_mps([up, dn] * (L // 2))
    v = dense(neel)
    ref = np.zeros(2**L)
    ref[int("010101", 2)] = 1.0  # site 1 slowest; basis index 0 = up
    np.testing.assert_array_equal(v, ref)
    # classical energy of the Neel state: J Sz Sz = -1/4 on every bond
    assert abs(mps_energy(neel, heisenberg_mpo(L)).item() + (L - 1) / 4) < 1e-14
    plus = product_mps(np.array([1.0, 1.0]) / np.sqrt(2), L=L)  # all spins along +x
    assert abs(mps_energy(plus, tfim_mpo(L, g=0.7)).item() + 0.7 * L) < 1e-13
    with pytest.raises(ShapeError):
        product_mps([1.0, 0.0])  # one vector needs L


# ------------------------------------------------------------------ canonical forms
def _left_iso_error(a):
    Dl, d, Dr = a.shape
    m = np_(a).reshape(Dl * d, Dr)
    return np.abs(m.conj().T @ m - np.eye(Dr)).max()


def _right_iso_error(a):
    Dl, d, Dr = a.shape
    m = np_(a).reshape(Dl, d * Dr)
    return np.abs(m @ m.conj().T - np.eye(Dl)).max()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("center", [0, 3, 6])
def test_mixed_canonical_isometries_and_state(dtype, center):
    raw = random_mps(7, 6, dtype=dtype, seed=2, canonical=None)
    v = dense(raw)
    psi = mixed_canonicalize(raw, center)
    np.testing.assert_allclose(dense(psi), v, atol=1e-13 * np.abs(v).max())
    for i, a in enumerate(psi):
        if i < center:
            assert _left_iso_error(a) < 1e-13, i
        if i > center:
            assert _right_iso_error(a) < 1e-13, i
    # the norm sits in the centre tensor
    assert abs(np.linalg.norm(np_(psi[center])) - np.linalg.norm(v)) < 1e-13
    nrm = mixed_canonicalize(raw, center, normalize=True)
    np.testing.assert_allclose(dense(nrm), v / np.linalg.norm(v), atol=1e-13)


def test_canonical_forms_are_idempotent_and_gauge_independent_in_content():
    """positive=True QR: canonicalising a canonical MPS changes nothing (R = 1 exactly), and
    two gauges of one state give canonical forms that differ only by unitaries on the bonds
    (same state, same Schmidt spectra)."""
    rng = np.random.default_rng(3)
    psi = random_mps(6, 4, seed=4, canonical=None)
    lc, rc = left_canonicalize(psi), right_canonicalize(psi)
    assert max(_left_iso_error(a) for a in lc[:-1]) < 1e-13
    assert max(_right_iso_error(a) for a in rc[1:]) < 1e-13
    for fn, form in ((left_canonicalize, lc), (right_canonicalize, rc)):
        for x, y in zip(fn(form), form):
            np.testing.assert_allclose(np_(x), np_(y), atol=1e-13)
    gauged = list(psi)  # a random invertible gauge transformation on every bond
    for k in range(len(psi) - 1):
        D = psi[k].shape[2]
        g = rng.standard_normal((D, D)) + 3 * np.eye(D)
        gauged[k] = tf.einsum("asb,bc->asc", gauged[k], tf.tensor(g))
        gauged[k + 1] = tf.einsum("cb,bsd->csd", tf.tensor(np.linalg.inv(g)), gauged[k + 1])
    np.testing.assert_allclose(dense(gauged), dense(psi), atol=1e-12)
    for c in range(len(psi)):
        a, b = mixed_canonicalize(psi, c), mixed_canonicalize(gauged, c)
        sa = np.linalg.svd(np_(a[c]).reshape(a[c].shape[0], -1), compute_uv=False)
        sb = np.linalg.svd(np_(b[c]).reshape(b[c].shape[0], -1), compute_uv=False)
        np.testing.assert_allclose(sa, sb, atol=1e-12)  # Schmidt values of bond c


def test_canonicalize_trims_oversized_bonds():
    rng = np.random.default_rng(5)
    psi = [tf.tensor(rng.standard_normal(s)) for s in [(1, 2, 7), (7, 2, 7), (7, 2, 1)]]
    v = dense(psi)
    c = mixed_canonicalize(psi, 1)
    assert bond_dimensions(c) == [1, 2, 2, 1]
    np.testing.assert_allclose(dense(c), v, atol=1e-12)


# ------------------------------------------------------------- overlaps and norms
@pytest.mark.parametrize("dtype", DTYPES)
def test_overlap_and_norm_against_dense(dtype):
    bra = random_mps(8, 5, dtype=dtype, seed=6, canonical=None)
    ket = random_mps(8, 3, dtype=dtype, seed=7, canonical=None)
    vb, vk = dense(bra), dense(ket)
    ov = mps_overlap(bra, ket).item()
    assert abs(ov - np.vdot(vb, vk)) < 1e-12 * np.linalg.norm(vb) * np.linalg.norm(vk)
    assert abs(mps_overlap(ket, bra).item() - np.conj(ov)) < 1e-14 * max(1, abs(ov))
    assert abs(mps_norm(bra).item() - np.linalg.norm(vb)) < 1e-12 * np.linalg.norm(vb)


def test_overlap_of_mixed_real_and_complex_states():
    bra = random_mps(5, 4, dtype=tf.complex128, seed=8)
    ket = random_mps(5, 4, seed=9)
    assert abs(mps_overlap(bra, ket).item() - np.vdot(dense(bra), dense(ket))) < 1e-13


# ---------------------------------------------------------------------------- MPOs
@pytest.mark.parametrize("L", [1, 2, 5])
def test_mpo_builders_against_dense_hamiltonians(L):
    np.testing.assert_allclose(np_(mpo_to_dense(heisenberg_mpo(L, J=1.3, h=0.4, delta=0.6))),
                               dense_heisenberg(L, 1.3, 0.4, 0.6), atol=1e-14)
    np.testing.assert_allclose(np_(mpo_to_dense(tfim_mpo(L, g=0.7, J=1.2))),
                               dense_tfim(L, 0.7, 1.2), atol=1e-14)


def test_mpo_ground_energies_match_exact_module():
    L = 8
    w = np.linalg.eigvalsh(np_(mpo_to_dense(heisenberg_mpo(L))))
    assert abs(w[0] - exact.heisenberg_ground_energy(L)) < 1e-10
    w = np.linalg.eigvalsh(np_(mpo_to_dense(tfim_mpo(L, g=0.8))))
    assert abs(w[0] - exact.tfim_ground_energy(L, 0.8)) < 1e-10


def test_generic_mpo_from_terms_complex():
    rng = np.random.default_rng(10)
    L, d = 4, 3
    h1 = random_hermitian(rng, d)
    A, B = rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d)), random_hermitian(
        rng, d)
    # a Hermitian bond term: A (x) B + A^H (x) B
    mpo = mpo_from_terms(L, h1, [(A, B), (A.conj().T, B)])
    assert mpo[1].shape == (4, 4, d, d) and mpo[0].dtype == np.complex128
    ref = sum(site_op(h1, i, L) for i in range(L)) + sum(
        site_op(A, i, L) @ site_op(B, i + 1, L) + site_op(A.conj().T, i, L)
        @ site_op(B, i + 1, L) for i in range(L - 1))
    np.testing.assert_allclose(np_(mpo_to_dense(mpo)), ref, atol=1e-13)
    psi = random_mps(L, 4, d=d, dtype=tf.complex128, seed=11)
    v = dense(psi)
    assert abs(mpo_expectation(psi, mpo).item() - np.vdot(v, ref @ v)) < 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
def test_mpo_expectation_and_variance_against_dense(dtype):
    L = 7
    psi = random_mps(L, 5, dtype=dtype, seed=12, canonical=None)
    v = dense(psi)
    n2 = np.vdot(v, v).real
    for mpo, H in ((heisenberg_mpo(L, h=0.3), dense_heisenberg(L, h=0.3)),
                   (tfim_mpo(L, g=1.1), dense_tfim(L, g=1.1))):
        e = np.vdot(v, H @ v)
        assert abs(mpo_expectation(psi, mpo).item() - e / n2) < 1e-12 * abs(e / n2)
        raw = mpo_expectation(psi, mpo, normalize=False).item()
        assert abs(raw - e) < 1e-12 * abs(e)
        var = np.vdot(v, H @ (H @ v)).real / n2 - (e.real / n2) ** 2
        assert abs(mpo_variance(psi, mpo).item() - var) < 1e-11 * max(1, var)


def test_variance_vanishes_on_an_eigenstate_and_expectation_survives_huge_norms():
    L = 6
    H = dense_tfim(L, g=0.9)
    w, V = np.linalg.eigh(H)
    # exact MPS of the ground state by successive SVDs (no truncation)
    psi, rest, Dl = [], V[:, 0].reshape(1, -1), 1
    for _ in range(L - 1):
        u, s, vh = np.linalg.svd(rest.reshape(Dl * 2, -1), full_matrices=False)
        psi.append(tf.tensor(u.reshape(Dl, 2, -1)))
        Dl = s.size
        rest = s[:, None] * vh
    psi.append(tf.tensor(rest.reshape(Dl, 2, 1)))
    mpo = tfim_mpo(L, g=0.9)
    assert abs(mpo_expectation(psi, mpo).item() - w[0]) < 1e-12
    assert abs(mpo_variance(psi, mpo).item()) < 1e-12
    # scale every tensor by 1e100: <psi|psi> ~ 1e1200 would overflow without rescaling
    big = [a * 1e100 for a in psi]
    assert abs(mpo_expectation(big, mpo).item() - w[0]) < 1e-12
    assert abs(mpo_variance(big, mpo).item()) < 1e-12


# --------------------------------------------------------------- two-site updates
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("absorb", ["right", "left", "both"])
def test_two_site_truncation_error_is_the_discarded_weight(dtype, absorb):
    L, i = 8, 3
    psi = mixed_canonicalize(random_mps(L, 8, dtype=dtype, seed=13), i, normalize=True)
    v = dense(psi)
    a, b, dw = two_site_update(psi[i], psi[i + 1], max_rank=3, absorb=absorb)
    assert a.shape[2] == 3 and b.shape[0] == 3
    trunc = list(psi)
    trunc[i], trunc[i + 1] = a, b
    w = dense(trunc)
    err = np.linalg.norm(v - w) ** 2
    assert dw.item() > 1e-3  # something was discarded
    assert abs(err - dw.item()) < 1e-13, (err, dw.item())
    # the discarded weight is what the singular values say
    theta = np.einsum("lsm,mtr->lstr", np_(psi[i]), np_(psi[i + 1]))
    s = np.linalg.svd(theta.reshape(theta.shape[0] * 2, -1), compute_uv=False)
    assert abs(dw.item() - np.sum(s[3:] ** 2)) < 1e-14
    # canonical structure of the result
    if absorb == "right":
        assert _left_iso_error(a) < 1e-13
    if absorb == "left":
        assert _right_iso_error(b) < 1e-13
    # normalize=True restores the norm
    a2, b2, _ = two_site_update(psi[i], psi[i + 1], max_rank=3, normalize=True)
    trunc[i], trunc[i + 1] = a2, b2
    assert abs(np.linalg.norm(dense(trunc)) - 1) < 1e-13


def test_two_site_update_applies_the_operator_and_cutoff():
    L, i = 6, 2
    rng = np.random.default_rng(14)
    psi = random_mps(L, 4, dtype=tf.complex128, seed=15)
    h = random_hermitian(rng, 4)
    w, V = np.linalg.eigh(h)
    gate = (V * np.exp(-0.3j * w)) @ V.conj().T  # a unitary two-site gate
    for op in (gate, gate.reshape(2, 2, 2, 2)):
        a, b, dw = two_site_update(psi[i], psi[i + 1], op)  # no truncation
        new = list(psi)
        new[i], new[i + 1] = a, b
        full = np.kron(np.kron(np.eye(2**i), gate), np.eye(2 ** (L - i - 2)))
        np.testing.assert_allclose(dense(new), full @ dense(psi), atol=1e-12)
        assert abs(dw.item()) < 1e-14
    # cutoff: singular values below it are dropped
    theta = np.einsum("lsm,mtr->lstr", np_(psi[i]), np_(psi[i + 1]))
    s = np.linalg.svd(theta.reshape(theta.shape[0] * 2, -1), compute_uv=False)
    cut = (s[1] + s[2]) / 2
    a, b, dw = two_site_update(psi[i], psi[i + 1], cutoff=cut)
    assert a.shape[2] == 2
    assert abs(dw.item() - np.sum(s[2:] ** 2)) < 1e-14
    with pytest.raises(ShapeError):
        two_site_update(psi[i], psi[i + 1], np.eye(3))
    with pytest.raises(ShapeError):
        two_site_update(psi[i], psi[0])


def test_expand_bond_dimension():
    psi = random_mps(8, 3, seed=16)
    v = dense(psi)
    same = expand_bond_dimension(psi, 6, noise=0.0)
    assert bond_dimensions(same) == [1, 2, 4, 6, 6, 6, 4, 2, 1]
    np.testing.assert_allclose(dense(same), v, atol=1e-14)
    noisy = expand_bond_dimension(psi, 6, noise=1e-3, seed=0)
    diff = np.linalg.norm(dense(noisy) - v)
    assert 1e-7 < diff < 1e-2
    # the new entries have non-zero gradients (no saddle point)
    g = tf.grad(mps_energy)(noisy, heisenberg_mpo(8))
    assert np.abs(np_(g[3])[:, :, 3:]).max() > 1e-6


# ----------------------------------------------------------------- derivatives
@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_of_overlap_norm_and_energy(dtype):
    L = 4
    psi = random_mps(L, 3, dtype=dtype, seed=17, canonical=None)
    phi = random_mps(L, 2, dtype=dtype, seed=18, canonical=None)
    mpo = heisenberg_mpo(L, h=0.2)
    check_grads(lambda *a: mps_overlap(list(a[:L]), list(a[L:])), psi + phi, order=1)
    check_grads(lambda *a: mps_norm(list(a)), psi, order=1)
    check_grads(lambda *a: mps_energy(list(a), mpo), psi, order=2)
    check_grads(lambda *a: mpo_variance(list(a), mpo), psi, order=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gradients_through_canonical_forms_and_truncation(dtype):
    L = 4
    psi = random_mps(L, 3, dtype=dtype, seed=19, canonical=None)
    # the canonical tensors themselves (unique gauge: phase-dependent outputs are fine)
    check_grads(lambda *a: mixed_canonicalize(list(a), 1, normalize=True), psi, order=1)
    # the truncated tensors and the discarded weight of a two-site update with a gate
    rng = np.random.default_rng(20)
    op = tf.tensor(rng.standard_normal((4, 4)).astype(dtype))

    def trunc(a, b, op):
        x, y, dw = two_site_update(a, b, op, max_rank=2)
        return tf.einsum("lsm,mtr->lstr", x, y), dw  # gauge invariant

    check_grads(trunc, (psi[1], psi[2], op), order=1)


def test_energy_gradient_matches_finite_difference_along_a_direction():
    """An end-to-end check of the quantity the optimiser uses."""
    L = 6
    psi = random_mps(L, 4, seed=21)
    mpo = tfim_mpo(L)
    rng = np.random.default_rng(22)
    t = [rng.standard_normal(a.shape) for a in psi]
    e, g = tf.value_and_grad(mps_energy)(psi, mpo)
    h = 1e-5

    def at(s):
        return mps_energy([a + tf.tensor(s * x) for a, x in zip(psi, t)], mpo).item()

    fd = (at(h) - at(-h)) / (2 * h)
    ad = sum(float(np.sum(np_(gi) * x)) for gi, x in zip(g, t))
    assert abs(fd - ad) < 1e-8 * max(1, abs(ad))


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_agrees_with_eager(dtype):
    L = 6
    psi = random_mps(L, 4, dtype=dtype, seed=23)
    mpo = heisenberg_mpo(L)
    vg = tf.value_and_grad(mps_energy)
    e0, g0 = vg(psi, mpo)
    jitted = tf.jit(vg)
    for _ in range(2):  # traced once, then the cached graph
        e1, g1 = jitted(psi, mpo)
        assert abs(e1.item() - e0.item()) < 1e-13
        for a, b in zip(g0, g1):
            np.testing.assert_allclose(np_(b), np_(a), atol=1e-12)
    assert jitted.traces == 1
    canon = tf.jit(lambda m: mixed_canonicalize(m, 2, normalize=True))(psi)
    for a, b in zip(canon, mixed_canonicalize(psi, 2, normalize=True)):
        np.testing.assert_allclose(np_(a), np_(b), atol=1e-12)
    x, y, dw = tf.jit(lambda a, b: two_site_update(a, b, max_rank=2))(psi[2], psi[3])
    x0, y0, dw0 = two_site_update(psi[2], psi[3], max_rank=2)
    assert abs(dw.item() - dw0.item()) < 1e-13
    np.testing.assert_allclose(np_(y), np_(y0), atol=1e-12)


# ------------------------------------------------------------------- optimiser parts
@pytest.mark.parametrize("dtype", DTYPES)
def test_preconditioner_reproduces_the_state_and_whitens_the_metric(dtype):
    """psi = X_0 P_1 X_1 ... is the normalised state, and d psi / d X_i is an isometry:
    the metric <dpsi|dpsi> is the identity on every site's block (up to metric_eps)."""
    L, c = 6, 3
    psi = random_mps(L, 4, dtype=dtype, seed=24, canonical=None)
    v = dense(psi)
    xs, ps = precondition(psi, c, eps=0.0)  # no regularisation: exact whitening

    def state(xs):
        return mps_to_dense([tf.einsum("lsk,kr->lsr", x, p) for x, p in zip(xs[:-1], ps)]
                            + [xs[-1]])

    np.testing.assert_allclose(np_(state(xs)), v / np.linalg.norm(v), atol=1e-12)
    for i in range(L):
        n = int(np.prod(xs[i].shape))
        cols = []
        for k in range(n):  # psi is linear in X_i: its Jacobian column by column
            e = np.zeros(n, dtype=np.dtype(dtype))
            e[k] = 1
            cols.append(np_(state(xs[:i] + [tf.tensor(e.reshape(xs[i].shape))] + xs[i + 1:])))
        J = np.stack(cols, axis=1)
        np.testing.assert_allclose(J.conj().T @ J, np.eye(n), atol=1e-11)


def test_flatten_roundtrip_and_complex_gradient_convention():
    rng = np.random.default_rng(25)
    ts = [tf.tensor(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))),
          tf.tensor(rng.standard_normal((1, 2, 2)) + 1j * rng.standard_normal((1, 2, 2)))]
    x = _flatten(ts)
    assert x.dtype == np.float64 and x.size == 2 * (6 + 4)
    back = _unflatten(x, [t.shape for t in ts], np.complex128)
    for a, b in zip(ts, back):
        np.testing.assert_array_equal(np_(a), np_(b))
    # f(z) = sum |z|^2: the real gradient of the flattened vector is 2 x
    g = tf.grad(lambda zs: sum(tf.sum(tf.abs2(z)) for z in zs))(ts)
    np.testing.assert_allclose(_flatten(g), 2 * x, atol=1e-14)


def test_default_schedule():
    assert default_schedule(16) == [4, 8, 16]
    assert default_schedule(12) == [3, 6, 12]
    assert default_schedule(4) == [4]
    assert default_schedule(1) == [1]


# --------------------------------------------------------------- acceptance runs
def _assert_variational(res, e_exact, bound, relative):
    err = res.energy - e_exact
    assert err > -1e-10, "below the exact ground state: not variational"
    assert (err / abs(e_exact) if relative else err) < bound, (res.energy, e_exact, err)
    assert res.converged
    assert res.variance is not None and 0 <= res.variance < 1e-5
    assert np.all(np.isfinite(res.history))


def test_heisenberg_L12_D16_against_exact_diagonalisation():
    """Acceptance: within 1e-6 of ED (measured: 5.9e-8, the D=16 optimum; ~0.5 s)."""
    res = variational_ground_state(heisenberg_mpo(12), 16, progress=False)
    _assert_variational(res, exact.heisenberg_ground_energy(12), 1e-6, relative=False)
    assert max(bond_dimensions(res.mps)) == 16


def test_tfim_L32_D16_against_free_fermions():
    """Acceptance: within 1e-6 relative (measured: ~1e-11; ~3 s)."""
    res = variational_ground_state(tfim_mpo(32), 16, progress=False)
    _assert_variational(res, exact.tfim_ground_energy(32), 1e-6, relative=True)


def test_complex_mps_small_tfim():
    """A complex MPS reaches the (real) ground state of an off-critical chain; D=8 is exact
    to 1e-10 here."""
    L, g = 10, 0.6
    res = variational_ground_state(tfim_mpo(L, g=g), 8, dtype=tf.complex128, seed=3,
                                   progress=False)
    assert res.mps[0].dtype == np.complex128
    _assert_variational(res, exact.tfim_ground_energy(L, g), 1e-10, relative=True)


def test_start_from_a_given_state_and_budget():
    L = 8
    mpo = heisenberg_mpo(L)
    start = random_mps(L, 2, seed=5)
    with pytest.warns(ConvergenceWarning, match="not converged after 15 iterations"):
        res = variational_ground_state(mpo, 8, mps0=start, max_iterations=15, progress=False,
                                       variance=False)
    assert res.n_iterations == 15 and not res.converged and res.variance is None
    assert [s["D"] for s in res.stages] == [8]
    assert res.energy < mps_energy(start, mpo).item()
    with pytest.raises(ShapeError):
        variational_ground_state(mpo, 8, schedule=[4, 6], progress=False)


@pytest.mark.slow
def test_tfim_L64_D16_against_free_fermions():
    """The example's largest chain (measured: 2.9e-10 relative; ~8 s)."""
    res = variational_ground_state(tfim_mpo(64), 16, progress=False)
    _assert_variational(res, exact.tfim_ground_energy(64), 1e-6, relative=True)


@pytest.mark.slow
def test_heisenberg_eager_without_jit_and_L14():
    res = variational_ground_state(heisenberg_mpo(12), 16, jit=False, progress=False)
    _assert_variational(res, exact.heisenberg_ground_energy(12), 1e-6, relative=False)
    res = variational_ground_state(heisenberg_mpo(14), 24, progress=False)
    _assert_variational(res, exact.heisenberg_ground_energy(14), 1e-6, relative=False)


# ------------------------------------------------------------------------ example
def _load_example():
    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "mps_ground_state.py"
    spec = importlib.util.spec_from_file_location("mps_ground_state_example", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_example_runs_at_reduced_size(tmp_path, capsys):
    out = tmp_path / "mps.png"
    rc = _load_example().main(["--D", "6", "--heisenberg-L", "6", "--tfim-L", "8",
                               "--quiet", "--plot", str(out)])
    assert rc == 0
    assert out.exists() and out.stat().st_size > 10_000
    text = capsys.readouterr().out
    assert "Heisenberg" in text and "Ising" in text


def test_errors_name_the_problem():
    psi = random_mps(4, 2, seed=0)
    with pytest.raises(ShapeError, match="bond 3"):
        mps_overlap(psi[:2] + [psi[3], psi[3]], psi)
    with pytest.raises(ShapeError, match="MPO of 3 sites"):
        mpo_expectation(psi, heisenberg_mpo(3))
    with pytest.raises(ShapeError, match="local dimension"):
        mpo_expectation(random_mps(4, 2, d=3, seed=0), heisenberg_mpo(4))
    with pytest.raises(ShapeError, match="outside"):
        mixed_canonicalize(psi, 4)


def test_tfim_free_fermion_energy_agrees_with_exact_diagonalisation():
    """The closed form used as a reference elsewhere, cross-checked by sparse ED."""
    from tenferro.tn import exact

    for L, g in ((8, 1.0), (9, 0.7), (6, 1.6)):
        np.testing.assert_allclose(exact.tfim_ground_energy(L, g),
                                   exact.tfim_ground_energy_ed(L, g), rtol=1e-10)
