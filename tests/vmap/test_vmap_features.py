"""vmap beyond single primitives: nesting with every transformation, custom rules and
checkpoints, the loop fallback, data-dependent shapes, random numbers, argument errors."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.batching import trace as batch_trace
from tenferro._src.core.dispatch import dispatch
from tenferro.errors import ConcretizationError, ShapeError


def _f(x, w):
    return tf.tanh(x @ w).sum(-1) * tf.sin(x).sum()


@pytest.fixture
def data(rng):
    x = tf.tensor(rng.standard_normal((4, 2, 3)))
    w = tf.tensor(rng.standard_normal((3, 3)))
    return x, w


def _loop(f, xs, *rest):
    return np.stack([np.asarray(f(xs[i], *rest).numpy()) for i in range(xs.shape[0])])


def test_vmap_of_vmap_and_jit_in_both_orders(data):
    x, w = data
    xs = tf.stack([x, 2 * x])  # (2, 4, 2, 3)
    want = np.stack([_loop(_f, xs[j], w) for j in range(2)])
    inner = tf.vmap(_f, in_axes=(0, None))
    got = tf.vmap(inner, in_axes=(0, None))(xs, w)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    got = tf.jit(tf.vmap(inner, in_axes=(0, None)))(xs, w)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    got = tf.vmap(tf.jit(inner), in_axes=(0, None))(xs, w)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_vmap_nests_with_jvp_grad_and_hessian_vector_products(data, rng):
    x, w = data
    t = tf.tensor(rng.standard_normal(x.shape))
    loss = lambda xi: tf.sum(_f(xi, w) ** 2)  # noqa: E731
    # jvp of vmap == vmap of jvp
    a = tf.jvp(tf.vmap(loss), (x,), (t,))[1]
    b = tf.vmap(lambda xi, ti: tf.jvp(loss, (xi,), (ti,))[1])(x, t)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10)
    # hvp per member (forward over reverse inside vmap) == loop
    hv = tf.vmap(lambda xi, ti: tf.hvp(loss, (xi,), (ti,)))(x, t)
    want = np.stack([tf.hvp(loss, (x[i],), (t[i],)).numpy() for i in range(4)])
    np.testing.assert_allclose(hv.numpy(), want, rtol=1e-10)
    # grad of grad through vmap
    g2 = tf.grad(lambda xx: tf.sum(tf.vmap(tf.grad(loss))(xx) ** 2))(x)
    want2 = np.stack([tf.grad(lambda xi: tf.sum(tf.grad(loss)(xi) ** 2))(x[i]).numpy()
                      for i in range(4)])
    np.testing.assert_allclose(g2.numpy(), want2, rtol=1e-10)
    # jit(vmap(grad)) and vmap(jit(grad))
    want3 = np.stack([tf.grad(loss)(x[i]).numpy() for i in range(4)])
    np.testing.assert_allclose(tf.jit(tf.vmap(tf.grad(loss)))(x).numpy(), want3, rtol=1e-10)
    np.testing.assert_allclose(tf.vmap(tf.jit(tf.grad(loss)))(x).numpy(), want3, rtol=1e-10)


def test_vmap_records_on_the_eager_tape(data):
    x, w = data
    x = x.detach().requires_grad_()
    tf.vmap(_f, in_axes=(0, None))(x, w).sum().backward()
    want = tf.grad(lambda xx: tf.vmap(_f, in_axes=(0, None))(xx, w).sum())(x.detach())
    np.testing.assert_allclose(x.grad.numpy(), want.numpy(), rtol=1e-12)


@tf.custom_vjp
def _scaled_sin(x):
    return tf.sin(x)


# a deliberately different rule (3 cos x): proves the rule, not autodiff of sin, is used
_scaled_sin.defvjp(lambda x: (_scaled_sin(x), (x,)), lambda res, ct: (3 * tf.cos(res[0]) * ct,))


@tf.custom_jvp
def _scaled_cos(x):
    return tf.cos(x)


@_scaled_cos.defjvp
def _scaled_cos_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _scaled_cos(x), -5 * tf.sin(x) * t


def test_custom_rules_survive_vmap_in_every_order(rng):
    x = tf.tensor(rng.standard_normal((5, 3)))
    want = 3 * np.cos(x.numpy())
    np.testing.assert_allclose(tf.vmap(_scaled_sin)(x).numpy(), np.sin(x.numpy()))
    g1 = tf.grad(lambda v: tf.vmap(_scaled_sin)(v).sum())(x)
    g2 = tf.vmap(tf.grad(lambda v: _scaled_sin(v).sum()))(x)
    g3 = tf.grad(lambda v: tf.jit(tf.vmap(_scaled_sin))(v).sum())(x)
    for g in (g1, g2, g3):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    t = tf.ones_like(x)
    _, jt = tf.jvp(tf.vmap(_scaled_cos), (x,), (t,))
    np.testing.assert_allclose(jt.numpy(), -5 * np.sin(x.numpy()), rtol=1e-12)
    jt2 = tf.vmap(lambda v, s: tf.jvp(_scaled_cos, (v,), (s,))[1])(x, t)
    np.testing.assert_allclose(jt2.numpy(), -5 * np.sin(x.numpy()), rtol=1e-12)


def test_checkpoint_under_vmap(data):
    x, w = data
    body = lambda xi: tf.sum(tf.sin(xi @ w) ** 2)  # noqa: E731
    want = tf.grad(lambda v: tf.vmap(body)(v).sum())(x)
    got = tf.grad(lambda v: tf.vmap(tf.checkpoint(body))(v).sum())(x)
    got2 = tf.vmap(tf.grad(tf.checkpoint(body)))(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got2.numpy(), want.numpy(), rtol=1e-12)


def test_missing_rule_falls_back_to_a_loop_with_one_warning(monkeypatch, rng):
    monkeypatch.setattr(P.sin_p, "batch", None)
    monkeypatch.setattr(batch_trace, "_WARNED", set())
    x = tf.tensor(rng.standard_normal((4, 3)))
    with pytest.warns(UserWarning, match="'sin' has no batching rule"):
        got = tf.vmap(tf.sin)(x)
    np.testing.assert_allclose(got.numpy(), np.sin(x.numpy()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = tf.grad(lambda v: tf.vmap(tf.sin)(v).sum())(x)  # no second warning
    np.testing.assert_allclose(g.numpy(), np.cos(x.numpy()), rtol=1e-12)


def test_cutoff_truncated_svd_is_a_clear_error_and_max_rank_works(rng):
    a = tf.tensor(rng.standard_normal((3, 5, 4)))
    trunc = lambda m: tf.linalg.svd(m, cutoff=0.5)[1]  # noqa: E731
    for run in (tf.vmap(trunc), tf.jit(tf.vmap(trunc))):
        with pytest.raises((ConcretizationError, ShapeError), match="max_rank"):
            run(a)
    s = tf.vmap(lambda m: tf.linalg.svd(m, max_rank=2)[1])(a)
    np.testing.assert_allclose(s.numpy(), np.linalg.svd(a.numpy(), compute_uv=False)[:, :2],
                               rtol=1e-12)
    # the rule itself: shared result without cutoff, the named error with one
    rule = P.truncation_indices_p.batch
    sv = tf.tensor(np.abs(rng.standard_normal((3, 4))))
    out, dims = rule(dispatch, [sv], [0], max_rank=2, cutoff=None, relative_cutoff=None,
                     size=2)
    assert dims == [None] and out[0].numpy().tolist() == [0, 1]
    with pytest.raises(ShapeError, match="max_rank"):
        rule(dispatch, [sv], [0], max_rank=None, cutoff=0.1, relative_cutoff=None, size=4)


def test_value_dependent_branch_raises(rng):
    x = tf.tensor(rng.standard_normal((3, 2)))
    with pytest.raises(ConcretizationError, match="vmap"):
        tf.vmap(lambda v: v * 2 if v.sum() > 0 else v)(x)
    with pytest.raises(ConcretizationError, match="vmap"):
        tf.vmap(lambda v: float(v.sum()))(x)


def test_random_numbers_inside_vmap_are_shared_by_all_members():
    xs = tf.zeros((4, 3))
    tf.manual_seed(0)
    out = tf.vmap(lambda x: x + tf.randn(3))(xs).numpy()
    for i in range(1, 4):
        np.testing.assert_array_equal(out[i], out[0])
    tf.manual_seed(0)
    noise = tf.randn(4, 3)  # independent draws: pass them in
    out = tf.vmap(lambda x, e: x + e)(xs, noise).numpy()
    assert not np.allclose(out[1], out[0])


def test_in_axes_out_axes_axis_size_and_errors(rng):
    x = tf.tensor(rng.standard_normal((2, 5)))
    z = tf.tensor(rng.standard_normal((2,)))
    got = tf.vmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(x, z)
    np.testing.assert_allclose(got.numpy(), x.numpy() * z.numpy()[:, None])
    y = tf.tensor(rng.standard_normal((5,)))
    d = tf.vmap(lambda p: p["a"] + p["b"], in_axes=({"a": 0, "b": None},))(
        {"a": x, "b": y})
    np.testing.assert_allclose(d.numpy(), x.numpy() + y.numpy())
    c = tf.vmap(lambda b: b * 2, in_axes=None, axis_size=3)(y)
    assert c.shape == (3, 5)
    with pytest.raises(ShapeError, match="axis_size"):
        tf.vmap(lambda b: b, in_axes=None)(y)
    with pytest.raises(ShapeError, match="different sizes"):
        tf.vmap(lambda a, b: a + b)(x, tf.ones((3, 5)))
    with pytest.raises(ShapeError, match="out_axes None"):
        tf.vmap(lambda a: a, out_axes=None)(x)
    with pytest.raises(ShapeError, match="out of range"):
        tf.vmap(lambda a: a, in_axes=3)(x)
    assert tf.vmap(lambda a: y, out_axes=None)(x) is y  # shared output, not broadcast


def test_batched_svd_gradient_of_gauge_invariant_loss_equals_loop(rng):
    """Acceptance: 64 independent 16x16 SVDs (complex: the gauge term matters)."""
    a = tf.tensor(rng.standard_normal((64, 16, 16)) + 1j * rng.standard_normal((64, 16, 16)))

    def loss(m):
        u, s, vh = tf.linalg.svd(m)
        return tf.sum(tf.abs(u[:, :4] @ vh[:4, :]) ** 2 * s[0]) + tf.sum(s ** 3)

    batched = tf.vmap(tf.grad(loss))(a)
    loop = np.stack([tf.grad(loss)(a[i]).numpy() for i in range(64)])
    np.testing.assert_allclose(batched.numpy(), loop, rtol=1e-9, atol=1e-10)


def test_per_sample_mlp_gradients_equal_loop(rng):
    params = {"w1": tf.tensor(rng.standard_normal((8, 16)) * 0.3),
              "b1": tf.tensor(np.zeros(16)),
              "w2": tf.tensor(rng.standard_normal((16, 1)) * 0.3)}
    xs = tf.tensor(rng.standard_normal((32, 8)))
    ys = tf.tensor(rng.standard_normal((32,)))

    def loss(p, x, y):
        h = tf.tanh(x @ p["w1"] + p["b1"])
        return ((h @ p["w2"])[0] - y) ** 2

    g = tf.vmap(tf.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
    for k in params:
        want = np.stack([tf.grad(loss)(params, xs[i], ys[i])[k].numpy() for i in range(32)])
        np.testing.assert_allclose(g[k].numpy(), want, rtol=1e-11, atol=1e-13)


def test_einsum_ncon_and_keyword_arguments_under_vmap(rng):
    a = tf.tensor(rng.standard_normal((3, 4, 4)))
    b = tf.tensor(rng.standard_normal((4, 5)))

    def f(x, y, *, scale):
        return (tf.einsum("ii,ij->j", x, y) + tf.einsum("...ij,jk->...ik", x, y).sum(0)
                + tf.ncon([x, y], [[-1, 1], [1, -2]]).sum(0)) * scale

    s = tf.tensor(rng.standard_normal(3))
    got = tf.vmap(f, in_axes=(0, None))(a, b, scale=s)
    want = np.stack([f(a[i], b, scale=s[i]).numpy() for i in range(3)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_custom_vjp_rule_in_vmap_of_jit_of_grad(rng):
    x = tf.tensor(rng.standard_normal((4, 3)))
    g = tf.vmap(tf.jit(tf.grad(lambda v: _scaled_sin(v).sum())))(x)
    np.testing.assert_allclose(g.numpy(), 3 * np.cos(x.numpy()), rtol=1e-12)
    g = tf.grad(lambda v: tf.vmap(tf.jit(_scaled_sin))(v).sum())(x)
    np.testing.assert_allclose(g.numpy(), 3 * np.cos(x.numpy()), rtol=1e-12)


def test_loop_fallback_refuses_members_of_different_shapes(monkeypatch):
    """A primitive without a rule whose output shape depends on the values: the loop finds
    members disagreeing and names the primitive and the way out."""
    from chainrules.symbolic import Sym
    from tenferro._src.core.dispatch import bind

    monkeypatch.setattr(P.truncation_indices_p, "batch", None)
    monkeypatch.setattr(batch_trace, "_WARNED", {"truncation_indices"})
    s = tf.tensor([[3.0, 2.0, 1.0], [3.0, 0.1, 0.05]])  # ranks 3 and 1 at cutoff 0.5
    f = lambda v: bind(P.truncation_indices_p, v, max_rank=None, cutoff=0.5,  # noqa: E731
                       relative_cutoff=None, size=Sym.new(3))
    with pytest.raises(ShapeError, match="truncation_indices.*max_rank"):
        tf.vmap(f)(s)
    same = tf.tensor([[3.0, 2.0, 1.0], [3.0, 2.0, 0.1]])[:, :2]
    np.testing.assert_array_equal(tf.vmap(f)(same).numpy(), [[0, 1], [0, 1]])
