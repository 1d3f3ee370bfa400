"""No aliasing surprise (design/interop.md, "Aliasing"): a tensor made from a NumPy array never
shares the array's buffer, so the array's owner writing into it afterwards cannot change a
value the tape recorded. ``asarray``, ``tensor``, ``from_numpy`` and NumPy operands of
operations agree (they copy); ``from_dlpack`` is the explicit zero-copy import."""

import numpy as np
import pytest

import tenferro as tf
from tenferro import nn


def test_asarray_source_written_after_recording_leaves_the_gradient_alone(rng):
    a = rng.standard_normal(4)
    want = a.copy()
    w = tf.tensor(rng.standard_normal(4), requires_grad=True)
    x = tf.asarray(a)
    loss = (w * x).sum()  # d loss / d w = x, saved on the tape
    a[:] = 0.0  # the array's owner writes into it
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), want)
    np.testing.assert_array_equal(x.numpy(), want)


def test_numpy_operand_written_after_recording_leaves_the_gradient_alone(rng):
    a = rng.standard_normal((3, 3))
    want = a.copy()
    w = tf.tensor(rng.standard_normal(3), requires_grad=True)
    loss = (tf.reshape(a, (3, 3)) @ w).sum() + (w * a[0]).sum()  # NumPy arrays as operands
    a[:] = 7.0
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), want.sum(0) + want[0])


@pytest.mark.parametrize("make", [tf.asarray, tf.tensor, tf.from_numpy],
                         ids=["asarray", "tensor", "from_numpy"])
def test_tensors_from_numpy_never_share_the_buffer(rng, make):
    a = rng.standard_normal(5)
    t = make(a)
    assert not np.shares_memory(t.numpy(), a)
    b = a.copy()
    a += 1
    np.testing.assert_array_equal(t.numpy(), b)


def test_load_state_dict_does_not_keep_the_callers_array():
    model = nn.Linear(2, 1)
    w = np.array([[1.0, 2.0]])
    model.load_state_dict({"weight": w, "bias": np.zeros(1)})
    w[:] = 0.0
    np.testing.assert_array_equal(model.weight.detach().numpy(), [[1.0, 2.0]])


def test_jit_captures_closed_over_arrays_when_tracing():
    """As in JAX: an array a jitted function closes over is a constant copied at trace time
    (it used to be shared, except where constant folding had already read it)."""
    w = np.ones((2, 2))
    f = tf.jit(lambda x: x @ w + (w * 2).sum())
    x = tf.ones((2, 2))
    before = f(x).numpy()
    w[:] = 5.0
    np.testing.assert_array_equal(f(x).numpy(), before)
    np.testing.assert_array_equal(before, np.full((2, 2), 10.0))
