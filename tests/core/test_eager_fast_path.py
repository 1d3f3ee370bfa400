"""The eager fast path ([eager-speed]): what it caches must never change a result.

``bind`` hands plain eager ops straight to ``EvalTrace.eval`` when ``state.fast`` says no
transformation, staging or hook is active; ``eval`` looks signatures up through a memo of the
last params per (primitive, shapes); the ops layer caches broadcast plans and mean divisors;
the NumPy backend fixes decomposition gauges with fewer calls. Each test below would fail if
one of these shortcuts returned a stale or wrong answer.
"""

import numpy as np
import pytest

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.backends import linalg_ext
from tenferro._src.core import eager as eager_mod
from tenferro._src.core.dispatch import bind, state
from tenferro.errors import ShapeError


@pytest.fixture(params=[True, False], ids=["checked", "lean"])
def check_mode(request, monkeypatch):
    """Run with TENFERRO_CHECK's validation on (the suite's default) and off (users' default:
    the path where the signature memo alone finds the derivative templates)."""
    monkeypatch.setattr(eager_mod, "CHECK", request.param)
    return request.param


# ------------------------------------------------------------------ the fast flag
def test_fast_flag_follows_grad_mode_transformations_staging_and_hooks():
    assert state.fast is True
    with tf.no_grad():
        assert state.fast is False
        with tf.enable_grad():
            assert state.fast is True
        assert state.fast is False
    assert state.fast is True

    seen = []

    def f(x):
        seen.append(state.fast)
        return (x * x).sum()

    tf.grad(f)(tf.tensor([1.0, 2.0]))  # a transformation is active: not plain eager
    tf.jit(f)(tf.tensor([1.0, 2.0]))  # staging: not plain eager
    assert seen == [None, None] and state.fast is True

    old, state.hook = state.hook, (lambda prim, top, tracers, params: NotImplemented)
    try:
        assert state.fast is None  # a checkpoint hook sees every op
    finally:
        state.hook = old
    assert state.fast is True


def test_no_grad_ops_are_not_recorded_on_the_fast_path():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    with tf.no_grad():
        y = x.T * 2.0 + x
    assert not y.requires_grad
    z = x.T * 2.0 + x
    assert z.requires_grad


# ------------------------------------------------------------ the signature memo
def test_alternating_params_with_the_same_shapes_use_their_own_signatures(check_mode):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = tf.tensor(a, requires_grad=True)
    for _ in range(3):  # the memo holds one params dict per (primitive, shapes): alternate
        for perm in [(2, 0, 1), (1, 2, 0), (0, 2, 1)]:
            np.testing.assert_array_equal(tf.transpose(x, perm).detach().numpy(),
                                          a.transpose(perm))
        for axis in [0, 1, 2]:
            np.testing.assert_array_equal(x.sum(axis).detach().numpy(), a.sum(axis))
        for i in [0, 1, -1]:
            np.testing.assert_array_equal(x[i].detach().numpy(), a[i])
    # their derivatives too (templates are per signature and per inputs with history)
    loss = (tf.transpose(x, (2, 0, 1)) ** 2).sum() + x.sum(0).sum() + 3.0 * x[1].sum()
    loss.backward()
    expected = 2 * a + 1.0
    expected[1] += 3.0
    np.testing.assert_allclose(x.grad.numpy(), expected)


def test_params_holding_an_array_after_hashable_ones_are_still_evaluated(check_mode):
    """An array param cannot be hashed; compared with the memo's last (hashable) params it
    must not raise from the memo, and must give its own result."""
    x = tf.tensor(np.arange(4.0), requires_grad=True)
    first = bind(P.transpose_p, x, permutation=(0,))
    again = bind(P.transpose_p, x, permutation=np.array([0]))
    np.testing.assert_array_equal(again.detach().numpy(), first.detach().numpy())
    again.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(4))


def test_a_bad_application_after_good_ones_is_still_validated():
    """A memo hit proves nothing about other params: a bad call after good ones raises the
    validation error, not a backend failure and not a stale result."""
    x = tf.tensor(np.ones((2, 3)))
    y = tf.tensor(np.ones((3, 2)))
    dn = (((1,), (0,)), ((), ()))
    bind(P.dot_general_p, x, y, dimension_numbers=dn)
    with pytest.raises(ShapeError, match="dot_general"):
        bind(P.dot_general_p, x, y, dimension_numbers=(((0,), (0,)), ((), ())))


