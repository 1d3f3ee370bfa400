"""tenferro.stats: SciPy's values over grids reaching far into the tails (eager and under
``jit``), accurate tails where SciPy itself is checked against mpmath, derivatives in the data
and in the parameters against finite differences (eager and under ``jit``), finite gradients
across every branch, and the named errors."""

import math

import numpy as np
import pytest
import scipy.stats as ss

import tenferro as tf
from tenferro.errors import GradientError, ShapeError
from tenferro.testing import check_grads

X = np.concatenate([np.linspace(-40.0, 40.0, 81), [-1e3, -100.0, -1e-3, 1e-3, 0.5, 1e3]])
POS = np.concatenate([np.linspace(0.25, 50.0, 60), [-1.0, -1e-3, 1e-300, 1e-10, 200.0, 1e3]])
UNIT = np.concatenate([np.linspace(0.025, 0.975, 39), [-0.5, 1.5, 1e-300, 1e-10, 1 - 1e-10]])
COUNTS = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0])
Q = np.concatenate([[1e-300, 1e-100, 1e-20, 1e-5], np.linspace(0.01, 0.99, 11),
                    [1 - 1e-10, 0.0, 1.0, -0.1, 1.5]])

CONT = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")
DISC = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
# name: (points, parameter sets (shape parameters, then loc and scale), functions)
CASES = {
    "norm": (X, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "t": (X, [(1.0,), (3.5, 0.3, 1.7), (150.0,), (0.6,)], CONT),
    "gamma": (POS, [(0.5,), (1.0,), (3.2, 0.3, 1.7), (40.0,)], CONT),
    "chi2": (POS, [(1.0,), (7.0, -0.2, 1.5)], CONT),
    "beta": (UNIT, [(0.5, 0.5), (2.0, 3.5), (2.0, 30.0, 0.1, 0.8), (1.0, 1.0)], CONT),
    "expon": (X, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "laplace": (X, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "logistic": (X, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "uniform": (X / 20, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "cauchy": (X, [(), (0.3, 1.7)], CONT + ("ppf", "isf")),
    "poisson": (COUNTS, [(0.0,), (0.5,), (7.3,), (60.0, 1.0)], DISC),
    "binom": (COUNTS, [(10, 0.3), (100, 0.02), (50, 0.9, 1.0), (5, 0.0), (5, 1.0)], DISC),
    "bernoulli": (COUNTS, [(0.3,), (0.0,), (1.0,)], DISC + ("ppf",)),
}
# SciPy's own errors, measured against mpmath (test_tails_against_mpmath checks ours there):
# binom.logpmf 2e-14 (it does not use betaln), t's cdf near 0 for df = 1 3e-9 (left out of
# the grid), and log-probabilities near 0 that SciPy rounds to 0 (e.g. -3e-17 for
# gamma.logcdf(35.5, 0.5)): an absolute 1e-15 on logs covers those.
# Densities computed as exp(logpdf) carry logpdf's absolute rounding as a relative one
# (|logpdf| up to ~700 here, times eps): rtol 2e-13 on pdf/pmf.
# SciPy's t.logpdf takes the difference of two gammaln values: off by 5.6e-14 at df = 150
# (ours is checked against mpmath at df = 150 and 1e6).
RTOL = {"pdf": 2e-13, "pmf": 2e-13, "logpmf": 5e-14, "t.logpdf": 1e-13}


def _cases():
    for name, (_, _, fns) in CASES.items():
        for fn in fns:
            yield pytest.param(name, fn, id=f"{name}.{fn}")


def _grid(name, fn):
    grid = CASES[name][0]
    if fn in ("ppf", "isf"):
        return Q
    if name == "t":
        return grid[np.abs(grid) > 1e-2]  # see above: SciPy's t near 0 is off by 3e-9
    return grid


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) = -inf outside the support
@pytest.mark.parametrize("name,fn", list(_cases()))
def test_values_match_scipy_eager_and_jit(name, fn):
    ours, theirs = getattr(getattr(tf.stats, name), fn), getattr(getattr(ss, name), fn)
    x = _grid(name, fn)
    for params in CASES[name][1]:
        got = ours(tf.tensor(x), *params)
        with np.errstate(all="ignore"):
            want = theirs(x, *params)
        assert got.dtype == np.float64 and got.shape == want.shape
        # SciPy's laplace takes log(pdf) and log(cdf): -inf once they underflow, where ours
        # is finite (its exact values are checked in test_tails_against_mpmath)
        underflow = np.isneginf(want) & np.isfinite(got.numpy())
        assert (got.numpy()[underflow] < -700).all()
        want = np.where(underflow, got.numpy(), want)
        atol = 1e-15 if fn.startswith("log") else 0.0
        rtol = RTOL.get(f"{name}.{fn}", RTOL.get(fn, 1e-14))
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol,
                                   err_msg=f"{name}.{fn}{params}")
        jitted = tf.jit(lambda t, p=params: ours(t, *p))(tf.tensor(x))
        np.testing.assert_array_equal(jitted.numpy(), got.numpy())


def test_tails_against_mpmath():
    """Where SciPy rounds or loses digits, ours keeps them (checked in 50-digit arithmetic)."""
    mp = pytest.importorskip("mpmath", reason="reference tails: needs mpmath (a SciPy/sympy "
                                              "dependency; pip install mpmath)")
    mp.mp.dps = 50
    # t with df = 1 near 0: 1/2 + atan(x)/pi
    for x in (1e-8, -1e-8, 1e-3, -2.5, 0.0):
        want = float(mp.mpf(1) / 2 + mp.atan(x) / mp.pi)
        assert tf.stats.t.cdf(x, 1.0).item() == pytest.approx(want, rel=2e-16)
        g = tf.grad(lambda u: tf.stats.t.cdf(u, 1.0))(tf.tensor(x))  # the density, also at 0
        assert g.item() == pytest.approx(float(1 / (mp.pi * (1 + mp.mpf(x) ** 2))), rel=1e-15)
    # t for small and huge df, near 0 and in the tails (SciPy is off by up to 3e-11 at df = 1)
    for df, y in ((0.5, 1e-6), (1.0, -1e-5), (1.0, 3e-3), (3.0, -30.0), (1e6, 1e-3),
                  (1e6, -1e-4), (1e6, -3.0)):
        t = mp.mpf(df) / (df + mp.mpf(y) ** 2)
        tail = mp.betainc(mp.mpf(df) / 2, mp.mpf(1) / 2, 0, t, regularized=True) / 2
        want = float(tail if y < 0 else 1 - tail)
        assert tf.stats.t.cdf(y, df).item() == pytest.approx(want, rel=4e-15), (df, y)
    # t's log density at large df: an asymptotic series, not a difference of two gammaln
    # (6.5e6 at df = 1e6)
    for df in (150.0, 1e3, 1e6):
        nu = mp.mpf(df)
        want = float(mp.log(mp.gamma((nu + 1) / 2) / mp.gamma(nu / 2) / mp.sqrt(nu * mp.pi)
                            * (1 + mp.mpf(2.5) ** 2 / nu) ** (-(nu + 1) / 2)))
        assert tf.stats.t.logpdf(2.5, df).item() == pytest.approx(want, rel=2e-15), df
    # laplace's log-probabilities stay finite where SciPy's log(pdf) underflows to -inf
    assert tf.stats.laplace.logpdf(1e3).item() == pytest.approx(-1e3 - math.log(2), rel=1e-15)
    assert tf.stats.laplace.logsf(1e3).item() == pytest.approx(-1e3 - math.log(2), rel=1e-15)
    # log-probabilities next to 0: log(1 - tiny) = -tiny, not 0
    want = float(mp.log(mp.gammainc(0.5, 0, 35.5, regularized=True)))
    assert tf.stats.gamma.logcdf(35.5, 0.5).item() == pytest.approx(want, rel=1e-14)
    want = float(mp.log(1 - mp.exp(-38)))
    assert tf.stats.expon.logcdf(38.0).item() == pytest.approx(want, rel=1e-14)
    # the normal far in the lower tail: log Phi(x) to full precision at -1000 and -30; above
    # 0 it is about -sf(x), whose condition number is x^2: the one rounding of x / sqrt(2)
    # allows x^2 ulp (SciPy's sf rounds the same way)
    for x in (-1000.0, -30.0, -20.0, -5.0, 5.0, 30.0):
        want = float(mp.log(mp.ncdf(x)) if x < 0 else mp.log1p(-mp.ncdf(-x)))
        rel = 2e-15 if x < 0 else 2.2e-16 * x * x
        assert tf.stats.norm.logcdf(x).item() == pytest.approx(want, rel=rel, abs=1e-300)
    # binom.logpmf through betaln
    want = float(mp.log(mp.binomial(100, 3) * mp.mpf("0.02") ** 3 * mp.mpf("0.98") ** 97))
    assert tf.stats.binom.logpmf(3, 100, 0.02).item() == pytest.approx(want, rel=3e-16)
    # the logistic cdf keeps relative precision in its tail (expit would give 0)
    assert tf.stats.logistic.cdf(-40.0).item() == pytest.approx(float(
        1 / (1 + mp.exp(40))), rel=1e-15)


def test_norm_logcdf_and_its_gradient_far_in_the_tail():
    x = tf.tensor([-1e4, -300.0, -37.0, -20.0001, -19.9999, 0.0, 8.0, 40.0])
    got = tf.stats.norm.logcdf(x)
    np.testing.assert_allclose(got.numpy(), ss.norm.logcdf(x.numpy()), rtol=1e-15)
    g = tf.grad(lambda t: tf.sum(tf.stats.norm.logcdf(t)))(x)
    # d/dx log Phi(x) = phi(x) / Phi(x), in 40-digit arithmetic
    mp = pytest.importorskip("mpmath", reason="reference tails: needs mpmath (a SciPy/sympy "
                                              "dependency; pip install mpmath)")
    mp.mp.dps = 40
    want = [float(mp.npdf(v) / mp.ncdf(v)) for v in x.numpy()]
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)
    gj = tf.jit(tf.grad(lambda t: tf.sum(tf.stats.norm.logcdf(t))))(x)
    np.testing.assert_allclose(gj.numpy(), g.numpy(), rtol=1e-15)


# name: function, points, differentiable parameters, constant parameters (for the cdf family
# of t/gamma/chi2/beta/binom the shape parameters have no derivative: they are constants)
GRADS = [
    ("norm", CONT + ("ppf", "isf"), (0.3, 1.7), ()),
    ("t", ("logpdf", "pdf"), (3.5, 0.3, 1.7), ()),
    ("t", ("cdf", "logcdf", "sf", "logsf"), (0.3, 1.7), (3.5,)),
    ("gamma", ("logpdf", "pdf"), (3.2, 0.3, 1.7), ()),
    ("gamma", ("cdf", "logcdf", "sf", "logsf"), (0.3, 1.7), (3.2,)),
    ("chi2", ("logpdf", "pdf"), (4.5, -0.2, 1.5), ()),
    ("chi2", ("cdf", "logcdf", "sf", "logsf"), (-0.2, 1.5), (4.5,)),
    ("beta", ("logpdf", "pdf"), (2.0, 3.5, 0.1, 0.8), ()),
    ("beta", ("cdf", "logcdf", "sf", "logsf"), (0.1, 0.8), (2.0, 3.5)),
    ("expon", CONT + ("ppf", "isf"), (0.3, 1.7), ()),
    ("laplace", CONT + ("ppf", "isf"), (0.3, 1.7), ()),
    ("logistic", CONT + ("ppf", "isf"), (0.3, 1.7), ()),
    ("uniform", ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"), (0.3, 1.7),
     ()),
    ("cauchy", CONT + ("ppf", "isf"), (0.3, 1.7), ()),
]
INTERIOR = {"gamma": [0.9, 2.3, 4.1, 7.7], "chi2": [0.9, 2.3, 4.1, 7.7],
            "beta": [0.2, 0.35, 0.6, 0.85], "expon": [0.9, 2.3, 4.1, 7.7],
            "uniform": [0.5, 0.9, 1.3, 1.8]}


def _grad_cases():
    for name, fns, params, consts in GRADS:
        for fn in fns:
            yield pytest.param(name, fn, params, consts, id=f"{name}.{fn}")


@pytest.mark.parametrize("name,fn,params,consts", list(_grad_cases()))
def test_derivatives_in_data_and_parameters_match_finite_differences(name, fn, params, consts):
    f = getattr(getattr(tf.stats, name), fn)
    if fn in ("ppf", "isf"):
        x = np.array([0.05, 0.3, 0.6, 0.9])
    else:
        x = np.array(INTERIOR.get(name, [-2.7, -0.4, 1.1, 3.3]))
    args = (tf.tensor(x),) + tuple(tf.tensor(p) for p in params)

    def g(x, *ps):
        return f(x, *consts, *ps)

    check_grads(g, args, order=1, rtol=1e-6, atol=1e-9)
    eager = tf.grad(lambda *a: tf.sum(g(*a)), argnums=tuple(range(len(args))))(*args)
    jitted = tf.jit(tf.grad(lambda *a: tf.sum(g(*a)), argnums=tuple(range(len(args)))))(*args)
    for e, j in zip(eager, jitted):
        np.testing.assert_allclose(j.numpy(), e.numpy(), rtol=1e-13)


DISCRETE_GRADS = [
    ("poisson", DISC, (3.7,), ()),
    ("binom", DISC, (0.3,), (20.0,)),
    ("bernoulli", ("logpmf", "pmf", "cdf", "logcdf", "sf"), (0.3,), ()),  # logsf(1) = -inf
]


@pytest.mark.parametrize("name,fns,params,consts", DISCRETE_GRADS, ids=lambda v: str(v)[:20])
def test_discrete_derivatives_in_the_parameters(name, fns, params, consts):
    k = tf.tensor([0.0, 1.0, 3.0, 7.0]) if name != "bernoulli" else tf.tensor([0.0, 1.0])
    for fn in fns:
        f = getattr(getattr(tf.stats, name), fn)
        check_grads(lambda *p, f=f: f(k, *consts, *p), tuple(tf.tensor(p) for p in params),
                    order=1, rtol=1e-6, atol=1e-9)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0) = -inf outside the support
@pytest.mark.parametrize("name,fn", [(n, f) for n, (_, _, fs) in CASES.items() for f in fs
                                     if f not in ("ppf", "isf")])
def test_gradients_are_finite_across_every_branch(name, fn):
    """The branches ``where`` discards get safe inputs: no nan leaks into the gradient."""
    f = getattr(getattr(tf.stats, name), fn)
    grid = _grid(name, fn)
    grid = grid[(np.abs(grid) < 500) & (np.abs(grid) > 1e-200)]
    if name in ("gamma", "chi2", "expon", "beta", "uniform"):  # not at the support's ends
        grid = grid[(grid != 0) & (np.abs(grid - 1) > 1e-6)]
    params = CASES[name][1][1 if len(CASES[name][1]) > 1 else 0]
    x = tf.tensor(grid)
    with np.errstate(all="ignore"):
        out = f(x, *params).numpy()
    g = tf.grad(lambda t: tf.sum(tf.where(tf.isfinite(f(t, *params)), f(t, *params), 0.0)))(x)
    assert np.isfinite(g.numpy()[np.isfinite(out)]).all(), (name, fn)


def test_shape_parameters_of_the_cdf_family_raise_a_named_error():
    with pytest.raises(GradientError, match="gammainc.*'a'"):
        tf.grad(lambda a: tf.stats.gamma.cdf(2.0, a))(tf.tensor(1.5))
    with pytest.raises(GradientError, match="betainc.*'a'"):
        tf.grad(lambda df: tf.stats.t.sf(2.0, df))(tf.tensor(3.0))
    with pytest.raises(GradientError, match="betainc.*'b'"):
        tf.jit(tf.grad(lambda b: tf.stats.beta.cdf(0.3, 2.0, b)))(tf.tensor(3.0))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_invalid_parameters_give_nan_as_scipy():
    for f, g, args in (
        (tf.stats.norm.logpdf, ss.norm.logpdf, (0.5, 0.0, -1.0)),
        (tf.stats.gamma.cdf, ss.gamma.cdf, (0.5, -1.0)),
        (tf.stats.t.logpdf, ss.t.logpdf, (0.5, 0.0)),
        (tf.stats.beta.sf, ss.beta.sf, (0.5, 1.0, -2.0)),
        (tf.stats.poisson.logpmf, ss.poisson.logpmf, (1.0, -0.5)),
        (tf.stats.binom.pmf, ss.binom.pmf, (1.0, 5.0, 1.5)),
        (tf.stats.expon.ppf, ss.expon.ppf, (1.5,)),
        (tf.stats.bernoulli.ppf, ss.bernoulli.ppf, (-0.1, 0.3)),
    ):
        assert np.isnan(f(*args).item()) and np.isnan(g(*args)), f


def test_arguments_broadcast_like_scipy(rng):
    x = rng.standard_normal((3, 1))
    loc = rng.standard_normal((4,))
    scale = np.abs(rng.standard_normal((2, 1, 1))) + 0.5
    got = tf.stats.norm.logpdf(tf.tensor(x), tf.tensor(loc), tf.tensor(scale))
    np.testing.assert_allclose(got.numpy(), ss.norm.logpdf(x, loc, scale), rtol=1e-14)
    got = tf.stats.gamma.logpdf(2.0, np.array([1.0, 2.5]), scale=3)  # plain numbers too
    np.testing.assert_allclose(got.numpy(), ss.gamma.logpdf(2.0, [1.0, 2.5], scale=3),
                               rtol=1e-14)
    assert tf.stats.poisson.pmf(np.arange(4), 2).dtype == np.float64  # integers promote


# ------------------------------------------------------------- multivariate distributions
def _spd(rng, d):
    a = rng.standard_normal((d, d))
    return a @ a.T + d * np.eye(d)


def test_multivariate_normal_matches_scipy(rng):
    d = 3
    mean, cov = rng.standard_normal(d), _spd(rng, d)
    for x in (rng.standard_normal(d), rng.standard_normal((5, d)),
              rng.standard_normal((2, 4, d))):
        for m, c in ((mean, cov), (None, cov), (mean, np.diag(cov)), (mean, 0.7)):
            got = tf.stats.multivariate_normal.logpdf(x, m, c)
            want = ss.multivariate_normal.logpdf(x, m, c)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
            np.testing.assert_allclose(tf.stats.multivariate_normal.pdf(x, m, c).numpy(),
                                       ss.multivariate_normal.pdf(x, m, c), rtol=1e-13)
    # one dimension: a vector is a list of points
    x1 = rng.standard_normal(6)
    np.testing.assert_allclose(tf.stats.multivariate_normal.logpdf(x1, 0.2, 1.3).numpy(),
                               ss.multivariate_normal.logpdf(x1, 0.2, 1.3), rtol=1e-14)
    got = tf.jit(lambda t: tf.stats.multivariate_normal.logpdf(t, mean, cov))(
        tf.tensor(x1[:3]))
    np.testing.assert_allclose(got.numpy(), ss.multivariate_normal.logpdf(x1[:3], mean, cov),
                               rtol=1e-13)


def test_multivariate_normal_derivatives(rng):
    d = 3
    x, mean = rng.standard_normal((4, d)), rng.standard_normal(d)
    a = rng.standard_normal((d, d))

    def f(x, mean, a):
        cov = a @ a.T + d * tf.eye(d)  # a symmetric positive definite parametrization
        return tf.stats.multivariate_normal.logpdf(x, mean, cov)

    check_grads(f, (tf.tensor(x), tf.tensor(mean), tf.tensor(a)), order=1, rtol=1e-6)
    gx = tf.grad(lambda t: tf.sum(f(t, tf.tensor(mean), tf.tensor(a))))(tf.tensor(x))
    cov = a @ a.T + d * np.eye(d)
    np.testing.assert_allclose(gx.numpy(), -np.linalg.solve(cov, (x - mean).T).T, rtol=1e-12)
    with pytest.raises(ShapeError, match="multivariate_normal.logpdf: x"):
        tf.stats.multivariate_normal.logpdf(np.zeros((2, 4)), mean, cov)
    with pytest.raises(ShapeError, match="one dimension"):
        tf.stats.multivariate_normal.logpdf(np.zeros(3), np.zeros(3), np.eye(2))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        tf.stats.multivariate_normal.logpdf(np.zeros(3), None, np.eye(3), allow_singular=True)


def test_dirichlet_matches_scipy_with_derivatives(rng):
    alpha = np.array([0.7, 2.0, 3.5, 1.2])
    x = rng.dirichlet(alpha, size=5).T  # components along the first axis, as SciPy
    for xs in (x, x[:, 0], x[:-1]):
        np.testing.assert_allclose(tf.stats.dirichlet.logpdf(xs, alpha).numpy(),
                                   ss.dirichlet.logpdf(xs, alpha), rtol=1e-13)
        np.testing.assert_allclose(tf.stats.dirichlet.pdf(xs, alpha).numpy(),
                                   ss.dirichlet.pdf(xs, alpha), rtol=1e-13)
    check_grads(lambda t, a: tf.stats.dirichlet.logpdf(t, a), (tf.tensor(x),
                                                               tf.tensor(alpha)), rtol=1e-6)
    ga = tf.jit(tf.grad(lambda a: tf.sum(tf.stats.dirichlet.logpdf(x, a))))(tf.tensor(alpha))
    from scipy.special import digamma

    want = np.log(x).sum(1) - 5 * (digamma(alpha) - digamma(alpha.sum()))
    np.testing.assert_allclose(ga.numpy(), want, rtol=1e-12)
    with pytest.raises(ShapeError, match="dirichlet.logpdf: x"):
        tf.stats.dirichlet.logpdf(np.ones((2, 3)) / 2, alpha)


def test_ppf_inverts_cdf():
    q = tf.tensor([1e-30, 1e-5, 0.2, 0.5, 0.9, 1 - 1e-9])
    for name in ("norm", "expon", "laplace", "logistic", "cauchy", "uniform"):
        d = getattr(tf.stats, name)  # loc = 0: a loc would absorb the tiny quantiles
        if name == "uniform":
            q = q[1:]  # uniform.isf(1e-30) = scale (1 - 1e-30) rounds to scale
        np.testing.assert_allclose(d.cdf(d.ppf(q, 0.0, 1.7), 0.0, 1.7).numpy(), q.numpy(),
                                   rtol=1e-9, err_msg=name)
        np.testing.assert_allclose(d.sf(d.isf(q, 0.0, 1.7), 0.0, 1.7).numpy(), q.numpy(),
                                   rtol=1e-9, err_msg=name)
    assert math.isinf(tf.stats.norm.ppf(0.0).item())
