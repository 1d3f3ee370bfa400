"""tenferro.nn.functional: conventions at non-differentiable points, the private erf, dropout,
running statistics, traced mode, and the errors bad input gets."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import erf as scipy_erf

import tenferro as tf
import tenferro.nn.functional as F
from tenferro.errors import DTypeError, GradientError, GraphError, ShapeError
from tenferro.testing import check_grads
from tests.nn._util import assert_close


def _grad(f, x):
    return tf.grad(lambda x: tf.sum(f(x)))(tf.tensor(x)).numpy()


def test_derivatives_at_kinks_follow_pytorch():
    x = np.array([-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(_grad(F.relu, x), [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(_grad(lambda v: F.leaky_relu(v, 0.2), x), [0.2, 0.2, 1.0])
    np.testing.assert_allclose(_grad(lambda v: F.elu(v, 1.5), x), [1.5 * np.exp(-1), 1.5, 1.0])
    np.testing.assert_array_equal(_grad(lambda v: F.l1_loss(v, tf.zeros(3), "sum"), x),
                                  [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(_grad(lambda v: F.huber_loss(v, tf.zeros(3), "sum", 1.0),
                                        np.array([-1.0, 0.0, 1.0])), [-1.0, 0.0, 1.0])
    # softplus above the threshold is the identity (derivative exactly 1, as PyTorch)
    np.testing.assert_array_equal(_grad(lambda v: F.softplus(v, threshold=1.0), x)[2], 1.0)


def test_max_pool_ties_share_the_gradient():
    x = np.array([[[[1.0, 3.0], [3.0, 0.0]]]])
    g = _grad(lambda v: F.max_pool2d(v, 2), x)
    np.testing.assert_array_equal(g, [[[[0.0, 0.5], [0.5, 0.0]]]])


def test_binary_cross_entropy_is_finite_at_zero_and_one():
    p = tf.tensor([0.0, 1.0, 0.5])
    y = tf.tensor([1.0, 0.0, 1.0])
    loss = F.binary_cross_entropy(p, y, reduction="none")
    np.testing.assert_allclose(loss.numpy(), [100.0, 100.0, np.log(2.0)])
    g = tf.grad(lambda p: tf.sum(F.binary_cross_entropy(p, y, reduction="none")))(p).numpy()
    assert np.all(np.isfinite(g)) and g[0] == 0.0 and g[1] == 0.0


def test_embedding_padding_row_gets_no_gradient():
    w = np.random.default_rng(0).standard_normal((5, 3))
    idx = tf.tensor([[2, 1], [2, 4]])
    g = tf.grad(lambda w: tf.sum(F.embedding(idx, w, padding_idx=2) ** 2))(tf.tensor(w)).numpy()
    np.testing.assert_array_equal(g[2], 0.0)
    np.testing.assert_allclose(g[1], 2 * w[1])
    np.testing.assert_allclose(g[4], 2 * w[4])
    np.testing.assert_array_equal(g[[0, 3]], 0.0)


def test_gelu_is_exact_through_special_erf_and_tanh_is_pytorchs_approximation():
    x = np.concatenate([np.linspace(-9, 9, 2001), [0.0, -0.0, 1e-300, 40.0]])
    got = F.gelu(tf.tensor(x)).numpy()
    ref = 0.5 * x * (1 + scipy_erf(x * (1 / np.sqrt(2))))  # the same formula, SciPy erf
    np.testing.assert_allclose(got, ref, rtol=1e-15, atol=1e-300)
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x * x * x)))
    np.testing.assert_allclose(F.gelu(tf.tensor(x), approximate="tanh").numpy(), approx,
                               rtol=1e-15, atol=1e-300)
    # the exact form is the erf primitive (its own derivative rules), not a series
    graph = tf.make_graph(F.gelu, tf.ShapeDtype((3,), tf.float64))
    assert "erf" in {e.prim.name for e in graph.program.eqns}
    xs = np.array([-3.0, -0.5, 0.0, 0.99, 1.01, 2.5])
    d = tf.grad(lambda v: tf.sum(F.gelu(v)))(tf.tensor(xs)).numpy()
    pdf = np.exp(-xs**2 / 2) / np.sqrt(2 * np.pi)
    np.testing.assert_allclose(d, 0.5 * (1 + scipy_erf(xs / np.sqrt(2))) + xs * pdf, rtol=1e-14)
    check_grads(F.gelu, [tf.tensor(xs)], order=3)


def test_dropout_is_seeded_scaled_and_off_in_eval():
    x = tf.ones((200, 50))
    tf.manual_seed(3)
    a = F.dropout(x, 0.3)
    tf.manual_seed(3)
    b = F.dropout(x, 0.3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    vals = np.unique(a.numpy())
    np.testing.assert_allclose(vals, [0.0, 1 / 0.7])
    assert abs((a.numpy() == 0).mean() - 0.3) < 0.02
    assert F.dropout(x, 0.3, training=False) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), 0.0)
    # the gradient is the mask scaled by 1/(1-p)
    tf.manual_seed(5)
    g = tf.grad(lambda v: tf.sum(F.dropout(v, 0.5)))(x).numpy()
    tf.manual_seed(5)
    np.testing.assert_array_equal(g, F.dropout(x, 0.5).numpy())


def test_dropout_inside_jit_is_a_clear_error():
    f = tf.jit(lambda x: F.dropout(x, 0.5))
    with pytest.raises(GraphError, match="training=False"):
        f(tf.ones(3))
    np.testing.assert_array_equal(tf.jit(lambda x: F.dropout(x, 0.5, training=False))(
        tf.ones(3)).numpy(), 1.0)


def test_batch_norm_updates_running_statistics_eagerly_and_under_grad():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 3, 2))
    rm, rv = tf.zeros(3), tf.ones(3)

    def loss(x):
        return tf.sum(F.batch_norm(x, rm, rv, training=True, momentum=0.25) ** 3)

    tf.grad(loss)(tf.tensor(x))
    mean = x.mean(axis=(0, 2))
    var = x.var(axis=(0, 2), ddof=1)
    np.testing.assert_allclose(rm.numpy(), 0.25 * mean, rtol=1e-14)
    np.testing.assert_allclose(rv.numpy(), 0.75 + 0.25 * var, rtol=1e-14)
    with pytest.raises(GradientError, match="training=False"):
        tf.jit(loss)(tf.tensor(x))


def test_functions_agree_eager_and_jit():
    rng = np.random.default_rng(2)
    x = tf.tensor(rng.standard_normal((2, 3, 6, 6)))
    w = tf.tensor(rng.standard_normal((4, 3, 3, 3)))
    t = tf.tensor(rng.integers(0, 4, (2,)))

    def f(x, w):
        h = F.gelu(F.conv2d(x, w, padding=1))
        h = F.max_pool2d(h, 2) + F.avg_pool2d(h, 2)
        h = F.adaptive_avg_pool2d(F.layer_norm(h, h.shape[1:]), 1).reshape(2, 4)
        return F.cross_entropy(h, t, label_smoothing=0.1)

    g_eager = tf.grad(f, argnums=(0, 1))(x, w)
    g_jit = tf.jit(tf.grad(f, argnums=(0, 1)))(x, w)
    for a, b in zip(g_eager, g_jit):
        assert_close(b.numpy(), a.numpy(), rtol=1e-13)
    assert_close(tf.jit(f)(x, w).numpy(), f(x, w).numpy(), rtol=1e-14)


def test_one_hot():
    i = tf.tensor([0, 2, 1])
    np.testing.assert_array_equal(F.one_hot(i).numpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(i, 5).shape == (3, 5)
    with pytest.raises(DTypeError):
        F.one_hot(tf.tensor([0.5]))


@pytest.mark.parametrize("call,err,match", [
    (lambda: F.linear(tf.ones((2, 3)), tf.ones((4, 5))), ShapeError, "in_features"),
    (lambda: F.conv2d(tf.ones((1, 3, 5, 5)), tf.ones((4, 2, 3, 3))), ShapeError, "groups"),
    (lambda: F.conv2d(tf.ones((1, 3, 2, 2)), tf.ones((4, 3, 3, 3))), ShapeError, "smaller"),
    (lambda: F.conv2d(tf.ones((1, 3, 5, 5)), tf.ones((4, 3, 3, 3)), stride=2, padding="same"),
     ValueError, "stride 1"),
    (lambda: F.max_pool2d(tf.ones((1, 1, 4, 4)), 2, padding=2), ShapeError, "half"),
    (lambda: F.softmax(tf.ones(3)), ShapeError, "dim"),
    (lambda: F.cross_entropy(tf.ones((2, 3)), tf.tensor([0, 1, 2])), ShapeError, "target"),
    (lambda: F.cross_entropy(tf.ones((2, 3)), tf.tensor([0.5, 0.5])), ShapeError, "shape"),
    (lambda: F.nll_loss(tf.ones((2, 3)), tf.tensor([0.0, 1.0])), DTypeError, "integers"),
    (lambda: F.mse_loss(tf.ones(2), tf.ones(2), reduction="avg"), ValueError, "reduction"),
    (lambda: F.embedding(tf.tensor([0.0]), tf.ones((2, 2))), DTypeError, "integers"),
    (lambda: F.batch_norm(tf.ones((2, 3)), None, None), ShapeError, "running_mean"),
    (lambda: F.group_norm(tf.ones((2, 3, 4)), 2), ShapeError, "groups"),
    (lambda: F.layer_norm(tf.ones((2, 3)), (4,)), ShapeError, "normalized_shape"),
    (lambda: F.gelu(tf.ones(2), approximate="erf"), ValueError, "approximate"),
])
def test_bad_input_gets_a_clear_error(call, err, match):
    with pytest.raises(err, match=match):
        call()
