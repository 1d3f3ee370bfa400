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


# --------------------------------------------- gamma family, incomplete functions, Bessel
# name: (tenferro, SciPy, inputs)
MORE = {
    "gamma": (tf.special.gamma, sp.gamma, "wide"),
    "rgamma": (tf.special.rgamma, sp.rgamma, "wide"),
    "gammasgn": (tf.special.gammasgn, sp.gammasgn, "wide"),
    "psi": (tf.special.psi, sp.psi, "pos"),
    "erfcinv": (tf.special.erfcinv, sp.erfcinv, "zero_two"),
    "j0": (tf.special.j0, sp.j0, "any"),
    "j1": (tf.special.j1, sp.j1, "any"),
    "jn3": (lambda x: tf.special.jn(3, x), lambda x: sp.jn(3, x), "any"),
    "jn-2": (lambda x: tf.special.jn(-2, x), lambda x: sp.jn(-2, x), "any"),
    "y0": (tf.special.y0, sp.y0, "pos"),
    "y1": (tf.special.y1, sp.y1, "pos"),
    "yn4": (lambda x: tf.special.yn(4, x), lambda x: sp.yn(4, x), "pos"),
    "i0": (tf.special.i0, sp.i0, "any"),
    "i1": (tf.special.i1, sp.i1, "any"),
    "iv2.5": (lambda x: tf.special.iv(2.5, x), lambda x: sp.iv(2.5, x), "pos"),
    "iv-1.5": (lambda x: tf.special.iv(-1.5, x), lambda x: sp.iv(-1.5, x), "pos"),
    "ive0.5": (lambda x: tf.special.ive(0.5, x), lambda x: sp.ive(0.5, x), "pos"),
    "ive1": (lambda x: tf.special.ive(1, x), lambda x: sp.ive(1, x), "any"),
    "multigammaln3": (lambda x: tf.special.multigammaln(x, 3),
                      lambda x: sp.multigammaln(x, 3), "gt1"),
}


def _more_inputs(rng, kind):
    if kind == "wide":  # both signs, away from the poles, and large arguments
        return np.concatenate([sample(rng, (8,)) * 3 + 0.25, [0.5, 30.5, 150.3, 171.5]])
    if kind == "zero_two":
        return np.concatenate([1 + sample(rng, (8,), domain="unit"), [1e-300, 1e-20, 2 - 1e-12]])
    if kind == "gt1":
        return sample(rng, (8,), domain="gt1") + 0.5
    return sample(rng, (8,), domain=kind) * (5 if kind == "any" else 3)


@pytest.mark.parametrize("name", list(MORE))
def test_more_values_match_scipy(name, rng):
    f, g, kind = MORE[name]
    x = _more_inputs(rng, kind)
    assert_matches_numpy(f, g, x, rtol=1e-14, atol=0)


@pytest.mark.parametrize("name", [n for n in MORE if n != "gammasgn"])
def test_more_derivatives_match_finite_differences(name, rng):
    f, _, kind = MORE[name]
    x = _more_inputs(rng, kind)[:6]
    if kind == "wide":
        x = np.abs(x) % 5 + 0.3  # FD steps stay away from the poles
    check_grads(f, (tf.tensor(x),), order=2, rtol=1e-5, atol=1e-7)


def test_more_derivatives_match_closed_forms(rng):
    x = sample(rng, (6,), domain="pos") * 3
    u = 1.5 * x.max()  # x / u in (0, 1)
    cases = [
        (tf.special.gamma, sp.gamma(x) * sp.digamma(x)),
        (tf.special.rgamma, -sp.digamma(x) * sp.rgamma(x)),
        (tf.special.j0, -sp.j1(x)),
        (tf.special.j1, (sp.j0(x) - sp.jv(2, x)) / 2),
        (lambda t: tf.special.jn(5, t), (sp.jv(4, x) - sp.jv(6, x)) / 2),
        (tf.special.y0, -sp.y1(x)),
        (lambda t: tf.special.yn(3, t), (sp.yn(2, x) - sp.yn(4, x)) / 2),
        (tf.special.i0, sp.i1(x)),
        (lambda t: tf.special.iv(0.7, t), (sp.iv(-0.3, x) + sp.iv(1.7, x)) / 2),
        (lambda t: tf.special.ive(0.7, t), (sp.ive(-0.3, x) + sp.ive(1.7, x)) / 2
         - sp.ive(0.7, x)),
        (lambda t: tf.special.erfcinv(t / u), -np.sqrt(np.pi) / (2 * u) * np.exp(
            sp.erfcinv(x / u) ** 2)),
        (lambda t: tf.special.gammainc(2.5, t), x**1.5 * np.exp(-x) / sp.gamma(2.5)),
        (lambda t: tf.special.gammaincc(2.5, t), -x**1.5 * np.exp(-x) / sp.gamma(2.5)),
        (lambda t: tf.special.betainc(2.5, 0.7, t / u),
         (x / u) ** 1.5 * (1 - x / u) ** -0.3 / sp.beta(2.5, 0.7) / u),
        (lambda t: tf.special.betaincc(2.5, 0.7, t / u),
         -(x / u) ** 1.5 * (1 - x / u) ** -0.3 / sp.beta(2.5, 0.7) / u),
        (lambda t: tf.special.betaln(t, 1.3), sp.digamma(x) - sp.digamma(x + 1.3)),
        (lambda t: tf.special.beta(1.3, t), sp.beta(1.3, x) * (sp.digamma(x)
                                                              - sp.digamma(x + 1.3))),
        (lambda t: tf.special.multigammaln(t + 1, 2), sp.digamma(x + 1) + sp.digamma(x + 0.5)),
    ]
    for i, (f, d) in enumerate(cases):
        g = tf.grad(lambda t, f=f: tf.sum(f(t)))(tf.tensor(x))
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-12, err_msg=str(i))


