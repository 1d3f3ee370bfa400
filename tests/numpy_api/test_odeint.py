"""tenferro.integrate.odeint: values against closed forms and SciPy, adjoint gradients with
respect to y0, t and args against closed forms and finite differences (real and complex
states, pytrees), eager against jit, and the adjoint's memory independent of the step count."""

import numpy as np
import pytest
from scipy import integrate as si

import tenferro as tf
from tenferro._src.pytree import tree_flatten
from tenferro._src.testing import numerical_jvp, tree_inner
from tenferro.integrate import odeint
from tests.helpers import rand

T = tf.tensor


def _check_vjp_fd(f, args, eps=1e-4, rtol=1e-5, seed=0):
    """<ct, J t> by central differences of the solver against <J^T ct, t> from the adjoint
    (forward mode is not available through the adjoint rule, so no jvp is compared)."""
    rng = np.random.default_rng(seed)
    out, pull = tf.vjp(f, *args)
    ct = tf.pytree.tree_map(lambda o: T(rng.standard_normal(o.shape)), out)
    ts = tuple(T(rand(rng, a.shape, a.dtype)) for a in args)
    lhs = tree_inner(ct, numerical_jvp(f, args, ts, eps))
    rhs = tree_inner(pull(ct), ts)
    assert abs(lhs - rhs) <= rtol * max(abs(lhs), abs(rhs)), (lhs, rhs)


def _decay(y, t, k):
    return -k * y


def test_exponential_decay_values_and_gradients():
    ts, y0, k = np.array([0.0, 0.5, 1.0, 2.0]), np.array([1.0, -2.0]), 0.7
    ys = odeint(_decay, T(y0), T(ts), T(k)).numpy()
    want = y0 * np.exp(-k * ts)[:, None]
    np.testing.assert_allclose(ys, want, rtol=1e-7, atol=1e-12)

    def loss(y, t, kk):  # sum_i |y(t_i)|^2 = |y0|^2 sum_i exp(-2 k (t_i - t_0))
        return tf.sum(odeint(_decay, y, t, kk) ** 2)

    gy, gt, gk = tf.grad(loss, argnums=(0, 1, 2))(T(y0), T(ts), T(k))
    e = np.exp(-2 * k * (ts - ts[0]))
    n2 = np.sum(y0**2)
    np.testing.assert_allclose(gy.numpy(), 2 * y0 * e.sum(), rtol=1e-6)
    np.testing.assert_allclose(gk.numpy(), n2 * np.sum(-2 * (ts - ts[0]) * e), rtol=1e-6)
    want_t = n2 * -2 * k * e
    want_t[0] = n2 * 2 * k * e[1:].sum()  # moving the start time moves every later output
    np.testing.assert_allclose(gt.numpy(), want_t, rtol=1e-6)


def _oscillator(state, t, omega):
    x, v = state["x"], state["v"]
    return {"x": v, "v": -(omega**2) * x}


def test_harmonic_oscillator_pytree_against_closed_form():
    ts, omega = np.linspace(0.0, 3.0, 5), 1.3
    x0, v0 = np.array([1.0, 0.5]), np.array([0.0, -1.0])
    out = odeint(_oscillator, {"x": T(x0), "v": T(v0)}, T(ts), T(omega))
    c, s = np.cos(omega * ts)[:, None], np.sin(omega * ts)[:, None]
    np.testing.assert_allclose(out["x"].numpy(), x0 * c + v0 / omega * s, rtol=1e-6,
                               atol=1e-8)
    np.testing.assert_allclose(out["v"].numpy(), -x0 * omega * s + v0 * c, rtol=1e-6,
                               atol=1e-8)

    def final_x(w, x):  # x(T) = x0 cos(w T) + v0/w sin(w T)
        return tf.sum(odeint(_oscillator, {"x": x, "v": T(v0)}, T(ts), w,
                             rtol=1e-10, atol=1e-10)["x"][-1])

    gw, gx = tf.grad(final_x, argnums=(0, 1))(T(omega), T(x0))
    tt = ts[-1]
    dw = np.sum(-x0 * tt * np.sin(omega * tt) - v0 / omega**2 * np.sin(omega * tt)
                + v0 / omega * tt * np.cos(omega * tt))
    np.testing.assert_allclose(gw.numpy(), dw, rtol=1e-7)
    np.testing.assert_allclose(gx.numpy(), np.cos(omega * tt) * np.ones(2), rtol=1e-7)


def _forced(y, t, a, b):
    return -a * y**3 + b * tf.sin(3 * t) * y[::-1]


