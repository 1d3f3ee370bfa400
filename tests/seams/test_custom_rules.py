"""Custom derivative rules survive every composition: eager tape, grad, jit in both orders,
forward mode, saved and loaded graphs, and nesting."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError

T = tf.tensor


# f's own operations have the "wrong" derivative on purpose (zero, through stop_gradient);
# only the rule gives the right one, so any mode that differentiates f itself is caught.
@tf.custom_vjp
def square_by_rule(x):
    return tf.stop_gradient(x) * tf.stop_gradient(x)


square_by_rule.defvjp(lambda x: (square_by_rule(x), (x,)),
                      lambda res, ct: (2 * tf.conj(res[0]) * ct,))


@tf.custom_jvp
def cube_by_rule(x):
    return tf.stop_gradient(x) ** 3


@cube_by_rule.defjvp
def _cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return cube_by_rule(x), 3 * x * x * t


def loss_vjp(x):
    return tf.sum(square_by_rule(x) * 1.5)


def loss_jvp(x):
    return tf.sum(cube_by_rule(x))


CASES = [(loss_vjp, lambda x: 3.0 * x), (loss_jvp, lambda x: 3 * x * x)]


@pytest.mark.parametrize("loss,expected", CASES, ids=["custom_vjp", "custom_jvp"])
def test_every_reverse_mode_route_uses_the_rule(loss, expected):
    x = T([0.5, -1.25])
    want = expected(x.numpy())
    routes = {
        "grad": lambda: tf.grad(loss)(x),
        "jit(grad)": lambda: tf.jit(tf.grad(loss))(x),
        "grad(jit)": lambda: tf.grad(tf.jit(loss))(x),
        "jit(jit)": lambda: tf.grad(tf.jit(tf.jit(loss)))(x),
    }
    for name, route in routes.items():
        np.testing.assert_allclose(route().numpy(), want, rtol=1e-14, err_msg=name)
    for jitted in (False, True):
        xt = T(x.numpy(), requires_grad=True)
        (tf.jit(loss) if jitted else loss)(xt).backward()
        np.testing.assert_allclose(xt.grad.numpy(), want, rtol=1e-14, err_msg=f"tape {jitted}")


@pytest.mark.parametrize("loss,expected", CASES, ids=["custom_vjp", "custom_jvp"])
def test_forward_mode_uses_the_rule(loss, expected):
    x = T([0.5, -1.25])
    want = expected(x.numpy())
    t = tf.jvp(loss, (x,), (tf.ones_like(x),))[1]
    np.testing.assert_allclose(t.item(), want.sum(), rtol=1e-14)
    np.testing.assert_allclose(tf.jacfwd(loss)(x).numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(tf.jacrev(loss)(x).numpy(), want, rtol=1e-14)


@pytest.mark.parametrize("loss,hess", [(loss_vjp, lambda x: 3.0 + 0 * x),
                                       (loss_jvp, lambda x: 6 * x)], ids=["vjp", "jvp"])
def test_second_order_through_the_rule(loss, hess):
    x = T([0.5, -1.25])
    hv = tf.hvp(loss, (x,), (tf.ones_like(x),))
    np.testing.assert_allclose(hv.numpy(), hess(x.numpy()), rtol=1e-13)
    np.testing.assert_allclose(tf.jit(lambda x: tf.hvp(loss, (x,), (tf.ones_like(x),)))(x)
                               .numpy(), hess(x.numpy()), rtol=1e-13)


@pytest.mark.parametrize("loss,expected", CASES, ids=["custom_vjp", "custom_jvp"])
def test_a_saved_graph_keeps_the_rule(loss, expected, tmp_path):
    x = T([0.5, -1.25])
    graph = tf.jit(loss).lower(x)
    graph.save(tmp_path / "g.tfg")
    loaded = tf.load(tmp_path / "g.tfg")
    assert "custom" in str(loaded)
    np.testing.assert_allclose(tf.grad(loaded)(x).numpy(), expected(x.numpy()), rtol=1e-14)
    xt = T(x.numpy(), requires_grad=True)
    loaded(xt).backward()
    np.testing.assert_allclose(xt.grad.numpy(), expected(x.numpy()), rtol=1e-14)


def test_a_nonlinear_vjp_rule_in_forward_mode_is_a_clear_error():
    @tf.custom_vjp
    def clipped_identity(x):
        return x

    clipped_identity.defvjp(lambda x: (x, ()), lambda res, ct: (tf.clip(ct, -1.0, 1.0),))
    g = tf.vjp(clipped_identity, T([1.0, 2.0]))[1](T([5.0, -0.5]))[0]
    np.testing.assert_array_equal(g.numpy(), [1.0, -0.5])  # reverse mode: the rule as given
    with pytest.raises(GradientError, match="custom_jvp"):
        tf.jvp(clipped_identity, (T([1.0]),), (T([1.0]),))


def _scale_closing_over(w, rule_calls_itself):
    @tf.custom_vjp
    def scale(x):
        return x * w  # closes over w

    def fwd(x):
        return (scale(x) if rule_calls_itself else x * w), ()

    scale.defvjp(fwd, lambda res, ct: (ct * w,))
    return scale


def test_a_closed_over_differentiated_value():
    """Unstaged, a value the function closes over is differentiated through the function's own
    operations (here exactly: d/dw sum(x w) = sum(x)). Staged, closure values are constants of
    the rule, so differentiating through one raises instead of giving zero."""

    def loss(w):
        return tf.sum(_scale_closing_over(w, False)(T([1.0, 2.0])))

    assert tf.grad(loss)(T(3.0)).item() == 3.0
    with pytest.raises(GradientError, match="argument"):
        tf.grad(tf.jit(loss))(T(3.0))


def test_closing_over_a_constant_traced_value_works_under_jit():
    def f(w, x):
        return tf.sum(_scale_closing_over(tf.stop_gradient(w), False)(x))

    g = tf.grad(tf.jit(f), argnums=1)(T(3.0), T([1.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [3.0, 3.0])


def test_a_rule_calling_itself_and_closing_over_traced_values_is_a_named_limit():
    def f(w, x):
        return tf.sum(_scale_closing_over(w, True)(x))

    with pytest.raises(tf.errors.GraphError, match="arguments"):
        tf.jit(f)(T(3.0), T([1.0, 2.0]))


def test_rules_that_call_their_own_function_stage_finitely(tmp_path):
    # the forward rule calls the function itself: staging must not recurse forever
    graph = tf.jit(tf.grad(loss_vjp)).lower(T([1.0]))
    graph.save(tmp_path / "r.tfg")
    np.testing.assert_allclose(tf.load(tmp_path / "r.tfg")(T([2.0])).numpy(), [6.0])
