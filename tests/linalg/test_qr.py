"""QR and LQ: forward values and gauge, derivatives through Q only and R only (tall, wide,
square; real, complex; forward and reverse), complete mode, positive gauge, second order."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.testing import check_grads
from tests.linalg._util import DTYPES, SHAPE_IDS, SHAPES, T, fd_gradient, rand, rel_err


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + ((2, 5, 3), (2, 3, 5)), ids=SHAPE_IDS + ("btall",
                                                                                 "bwide"))
def test_forward(shape, dtype, positive, rng):
    a = rand(rng, shape, dtype)
    q, r = (x.numpy() for x in la.qr(T(a), positive=positive))
    k = min(shape[-2:])
    assert q.shape == shape[:-1] + (k,) and r.shape == shape[:-2] + (k, shape[-1])
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(q.conj(), -1, -2) @ q,
                               np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), atol=1e-12)
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=0)
    d = np.diagonal(r, axis1=-2, axis2=-1)
    assert np.all(np.abs(d.imag) < 1e-14)  # diag(R) real, also for complex input
    if positive:
        assert np.all(d.real >= 0)


@pytest.mark.parametrize("branch", ["Q", "R", "QR"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_branch_isolated_gradients(branch, shape, dtype, rng):
    a = T(rand(rng, shape, dtype))
    k = min(shape)
    wq = T(rand(rng, (shape[0], k), dtype))
    wr = T(rand(rng, (k, shape[1]), dtype))

    def loss(x):
        q, r = la.qr(x)
        out = 0.0
        if "Q" in branch:
            out = out + tf.real(tf.sum(wq * q)) + tf.sum(tf.abs2(q[:, 0] * 3.0 + q[:, -1]))
        if "R" in branch:
            out = out + tf.real(tf.sum(wr * r)) + tf.sum(tf.abs2(r)) * 0.1
        return out

    check_grads(loss, (a,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + ((2, 5, 3), (2, 3, 5)), ids=SHAPE_IDS + ("btall",
                                                                                 "bwide"))
def test_all_outputs_first_and_second_order(shape, dtype, positive, rng):
    a = T(rand(rng, shape, dtype))
    check_grads(lambda x: la.qr(x, positive=positive), (a,), order=2, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_gradient_wide(dtype, rng):
    a = rand(rng, (3, 5), dtype)
    w = T(rand(rng, (3, 5), dtype))

    def loss(x):
        q, r = la.qr(x)
        return tf.real(tf.sum(w * r)) + tf.sum(tf.abs2(q @ r[:, :3]))

    assert rel_err(tf.grad(loss)(T(a)).numpy(), fd_gradient(loss, a)) < 1e-7


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_complete_mode(shape, dtype, rng):
    """Complete Q: the extra columns span the complement; their rotation within it is not
    determined by A, so derivatives are checked through the complement projector."""
    m, n = shape
    a = rand(rng, shape, dtype)
    q, r = (x.numpy() for x in la.qr(T(a), mode="complete"))
    assert q.shape == (m, m) and r.shape == (m, n)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(m), atol=1e-12)
    k = min(m, n)
    c = T(rand(rng, (m, m), dtype))
    w = T(rand(rng, (m, n), dtype))

    def loss(x):
        q, r = la.qr(x, mode="complete")
        qp = q[:, k:]
        return (tf.real(tf.sum(c * (qp @ tf.conj(qp.T)))) + tf.real(tf.sum(w * r))
                + tf.sum(tf.abs2(q[:, :k])))

    check_grads(loss, (T(a),), order=1)


def test_mode_r(rng):
    a = rand(rng, (5, 3), "float64")
    r = la.qr(T(a), mode="r")
    np.testing.assert_allclose(r.numpy(), la.qr(T(a)).R.numpy())
    check_grads(lambda x: la.qr(x, mode="r"), (T(a),), order=1)


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_lq(shape, dtype, positive, rng):
    a = rand(rng, shape, dtype)
    lo, q = (x.numpy() for x in la.lq(T(a), positive=positive))
    k = min(shape)
    assert lo.shape == (shape[0], k) and q.shape == (k, shape[1])
    np.testing.assert_allclose(lo @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ q.conj().T, np.eye(k), atol=1e-12)
    np.testing.assert_allclose(np.triu(lo, 1), 0, atol=0)
    if positive:
        assert np.all(np.diagonal(lo).real >= 0)
    check_grads(lambda x: la.lq(x, positive=positive), (T(a),), order=1)


def test_positive_gauge_is_unique(rng):
    """positive=True gives the same Q, R whatever LAPACK's sign choices were."""
    a = rand(rng, (5, 3), "complex128")
    q1, r1 = la.qr(T(a), positive=True)
    ph = np.exp(1j * rng.uniform(0, 2 * np.pi, 3))
    q0, r0 = np.linalg.qr(a)
    q2, r2 = la.qr(T((q0 * ph) @ (r0 / ph[:, None])), positive=True)
    np.testing.assert_allclose(q1.numpy(), q2.numpy(), atol=1e-12)
    np.testing.assert_allclose(r1.numpy(), r2.numpy(), atol=1e-12)


def test_qr_hvp(rng):
    a = T(rand(rng, (5, 3), "complex128"))
    t = T(rand(rng, (5, 3), "complex128"))
    w = T(rand(rng, (5, 3), "complex128"))

    def loss(x):
        q, r = la.qr(x)
        return tf.real(tf.sum(w * q)) + tf.sum(tf.abs2(r)) * tf.real(r[0, 0])

    hv = tf.hvp(loss, (a,), (t,)).numpy()
    g = tf.grad(loss)
    eps = 1e-5
    fd = (g(a + eps * t).numpy() - g(a - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-7
