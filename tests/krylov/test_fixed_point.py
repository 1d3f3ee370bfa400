"""fixed_point: implicit derivatives of converged iterations (with and without gauge fixing)
against unrolled iterations, closed forms and finite differences."""

import numpy as np
import pytest

import tenferro as tf

from ._util import close, fd_directional, grad_dot


def _contraction_problem(rng, n=12):
    a0 = rng.standard_normal((n, n)) * 0.3 / np.sqrt(n)
    b0 = rng.standard_normal(n)
    return a0, b0


def _step(x, a, b):
    return tf.tanh(a @ x + b)


@pytest.mark.parametrize("solver", ["gmres", "iteration"])
def test_implicit_gradient_equals_the_unrolled_one(solver):
    rng = np.random.default_rng(0)
    a0, b0 = _contraction_problem(rng)
    w = tf.tensor(rng.standard_normal(a0.shape[0]))

    def implicit(a, b):
        x = tf.fixed_point(_step, tf.zeros(a.shape[0]), a, b, tol=1e-14, solver=solver)
        return tf.sum(x * w) + tf.sum(x ** 2)

    def unrolled(a, b):
        x = tf.zeros(a.shape[0])
        for _ in range(80):
            x = _step(x, a, b)
        return tf.sum(x * w) + tf.sum(x ** 2)

    args = (tf.tensor(a0), tf.tensor(b0))
    np.testing.assert_allclose(implicit(*args).item(), unrolled(*args).item(), rtol=1e-13)
    gi = tf.grad(implicit, argnums=(0, 1))(*args)
    gu = tf.grad(unrolled, argnums=(0, 1))(*args)
    for x, y in zip(gi, gu):
        assert close(x.numpy(), y.numpy(), 1e-10)
    d = rng.standard_normal(a0.shape)
    fd = fd_directional(lambda t: implicit(t, args[1]), a0, d)
    assert abs(fd - grad_dot(gi[0].numpy(), d)) <= 1e-7 * abs(fd)


def test_pytree_state_and_the_eager_tape():
    rng = np.random.default_rng(1)
    a0, b0 = _contraction_problem(rng)

    def f(state, a, b):
        x, y = state["x"], state["y"]
        return {"x": _step(y, a, b), "y": 0.5 * x}

    a = tf.tensor(a0, requires_grad=True)
    b = tf.tensor(b0)
    out = tf.fixed_point(f, {"x": tf.zeros(12), "y": tf.zeros(12)}, a, b, tol=1e-14)
    tf.sum(out["x"] ** 2 + out["y"]).backward()

    def unrolled(a):
        x = y = tf.zeros(12)
        for _ in range(150):
            x, y = _step(y, a, b), 0.5 * x
        return tf.sum(x ** 2 + y)

    assert close(a.grad.numpy(), tf.grad(unrolled)(tf.tensor(a0)).numpy(), 1e-10)


def test_gauge_fix_makes_a_sign_flipping_iteration_a_fixed_point():
    """Power iteration on a matrix whose dominant eigenvalue is negative flips the sign of x
    every step: no fixed point until gauge_fix aligns each iterate with the previous one.
    The derivative of the gauge-invariant <x|O|x> then equals the one through eigh."""
    rng = np.random.default_rng(2)
    n = 10
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    lam = np.linspace(-0.2, 0.5, n)
    lam[0] = -1.0
    a0 = (q * lam) @ q.T
    o = rng.standard_normal((n, n))
    o = tf.tensor(o + o.T)

    def power(x, a):
        y = a @ x
        return y / tf.norm(y)

    def align(y, x):
        return y * tf.sign(tf.stop_gradient(tf.sum(y * x)))

    def loss_fp(a, gauge):
        x = tf.fixed_point(power, tf.ones(n), a, tol=1e-13, maxiter=400, gauge_fix=gauge)
        return x @ (o @ x)

    def loss_eigh(a):
        w, v = tf.linalg.eigh((a + a.T) / 2)
        return v[:, 0] @ (o @ v[:, 0])

    a = tf.tensor(a0)
    with pytest.warns(tf.errors.ConvergenceWarning):
        loss_fp(a, None)
    np.testing.assert_allclose(loss_fp(a, align).item(), loss_eigh(a).item(), rtol=1e-10)
    g = tf.grad(lambda t: loss_fp((t + t.T) / 2, align))(a)
    gd = tf.grad(loss_eigh)(a)
    assert close(g.numpy(), gd.numpy(), 1e-8)


def test_result_does_not_depend_on_x0_and_gets_no_gradient():
    rng = np.random.default_rng(3)
    a0, b0 = _contraction_problem(rng)
    a, b = tf.tensor(a0), tf.tensor(b0)
    x0 = tf.tensor(rng.standard_normal(12))
    g = tf.grad(lambda t: tf.sum(tf.fixed_point(_step, t, a, b)))(x0)
    np.testing.assert_array_equal(g.numpy(), 0.0)
    x1 = tf.fixed_point(_step, x0, a, b, tol=1e-14)
    x2 = tf.fixed_point(_step, tf.zeros(12), a, b, tol=1e-14)
    np.testing.assert_allclose(x1.numpy(), x2.numpy(), atol=1e-14)


def test_an_iteration_that_goes_nan_is_reported():
    """fixed_point skipped its ConvergenceWarning when the change was NaN (and max() dropped
    the NaN, so a NaN iterate even counted as converged after one step)."""
    def f(x, a):
        return x * a + tf.log(x - 10.0)

    with np.errstate(invalid="ignore"), pytest.warns(
            tf.errors.ConvergenceWarning, match="diverged to NaN or inf at step 1"):
        x, info = tf.fixed_point(f, tf.ones(3), tf.tensor(2.0), return_info=True)
    assert np.isnan(x.numpy()).all() and not info.converged


def test_a_diverging_iteration_is_reported_and_its_gradient_too():
    """x <- 2 x: the iterates overflow the norm (1.3e154 came back silently, and a gradient
    of -4.3e154). The change is measured without overflow now (not converged, warned), and
    differentiating the unconverged result is reported as well."""
    def f(x, a):
        return x * a + 1.0

    with pytest.warns(tf.errors.ConvergenceWarning, match="not converged after 1000"):
        x = tf.fixed_point(f, tf.ones(3), tf.tensor(2.0))
    assert np.isfinite(x.numpy()).all()  # 2^1000: huge, finite, and reported
    with pytest.warns(tf.errors.ConvergenceWarning) as rec:
        tf.grad(lambda a: tf.sum(tf.fixed_point(f, tf.ones(3), a)))(tf.tensor(2.0))
    assert any("fixed point that was not reached" in str(r.message) for r in rec)


def test_the_gradient_of_a_nan_iteration_is_nan_and_reported():
    def f(x, a):
        return x * a + tf.log(x - 10.0)

    with np.errstate(invalid="ignore"), pytest.warns(tf.errors.ConvergenceWarning) as rec:
        g = tf.grad(lambda a: tf.sum(tf.fixed_point(f, tf.ones(3), a)))(tf.tensor(2.0))
    assert np.isnan(g.numpy())
    assert any("the gradient is NaN" in str(r.message) for r in rec)
