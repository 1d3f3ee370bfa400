"""Indexing follows NumPy: basic, integer arrays (incl. NumPy's placement rules), bool masks
(eager), assignment; gathers accumulate cotangents of repeated indices."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError
from tenferro.testing import check_vjp

X = np.arange(60.0).reshape(3, 4, 5)
INDICES = [
    1, -1, (0, 2), (slice(None), 1), (Ellipsis, 2), (None, 1, None), (slice(1, None, 2),),
    (slice(None, None, -1), slice(3, 0, -2)), (0, slice(None), [1, 3]),
    ([0, 2], slice(None), [1, 4]), ([[0], [2]], [1, 3]), (slice(None), [0, 0, 3], [1, 2, 4]),
    (Ellipsis, [4, 0]), (1, [0, 1], None), (np.array([True, False, True]),),
    (slice(None), np.array([True, False, True, True])), (-2, -3, -4),
]


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i) for i in INDICES])
def test_getitem_matches_numpy(idx):
    x = tf.tensor(X)
    np.testing.assert_array_equal(x[idx].numpy(), X[idx])


@pytest.mark.parametrize("idx", INDICES[:14], ids=[repr(i) for i in INDICES[:14]])
def test_getitem_gradients(idx):
    check_vjp(lambda t: t[idx] * 1.5, (tf.tensor(X / 10),))


def test_repeated_indices_accumulate():
    emb = tf.tensor(np.zeros((4, 2)), requires_grad=True)
    ids = [1, 1, 3, 1]
    emb[ids].sum().backward()
    np.testing.assert_array_equal(emb.grad.numpy()[:, 0], [0, 3, 0, 1])


def test_setitem_matches_numpy_and_differentiates():
    x0 = X.copy()
    x = tf.tensor(X)
    x[1, 1:3] = -1.0
    x0[1, 1:3] = -1.0
    x[:, [0, 2], 4] = tf.tensor([[7.0, 8.0]])
    x0[:, [0, 2], 4] = [[7.0, 8.0]]
    np.testing.assert_array_equal(x.numpy(), x0)

    def f(a, v):
        b = a * 1
        b[0, ::2, 1] = v
        return b * a

    check_vjp(f, (tf.tensor(X / 10), tf.tensor([1.0, 2.0])))


def test_setitem_with_repeated_positions_is_an_error():
    x = tf.tensor(np.zeros(4))
    with pytest.raises(ShapeError, match="more than once"):
        x[[1, 1]] = tf.tensor([1.0, 2.0])
    np.testing.assert_array_equal(x.at[[1, 1]].add(tf.tensor([1.0, 2.0])).numpy(), [0, 3, 0, 0])


def test_index_errors():
    x = tf.tensor(X)
    with pytest.raises(ShapeError, match="out of bounds"):
        x[3]
    with pytest.raises(ShapeError, match="out of bounds"):
        x[:, [0, 4]]
    with pytest.raises(ShapeError, match="too many indices"):
        x[0, 0, 0, 0]


def test_take_and_scatter_add():
    x = tf.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(tf.take(x, [2, -1, 0], axis=1).numpy(),
                                  np.take(np.arange(6.0).reshape(2, 3), [2, -1, 0], axis=1))
    y = tf.scatter_add(tf.zeros((2, 3)), [0, 0, 2], tf.ones((2, 3)), axis=1)
    np.testing.assert_array_equal(y.numpy(), [[2, 0, 1], [2, 0, 1]])


def test_iteration_and_len():
    x = tf.tensor(X)
    assert len(x) == 3
    rows = list(x)
    np.testing.assert_array_equal(rows[2].numpy(), X[2])


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (3, 2), (2, 3, 1), (3,), (0, 3), (2, 0),
                                   (0,), (0, 0), (2, 3), ()])
def test_mask_shapes_follow_numpy(shape):
    """A boolean mask's sizes must each be the indexed axis's size or 0 (NumPy's rule); any
    other mask raises ``IndexShapeError``, an ``IndexError`` as NumPy's and the array API's."""
    from tenferro.errors import IndexShapeError

    x = np.arange(6.0).reshape(2, 3)
    mask = np.zeros(shape, bool)
    try:
        want = x[mask]
    except IndexError:
        with pytest.raises(IndexShapeError, match="boolean mask of shape"):
            tf.tensor(x)[tf.tensor(mask)]
        with pytest.raises(IndexError):
            tf.tensor(x)[tf.tensor(mask)]
        return
    got = tf.tensor(x)[tf.tensor(mask)]
    assert got.shape == want.shape