def test_two_and_three_argument_functions_broadcast_and_match_scipy(rng):
    a = sample(rng, (3, 1), domain="pos") * 2
    b = sample(rng, (1, 4), domain="pos") * 2
    x = sample(rng, (3, 4), domain="pos")
    u = 1 / (1 + np.exp(-sample(rng, (4,))))
    assert_matches_numpy(tf.special.beta, sp.beta, a, b, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.betaln, sp.betaln, a, b, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.gammainc, sp.gammainc, a, x, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.gammaincc, sp.gammaincc, a, x, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.betainc, sp.betainc, a, b, u, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.betaincc, sp.betaincc, a, b, u, rtol=1e-14, atol=0)
    assert_matches_numpy(tf.special.xlog1py, sp.xlog1py, x - 1, u - 0.5, rtol=1e-14, atol=0)
    # betaln (SciPy's) stays accurate where gammaln(a) + gammaln(b) - gammaln(a + b) cancels
    # (the difference is off by 5e-9 here)
    np.testing.assert_allclose(tf.special.betaln(1e8, 2.5).item(), sp.betaln(1e8, 2.5),
                               rtol=1e-14)
    # Python numbers and integers work, as in SciPy
    assert tf.special.gammainc(2, 3).item() == pytest.approx(sp.gammainc(2, 3), rel=1e-15)


def test_incomplete_functions_have_no_derivative_in_their_shape_parameters():
    from tenferro.errors import GradientError

    with pytest.raises(GradientError, match="gammainc.*'a'.*not implemented.*'x'"):
        tf.grad(lambda a: tf.special.gammainc(a, 2.0))(tf.tensor(1.5))
    with pytest.raises(GradientError, match="betainc.*'b'"):
        tf.grad(lambda b: tf.special.betainc(2.0, b, 0.3))(tf.tensor(1.5))
    with pytest.raises(GradientError, match="gammaincc.*'a'"):
        tf.jit(tf.grad(lambda a: tf.special.gammaincc(a, 2.0)))(tf.tensor(1.5))
    # the derivative in x works with the shape parameter held constant (also a tensor)
    g = tf.grad(lambda x, a: tf.special.gammainc(a, x))(tf.tensor(2.0), tf.tensor(1.5))
    assert g.item() == pytest.approx(2.0**0.5 * np.exp(-2.0) / sp.gamma(1.5), rel=1e-14)


def test_more_special_values_at_the_edges():
    x = np.array([0.0, -0.0, -1.0, -2.0, 1e-300, np.inf, -np.inf, np.nan])
    with np.errstate(all="ignore"):
        for f, g in ((tf.special.gamma, sp.gamma), (tf.special.rgamma, sp.rgamma),
                     (tf.special.gammasgn, sp.gammasgn)):
            np.testing.assert_array_equal(f(tf.tensor(x)).numpy(), g(x))
    np.testing.assert_array_equal(tf.special.erfcinv(tf.tensor([0.0, 2.0, 1.0, 3.0])).numpy(),
                                  [np.inf, -np.inf, 0.0, np.nan])


def test_more_special_functions_keep_devices_and_check_orders():
    x = tf.tensor([0.3, 1.5], device="strict:1")  # computed on the host, copied back
    for f, g in ((tf.special.j1, sp.j1), (lambda t: tf.special.iv(1.5, t), lambda t: sp.iv(
            1.5, t)), (lambda t: tf.special.betainc(2.0, 3.0, t / 2),
                       lambda t: sp.betainc(2.0, 3.0, t / 2))):
        out = f(x)
        assert out.device == "strict:1"
        np.testing.assert_allclose(out.numpy(), g(np.array([0.3, 1.5])), rtol=1e-15)
    g = tf.grad(lambda t: tf.sum(tf.special.yn(2, t)))(x)
    assert g.device == "strict:1"
    np.testing.assert_allclose(g.numpy(), (sp.y1([0.3, 1.5]) - sp.yn(3, [0.3, 1.5])) / 2,
                               rtol=1e-14)
    with pytest.raises(ShapeError, match="jn: the order must be a Python int"):
        tf.special.jn(1.5, x)
    with pytest.raises(ShapeError, match="iv: the order must be a Python real"):
        tf.special.iv(tf.tensor(1.0), x)
    with pytest.raises(ShapeError, match="multigammaln: the dimension"):
        tf.special.multigammaln(x, 0)
    with pytest.raises(DTypeError, match="betainc: complex"):
        tf.special.betainc(1.0, 2.0, tf.tensor([0.5 + 0j]))
    with pytest.raises(DTypeError, match="gamma: complex"):
        tf.special.gamma(tf.tensor([0.5 + 0j]))
    # multigammaln is nan where SciPy raises (a <= (d - 1) / 2)
    assert np.isnan(tf.special.multigammaln(tf.tensor(0.9), 3).item())
