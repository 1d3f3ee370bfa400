"""Elementwise NumPy functions: NumPy's values (eager and jit), derivatives against finite
differences (real and complex where NumPy has a complex version), and the documented
conventions at non-differentiable points."""

import math

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError
from tenferro.testing import check_grads
from tests.numpy_api._util import assert_matches_numpy, sample

S = (3, 4)

# name: (tenferro function, NumPy function, domain, complex too?)
UNARY = {
    "arcsin": (tf.arcsin, np.arcsin, "unit", True),
    "asin": (tf.asin, np.asin, "unit", True),
    "arccos": (tf.arccos, np.arccos, "unit", True),
    "acos": (tf.acos, np.acos, "unit", True),
    "arcsinh": (tf.arcsinh, np.arcsinh, "any", True),
    "asinh": (tf.asinh, np.asinh, "any", True),
    "arccosh": (tf.arccosh, np.arccosh, "gt1", True),
    "acosh": (tf.acosh, np.acosh, "gt1", True),
    "arctanh": (tf.arctanh, np.arctanh, "unit", True),
    "atanh": (tf.atanh, np.atanh, "unit", True),
    "deg2rad": (tf.deg2rad, np.deg2rad, "any", False),
    "radians": (tf.radians, np.radians, "any", False),
    "rad2deg": (tf.rad2deg, np.rad2deg, "any", False),
    "degrees": (tf.degrees, np.degrees, "any", False),
    "exp2": (tf.exp2, np.exp2, "any", True),
    "log2": (tf.log2, np.log2, "pos", True),
    "log10": (tf.log10, np.log10, "pos", True),
    "sinc": (tf.sinc, np.sinc, "any", True),
    "fabs": (tf.fabs, np.fabs, "any", False),
    "floor": (tf.floor, np.floor, "any", False),
    "ceil": (tf.ceil, np.ceil, "any", False),
    "trunc": (tf.trunc, np.trunc, "any", False),
    "round": (tf.round, np.round, "any", False),
    "round_2": (lambda x: tf.round(x, 2), lambda x: np.round(x, 2), "any", False),
    "round_-1": (lambda x: tf.round(10 * x, -1), lambda x: np.round(10 * x, -1), "any", False),
    "nan_to_num": (tf.nan_to_num, np.nan_to_num, "any", True),
}

