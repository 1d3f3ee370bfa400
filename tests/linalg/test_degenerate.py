"""Exactly degenerate spectra: repeated singular values, blocks of exact zeros, repeated
eigenvalues. Gauge-invariant losses must have finite gradients equal to finite differences.

"Gauge-invariant" here means invariant under the rotations the degeneracy allows: symmetric
functions of the values of a whole multiplet, projectors onto whole multiplets (U_k U_k^H), and
U_k V_k^H (U and V rotated together). See design/linalg.md for what cannot be exact, and
test_degenerate_exact.py for near degeneracies and the losses that are reported instead.
"""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tests.linalg._util import (
    DTYPES,
    T,
    fd_gradient,
    hermitian,
    rand,
    rel_err,
    with_singular_values,
)

SPECTRA = {
    "repeated": [3.0, 2.0, 2.0, 1.0, 0.5],
    "triple": [2.0, 2.0, 2.0, 1.0, 1.0],
    "zeros": [3.0, 2.0, 1.0, 0.0, 0.0],
}
SHAPES = {"tall": (7, 5), "square": (5, 5), "wide": (5, 7)}


def _losses(m, n, dtype, rng):
    k = 3  # a gap after the third value in every spectrum above
    c = T(rand(rng, (m, m), dtype))
    d = T(rand(rng, (n, n), dtype))
    e = T(rand(rng, (m, n), dtype))

    def top_k(x):
        return tf.sum(la.svd(x).S[:k])

    def top_k_squares(x):
        return tf.sum(la.svd(x).S[:k] ** 2)

    def projectors(x):
        u, s, vh = la.svd(x)
        pu = u[:, :k] @ tf.conj(u[:, :k].T)
        pv = tf.conj(vh[:k].T) @ vh[:k]
        return tf.sum(tf.abs2(pu @ c)) + tf.real(tf.sum(d * pv))

    def joint_uv(x):
        u, s, vh = la.svd(x)
        return tf.real(tf.sum(tf.conj(e) * (u[:, :k] @ vh[:k])))

    return {"top_k": top_k, "top_k_squares": top_k_squares, "projectors": projectors,
            "joint_uv": joint_uv}


@pytest.mark.parametrize("loss_name", ["top_k", "top_k_squares", "projectors", "joint_uv"])
@pytest.mark.parametrize("spectrum", list(SPECTRA))
@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_gradients_on_degenerate_spectra(loss_name, spectrum, shape, dtype, rng):
    m, n = SHAPES[shape]
    svals = SPECTRA[spectrum]
    a = with_singular_values(rng, m, n, svals, dtype)
    s_lapack = np.linalg.svd(a, compute_uv=False)
    assert np.sum(np.abs(np.diff(s_lapack)) < 1e-13) >= 1  # really degenerate
    loss = _losses(m, n, dtype, rng)[loss_name]
    g = tf.grad(loss)(T(a)).numpy()
    assert np.all(np.isfinite(g))
    assert rel_err(g, fd_gradient(loss, a, h=1e-5)) < 1e-6


@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_degenerate_forward_mode(dtype, rng):
    a = T(with_singular_values(rng, 6, 5, SPECTRA["repeated"], dtype))
    t = T(rand(rng, (6, 5), dtype))
    loss = _losses(6, 5, dtype, rng)["projectors"]
    _, d = tf.jvp(loss, (a,), (t,))
    eps = 1e-5
    fd = (float(loss(a + eps * t)) - float(loss(a - eps * t))) / (2 * eps)
    assert np.isfinite(float(d)) and abs(float(d) - fd) < 1e-7 * max(1.0, abs(fd))


@pytest.mark.parametrize("scale", [1e-6, 1.0, 1e6])
def test_degenerate_gradient_independent_of_normalisation(scale, rng):
    """eps is relative to the largest singular value: rescaling the matrix rescales the
    gradient exactly, with no noise from an absolute tie width."""
    a = with_singular_values(rng, 6, 5, SPECTRA["repeated"], "float64")
    loss = _losses(6, 5, "float64", rng)["projectors"]
    g1 = tf.grad(loss)(T(a)).numpy()
    gs = tf.grad(loss)(T(scale * a)).numpy()
    np.testing.assert_allclose(gs * scale, g1, rtol=1e-8, atol=1e-10 * np.abs(g1).max())


