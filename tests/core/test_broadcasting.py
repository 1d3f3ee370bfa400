"""Broadcasting and promotion: gradients come back in each operand's own shape and dtype."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tenferro as tf
from tenferro.testing import check_vjp

OPS = {
    "add": (lambda a, b: a + b, np.add),
    "mul": (lambda a, b: a * b, np.multiply),
    "sub": (lambda a, b: a - b, np.subtract),
    "div": (lambda a, b: a / (b * b + 1), lambda a, b: a / (b * b + 1)),
    "max": (tf.maximum, np.maximum),
    "where": (lambda a, b: tf.where(a > b, a * 2, b), lambda a, b: np.where(a > b, a * 2, b)),
}


@settings(max_examples=60, deadline=None)
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
    op=st.sampled_from(sorted(OPS)),
    seed=st.integers(0, 2**16),
)
def test_broadcast_gradients_have_operand_shapes(shapes, op, seed):
    rng = np.random.default_rng(seed)
    f, ref = OPS[op]
    a0, b0 = (rng.standard_normal(s) for s in shapes.input_shapes)
    a, b = tf.tensor(a0), tf.tensor(b0)
    out = f(a, b)
    np.testing.assert_allclose(out.numpy(), ref(a0, b0), rtol=1e-14)
    assert out.shape == shapes.result_shape
    ga, gb = tf.grad(lambda x, y: tf.sum(f(x, y) * tf.sin(f(x, y))), argnums=(0, 1))(a, b)
    assert ga.shape == a.shape and gb.shape == b.shape
    check_vjp(f, (a, b), seed=seed)


@settings(max_examples=30, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4),
    data=st.data(),
)
def test_reductions_and_reshapes(shape, data):
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    keep = data.draw(st.booleans())
    x = tf.tensor(x0)
    np.testing.assert_allclose(tf.sum(x, axis, keepdims=keep).numpy(),
                               np.sum(x0, axis=axis, keepdims=keep), rtol=1e-12)
    np.testing.assert_allclose(tf.mean(x, axis, keepdims=keep).numpy(),
                               np.mean(x0, axis=axis, keepdims=keep), rtol=1e-12)
    np.testing.assert_allclose(tf.max(x, axis, keepdims=keep).numpy(),
                               np.max(x0, axis=axis, keepdims=keep))
    perm = data.draw(st.permutations(range(len(shape))))
    check_vjp(lambda t: (tf.transpose(tf.reshape(t, (-1,)).reshape(shape), perm) * 2,
                         tf.sum(t * t, axis, keepdims=True)), (x,))


def test_python_scalars_are_weakly_typed():
    x = tf.tensor(np.ones(2, np.float32))
    assert (x * 2.5).dtype == tf.float32
    assert (x + 1).dtype == tf.float32
    assert (x * 1j).dtype == tf.complex64
    i = tf.tensor([1, 2])
    assert (i * 2).dtype == tf.int64 and (i * 0.5).dtype == tf.float64
    assert (i / 2).dtype == tf.float64


def test_promotion_gradients_keep_input_dtypes():
    x32 = tf.tensor(np.array([1.0, 2.0], np.float32))
    y64 = tf.tensor([3.0, 4.0])
    gx, gy = tf.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x32, y64)
    assert gx.dtype == tf.float32 and gy.dtype == tf.float64
    xr = tf.tensor([1.0, 2.0])
    zc = tf.tensor([1j, 2.0])
    gr, gc = tf.grad(lambda a, b: tf.abs2(a * b).sum(), argnums=(0, 1))(xr, zc)
    assert gr.dtype == tf.float64 and gc.dtype == tf.complex128
    # |a b|^2 = a^2 |b|^2 -> d/da = 2 a |b|^2
    np.testing.assert_allclose(gr.numpy(), 2 * xr.numpy() * np.abs(zc.numpy()) ** 2)