def test_nonlinear_nonautonomous_against_scipy_and_finite_differences():
    ts, y0 = np.array([0.1, 0.4, 1.3]), np.array([0.8, -0.3])
    a, b = 1.1, np.array([0.5, 0.9])
    ys = odeint(_forced, T(y0), T(ts), T(a), T(b), rtol=1e-11, atol=1e-11).numpy()
    want = si.odeint(lambda y, t: -a * y**3 + b * np.sin(3 * t) * y[::-1], y0, ts,
                     rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ys, want, rtol=0, atol=1e-9)  # the values are O(0.1..1)
    # every gradient (y0, t, a, b) against central differences of the solver itself
    _check_vjp_fd(lambda y, t, p, q: odeint(_forced, y, t, p, q, rtol=1e-10, atol=1e-10),
                  (T(y0), T(ts), T(a), T(b)))


def test_complex_state():
    """y' = (i w - g) y: y(t) = y0 exp((i w - g) t); the gradient in real w and g."""
    ts, y0 = np.array([0.0, 0.7, 1.5]), np.array([1.0 + 0.5j, -0.3j])

    def f(y, t, w, g):
        return (1j * w - g) * y

    ys = odeint(f, T(y0), T(ts), T(2.0), T(0.3)).numpy()
    np.testing.assert_allclose(ys, y0 * np.exp((2j - 0.3) * ts)[:, None], rtol=1e-7)
    _check_vjp_fd(lambda y, w, g: odeint(f, y, T(ts), w, g, rtol=1e-10, atol=1e-10),
                  (T(y0), T(2.0), T(0.3)))


def test_jit_matches_eager():
    ts, y0 = np.array([0.0, 0.5, 1.0]), np.array([1.0, 2.0])

    def loss(y, t, k):
        return tf.sum(odeint(lambda u, s, kk: -kk * u + tf.sin(s), y, t, k, rtol=1e-6,
                             atol=1e-6, mxstep=15) ** 2)

    g = tf.grad(loss, argnums=(0, 1, 2))
    eager, traced = g(T(y0), T(ts), T(0.7)), tf.jit(g)(T(y0), T(ts), T(0.7))
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tf.jit(loss)(T(y0), T(ts), T(0.7)).numpy(),
                               loss(T(y0), T(ts), T(0.7)).numpy(), rtol=1e-13)
    # too few attempts under jit: NaN, not a wrong number
    short = tf.jit(lambda y: odeint(_decay, y, T(ts), 0.7, mxstep=2))(T(y0)).numpy()
    assert np.all(np.isnan(short[-1]))


def test_adjoint_memory_does_not_grow_with_the_step_count():
    """The backward pass keeps the outputs (and the times and arguments, which are inputs),
    however many steps the forward pass took."""
    ts = T(np.array([0.0, 1.0, 5.0]))
    saved = []
    for tol in (1e-4, 1e-10):  # many more steps at the tight tolerance
        y = T(np.array([1.0, 2.0])).requires_grad_()
        out = odeint(_oscillator, {"x": y, "v": y * 0}, ts, T(1.0), rtol=tol, atol=tol)
        node = out["x"]._node
        while not node.name.startswith("custom_vjp"):
            node = node.parents[0][0]
        leaves = [v for v in tree_flatten(node.saved)[0] if hasattr(v, "shape")]
        saved.append(sorted(tuple(v.shape) for v in leaves))
    assert saved[0] == saved[1] == [(), (3,), (3, 4)]  # omega, ts, y at the 3 times


def test_hmax_bounds_the_step_and_integer_input_is_promoted():
    calls = []

    def f(y, t):
        calls.append(float(t))
        return -y

    ts = T(np.array([0.0, 1.0]))
    y = odeint(f, T(np.array([1, 2])), ts, hmax=0.05).numpy()  # integers: float64
    np.testing.assert_allclose(y[-1], np.exp(-1.0) * np.array([1.0, 2.0]), rtol=1e-7)
    starts = sorted(set(calls))
    assert np.max(np.diff(starts)) <= 0.05 + 1e-12 and len(calls) >= 6 * 20


def test_errors():
    y0, ts = T(np.array([1.0])), T(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="odeint: t must be strictly increasing"):
        odeint(_decay, y0, T(np.array([1.0, 0.0])), 1.0)
    with pytest.raises(RuntimeError, match="odeint: .*mxstep = 3"):
        odeint(_decay, y0, T(np.array([0.0, 100.0])), 1.0, mxstep=3)
    with pytest.raises(ValueError, match="mxstep must be given"):
        tf.jit(lambda y: odeint(_decay, y, ts, 1.0))(y0)
    with pytest.raises(Exception, match="odeint: func returned"):
        odeint(lambda y, t: (y, y), y0, ts)
    with pytest.raises(Exception, match="odeint: forward-mode derivatives"):
        tf.jvp(lambda y: odeint(_decay, y, ts, 1.0), (y0,), (y0,))