def test_hvp_of_sum_of_top_values_on_degenerate_spectrum(rng):
    """Second order through a degenerate pair: the Hessian of S_1 + S_2 + S_3 (a degenerate
    pair inside) applied to a direction, vs finite differences of the gradient."""
    a = T(with_singular_values(rng, 6, 5, SPECTRA["repeated"], "float64"))
    t = T(rand(rng, (6, 5), "float64"))

    def loss(x):
        return tf.sum(la.svd(x).S[:3])

    hv = tf.hvp(loss, (a,), (t,)).numpy()
    g = tf.grad(loss)
    eps = 1e-5
    fd = (g(a + eps * t).numpy() - g(a - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-6


def test_product_broadening_of_the_brief_fails_joint_uv_loss(rng):
    """Why E = 1/(s_j - s_i) and D = 1/(s_j + s_i) are treated separately: broadening the
    product F = 1/(s_j^2 - s_i^2) sets the whole within-block rotation to zero, but the
    relative rotation of U and V inside a degenerate block is finite and determined; the
    derivative of U_k V_k^H (a gauge-invariant function) then comes out wrong. The reference
    formula is validated on a non-degenerate matrix first."""
    m = n = 5
    k = 3

    def brief_jvp(a, da, eps=1e-12):
        u, s, vh = np.linalg.svd(a)
        v = vh.T
        dp = u.T @ da @ v
        d2 = s[None, :] ** 2 - s[:, None] ** 2
        f = d2 / (d2**2 + eps**2)
        om_u = f * (dp * s[None, :] + s[:, None] * dp.T)
        om_v = f * (s[:, None] * dp + dp.T * s[None, :])
        du, dv = u @ om_u, v @ om_v
        return du[:, :k] @ v[:, :k].T + u[:, :k] @ dv[:, :k].T

    def exact_fd(a, da, h=1e-6):
        def f(x):
            u, s, vh = np.linalg.svd(x)
            return u[:, :k] @ vh[:k]

        return (f(a + h * da) - f(a - h * da)) / (2 * h)

    da = rng.standard_normal((m, n))
    generic = with_singular_values(rng, m, n, [3.0, 2.5, 2.0, 1.0, 0.5], "float64")
    assert rel_err(brief_jvp(generic, da), exact_fd(generic, da)) < 1e-7  # formula is right
    degenerate = with_singular_values(rng, m, n, SPECTRA["repeated"], "float64")
    want = exact_fd(degenerate, da)
    assert rel_err(brief_jvp(degenerate, da), want) > 1e-2  # ... but not at a degeneracy
    e = rng.standard_normal((m, n))

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(T(e) * (u[:, :k] @ vh[:k]))

    _, ours = tf.jvp(loss, (T(degenerate),), (T(da),))
    assert abs(float(ours) - float(np.sum(e * want))) < 1e-7 * np.abs(e * want).sum()


# ----------------------------------------------------------------------------- eigh
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("eigenvalues", [[-1.0, 2.0, 2.0, 3.0, 5.0], [1.0, 1.0, 1.0, 4.0, 4.0],
                                         [0.0, 0.0, 2.0, 3.0, 3.0]])
def test_eigh_gradients_on_degenerate_spectra(eigenvalues, dtype, rng):
    n = 5
    a = hermitian(rng, n, dtype, eigenvalues)
    c = T(rand(rng, (n, n), dtype))
    k = 3 if eigenvalues[2] != eigenvalues[3] else 2

    def loss(x):
        w, v = la.eigh(x)
        p = v[:, :k] @ tf.conj(v[:, :k].T)
        return tf.sum(w[:k] ** 2) + tf.real(tf.sum(c * p)) + tf.sum(tf.abs2(p @ c))

    g = tf.grad(loss)(T(a)).numpy()
    assert np.all(np.isfinite(g))
    assert rel_err(g, fd_gradient(loss, a, h=1e-5)) < 1e-6


def test_eigh_degenerate_eigvalsh_sum(rng):
    a = hermitian(rng, 4, "complex128", [1.0, 1.0, 1.0, 2.0])

    def loss(x):
        return tf.sum(la.eigvalsh(x)[:3])

    g = tf.grad(loss)(T(a)).numpy()
    assert rel_err(g, fd_gradient(loss, a)) < 1e-7
