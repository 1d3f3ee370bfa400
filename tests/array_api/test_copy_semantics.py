"""``copy=`` semantics (``asarray``, ``astype``, ``reshape``) and the aliasing rule: a tensor never
shares a buffer another owner can write, so a NumPy array changed after conversion never
changes the tensor, nor a gradient recorded from it."""

import numpy as np
import pytest

import tenferro as tf


def test_asarray_of_a_tensor():
    x = tf.arange(4.0)
    assert tf.asarray(x) is x and tf.asarray(x, copy=False) is x
    y = tf.asarray(x, copy=True)
    assert y is not x
    y[0] = 9.0  # a copy: writing it leaves x alone
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
    z = tf.asarray(x, copy=False)
    z[1] = 7.0  # the same tensor: the write shows in x, as the standard asks
    assert x.tolist()[1] == 7.0
    with pytest.raises(ValueError, match="copy"):
        tf.asarray(x, dtype=tf.float32, copy=False)  # a conversion needs a copy
    assert tf.asarray(x, dtype=tf.float32).dtype == tf.float32


def test_asarray_copies_host_data_and_refuses_copy_false():
    a = np.arange(4.0)
    for copy in (None, True):
        t = tf.asarray(a, copy=copy)
        a[0] = 100.0
        assert t.tolist()[0] != 100.0
        a[0] = 0.0
    with pytest.raises(ValueError, match="copy"):
        tf.asarray(a, copy=False)
    with pytest.raises(ValueError, match="copy"):
        tf.asarray([1, 2], copy=False)


def test_a_recorded_gradient_cannot_change_when_the_source_array_is_written():
    """The aliasing case: a tensor made from a NumPy array, used by a recorded operation,
    then the array is written; the gradient must be that of the values at recording time
    (before, asarray shared the buffer and the gradient changed)."""
    a = np.array([1.0, 2.0, 3.0])
    c = tf.asarray(a)
    w = tf.ones((3,)).requires_grad_()
    loss = tf.sum(w * c)  # d loss / d w = c, saved by the multiplication
    a[:] = -5.0
    loss.backward()
    assert w.grad.tolist() == [1.0, 2.0, 3.0]
    b = np.array([1.0, 2.0])
    assert (tf.asarray(b) + 0).tolist() == tf.from_numpy(b).tolist()  # they agree


def test_astype_copy():
    x = tf.arange(3.0)
    y = tf.astype(x, tf.float64)  # copy=True by default: a new tensor
    assert y is not x
    y += 1.0
    assert x.tolist() == [0.0, 1.0, 2.0]
    assert tf.astype(x, tf.float64, copy=False) is x
    assert tf.astype(x, tf.float32, copy=False).dtype == tf.float32
    m = x.astype(tf.float64)  # NumPy's method: a copy too
    m[0] = 5.0
    assert x.tolist()[0] == 0.0
    assert tf.astype(x, tf.float32, device="cpu").device == "cpu"


def test_reshape_copy():
    x = tf.arange(6.0)
    v = tf.reshape(x, (2, 3))
    v[0, 0] = 4.0  # a view (copy=None): writes reach x, as in NumPy
    assert x.tolist()[0] == 4.0
    c = tf.reshape(x, (2, 3), copy=True)
    c[0, 1] = -1.0
    assert x.tolist()[1] == 1.0
    assert tf.reshape(x, (6,), copy=True) is not x


@pytest.mark.parametrize("how", ["astype", "reshape", "asarray"])
def test_copies_are_differentiable(how):
    f = {"astype": lambda x: tf.astype(x, tf.float64),
         "reshape": lambda x: tf.reshape(x, (3,), copy=True),
         "asarray": lambda x: tf.asarray(x, copy=True)}[how]
    g = tf.grad(lambda x: tf.sum(f(x) * x))(tf.arange(3.0))
    assert g.tolist() == [0.0, 2.0, 4.0]


def test_in_place_operators_keep_the_dtype():
    x = tf.ones((2,), dtype=tf.int32)
    x += 2
    assert x.dtype == tf.int32 and x.tolist() == [3, 3]
    with pytest.raises(tf.errors.DTypeError):
        x += 1.5  # the promoted result (float64) cannot be stored in the int32 tensor
    y = tf.ones((2,), dtype=tf.float32)
    y **= 2
    y //= 1.0
    y %= 3.0
    assert y.dtype == tf.float32
