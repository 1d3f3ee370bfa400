"""What the transformations are handed is checked, with named errors: ``argnums`` out of range
(an IndexError before), ``has_aux`` outputs that are not pairs (unpacking errors), primals that
are not tuples (an unrelated TypeError), ``custom_vjp`` of a non-function (accepted until the
call) and backward rules returning non-tensors (AttributeError) or complex cotangents for real
inputs (passed through as a complex gradient). ``set_grad_enabled(False)`` called as a
function disables recording, as in PyTorch."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError


def f1(x):
    return x * x


def f2(x, y):
    return x * y * y


@pytest.mark.parametrize("make", [
    lambda: tf.grad(f1, argnums=-2), lambda: tf.grad(f1, argnums=1),
    lambda: tf.value_and_grad(f1, argnums=(0, 3)), lambda: tf.jacrev(f1, argnums=-2),
    lambda: tf.jacfwd(f1, argnums=2), lambda: tf.hessian(f1, argnums=-3),
])
def test_argnums_out_of_range_is_a_gradient_error(make):
    with pytest.raises(GradientError, match=r"argnums -?\d is out of range .* 1 positional"):
        make()(tf.tensor(1.5))


@pytest.mark.parametrize("argnums", [True, "0", 1.0, (0, "1"), ()])
def test_argnums_of_the_wrong_type_is_a_gradient_error_at_once(argnums):
    with pytest.raises(GradientError, match="argnums"):
        tf.grad(f1, argnums=argnums)


def test_negative_argnums_count_from_the_end_as_jax():
    x, y = tf.tensor(2.0), tf.tensor(3.0)
    assert tf.grad(f2, argnums=-1)(x, y).item() == tf.grad(f2, argnums=1)(x, y).item() == 12.0
    gx, gy = tf.grad(f2, argnums=(-2, -1))(x, y)
    assert (gx.item(), gy.item()) == (9.0, 12.0)
    np.testing.assert_allclose(tf.jacrev(f2, argnums=-1)(x, y).item(), 12.0)


@pytest.mark.parametrize("out", [lambda x: x * x, lambda x: (x * x, 1, 2), lambda x: [x * x]],
                         ids=["scalar", "3-tuple", "1-list"])
@pytest.mark.parametrize("transform", [
    lambda f, x: tf.grad(f, has_aux=True)(x), lambda f, x: tf.value_and_grad(f, has_aux=True)(x),
    lambda f, x: tf.vjp(f, x, has_aux=True), lambda f, x: tf.jvp(f, (x,), (x,), has_aux=True),
], ids=["grad", "value_and_grad", "vjp", "jvp"])
def test_has_aux_needs_a_pair(out, transform):
    with pytest.raises(GradientError, match=r"has_aux=True the function must return a pair"):
        transform(out, tf.tensor(1.5))


def test_has_aux_pairs_still_work():
    g, aux = tf.grad(lambda x: (x * x, {"a": x}), has_aux=True)(tf.tensor(1.5))
    assert g.item() == 3.0 and aux["a"].item() == 1.5


@pytest.mark.parametrize("call", [
    lambda x: tf.jvp(f1, x, x), lambda x: tf.jvp(f1, (x,), x), lambda x: tf.hvp(f1, x, (x,)),
    lambda x: tf.jvp(f1, 1.5, (x,)),
])
def test_jvp_primals_and_tangents_must_be_tuples(call):
    with pytest.raises(GradientError, match=r"(primals|tangents) must be a tuple"):
        call(tf.tensor(1.5))


def test_jvp_with_lists_still_works():
    out, t = tf.jvp(f1, [tf.tensor(1.5)], [tf.tensor(1.0)])
    assert (out.item(), t.item()) == (2.25, 3.0)


# ------------------------------------------------------------------ custom rules
@pytest.mark.parametrize("deco", [tf.custom_vjp, tf.custom_jvp])
@pytest.mark.parametrize("bad", [3, "f", None])
def test_custom_rules_need_a_function_at_decoration_time(deco, bad):
    with pytest.raises(GradientError, match="expected a function"):
        deco(bad)


def test_defvjp_and_defjvp_need_functions():
    f = tf.custom_vjp(lambda x: x)
    with pytest.raises(GradientError, match="expected a function"):
        f.defvjp(lambda x: (x, None), 3)
    g = tf.custom_jvp(lambda x: x)
    with pytest.raises(GradientError, match="expected a function"):
        g.defjvp("rule")


def _custom(bwd_value):
    @tf.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 2, None), lambda res, ct: (bwd_value(ct),))
    return f


@pytest.mark.parametrize("mode", ["eager", "jit", "tape"])
@pytest.mark.parametrize("value,match", [
    (lambda ct: "x", r"returned str 'x' as the cotangent of input 0"),
    (lambda ct: object(), r"returned object .* as the cotangent of input 0"),
    (lambda ct: ct * (1 + 1j), r"complex cotangent \(complex128\) for the real input 0"),
    (lambda ct: np.array(["a"]), r"returned ndarray .* as the cotangent"),
])
def test_a_backward_rule_returning_a_wrong_cotangent_raises(mode, value, match):
    f = _custom(value)
    x = tf.tensor(1.0)
    with pytest.raises(GradientError, match=rf"custom_vjp f: .*{match}"):
        if mode == "eager":
            tf.grad(f)(x)
        elif mode == "jit":
            tf.jit(tf.grad(f))(x)
        else:
            xr = tf.tensor(1.0, requires_grad=True)
            f(xr).backward()


def test_a_complex_cotangent_for_a_complex_input_and_numbers_are_fine():
    f = _custom(lambda ct: ct * 2)
    z = tf.tensor(1.0 + 1.0j)
    np.testing.assert_allclose(tf.grad(lambda z: tf.real(f(z)))(z).item(), 2.0)
    g = _custom(lambda ct: 3.0)  # a number for a 0-d input
    assert tf.grad(g)(tf.tensor(1.0)).item() == 3.0


# --------------------------------------------------------------------- grad mode
def test_set_grad_enabled_as_a_function_switches_recording():
    x = tf.tensor([1.0], requires_grad=True)
    try:
        tf.set_grad_enabled(False)
        assert not tf.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        tf.set_grad_enabled(True)
    assert tf.is_grad_enabled() and (x * 2).requires_grad


def test_set_grad_enabled_as_a_context_manager_and_decorator_restores():
    with tf.set_grad_enabled(False):
        assert not tf.is_grad_enabled()
    assert tf.is_grad_enabled()
    with tf.no_grad():
        with tf.set_grad_enabled(True):
            assert tf.is_grad_enabled()
        assert not tf.is_grad_enabled()

    @tf.set_grad_enabled(False)
    def inside():
        return tf.is_grad_enabled()

    assert tf.is_grad_enabled() and not inside() and tf.is_grad_enabled()


def test_set_grad_enabled_needs_a_bool():
    with pytest.raises(tf.errors.DTypeError, match="set_grad_enabled"):
        tf.set_grad_enabled("no")
    assert tf.is_grad_enabled()
