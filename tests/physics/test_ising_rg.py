"""TRG and HOTRG for the 2D Ising model against Onsager's exact solution, differentiated to
second order. The chi=24 accuracy runs are marked slow; fast versions run by default."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.tn import BETA_C, exact, hotrg, ising_tensor, trg

pytestmark = pytest.mark.numpy_only  # physics runs: once, on the default backend

RG = {"trg": trg, "hotrg": hotrg}


def lnz(algo, chi, steps):
    return lambda b: RG[algo](ising_tensor(b), chi, steps, progress=False)


def test_exact_references_are_self_consistent():
    for b in (0.3, 0.4, 0.5, 0.6):
        h = 1e-4
        f = exact.onsager_lnz
        d1 = (f(b + h) - f(b - h)) / (2 * h)
        d2 = (f(b + h) - 2 * f(b) + f(b - h)) / h**2
        assert abs(-d1 - exact.onsager_energy(b)) < 1e-7
        assert abs(b * b * d2 - exact.onsager_specific_heat(b)) < 1e-5
    assert abs(exact.onsager_lnz(0.4) - exact.onsager_lnz_double_integral(0.4)) < 1e-12


def test_ising_tensor_gives_exact_small_torus():
    """A 1x1 torus of T is the 1-site Ising model with two self-bonds: Z = sum_s e^{2 beta}."""
    from tenferro._src.tn.ising import trace_torus

    b = 0.37
    assert np.isclose(trace_torus(ising_tensor(b)).item(), 2 * np.exp(2 * b))
    # with a field: Z = e^{2b} (e^{bh} + e^{-bh})
    z = trace_torus(ising_tensor(b, h=0.3)).item()
    assert np.isclose(z, np.exp(2 * b) * 2 * np.cosh(b * 0.3))


@pytest.mark.parametrize("algo,chi,tol", [("trg", 12, 3e-5), ("hotrg", 12, 1.5e-6)])
def test_lnz_fast(algo, chi, tol):
    """Fast version at chi=12 (measured relative errors at beta = 0.40, 0.45, 0.50: TRG 4.5e-6,
    1.4e-5, 6.4e-7; HOTRG 1.3e-7, 1.5e-7, 5.9e-7); chi=24 runs are marked slow."""
    for b in (0.40, 0.45, 0.50):
        v = lnz(algo, chi, 20)(tf.tensor(b)).item()
        assert abs(v - exact.onsager_lnz(b)) / exact.onsager_lnz(b) < tol, (b, v)


@pytest.mark.slow
@pytest.mark.parametrize("algo,tol", [("trg", 2e-6), ("hotrg", 5e-7)])
def test_lnz_chi24_against_onsager(algo, tol):
    for b in (0.40, 0.45, 0.50):
        v = lnz(algo, 24, 30)(tf.tensor(b)).item()
        assert abs(v - exact.onsager_lnz(b)) / exact.onsager_lnz(b) < tol, (b, v)


@pytest.mark.parametrize("algo", ["trg", "hotrg"])
def test_energy_by_ad_equals_finite_difference_of_the_algorithm(algo):
    f = lnz(algo, 8, 12)
    for b in (0.40, 0.45):
        g = tf.grad(f)(tf.tensor(b)).item()
        h = 1e-5
        fd = (f(tf.tensor(b + h)).item() - f(tf.tensor(b - h)).item()) / (2 * h)
        assert abs(g - fd) < 1e-7, (b, g, fd)


@pytest.mark.parametrize("algo", ["trg", "hotrg"])
def test_specific_heat_two_second_order_methods(algo):
    f = lnz(algo, 10, 16)
    for b in (0.40, 0.50):
        _, d2 = tf.jvp(tf.grad(f), (tf.tensor(b),), (tf.tensor(1.0),))
        c_fwd = b * b * d2.item()
        bt = tf.tensor(b, requires_grad=True)
        f(bt).backward(create_graph=True)
        g = bt.grad
        bt.grad = None
        g.backward()
        c_rev = b * b * bt.grad.item()
        ex = exact.onsager_specific_heat(b)
        assert abs(c_fwd - ex) / ex < 1e-2, (b, c_fwd, ex)
        assert abs(c_fwd - c_rev) < 1e-8


@pytest.mark.parametrize("algo", ["trg", "hotrg"])
def test_no_nan_on_the_grid_including_tc(algo):
    """The Ising tensor has exactly degenerate and exactly zero singular values; gradients and
    second derivatives through the truncated decompositions must stay finite."""
    f = lnz(algo, 6, 10)
    for b in (0.30, 0.40, BETA_C, 0.45, 0.60):
        v = f(tf.tensor(b))
        g, h = tf.jvp(tf.grad(f), (tf.tensor(b),), (tf.tensor(1.0),))
        assert np.isfinite([v.item(), g.item(), h.item()]).all(), (b, v, g, h)


def test_jit_and_checkpoint_agree_with_eager():
    b = tf.tensor(0.43)
    ref = tf.grad(lnz("trg", 8, 10))(b).item()
    ck = tf.grad(lambda x: trg(ising_tensor(x), 8, 10, checkpoint=True, progress=False))(b)
    assert abs(ck.item() - ref) < 1e-12
    jitted = tf.jit(tf.grad(lnz("trg", 8, 10)))(b)
    assert abs(jitted.item() - ref) < 1e-12
