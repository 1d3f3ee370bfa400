"""tenferro.optim: trajectories against torch.optim (real and complex parameters, 1e-12),
closed-form first steps, convergence, parameter groups and state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tenferro import optim
from tenferro.errors import GradientError
from tests import skips
from tests.nn._util import assert_close

RNG = np.random.default_rng(11)
A0 = RNG.standard_normal((4, 3)) + 1j * RNG.standard_normal((4, 3))
B0 = RNG.standard_normal(3)
T0 = RNG.standard_normal(4)


def _loss(lib, a, b):
    """A smooth real loss of a complex matrix and a real vector (same code for both)."""
    r = a @ b.to(a.dtype) - lib.tensor(T0).to(a.dtype)
    return (r.real**2 + r.imag**2).sum() + lib.sin(b).sum() + 0.1 * (b**4).sum()


def _run(lib, cls, kw, steps, groups=False):
    a = lib.tensor(A0, requires_grad=True)
    b = lib.tensor(B0, requires_grad=True)
    params = [{"params": [a]}, {"params": [b], "lr": kw["lr"] / 2}] if groups else [a, b]
    opt = cls(params, **kw)
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, a, b).backward()
        opt.step()
    return a, b


CASES = [
    ("SGD", dict(lr=0.02)),
    ("SGD", dict(lr=0.02, momentum=0.9, dampening=0.3, weight_decay=0.05)),
    ("SGD", dict(lr=0.02, momentum=0.8, nesterov=True, maximize=False)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
]


@pytest.mark.numpy_only  # comparisons of numbers; the strict backend runs the tests below
@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
@pytest.mark.parametrize("groups", [False, True])
def test_trajectory_matches_torch(name, kw, groups):
    torch = skips.torch()
    a, b = _run(tf, getattr(optim, name), kw, 25, groups)
    ta, tb = _run(torch, getattr(torch.optim, name), kw, 25, groups)
    assert_close(a, ta, "complex parameter")
    assert_close(b, tb, "real parameter")


def test_first_steps_in_closed_form():
    """Without torch: SGD's and Adam's first updates from their formulas; the complex
    gradient of |z - c|^2 is 2 (z - c) (dL/dRe z + i dL/dIm z)."""
    c = np.array([1.0 + 2.0j, -0.5j])
    z0 = np.array([0.3 - 0.1j, 2.0 + 1.0j])
    for make, expected in (
        (lambda p: optim.SGD([p], lr=0.1), z0 - 0.1 * 2 * (z0 - c)),
        (lambda p: optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.5),
         z0 - 0.1 * (2 * (z0 - c) + 0.5 * z0)),
        # Adam, step 1: m/(1-b1) = g, sqrt(v/(1-b2)) = |g| per real component
        (lambda p: optim.Adam([p], lr=0.1, eps=0.0),
         z0 - 0.1 * (np.sign((z0 - c).real) + 1j * np.sign((z0 - c).imag))),
        (lambda p: optim.AdamW([p], lr=0.1, eps=0.0, weight_decay=0.5),
         z0 * (1 - 0.05) - 0.1 * (np.sign((z0 - c).real) + 1j * np.sign((z0 - c).imag))),
    ):
        z = tf.tensor(z0, requires_grad=True)
        opt = make(z)
        tf.sum(tf.abs2(z - tf.tensor(c))).backward()
        opt.step()
        np.testing.assert_allclose(z.detach().numpy(), expected, rtol=1e-14, atol=1e-15)


def test_sgd_momentum_follows_the_heavy_ball_recursion():
    x = tf.tensor([1.0, -2.0], requires_grad=True)
    opt = optim.SGD([x], lr=0.1, momentum=0.5)
    xs, buf = np.array([1.0, -2.0]), None
    for _ in range(4):
        opt.zero_grad()
        tf.sum(x**2).backward()
        opt.step()
        g = 2 * xs
        buf = g if buf is None else 0.5 * buf + g
        xs = xs - 0.1 * buf
    np.testing.assert_allclose(x.detach().numpy(), xs, rtol=1e-15)


def _lbfgs_problem(lib, x, cplx):
    # a smooth, well-conditioned non-quadratic problem (iterates are reproducible at 1e-12)
    re, im2 = (x.real, (x.imag**2).sum()) if cplx else (x, 0.0)
    w = lib.tensor(np.linspace(1.0, 3.0, x.shape[0]))
    return (w * re**2).sum() + im2 + 0.25 * ((re - 1) ** 4).sum() + lib.log(1 + (re**2).sum())


@pytest.mark.numpy_only
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_lbfgs_matches_torch(line_search, dtype):
    torch = skips.torch()
    x0 = np.random.default_rng(3).standard_normal(6) * 2
    if dtype == "complex128":
        x0 = x0 + 1j * np.random.default_rng(4).standard_normal(6)

    def run(lib, cls):
        x = lib.tensor(x0, requires_grad=True)
        opt = cls([x], lr=0.5 if line_search is None else 1.0, max_iter=7, history_size=4,
                  line_search_fn=line_search)

        def closure():
            opt.zero_grad()
            loss = _lbfgs_problem(lib, x, dtype == "complex128")
            loss.backward()
            return loss

        firsts = [float(opt.step(closure).detach()) for _ in range(3)]
        st = opt.state[x] if lib is torch else opt.state[id(x)]
        return x, firsts, st["func_evals"], st["n_iter"]

    x, firsts, evals, iters = run(tf, optim.LBFGS)
    tx, tfirsts, tevals, titers = run(torch, torch.optim.LBFGS)
    assert (evals, iters) == (tevals, titers)
    assert_close(np.array(firsts), np.array(tfirsts), "losses")
    assert_close(x, tx, "iterate")


def test_lbfgs_solves_least_squares_without_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((20, 8))
    b = rng.standard_normal(20)
    x = tf.zeros(8).requires_grad_()
    opt = optim.LBFGS([x], max_iter=100, line_search_fn="strong_wolfe", tolerance_grad=1e-12,
                      tolerance_change=1e-15)

    def closure():
        opt.zero_grad()
        loss = tf.sum((tf.tensor(a) @ x - tf.tensor(b)) ** 2)
        loss.backward()
        return loss

    opt.step(closure)
    # it stops when the loss (about 13.7) changes by less than round-off, with a gradient of
    # ~1e-7; the distance to the minimiser is then at most |g| / (2 sigma_min(a)^2)
    g = np.abs(x.grad.numpy()).max()
    assert g < 1e-6
    bound = 8**0.5 * g / (2 * np.linalg.svd(a, compute_uv=False)[-1] ** 2)
    err = np.linalg.norm(x.detach().numpy() - np.linalg.lstsq(a, b, rcond=None)[0])
    assert err <= bound


def test_state_dict_resumes_the_same_trajectory():
    def make():
        a = tf.tensor(A0, requires_grad=True)
        b = tf.tensor(B0, requires_grad=True)
        return a, b, optim.Adam([a, b], lr=0.05, amsgrad=True)

    def steps(a, b, opt, n):
        for _ in range(n):
            opt.zero_grad()
            _loss(tf, a, b).backward()
            opt.step()

    a, b, opt = make()
    steps(a, b, opt, 10)
    saved = opt.state_dict()
    values = (a.detach().clone(), b.detach().clone())
    steps(a, b, opt, 5)
    a2, b2, opt2 = make()
    with tf.no_grad():
        a2.copy_(values[0])
        b2.copy_(values[1])
    opt2.load_state_dict(saved)
    assert saved["state"][0]["step"] == 10 and saved["param_groups"][0]["params"] == [0, 1]
    steps(a2, b2, opt2, 5)
    np.testing.assert_array_equal(a2.detach().numpy(), a.detach().numpy())
    np.testing.assert_array_equal(b2.detach().numpy(), b.detach().numpy())


def test_zero_grad_groups_and_errors():
    a = tf.ones(2).requires_grad_()
    b = tf.ones(2).requires_grad_()
    opt = optim.SGD([a], lr=0.1)
    opt.add_param_group({"params": [b], "lr": 0.5, "momentum": 0.9})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[0]["momentum"] == 0.0
    tf.sum(a * b).backward()
    opt.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(a.grad.numpy(), 0.0)
    opt.zero_grad()
    assert a.grad is None
    opt.step()  # no gradients: nothing moves
    np.testing.assert_array_equal(a.detach().numpy(), 1.0)
    with pytest.raises(ValueError, match="more than one"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(GradientError, match="leaf"):
        optim.SGD([a * 2], lr=0.1)
    with pytest.raises(ValueError, match="empty"):
        optim.Adam([])
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD([a], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="closure"):
        optim.LBFGS([a]).step(None)
