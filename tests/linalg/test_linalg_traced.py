"""Eager / traced parity for the linalg functions: jit(grad), grad(jit), jit(hvp), and a graph
saved and loaded again give the same values and derivatives as eager mode."""

import numpy as np

import tenferro as tf
from tenferro import linalg as la
from tests.linalg._util import T, hermitian, rand


def _loss(h):
    def loss(x):
        u, s, vh = la.svd(x, max_rank=3)
        q, r = la.qr(x)
        lo, qq = la.lq(x)
        w, v = la.eigh(tf.conj(x.T) @ x)
        sq = x[:4] + 3.0 * tf.eye(4, dtype=x.dtype)
        out = tf.real(tf.sum(tf.conj(u[:, 0]) * (T(h) @ u[:, 0]))) + tf.sum(s[1:])
        out = out + tf.sum(tf.abs2(r)) + tf.sum(tf.abs2(lo)) + tf.sum(w) + tf.sum(tf.abs2(v[:, 0]))
        out = out + la.slogdet(sq)[1] + tf.sum(tf.abs2(la.expm(0.1 * sq)))
        out = out + tf.sum(tf.abs2(la.solve(sq, x[:4, :2]))) + la.norm(x, "nuc")
        out = out + tf.sum(tf.abs2(la.cholesky(tf.conj(sq.T) @ sq))) + tf.sum(la.svdvals(x))
        out = out + tf.sum(tf.abs2(la.expm(0.1 * sq, hermitian=True)))  # funm chains
        out = out + tf.real(tf.sum(la.logm(tf.conj(sq.T) @ sq) * la.powm(tf.conj(sq.T) @ sq, 0.3)))
        out = out + tf.sum(la.svd(x, relative_cutoff=0.2).S)  # a run-time rank under jit
        return out + tf.sum(tf.abs2(la.inv(sq))) + tf.real(la.det(sq)) + tf.sum(tf.abs2(la.pinv(x)))

    return loss


def test_eager_and_traced_agree(rng, tmp_path):
    x = T(rand(rng, (6, 4), "complex128"))
    t = T(rand(rng, (6, 4), "complex128"))
    loss = _loss(hermitian(rng, 6, "complex128"))
    g = tf.grad(loss)(x).numpy()
    np.testing.assert_allclose(tf.jit(loss)(x).numpy(), loss(x).numpy(), rtol=1e-13)
    np.testing.assert_allclose(tf.jit(tf.grad(loss))(x).numpy(), g, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tf.grad(tf.jit(loss))(x).numpy(), g, rtol=1e-12, atol=1e-13)
    hv = tf.hvp(loss, (x,), (t,)).numpy()
    np.testing.assert_allclose(tf.jit(lambda y, d: tf.hvp(loss, (y,), (d,)))(x, t).numpy(), hv,
                               rtol=1e-11, atol=1e-12)
    graph = tf.make_graph(tf.grad(loss), x)
    listing = str(graph)
    for prim in ("svd(", "funm(", "adjugate(", "cut_inverse(", "degeneracy_check(",
                 "truncation_indices("):
        assert prim in listing, prim
    path = tmp_path / "grad.tfg"
    graph.save(path)
    np.testing.assert_allclose(tf.load(path)(x).numpy(), g, rtol=1e-12, atol=1e-13)
