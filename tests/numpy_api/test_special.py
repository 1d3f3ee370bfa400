"""tenferro.special: SciPy's values (eager and jit, both backends: array_api_strict computes
on the host and copies back, explicitly), derivatives against finite differences and against
the closed forms, the conventions of xlogy at x = 0, and clear errors."""

import math

import numpy as np
import pytest
import scipy.special as sp

import tenferro as tf
from tenferro.errors import DTypeError, ShapeError
from tenferro.testing import check_grads
from tests.numpy_api._util import assert_matches_numpy, sample

S = (3, 4)

# name: (tenferro, SciPy, domain, complex too?)
UNARY = {
    "erf": (tf.special.erf, sp.erf, "any", True),
    "erfc": (tf.special.erfc, sp.erfc, "any", True),
    "erfinv": (tf.special.erfinv, sp.erfinv, "unit", False),
    "gammaln": (tf.special.gammaln, sp.gammaln, "any", False),
    "digamma": (tf.special.digamma, sp.digamma, "pos", False),
    "polygamma_1": (lambda x: tf.special.polygamma(1, x), lambda x: sp.polygamma(1, x), "pos",
                    False),
    "polygamma_3": (lambda x: tf.special.polygamma(3, x), lambda x: sp.polygamma(3, x), "pos",
                    False),
    "expit": (tf.special.expit, sp.expit, "any", False),
    "logit": (tf.special.logit, sp.logit, "any", False),
}


def _cases():
    for name, (f, g, dom, cplx) in UNARY.items():
        yield pytest.param(f, g, dom, "float64", id=f"{name}-f64")
        if cplx:
            yield pytest.param(f, g, dom, "complex128", id=f"{name}-c128")


def _inputs(rng, name, domain, dtype):
    x = sample(rng, S, dtype, domain)
    return 1 / (1 + np.exp(-x)) if "logit" in name else x  # logit needs (0, 1)


@pytest.mark.parametrize("f,g,domain,dtype", list(_cases()))
def test_values_match_scipy(f, g, domain, dtype, rng, request):
    x = _inputs(rng, request.node.callspec.id, domain, dtype)
    assert_matches_numpy(f, g, x, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("f,g,domain,dtype", list(_cases()))
def test_derivatives_match_finite_differences(f, g, domain, dtype, rng, request):
    x = _inputs(rng, request.node.callspec.id, domain, dtype)
    check_grads(f, (tf.tensor(x),), order=2, rtol=1e-5, atol=1e-7)


def test_derivatives_match_closed_forms(rng):
    x = sample(rng, (6,), domain="unit")
    cases = [
        (tf.special.erf, 2 / np.sqrt(np.pi) * np.exp(-x**2)),
        (tf.special.erfc, -2 / np.sqrt(np.pi) * np.exp(-x**2)),
        (tf.special.erfinv, np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2)),
        (tf.special.gammaln, sp.digamma(x)),
        (tf.special.digamma, sp.polygamma(1, x)),
        (tf.special.expit, sp.expit(x) * (1 - sp.expit(x))),
    ]
    for f, d in cases:
        g = tf.grad(lambda t, f=f: tf.sum(f(t)))(tf.tensor(x))
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-12)
    p = 1 / (1 + np.exp(-x))
    g = tf.grad(lambda t: tf.sum(tf.special.logit(t)))(tf.tensor(p))
    np.testing.assert_allclose(g.numpy(), 1 / (p * (1 - p)), rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # d/dx at y = 0 is -inf
def test_xlogy_values_and_conventions(rng):
    x, y = sample(rng, S), sample(rng, S, domain="pos")
    x[0, :2] = 0.0
    y[0, 1] = 0.0  # 0 * log 0 = 0
    assert_matches_numpy(tf.special.xlogy, sp.xlogy, x, y)
    z, w = sample(rng, S, "complex128"), sample(rng, S, "complex128", "pos")
    assert_matches_numpy(tf.special.xlogy, sp.xlogy, z, w)
    check_grads(tf.special.xlogy, (tf.tensor(z), tf.tensor(w)))
    gx, gy = tf.grad(lambda a, b: tf.sum(tf.special.xlogy(a, b)), argnums=(0, 1))(
        tf.tensor([0.0, 0.0, 2.0]), tf.tensor([3.0, 0.0, 4.0]))
    np.testing.assert_array_equal(gx.numpy(), [math.log(3.0), -np.inf, math.log(4.0)])
    np.testing.assert_array_equal(gy.numpy(), [0.0, 0.0, 0.5])  # 0 along x = 0


def test_logsumexp_matches_scipy(rng):
    a, b = sample(rng, S), sample(rng, S)
    assert_matches_numpy(lambda t: tf.special.logsumexp(t, axis=1),
                         lambda x: sp.logsumexp(x, axis=1), a)
    assert_matches_numpy(lambda t, w: tf.logsumexp(t, 0, b=w, keepdims=True,
                                                  return_sign=True),
                         lambda x, w: sp.logsumexp(x, 0, b=w, keepdims=True, return_sign=True),
                         a, np.abs(b) * np.sign(b[0]))
    np.testing.assert_allclose(
        tf.logsumexp(tf.tensor([np.inf, 1.0])).item(), sp.logsumexp([np.inf, 1.0]))
    np.testing.assert_allclose(
        tf.logsumexp(tf.tensor([1.0, 2.0]), b=tf.tensor([0.0, 1.0])).item(), 2.0)
    check_grads(lambda t, w: tf.logsumexp(t, 1, b=w), (tf.tensor(a), tf.tensor(np.abs(b))))


def test_single_precision_and_devices_are_kept():
    x32 = tf.tensor(np.array([0.1, 0.5], np.float32))
    for f in (tf.special.erf, tf.special.erfinv, tf.special.gammaln, tf.special.digamma):
        assert f(x32).dtype == np.float32
    x = tf.tensor([0.1, 0.5], device="strict:1")  # no special functions there: host round trip
    out = tf.special.erf(x)
    assert out.device == "strict:1"
    np.testing.assert_allclose(out.numpy(), sp.erf([0.1, 0.5]), rtol=1e-15)
    g = tf.grad(lambda t: tf.sum(tf.special.gammaln(t)))(x)
    assert g.device == "strict:1"
    np.testing.assert_allclose(g.numpy(), sp.digamma([0.1, 0.5]), rtol=1e-14)


def test_errors():
    z = tf.tensor([1.0 + 1.0j])
    for f in (tf.special.erfinv, tf.special.gammaln, tf.special.digamma):
        with pytest.raises(DTypeError, match="complex"):
            f(z)
    with pytest.raises(ShapeError, match="non-negative"):
        tf.special.polygamma(-1, tf.tensor([1.0]))
    with pytest.raises(ShapeError, match="non-negative"):
        tf.special.polygamma(1.5, tf.tensor([1.0]))