BINARY = {
    "logaddexp": (tf.logaddexp, np.logaddexp, "any", "any"),
    "logaddexp2": (tf.logaddexp2, np.logaddexp2, "any", "any"),
    "hypot": (tf.hypot, np.hypot, "any", "any"),
    "fmax": (tf.fmax, np.fmax, "any", "any"),
    "fmin": (tf.fmin, np.fmin, "any", "any"),
    "mod": (tf.mod, np.mod, "any", "pos"),
    "remainder": (tf.remainder, np.remainder, "any", "pos"),
    "remainder_negative_divisor": (lambda x, y: tf.remainder(x, -y),
                                   lambda x, y: np.remainder(x, -y), "any", "pos"),
    "fmod": (tf.fmod, np.fmod, "any", "pos"),
    "fmod_negative_divisor": (lambda x, y: tf.fmod(x, -y), lambda x, y: np.fmod(x, -y),
                              "any", "pos"),
    "floor_divide": (tf.floor_divide, np.floor_divide, "any", "pos"),
    "operator_mod": (lambda x, y: x % y, lambda x, y: x % y, "any", "pos"),
    "operator_rmod": (lambda x, y: 2.5 % y, lambda x, y: 2.5 % y, "any", "pos"),
    "operator_floordiv": (lambda x, y: x // y, lambda x, y: x // y, "any", "pos"),
    "operator_rfloordiv": (lambda x, y: 2.5 // y, lambda x, y: 2.5 // y, "any", "pos"),
}


def _unary_cases():
    for name, (f, g, dom, cplx) in UNARY.items():
        yield pytest.param(f, g, dom, "float64", id=f"{name}-f64")
        if cplx:
            yield pytest.param(f, g, dom, "complex128", id=f"{name}-c128")


@pytest.mark.parametrize("f,g,domain,dtype", list(_unary_cases()))
def test_unary_values(f, g, domain, dtype, rng):
    assert_matches_numpy(f, g, sample(rng, S, dtype, domain))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values(name, rng):
    f, g, d1, d2 = BINARY[name]
    assert_matches_numpy(f, g, sample(rng, S, domain=d1), sample(rng, S, domain=d2))


DIFFERENTIABLE = [n for n in UNARY if n not in ("floor", "ceil", "trunc", "round", "round_2",
                                                 "round_-1")]


def _grad_cases():
    for name in DIFFERENTIABLE:
        f, _, dom, cplx = UNARY[name]
        yield pytest.param(f, dom, "float64", id=f"{name}-f64")
        if cplx:
            yield pytest.param(f, dom, "complex128", id=f"{name}-c128")


@pytest.mark.parametrize("f,domain,dtype", list(_grad_cases()))
def test_unary_derivatives_match_finite_differences(f, domain, dtype, rng):
    check_grads(f, (tf.tensor(sample(rng, S, dtype, domain)),))


@pytest.mark.parametrize("name", sorted(set(BINARY) - {"floor_divide", "operator_floordiv",
                                                        "operator_rfloordiv"}))
def test_binary_derivatives_match_finite_differences(name, rng):
    f, _, d1, d2 = BINARY[name]
    check_grads(f, (tf.tensor(sample(rng, S, domain=d1)), tf.tensor(sample(rng, S, domain=d2))))


# ------------------------------------------------------------- integer and special input
def test_integer_inputs_follow_numpy():
    i = np.array([-7, -3, 0, 4, 9])
    for f, g in [(tf.floor, np.floor), (tf.ceil, np.ceil), (tf.trunc, np.trunc),
                 (tf.round, np.round), (lambda x: tf.round(x, -1), lambda x: np.round(x, -1))]:
        out = f(tf.tensor(i))
        assert out.dtype == g(i).dtype
        np.testing.assert_array_equal(out.numpy(), g(i))
    for f, g in [(tf.mod, np.mod), (tf.fmod, np.fmod), (tf.floor_divide, np.floor_divide)]:
        out = f(tf.tensor(i), tf.tensor(np.array([3, -2, 5, 3, -4])))
        ref = g(i, np.array([3, -2, 5, 3, -4]))
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(out.numpy(), ref)
    np.testing.assert_allclose(tf.exp2(tf.tensor(i)).numpy(), np.exp2(i), rtol=0)
    np.testing.assert_array_equal(tf.log2(tf.tensor([1, 2, 1024])).numpy(), [0.0, 1.0, 10.0])


def test_round_complex_rounds_both_parts():
    z = np.array([1.5 + 2.5j, -0.5 - 1.26j])
    np.testing.assert_array_equal(tf.round(tf.tensor(z)).numpy(), np.round(z))
    np.testing.assert_array_equal(tf.round(tf.tensor(z), 1).numpy(), np.round(z, 1))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own inf - inf
def test_nan_and_inf_handling():
    x = np.array([np.nan, np.inf, -np.inf, 1.5, np.nan])
    y = np.array([2.0, np.nan, 1.0, np.nan, np.nan])
    for f, g in [(tf.fmax, np.fmax), (tf.fmin, np.fmin), (tf.hypot, np.hypot),
                 (tf.logaddexp, np.logaddexp)]:
        np.testing.assert_array_equal(f(tf.tensor(x), tf.tensor(y)).numpy(), g(x, y))
    np.testing.assert_array_equal(tf.nan_to_num(tf.tensor(x)).numpy(), np.nan_to_num(x))
    kw = dict(nan=-1.0, posinf=7.0, neginf=-7.0)
    np.testing.assert_array_equal(tf.nan_to_num(tf.tensor(x), **kw).numpy(),
                                  np.nan_to_num(x, **kw))
    z = x + 1j * y
    np.testing.assert_array_equal(tf.nan_to_num(tf.tensor(z)).numpy(), np.nan_to_num(z))
    big = np.array([1e300, -1e300, 1e-300])
    np.testing.assert_allclose(tf.hypot(tf.tensor(big), tf.tensor(big)).numpy(),
                               np.hypot(big, big), rtol=1e-15)
    np.testing.assert_allclose(tf.logaddexp(tf.tensor([1000.0, -np.inf]),
                                            tf.tensor([1000.0, -np.inf])).numpy(),
                               np.logaddexp([1000.0, -np.inf], [1000.0, -np.inf]))


# ----------------------------------------------------------------------- conventions
def test_rounding_has_zero_derivative_everywhere():
    x = tf.tensor([-1.5, -0.5, 0.0, 0.5, 2.0, 2.7])  # halves, integers and ordinary points
    for f in (tf.floor, tf.ceil, tf.trunc, tf.round, lambda t: tf.round(t, 1),
              lambda t: t // 0.7):
        g = tf.grad(lambda t, f=f: tf.sum(f(t) * t))(x)
        np.testing.assert_array_equal(g.numpy(), f(x).numpy())  # d/dt f(t) t = f(t) + 0


def test_remainder_derivatives_are_those_of_the_piece():
    x = tf.tensor([5.5, -5.5, 4.0, -4.0])
    y = tf.tensor([2.0, 2.0, 2.0, 2.0])  # x = 4: exactly at a jump
    gx, gy = tf.grad(lambda a, b: tf.sum(tf.mod(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), -np.floor_divide(x.numpy(), y.numpy()))
    gx, gy = tf.grad(lambda a, b: tf.sum(tf.fmod(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx.numpy(), [1.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gy.numpy(), -np.trunc(x.numpy() / y.numpy()))


def test_sinc_derivatives_at_zero():
    z = tf.tensor(0.0)
    assert tf.sinc(z).item() == 1.0
    assert tf.grad(tf.sinc)(z).item() == 0.0
    d2 = tf.grad(tf.grad(tf.sinc))(z).item()
    assert abs(d2 + math.pi**2 / 3) < 1e-12
    # the Taylor branch and the sin(pi x)/(pi x) branch agree at the switch
    for x in (0.2499999, 0.25):
        np.testing.assert_allclose(tf.sinc(tf.tensor(x)).item(), np.sinc(x), rtol=1e-15)


def test_hypot_gradient_at_origin_is_zero():
    g = tf.grad(lambda a, b: tf.hypot(a, b), argnums=(0, 1))(tf.tensor(0.0), tf.tensor(0.0))
    assert [t.item() for t in g] == [0.0, 0.0]


def test_logaddexp_tie_splits_the_derivative():
    g = tf.grad(lambda a, b: tf.logaddexp(a, b), argnums=(0, 1))(tf.tensor(1.0), tf.tensor(1.0))
    assert [t.item() for t in g] == [0.5, 0.5]


def test_fmax_gives_the_whole_derivative_to_the_number_next_to_a_nan():
    x, y = tf.tensor([np.nan, 1.0, 2.0]), tf.tensor([3.0, np.nan, 2.0])
    gx, gy = tf.grad(lambda a, b: tf.sum(tf.fmax(a, b)), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx.numpy(), [0.0, 1.0, 0.5])
    np.testing.assert_array_equal(gy.numpy(), [1.0, 0.0, 0.5])


def test_nan_to_num_derivative_is_zero_where_replaced():
    x = tf.tensor([np.nan, 2.0, np.inf])
    g = tf.grad(lambda t: tf.sum(tf.nan_to_num(t, posinf=5.0) * 3))(x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 3.0, 0.0])


def test_inverse_trig_derivatives_match_closed_forms(rng):
    x = sample(rng, (5,), domain="unit")
    for f, d in [(tf.arcsin, 1 / np.sqrt(1 - x**2)), (tf.arccos, -1 / np.sqrt(1 - x**2)),
                 (tf.arctanh, 1 / (1 - x**2)), (tf.arcsinh, 1 / np.sqrt(1 + x**2))]:
        g = tf.grad(lambda t, f=f: tf.sum(f(t)))(tf.tensor(x))
        np.testing.assert_allclose(g.numpy(), d, rtol=1e-13)


# ---------------------------------------------------------------------------- clip
def test_clip_has_numpys_signature():
    x = np.linspace(-2, 2, 9)
    t = tf.tensor(x)
    np.testing.assert_array_equal(tf.clip(t, -1, 1).numpy(), np.clip(x, -1, 1))
    np.testing.assert_array_equal(tf.clip(t, a_min=-1, a_max=None).numpy(),
                                  np.clip(x, -1, None))
    np.testing.assert_array_equal(tf.clip(t, min=0.5).numpy(), np.clip(x, min=0.5))
    np.testing.assert_array_equal(t.clip(-0.5, 0.5).numpy(), np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(tf.clip(t, max=0.5).numpy(), np.clip(x, max=0.5))
    with pytest.raises(TypeError, match="once"):
        tf.clip(t, 0, 1, a_min=0)


# ---------------------------------------------------------------------------- errors
@pytest.mark.parametrize("f", [tf.floor, tf.ceil, tf.trunc, tf.fabs, lambda z: tf.hypot(z, z),
                               lambda z: tf.mod(z, z),
                               lambda z: tf.fmax(z, z), lambda z: tf.logaddexp(z, z)])
def test_complex_input_raises_where_numpy_has_no_complex_version(f):
    with pytest.raises(DTypeError, match="complex"):
        f(tf.tensor([1.0 + 1.0j]))


@pytest.mark.parametrize("f", [tf.max, tf.min, tf.amax, tf.amin, tf.argmax, tf.argmin,
                               tf.sort, tf.argsort])
def test_extrema_of_complex_input_raise_a_clear_error(f):
    with pytest.raises(DTypeError, match="complex input.*no order.*lexicographic"):
        f(tf.tensor([1.0 + 1.0j, 2.0]))


def test_ravel_method():
    x = tf.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.ravel().numpy(), np.arange(6.0))