def test_binary_op_inputs_with_and_without_history_get_their_own_templates(check_mode):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
    c = tf.tensor(b)
    for left, right in [(x, c), (c, x), (x, y)]:  # masks 1, 2 and 3 of one signature
        (left * right).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), b + b + b)
    np.testing.assert_array_equal(y.grad.numpy(), a)


# -------------------------------------------------------------- broadcasting plans
def test_broadcast_plans_give_numpy_results_and_summed_gradients(check_mode):
    rng = np.random.default_rng(0)
    for sa, sb in [((4, 3), (3,)), ((3,), (4, 3)), ((4, 1), (1, 3)), ((2, 1, 3), (4, 1))]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        x, y = tf.tensor(a, requires_grad=True), tf.tensor(b, requires_grad=True)
        for _ in range(2):  # the second call takes the cached plan
            out = x * y + x - y
            np.testing.assert_allclose(out.detach().numpy(), a * b + a - b, rtol=1e-15)
        out.sum().backward()
        shape = np.broadcast_shapes(sa, sb)
        np.testing.assert_allclose(x.grad.numpy(), _reduce_to(np.broadcast_to(b + 1, shape),
                                                              sa), rtol=1e-14)
        np.testing.assert_allclose(y.grad.numpy(), _reduce_to(np.broadcast_to(a - 1, shape),
                                                              sb), rtol=1e-14)


def _reduce_to(g, shape):
    """Sum ``g`` down to ``shape`` (the adjoint of broadcasting)."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    return g.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)


def test_shapes_that_do_not_broadcast_still_raise_the_named_error():
    x, y = tf.tensor(np.ones((2, 3))), tf.tensor(np.ones((4,)))
    for _ in range(2):
        with pytest.raises(ShapeError, match=r"add: shapes \(2, 3\) and \(4,\) cannot be"):
            x + y


# --------------------------------------------------------------------------- mean
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "int64"])
def test_mean_equals_numpy_exactly_and_its_gradient_is_one_over_n(dtype, check_mode):
    a = (np.arange(12).reshape(3, 4) * (1 + 1j if dtype == "complex128" else 1)).astype(dtype)
    x = tf.tensor(a)
    for axis in [None, 0, 1, -1]:
        for _ in range(2):  # the cached divisor
            got = x.mean(axis)
            want = np.mean(a, axis)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.numpy(), want)
    if dtype.startswith("float"):
        w = tf.tensor(a, requires_grad=True)
        w.mean(0).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), np.full((3, 4), 1 / 3, dtype), rtol=1e-6)


def test_mean_errors_and_keepdims_are_unchanged():
    x = tf.tensor(np.ones((2, 3)))
    with pytest.raises(ShapeError, match="mean: axis 2 is out of range"):
        x.mean(2)
    assert x.mean(1, keepdims=True).shape == (2, 1)


# ----------------------------------------------------------------- gauge fixes
def _generic(name):
    return getattr(linalg_ext, name)


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_numpy_gauge_fixes_match_the_array_api_convention(dtype):
    """The NumPy backend's vectorised gauge fixes (one copysign per real vector) give exactly
    the convention written once against the array API (``column_phases``)."""
    rng = np.random.default_rng(1)
    ext = linalg_ext.ScipyLinalg(np)
    mats = [rng.standard_normal((4, 4)), rng.standard_normal((5, 3)), rng.standard_normal((3, 5)),
            np.array([[0.0, 1.0], [1.0, 0.0]])]  # ties of opposite sign: the first entry wins
    for a in mats:
        if dtype == "complex128":
            a = a + 1j * rng.standard_normal(a.shape)
        a = a.astype(dtype)
        u, s, vh = ext.svd(a, False)
        got, want = ext.fix_svd_gauge(u, s, vh), _generic("fix_svd_gauge")(np, u, s, vh)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        if a.shape[0] == a.shape[1]:
            h = ext.hermitian_part(a)
            np.testing.assert_array_equal(h, _generic("hermitian_part")(np, a))
            w_, v = ext.eigh(h)
            for g, w in zip(ext.fix_eigh_gauge(w_, v), _generic("fix_eigh_gauge")(np, w_, v)):
                np.testing.assert_array_equal(g, w)
        q, r = ext.qr(a, False)
        for positive in (False, True):
            got = ext.fix_qr_gauge(q, r, positive)
            want = _generic("fix_qr_gauge")(np, q, r, positive)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
