"""eigsh / eigs: values and implicit derivatives against dense eigh and finite differences,
degenerate spectra, gauge warnings, operators closing over parameters."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GaugeWarning, GradientError

from ._util import DTYPES, close, fd_directional, grad_dot, herm, rand

N = 90  # above the dense fallback (2 * ncv = 40): the Krylov path runs


def _observable(rng, dtype, n=N):
    o = rand(rng, (n, n), dtype)
    return tf.tensor((o + o.conj().T) / 2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["SA", "LA"])
def test_eigsh_gradient_matches_dense_eigh(dtype, which):
    rng = np.random.default_rng(0)
    b0 = rand(rng, (N, N), dtype)
    o = _observable(rng, dtype)
    k = 3
    weights = tf.arange(1, k + 1)

    def loss(w, v):  # gauge invariant: eigenvalues and <v_i|O|v_i>
        return tf.sum(w * w) + tf.sum(tf.real(tf.sum(tf.conj(v) * (o @ v), axis=0)) * weights)

    def krylov(b):
        return loss(*tf.linalg.eigsh(herm(b), k=k, which=which))

    def dense(b):
        w, v = tf.linalg.eigh(herm(b))
        return loss(w[:k], v[:, :k]) if which == "SA" else loss(w[-k:], v[:, -k:])

    b = tf.tensor(b0)
    np.testing.assert_allclose(krylov(b).item(), dense(b).item(), rtol=1e-11)
    g, gd = tf.grad(krylov)(b), tf.grad(dense)(b)
    assert close(g.numpy(), gd.numpy(), 1e-9)
    d = rand(rng, (N, N), dtype)
    fd = fd_directional(krylov, b0, d)
    assert abs(fd - grad_dot(g.numpy(), d)) <= 1e-6 * abs(fd)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigsh_gauge_dependent_loss_follows_the_eigh_convention(dtype):
    """Phase-dependent losses: same gauge as eigh (largest entry real positive), same
    gradient; for complex vectors the dependence on an arbitrary phase is reported."""
    rng = np.random.default_rng(1)
    b = tf.tensor(rand(rng, (N, N), dtype))
    c = tf.tensor(rand(rng, (N, 2), dtype))

    def krylov(t):
        return tf.sum(tf.real(tf.linalg.eigsh(herm(t), k=2)[1] * c))

    def dense(t):
        return tf.sum(tf.real(tf.linalg.eigh(herm(t))[1][:, :2] * c))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = tf.grad(krylov)(b)
    gauge = [w for w in caught if issubclass(w.category, GaugeWarning)]
    assert bool(gauge) == (dtype == "complex128")
    if gauge:
        assert "eigsh" in str(gauge[0].message)
    assert close(g.numpy(), tf.grad(dense)(b).numpy(), 1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigsh_degenerate_leading_eigenvalues(dtype):
    """A doubly degenerate lowest eigenvalue: k=2 finds both copies; gauge-invariant losses
    (eigenvalues, the projector on the degenerate subspace) have finite gradients equal to
    finite differences; k=1 with an eigenvalue-only loss too."""
    rng = np.random.default_rng(2)
    q, _ = np.linalg.qr(rand(rng, (N, N), dtype))
    lam = np.linspace(-1.0, 3.0, N)
    lam[1] = lam[0]
    a0 = (q * lam) @ q.conj().T
    o = _observable(rng, dtype)

    def loss2(a):
        w, v = tf.linalg.eigsh(herm(a), k=2)
        proj = v @ tf.conj(v.T)
        return tf.sum(w) + tf.real(tf.sum(proj * tf.conj(o)))

    w, _ = tf.linalg.eigsh(tf.tensor(a0), k=2)
    np.testing.assert_allclose(w.numpy(), [-1.0, -1.0], atol=1e-12)
    g = tf.grad(loss2)(tf.tensor(a0)).numpy()
    assert np.isfinite(g).all()
    d = rand(rng, (N, N), dtype)
    d = (d + d.conj().T) / 2
    fd = fd_directional(loss2, a0, d, h=1e-5)
    assert abs(fd - grad_dot(g, d)) <= 1e-6 * abs(fd)

    def loss1(a):
        return tf.linalg.eigsh(herm(a), k=1)[0][0]

    g1 = tf.grad(loss1)(tf.tensor(a0)).numpy()
    gd = tf.grad(lambda a: tf.linalg.eigvalsh(herm(a))[0])(tf.tensor(a0)).numpy()
    # the derivative of a degenerate eigenvalue is not unique (a subgradient); both are the
    # projector on some vector of the eigenspace: same trace, same projection on it
    assert np.isfinite(g1).all()
    np.testing.assert_allclose(np.trace(g1), np.trace(gd), atol=1e-10)


def test_eigsh_finds_a_copy_the_krylov_space_cannot_see():
    """diag(B, B) applied block by block from a symmetric start [u, u]: every Lanczos vector
    is exactly symmetric, so the antisymmetric copy of each eigenvalue enters only through a
    restart (random continuation, complement search); it must be found."""
    rng = np.random.default_rng(9)
    half = N // 2
    bh = rng.standard_normal((half, half))
    b = tf.tensor((bh + bh.T) / 2)
    op = tf.linalg.LinearOperator(lambda v: tf.concatenate([b @ v[:half], b @ v[half:]]),
                                  (N, N), tf.float64)
    u = rng.standard_normal(half)
    lo = np.linalg.eigvalsh(b.numpy())[:2]
    w, v = tf.linalg.eigsh(op, k=3, v0=np.concatenate([u, u]))
    np.testing.assert_allclose(w.numpy(), [lo[0], lo[0], lo[1]], atol=1e-10)
    np.testing.assert_allclose(v.numpy().T @ v.numpy(), np.eye(3), atol=1e-10)


def test_eigsh_finds_every_copy_of_a_multiplet():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((N, N)))
    lam = np.linspace(0.0, 5.0, N)
    lam[:3] = -2.0
    a = tf.tensor((q * lam) @ q.T)
    w, v = tf.linalg.eigsh(a, k=4)
    np.testing.assert_allclose(w.numpy(), [-2, -2, -2, lam[3]], atol=1e-11)
    np.testing.assert_allclose(v.numpy().T @ v.numpy(), np.eye(4), atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["LM", "LR"])
def test_eigs_gradient_matches_finite_differences(dtype, which):
    rng = np.random.default_rng(4)
    b0 = rand(rng, (N, N), dtype)
    o = tf.tensor(rand(rng, (N, N), dtype))

    def loss(b):
        lam, v = tf.linalg.eigs(b, k=2, which=which)
        return (tf.sum(tf.abs(lam)) + tf.sum(tf.real(lam) * tf.imag(lam))
                + tf.real(tf.sum(tf.conj(v) * (o @ v))))

    g = tf.grad(loss)(tf.tensor(b0)).numpy()
    for seed in range(2):
        d = rand(np.random.default_rng(10 + seed), (N, N), dtype)
        fd = fd_directional(loss, b0, d)
        assert abs(fd - grad_dot(g, d)) <= 2e-7 * max(abs(fd), 1.0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("which", ["LM", "LR"])
def test_eigs_gradient_matches_dense_eig(dtype, which):
    """Arnoldi's implicit derivative against the dense ``eig`` on the same matrix (same
    eigenvector gauge: unit norm, largest entry real positive), eigenvalues and vectors."""
    rng = np.random.default_rng(9)
    b0 = rand(rng, (N, N), dtype)
    o = _observable(rng, dtype)
    k = 3

    def loss(lam, v):
        return (tf.sum(tf.abs(lam)) + tf.sum(tf.real(lam) * tf.imag(lam))
                + tf.sum(tf.real(tf.sum(tf.conj(v) * (o @ v), axis=0)) * tf.arange(1, k + 1)))

    def krylov(b):
        return loss(*tf.linalg.eigs(b, k=k, which=which))

    def dense(b):
        w, v = tf.linalg.eig(b)
        wv = tf.stop_gradient(w).numpy()
        key = -np.abs(wv) if which == "LM" else -wv.real
        idx = tf.tensor(np.argsort(key, kind="stable")[:k])
        return loss(tf.take(w, idx), tf.take(v, idx, axis=1))

    b = tf.tensor(b0)
    np.testing.assert_allclose(krylov(b).item(), dense(b).item(), rtol=1e-10)
    g, gd = tf.grad(krylov)(b).numpy(), tf.grad(dense)(b).numpy()
    assert close(g, gd, 1e-8)


def test_eigs_of_a_real_matrix_with_a_complex_pair():
    rng = np.random.default_rng(5)
    b0 = rng.standard_normal((N, N))
    ev = np.linalg.eigvals(b0)
    ev = ev[np.argsort(-np.abs(ev))]
    lam, v = tf.linalg.eigs(tf.tensor(b0), k=4)
    np.testing.assert_allclose(np.sort_complex(lam.numpy()), np.sort_complex(ev[:4]),
                               rtol=1e-11)
    np.testing.assert_allclose(b0 @ v.numpy(), v.numpy() * lam.numpy(), atol=1e-10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigs_equals_eigsh_on_a_hermitian_matrix(dtype):
    """The non-Hermitian rule (left eigenvectors, oblique projection) reduces to the Hermitian
    one: same gradient for the same gauge-invariant loss."""
    rng = np.random.default_rng(6)
    b = tf.tensor(rand(rng, (N, N), dtype))
    o = _observable(rng, dtype)

    def loss(w, v):
        return tf.sum(tf.real(w) ** 2) + tf.real(tf.sum(tf.conj(v) * (o @ v)))

    g1 = tf.grad(lambda t: loss(*tf.linalg.eigs(herm(t), k=2, which="LR")))(b)
    g2 = tf.grad(lambda t: loss(*tf.linalg.eigsh(herm(t), k=2, which="LA")))(b)
    assert close(g1.numpy(), g2.numpy(), 1e-9)


@pytest.mark.numpy_only
def test_transfer_matrix_operator_closing_over_a_tensor():
    """The leading eigenvalue of a transfer matrix applied through its MPS tensor (never
    materialised): gradient with respect to the tensor equals the dense computation."""
    rng = np.random.default_rng(7)
    D, d = 8, 3
    a0 = rng.standard_normal((D, d, D))

    def lam_op(a):
        def mv(x):
            x = tf.reshape(x, (D, D))
            return tf.reshape(tf.einsum("ab,asc,bsd->cd", x, a, a), (D * D,))

        op = tf.linalg.LinearOperator(mv, (D * D, D * D), a.dtype)
        lam, _ = tf.linalg.eigs(op, k=1, ncv=12)
        return tf.abs(lam[0])

    def lam_dense(a):  # the materialised transfer matrix, dense eig
        e = tf.reshape(tf.einsum("asc,bsd->abcd", a, a), (D * D, D * D))
        return tf.max(tf.abs(tf.linalg.eigvals(e.T)))

    g = tf.grad(lam_op)(tf.tensor(a0)).numpy()
    d = rng.standard_normal(a0.shape)
    fd = fd_directional(lam_op, a0, d)
    assert abs(fd - grad_dot(g, d)) <= 1e-7 * abs(fd)
    gd = tf.grad(lam_dense)(tf.tensor(a0)).numpy()
    assert close(g, gd, 1e-9)


def test_forward_mode_is_a_named_error():
    rng = np.random.default_rng(8)
    b = tf.tensor(rand(rng, (N, N), "float64"))
    with pytest.raises(GradientError, match="eigsh: forward-mode"):
        tf.jvp(lambda t: tf.linalg.eigsh(herm(t), k=1)[1], (b,), (b,))


# ------------------------------------------------------------- degenerate and bad input
def _with_spectrum(rng, eigenvalues, dtype="float64"):
    n = len(eigenvalues)
    q, _ = np.linalg.qr(rand(rng, (n, n), dtype))
    return (q * np.asarray(eigenvalues, float)) @ q.conj().T


@pytest.mark.parametrize("n", [6, N])  # the dense path and the Krylov path
@pytest.mark.parametrize("loss", ["value", "vector"])
def test_eigsh_cutting_a_multiplet_is_reported(loss, n):
    """k=1 with a 2-fold smallest eigenvalue: which member was computed is arbitrary, so the
    loss has no derivative (the old pullback returned a gradient silently for eigenvalue
    losses; for eigenvector losses only the adjoint solve's ConvergenceWarning hinted at it).
    eigh and svds report a cut multiplet; eigsh now does too."""
    rng = np.random.default_rng(1)
    spec = [1.0, 1.0] + list(np.linspace(2.0, 5.0, n - 2))
    a = _with_spectrum(rng, spec)
    c = tf.arange(float(n))

    def f(x):
        w, v = tf.linalg.eigsh(x, k=1)
        return w[0] if loss == "value" else tf.sum(v[:, 0] * c) ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tf.errors.ConvergenceWarning)
        with pytest.warns(tf.errors.DegeneracyWarning, match="cut through a degenerate"):
            tf.grad(f)(tf.tensor(a))


@pytest.mark.parametrize("n", [6, N])
def test_eigsh_whole_multiplet_is_exact_and_silent(n):
    """k=2 covering the pair: the sum of the pair and its projector are exact, no report."""
    rng = np.random.default_rng(2)
    spec = [1.0, 1.0] + list(np.linspace(2.0, 5.0, n - 2))
    a = _with_spectrum(rng, spec)
    o = _observable(rng, "float64", n)

    def f(x):
        w, v = tf.linalg.eigsh(herm(x), k=2)
        return tf.sum(w) + tf.sum(v * (o @ v))

    def dense(x):
        w, v = tf.linalg.eigh(herm(x))
        return tf.sum(w[:2]) + tf.sum(v[:, :2] * (o @ v[:, :2]))

    with warnings.catch_warnings():
        warnings.simplefilter("error", tf.errors.DegeneracyWarning)
        g = tf.grad(f)(tf.tensor(a)).numpy()
        gd = tf.grad(dense)(tf.tensor(a)).numpy()
    assert close(g, gd, 1e-7)


def test_eigsh_of_a_non_hermitian_matrix_raises():
    """eigsh used the Hermitian part of whatever it was given, silently; a dense input is now
    checked (to the rounding of its entries) and a non-Hermitian one names eigs."""
    rng = np.random.default_rng(3)
    b = rng.standard_normal((5, 5))
    with pytest.raises(tf.errors.NotHermitianError, match="use tenferro.linalg.eigs"):
        tf.linalg.eigsh(tf.tensor(b))
    assert issubclass(tf.errors.NotHermitianError, tf.errors.LinAlgError)
    h = (b + b.T) / 2
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    rounded = (q * np.arange(1.0, 6.0)) @ q.T  # Hermitian up to rounding: accepted
    for m in (h, rounded):
        w = tf.linalg.eigsh(tf.tensor(m)).eigenvalues.numpy()
        np.testing.assert_allclose(w, np.linalg.eigvalsh((m + m.T) / 2)[:1], atol=1e-12)


@pytest.mark.parametrize("n", [5, N])
def test_eigsh_of_nan_raises_a_named_error(n):
    """NumPy's LinAlgError ("Eigenvalues did not converge") leaked; now a tenferro LinAlgError
    names eigsh and the cause, for dense matrices and for operators."""
    a = np.eye(n)
    a[0, 1] = a[1, 0] = np.nan
    with pytest.raises(tf.errors.LinAlgError, match="NaN or inf"):
        tf.linalg.eigsh(tf.tensor(a))
    op = tf.linalg.LinearOperator(lambda v: tf.tensor(a) @ v, (n, n), "float64")
    with pytest.raises(tf.errors.LinAlgError, match="not finite"):
        tf.linalg.eigsh(op)
