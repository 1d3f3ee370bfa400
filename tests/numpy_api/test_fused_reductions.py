"""The one-primitive forms of logsumexp/softmax/log_softmax, var/std, layer_norm and basic-index
assignment keep the values and derivatives of the compositions they replace: the -inf edge
cases, axis tuples and keepdims, the zero-variance convention, complex input, and the general
scatter path of setitem. Values are compared with SciPy/NumPy and PyTorch, gradients with
finite differences and with torch."""

import warnings

import numpy as np
import pytest
import scipy.special as sps

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.core.dispatch import bind
from tenferro.errors import DTypeError
from tests import skips

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5))
NINF = -np.inf


def _fd_grad(f, x, eps=1e-6):
    """Central finite-difference gradient of the scalar f at the array x."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


def _grad(f, x):
    t = tf.tensor(x, requires_grad=True)
    f(t).backward()
    return t.grad.numpy()


@pytest.mark.parametrize("axis", [-1, 0, (0, 2), (2, 0), None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_values_and_gradient_match_scipy(axis, keepdims):
    got = tf.logsumexp(tf.tensor(X), axis, keepdims=keepdims).numpy()
    np.testing.assert_allclose(got, sps.logsumexp(X, axis, keepdims=keepdims), rtol=1e-13)
    w = RNG.standard_normal(np.shape(got))
    g = _grad(lambda t: (tf.logsumexp(t, axis, keepdims=keepdims) * w).sum(), X)
    want = _fd_grad(lambda a: (sps.logsumexp(a, axis, keepdims=keepdims) * w).sum(), X)
    np.testing.assert_allclose(g, want, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("axis", [-1, 1, (0, 1)])
def test_softmax_and_log_softmax_match_scipy_with_gradients(axis):
    w = RNG.standard_normal(X.shape)
    for ours, ref in ((tf.softmax, sps.softmax), (tf.log_softmax, sps.log_softmax)):
        np.testing.assert_allclose(ours(tf.tensor(X), axis).numpy(), ref(X, axis), rtol=1e-13)
        g = _grad(lambda t, ours=ours: (ours(t, axis) * w).sum(), X)
        want = _fd_grad(lambda a, ref=ref: (ref(a, axis) * w).sum(), X)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_minus_inf_entries_and_rows():
    """-inf entries get weight 0; an all -inf row: logsumexp -inf with derivative 0, softmax
    and log_softmax nan, log_softmax's derivative the cotangent itself (the composition's)."""
    a = np.array([[0.5, NINF, -1.0], [NINF, NINF, NINF]])
    w = np.array([[1.0, 2.0, -0.5], [0.3, -0.7, 1.1]])
    x = tf.tensor(a, requires_grad=True)
    lse = tf.logsumexp(x, 1)
    np.testing.assert_allclose(lse.detach().numpy(), [sps.logsumexp(a[0]), NINF])
    (lse * tf.tensor([1.0, 1.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[0], sps.softmax(a[0]), rtol=1e-14)
    assert np.all(x.grad.numpy()[1] == 0)
    x = tf.tensor(a[:1], requires_grad=True)
    (tf.log_softmax(x, 1) * tf.tensor(w[:1])).sum().backward()
    s = sps.softmax(a[0])
    np.testing.assert_allclose(x.grad.numpy()[0], w[0] - s * w[0].sum(), rtol=1e-14)
    with np.errstate(all="ignore"):
        row = tf.tensor(a[1:], requires_grad=True)
        assert np.all(np.isnan(tf.softmax(row, 1).detach().numpy()))
        y = tf.log_softmax(row, 1)
        assert np.all(np.isnan(y.detach().numpy()))
        (y * tf.tensor(w[1:])).sum().backward()
        np.testing.assert_array_equal(row.grad.numpy(), w[1:])


def test_plus_inf_entries_keep_the_composition_values():
    a = np.array([[1.0, np.inf, 0.0]])
    assert tf.logsumexp(tf.tensor(a), 1).numpy()[0] == np.inf
    with np.errstate(all="ignore"):
        s = tf.softmax(tf.tensor(a), 1).numpy()[0]
    assert s[0] == 0 and np.isnan(s[1]) and s[2] == 0


def test_logsumexp_b_and_return_sign_keep_the_composition():
    w = RNG.standard_normal(X.shape)
    out, sgn = tf.logsumexp(tf.tensor(X), (0, 2), b=tf.tensor(w), return_sign=True)
    ref, rsgn = sps.logsumexp(X, (0, 2), b=w, return_sign=True)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    np.testing.assert_array_equal(sgn.numpy(), rsgn)


@pytest.mark.parametrize("f", [tf.softmax, tf.log_softmax, tf.logsumexp])
def test_complex_input_is_refused_with_a_named_error(f):
    z = tf.tensor(X[0] + 1j * X[1])
    with pytest.raises(DTypeError, match="complex input is not supported"):
        f(z, 1)
    with pytest.raises(DTypeError, match="real floating operand"):
        bind({tf.softmax: P.softmax_p, tf.log_softmax: P.log_softmax_p}.get(f, P.softmax_p),
             z, axes=(1,))


def test_integer_input_is_promoted():
    i = np.arange(6).reshape(2, 3)
    np.testing.assert_allclose(tf.softmax(tf.tensor(i), 1).numpy(), sps.softmax(i, 1))
    np.testing.assert_allclose(tf.logsumexp(tf.tensor(i)).numpy(), sps.logsumexp(i))


@pytest.mark.parametrize("axis", [1, (0, 2), None])
@pytest.mark.parametrize("ddof", [0, 1, 2.5])
@pytest.mark.parametrize("keepdims", [False, True])
def test_var_std_match_numpy_with_gradients(axis, ddof, keepdims):
    w = RNG.standard_normal(np.shape(np.var(X, axis, keepdims=keepdims)))
    for ours, ref in ((tf.var, np.var), (tf.std, np.std)):
        got = ours(tf.tensor(X), axis, ddof, keepdims)
        np.testing.assert_allclose(got.numpy(), ref(X, axis, ddof=ddof, keepdims=keepdims),
                                   rtol=1e-13)
        g = _grad(lambda t, ours=ours: (ours(t, axis, ddof, keepdims) * w).sum(), X)
        want = _fd_grad(lambda a, ref=ref: (ref(a, axis, ddof=ddof, keepdims=keepdims)
                                            * w).sum(), X)
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_std_of_constant_rows_has_derivative_zero_and_complex_var_is_of_the_modulus():
    a = np.array([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    g = _grad(lambda t: tf.std(t, 1).sum(), a)
    assert np.all(g[0] == 0)
    np.testing.assert_allclose(g[1], _fd_grad(lambda b: np.std(b, 1).sum(), a)[1], rtol=1e-7)
    z = X[0] + 1j * X[1]
    np.testing.assert_allclose(tf.var(tf.tensor(z), 1).numpy(), np.var(z, 1), rtol=1e-13)
    with np.errstate(all="ignore"), warnings.catch_warnings():  # no degrees of freedom
        warnings.simplefilter("ignore", RuntimeWarning)  # left: NumPy's inf/nan, and warning
        np.testing.assert_array_equal(tf.var(tf.tensor(a), 1, ddof=3).numpy(),
                                      np.var(a, 1, ddof=3))


def test_layer_norm_matches_torch_values_and_gradients():
    torch = skips.torch()
    F = torch.nn.functional
    wt, bt = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    c = RNG.standard_normal(X.shape)
    for shape in ((5,), (4, 5)):
        w, b = wt[-shape[0]:] if len(shape) == 2 else wt[0], bt[0] if len(shape) == 1 else bt
        x = tf.tensor(X, requires_grad=True)
        y = tf.nn.functional.layer_norm(x, shape, tf.tensor(w), tf.tensor(b), eps=1e-3)
        (y * tf.tensor(c)).sum().backward()
        xt = torch.tensor(X, requires_grad=True)
        yt = F.layer_norm(xt, shape, torch.tensor(w), torch.tensor(b), eps=1e-3)
        (yt * torch.tensor(c)).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("idx", [(1, 0), 2, (slice(None), 1), (Ellipsis, slice(4, 0, -2)),
                                 (None, 0, slice(1, 3)), (slice(None, None, -1), None, -1)])
def test_basic_setitem_equals_numpy_and_the_general_path(idx):
    a = RNG.standard_normal((3, 5))
    shape = np.shape(a[idx])
    v = RNG.standard_normal(shape)
    want = a.copy()
    want[idx] = v
    x = tf.tensor(a)
    x[idx] = tf.tensor(v)
    np.testing.assert_array_equal(x.numpy(), want)
    # gradients: the assigned region of x gets none, v gets the cotangent there
    c = RNG.standard_normal(a.shape)

    def f(t, u):
        y = t * 1.0
        y[idx] = u
        return (y * tf.tensor(c)).sum()

    t, u = tf.tensor(a, requires_grad=True), tf.tensor(v, requires_grad=True)
    f(t, u).backward()
    mask = np.ones_like(a)
    mask[idx] = 0
    np.testing.assert_array_equal(t.grad.numpy(), c * mask)
    np.testing.assert_array_equal(u.grad.numpy(), c[idx].reshape(shape))


def test_setitem_scalars_cast_like_numpy_and_refuse_complex():
    i = tf.tensor(np.arange(4))
    i[1] = 2.7  # truncated into an integer tensor, as NumPy
    np.testing.assert_array_equal(i.numpy(), [0, 2, 2, 3])
    f = tf.tensor(np.zeros(3, dtype=np.float32))
    f[0] = 1
    assert f.dtype == np.float32 and f.numpy()[0] == 1
    with pytest.raises(DTypeError, match="imaginary part"):
        f[1] = 1j
    z = tf.tensor(np.zeros(2, dtype=complex))
    z[1] = 2
    np.testing.assert_array_equal(z.numpy(), [0, 2])
    row = tf.tensor(np.zeros((2, 3)))
    row[0] = 5.0  # broadcast to the region
    np.testing.assert_array_equal(row.numpy(), [[5, 5, 5], [0, 0, 0]])


# The impls take a NumPy-only fast path on ndarrays (in place, int axis, the -inf mask of
# log_softmax_tangent applied only when x holds a -inf); other namespaces run the portable code.
# Both must agree, special values included.
_SPECIAL = np.array([[0.3, -1.2, 2.0, 0.5], [NINF, NINF, NINF, NINF], [1.0, NINF, 0.0, 2.0],
                     [np.inf, 0.0, NINF, 1.0], [np.nan, 1.0, NINF, 0.0]])


def _both(impl, *arrays, **params):
    import array_api_strict as xps  # a test dependency (the `test` extra)

    with np.errstate(all="ignore"):  # the nan/inf rows warn in both paths alike
        fast = impl(np, *arrays, **params)
        portable = impl(xps, *(xps.asarray(a) for a in arrays), **params)
    if isinstance(fast, tuple):
        return fast, tuple(np.asarray(p) for p in portable)
    return (fast,), (np.asarray(portable),)


@pytest.mark.numpy_only
@pytest.mark.parametrize("x", [_SPECIAL, _SPECIAL[:4], X.reshape(3, 20)[:, :4].copy()])
def test_numpy_fast_paths_match_the_portable_impls(x):
    from chainrules.primitives import moments as M
    from chainrules.primitives import softmax as S

    t = RNG.standard_normal(x.shape)
    cases = [(S._softmax_impl, (x,), {}), (S._log_softmax_impl, (x,), {})]
    with np.errstate(all="ignore"):
        s = S._softmax_impl(np, x, axes=(1,))
        y = S._log_softmax_impl(np, x, axes=(1,))
    cases += [(S._softmax_tangent_impl, (s, t), {})]
    cases += [(S._log_softmax_tangent_impl, (x, y, t), {"transpose": tr}) for tr in (False, True)]
    # an arbitrary y (not log_softmax(x)): the mask must still act exactly where x = -inf
    cases += [(S._log_softmax_tangent_impl, (x, t, t), {"transpose": tr}) for tr in (False, True)]
    finite = np.nan_to_num(x, nan=0.5, posinf=3.0, neginf=-3.0)
    ln, r = M._layer_norm_impl(np, finite, axes=(1,), eps=1e-5)
    cases += [(M._layer_norm_impl, (finite,), {"eps": 1e-5}),
              (M._layer_norm_tangent_impl, (r, ln, t), {})]
    for impl, arrays, params in cases:
        fast, portable = _both(impl, *arrays, axes=(1,), **params)
        for a, b in zip(fast, portable):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15, err_msg=impl.__name__)
