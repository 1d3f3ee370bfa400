"""In-place operations on views. tenferro tensors do not share memory; basic-indexing views
and reshapes write through to their base (as in NumPy/PyTorch), and in-place updates of other
view-like results, which could not reach their base, are refused with a named error, in every
mode."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError

T = tf.tensor

VIEW_UPDATES = {
    "detach().add_()": lambda a: a.detach().add_(1.0),
    "T +=": lambda a: a.T.__iadd__(2.0),
    "diagonal.fill_": lambda a: tf.diagonal(a).fill_(0.0),
    "broadcast_to.copy_": lambda a: tf.broadcast_to(a[0], (4, 3)).copy_(tf.ones((4, 3))),
}


@pytest.mark.parametrize("update", list(VIEW_UPDATES), ids=list(VIEW_UPDATES))
def test_in_place_updates_of_views_raise(update):
    a = T(np.arange(6.0).reshape(2, 3))
    with pytest.raises(GradientError, match="view") as e:
        VIEW_UPDATES[update](a)
    assert "x[i] = v" in str(e.value)
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0).reshape(2, 3))  # untouched


def test_complex_parts_are_views():
    z = T(np.array([1 + 2j, 3 - 1j]))
    with pytest.raises(GradientError, match="real"):
        z.real.mul_(2.0)


def test_indexing_views_write_through():
    a = T(np.arange(6.0).reshape(2, 3))
    a[1, 2] += 1.0  # Python: tmp = a[1, 2]; tmp += 1; a[1, 2] = tmp
    row = a[0]
    row += 10.0
    np.testing.assert_array_equal(a.numpy(), [[10, 11, 12], [3, 4, 6]])
    a[0].zero_()
    a[0][1] = 5.0  # a view of a view
    a[1, ::2].mul_(2.0)
    np.testing.assert_array_equal(a.numpy(), [[0, 5, 0], [6, 4, 12]])


def test_reshape_views_write_through():
    """A reshape is a view in NumPy (of a contiguous array) and PyTorch (``view``): writes to
    it reach the base, here too (before, they were refused)."""
    a = T(np.arange(6.0).reshape(2, 3))
    v = a.view(6)
    v += 1.0
    a.reshape(3, 2).mul_(2.0)
    r = a.reshape(-1)[1:]  # a view of a view
    r[0] = -1.0
    np.testing.assert_array_equal(a.numpy(), [[2, -1, 6], [8, 10, 12]])
    s = T(np.array([3.0])).reshape(())  # the arrays the array API test suite draws
    s[()] = 4.0
    assert s.item() == 4.0


@pytest.mark.parametrize("mode", ["eager", "tape", "grad", "jit(grad)", "grad(jit)"])
def test_reshape_write_through_is_differentiated(mode):
    def f(x):
        y = x * 1.0
        m = y.reshape(2, 2)
        m[0] *= 3.0  # through the reshape of y
        return tf.sum(y * y)

    x0 = np.array([1.0, 2.0, 3.0, 4.0])
    want = np.array([18.0, 36.0, 6.0, 8.0])
    if mode == "eager":
        assert f(T(x0)).item() == 9 + 36 + 9 + 16
        return
    if mode == "tape":
        x = T(x0, requires_grad=True)
        f(x).backward()
        g = x.grad
    else:
        g = {"grad": tf.grad(f), "jit(grad)": tf.jit(tf.grad(f)),
             "grad(jit)": tf.grad(tf.jit(f))}[mode](T(x0))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)


@pytest.mark.parametrize("mode", ["eager", "tape", "grad", "jit(grad)", "grad(jit)"])
def test_write_through_is_differentiated_in_every_mode(mode):
    def f(x):
        y = x * 1.0
        y[0] *= 3.0  # through a view of y
        row = y[1:]
        row += y[0]  # and through a second one
        return tf.sum(y * y)

    x0 = np.array([1.0, 2.0, 3.0])
    # y = [3 x0, x1 + 3 x0, x2 + 3 x0]
    want_val = 9 + (2 + 3) ** 2 + (3 + 3) ** 2
    want = np.array([18 * 1 + 6 * (2 + 3) + 6 * (3 + 3), 2 * (2 + 3), 2 * (3 + 3)])
    if mode == "eager":
        assert f(T(x0)).item() == want_val
        return
    if mode == "tape":
        x = T(x0, requires_grad=True)
        f(x).backward()
        g = x.grad
    else:
        g = {"grad": tf.grad(f), "jit(grad)": tf.jit(tf.grad(f)),
             "grad(jit)": tf.grad(tf.jit(f))}[mode](T(x0))
    np.testing.assert_allclose(g.numpy(), want, rtol=1e-14)


@pytest.mark.parametrize("mode", ["grad", "jit"])
def test_the_refusal_holds_under_transformations(mode):
    def f(x):
        y = x.T
        y += 1.0
        return tf.sum(y)

    x = T(np.ones((2, 3)))
    with pytest.raises(GradientError, match="view"):
        tf.grad(f)(x) if mode == "grad" else tf.jit(f)(x)


def test_updates_that_are_not_through_views_work():
    a = T(np.arange(6.0).reshape(2, 3))
    a[0] = 7.0  # the original itself
    a[1, 2] = 6.0
    np.testing.assert_array_equal(a.numpy(), [[7, 7, 7], [3, 4, 6]])
    b = a[0].clone()  # an explicit copy is an independent tensor
    b += 1.0
    np.testing.assert_array_equal(b.numpy(), [8, 8, 8])
    c = a[[0, 1]]  # advanced indexing copies (in NumPy too): updating it is fine
    c *= 0.0
    np.testing.assert_array_equal(a.numpy()[0], [7, 7, 7])
    d = a.view(2, 3)  # nothing changes: the tensor itself, updated in place
    assert d is a
    d += 1.0
    np.testing.assert_array_equal(a.numpy()[0], [8, 8, 8])


def test_parameter_updates_on_the_tape_still_work():
    w = T([1.0, 2.0], requires_grad=True)
    tf.sum(w * w).backward()
    with tf.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
        w[0].mul_(10.0)  # through a view of a leaf: allowed under no_grad, as in PyTorch
    np.testing.assert_allclose(w.detach().numpy(), [8.0, 1.6])
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    with pytest.raises(GradientError, match="leaf"):
        w[0].mul_(2.0)  # with grad mode on, a leaf that requires grad cannot change
