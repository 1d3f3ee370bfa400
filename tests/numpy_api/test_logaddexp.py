"""``logaddexp``/``logaddexp2``/``softplus`` are smooth to every order: the old
max + log1p(exp(-|d|)) form had kinks at x1 == x2 that cancel in the value but made every
second and higher derivative 0 on the diagonal (exact: 1/4). ``logsumexp`` of all -inf is -inf
with no NumPy warning, and derivative 0."""

import math
import warnings

import numpy as np
import pytest

import tenferro as tf


def _sig(d):
    return 1.0 / (1.0 + math.exp(-d))


def _derivs(x, y):
    """d^k/dx^k logaddexp(x, y) for k = 0..3 (closed forms through the sigmoid)."""
    s = _sig(x - y)
    return [np.logaddexp(x, y), s, s * (1 - s), s * (1 - s) * (1 - 2 * s)]


def _nested(f, k):
    for _ in range(k):
        f = tf.grad(f)
    return f


@pytest.mark.parametrize("x,y", [(0.4, 0.4), (0.4, -1.3), (-2.0, 3.5), (7.0, 7.0)])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_logaddexp_derivatives_to_third_order(x, y, mode):
    want = _derivs(x, y)
    for k in range(4):
        f = _nested(lambda a: tf.logaddexp(a, y), k)
        f = tf.jit(f) if mode == "jit" else f
        np.testing.assert_allclose(f(tf.tensor(x)).item(), want[k], rtol=1e-12, atol=1e-15)
        g = _nested(lambda b: tf.logaddexp(x, b), k)  # the second operand: x and y swapped
        g = tf.jit(g) if mode == "jit" else g
        np.testing.assert_allclose(g(tf.tensor(y)).item(), _derivs(y, x)[k], rtol=1e-12,
                                   atol=1e-15)


def test_the_report_example():
    assert tf.grad(tf.grad(lambda x: tf.logaddexp(x, 0.4)))(tf.tensor(0.4)).item() == 0.25


def test_mixed_second_derivative_and_hvp():
    # d2/dx dy logaddexp = -s (1 - s)
    h = tf.grad(lambda y: tf.grad(lambda x: tf.logaddexp(x, y))(tf.tensor(0.3)))(tf.tensor(0.3))
    np.testing.assert_allclose(h.item(), -0.25)
    hv = tf.hvp(lambda v: tf.logaddexp(v[0], v[1]), (tf.tensor([0.3, 0.3]),),
                (tf.tensor([1.0, 0.0]),))
    np.testing.assert_allclose(hv.numpy(), [0.25, -0.25])


def test_third_derivative_against_finite_differences():
    g2 = tf.grad(tf.grad(lambda a: tf.logaddexp(a, 0.1)))
    for x in (0.1, 0.9, -2.0):
        eps = 1e-4
        fd = (g2(tf.tensor(x + eps)).item() - g2(tf.tensor(x - eps)).item()) / (2 * eps)
        np.testing.assert_allclose(tf.grad(g2)(tf.tensor(x)).item(), fd, atol=1e-8)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_logaddexp2_and_softplus_are_smooth_on_the_diagonal(mode):
    ln2 = math.log(2)
    j = (lambda f: tf.jit(f)) if mode == "jit" else (lambda f: f)
    d2 = j(tf.grad(tf.grad(lambda x: tf.logaddexp2(x, 0.4))))(tf.tensor(0.4)).item()
    np.testing.assert_allclose(d2, ln2 / 4)  # d2/dx2 log2(2^x + 2^y) = ln2 s (1 - s)
    np.testing.assert_allclose(j(tf.grad(tf.grad(tf.softplus)))(tf.tensor(0.0)).item(), 0.25)
    f = tf.nn.functional.softplus
    np.testing.assert_allclose(j(tf.grad(tf.grad(f)))(tf.tensor(0.0)).item(), 0.25)


def test_values_are_numpys_and_accurate_in_the_tails():
    x = np.array([0.0, -40.0, 800.0, -800.0, 3.0, 40.0])
    y = np.array([0.0, 0.0, 799.0, -801.0, -1000.0, 0.0])
    np.testing.assert_allclose(tf.logaddexp(tf.tensor(x), tf.tensor(y)).numpy(),
                               np.logaddexp(x, y), rtol=1e-15)
    g = tf.vjp(lambda b: tf.logaddexp(tf.tensor(x), b), tf.tensor(y))[1](tf.ones(6))[0]
    with np.errstate(over="ignore"):
        want = 1 / (1 + np.exp(x - y))  # sigmoid(y - x): exact also where it is tiny
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)


def test_infinities_follow_the_documented_conventions():
    x = tf.tensor([-np.inf, np.inf, 1.0, np.inf, 3.0])
    y = tf.tensor([-np.inf, np.inf, np.inf, 1.0, -np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = tf.logaddexp(x, y)
        gx, gy = tf.vjp(tf.logaddexp, x, y)[1](tf.ones(5))
        h = tf.vjp(lambda a: tf.vjp(lambda b: tf.logaddexp(b, y), a)[1](tf.ones(5))[0], x)[1](
            tf.ones(5))[0]
    np.testing.assert_array_equal(out.numpy(), [-np.inf, np.inf, np.inf, np.inf, 3.0])
    np.testing.assert_array_equal(gx.numpy(), [0, 0, 0, 1, 1])  # same infinities: constant
    np.testing.assert_array_equal(gy.numpy(), [0, 0, 1, 0, 0])
    np.testing.assert_array_equal(h.numpy(), [0, 0, 0, 0, 0])


# ---------------------------------------------------------------------- logsumexp
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_logsumexp_of_all_minus_inf_is_silent_with_derivative_zero(mode):
    f = tf.logsumexp if mode == "eager" else tf.jit(tf.logsumexp)
    g = tf.grad(tf.logsumexp) if mode == "eager" else tf.jit(tf.grad(tf.logsumexp))
    x = tf.tensor([-np.inf, -np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(x).item() == -np.inf
        np.testing.assert_array_equal(g(x).numpy(), [0.0, 0.0])
        rows = tf.logsumexp(tf.tensor([[-np.inf, -np.inf], [0.0, 0.0]]), axis=1,
                            return_sign=True)
        sm = tf.log_softmax(tf.tensor([1.0, -np.inf]))
    np.testing.assert_array_equal(rows[0].numpy(), [-np.inf, np.log(2)])
    np.testing.assert_array_equal(rows[1].numpy(), [0.0, 1.0])
    np.testing.assert_array_equal(sm.numpy(), [0.0, -np.inf])


@pytest.mark.numpy_only  # (array_api_strict's own module raises the warning there)
def test_chainrules_warnings_are_errors_in_this_suite():
    """The suite's filter (pyproject.toml) turns NumPy's warnings raised inside a primitive's
    impl (module ``chainrules.*``) into errors, as those inside ``tenferro.*``: a warning
    there is a silent inf or NaN in a result."""
    with pytest.raises(Exception, match="divide by zero"):
        tf.log(tf.tensor([0.0]))
