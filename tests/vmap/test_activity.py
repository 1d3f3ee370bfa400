"""Per-argument activity (Enzyme's Const/Active/Duplicated) for grad, value_and_grad, vjp."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError, ShapeError


def _f(x, a, y):
    return tf.sum(tf.sin(x) * a * y)


@pytest.fixture
def args(rng):
    return tuple(tf.tensor(rng.standard_normal(3)) for _ in range(3))


def test_activity_spec_equals_argnums(args):
    x, a, y = args
    g = tf.grad(_f, activity=("active", "const", "active"))(x, a, y)
    want = tf.grad(_f, argnums=(0, 2))(x, a, y)
    assert isinstance(g, tuple) and len(g) == 2
    for u, v in zip(g, want):
        np.testing.assert_allclose(u.numpy(), v.numpy())
    val, g1 = tf.value_and_grad(_f, activity=("const", "active", "const"))(x, a, y)
    np.testing.assert_allclose(val.numpy(), _f(x, a, y).numpy())
    np.testing.assert_allclose(g1[0].numpy(), (np.sin(x.numpy()) * y.numpy()))


@tf.custom_vjp
def _no_backward(a):
    return a * 2


def _refuse(res, ct):
    raise AssertionError("the backward pass ran for a const argument")


_no_backward.defvjp(lambda a: (_no_backward(a), ()), _refuse)


def test_const_arguments_are_not_differentiated_internally(args):
    """A const input is never watched: its backward rule never runs (here it would raise)."""
    x, a, _ = args
    f = lambda x, a: tf.sum(x * _no_backward(a))  # noqa: E731
    out, pull = tf.vjp(f, x, a, activity=("active", "const"))
    gx, ga = pull(tf.ones_like(out))
    assert ga is None
    np.testing.assert_allclose(gx.numpy(), 2 * a.numpy())
    with pytest.raises(AssertionError, match="backward pass ran"):
        tf.vjp(f, x, a)[1](tf.ones_like(out))


def test_accumulate_into_adds_into_caller_buffers(args):
    x, a, y = args
    bx, by = tf.ones(3), tf.zeros(3)
    g = tf.grad(_f, activity=("active", "const", "active"), accumulate_into=(bx, by))(x, a, y)
    want = tf.grad(_f, argnums=(0, 2))(x, a, y)
    np.testing.assert_allclose(bx.numpy(), 1 + want[0].numpy())
    np.testing.assert_allclose(by.numpy(), want[1].numpy())
    assert g[0] is bx and g[1] is by
    # twice: accumulates (as Enzyme's Duplicated shadow does)
    tf.grad(_f, accumulate_into=bx)(x, a, y)
    np.testing.assert_allclose(bx.numpy(), 1 + 2 * want[0].numpy())
    # pytrees
    buf = {"w": tf.zeros(3)}
    tf.grad(lambda p: tf.sum(p["w"] ** 2), accumulate_into=buf)({"w": x})
    np.testing.assert_allclose(buf["w"].numpy(), 2 * x.numpy())


def test_activity_errors(args):
    x, a, y = args
    with pytest.raises(GradientError, match="one .'active' or 'const'. per argument"):
        tf.grad(_f, activity=("active", "const"))(x, a, y)
    with pytest.raises(GradientError, match="'active' or 'const'"):
        tf.grad(_f, activity=("active", "dup", "const"))(x, a, y)
    with pytest.raises(GradientError, match="no argument"):
        tf.grad(_f, activity=("const",) * 3)(x, a, y)
    with pytest.raises(ShapeError, match="cannot hold"):
        tf.grad(_f, accumulate_into=tf.zeros(4))(x, a, y)
    with pytest.raises(GradientError, match="one buffer"):
        tf.grad(_f, argnums=(0, 1), accumulate_into=(tf.zeros(3),))(x, a, y)


def test_activity_under_jit_and_vmap(args, rng):
    x, a, y = args
    g = tf.grad(_f, activity=("active", "const", "const"))
    want = g(x, a, y)[0].numpy()
    np.testing.assert_allclose(tf.jit(g)(x, a, y)[0].numpy(), want)
    xs = tf.stack([x, 2 * x])
    got = tf.vmap(g, in_axes=(0, None, None))(xs, a, y)[0]
    np.testing.assert_allclose(got.numpy()[0], want)
