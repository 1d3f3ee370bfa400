"""ncon: the physicists' convention (positive labels contracted, negative labels open)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.contract.ncon import _path
from tenferro.errors import ShapeError
from tenferro.testing import check_vjp
from tests.einsum.problems import random_arrays


def test_matrix_product_and_open_leg_order():
    a, b = random_arrays([(3, 4), (4, 5)], np.float64, 0)
    got = tf.ncon([tf.tensor(a), tf.tensor(b)], [[-1, 1], [1, -2]])
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-13)
    got = tf.ncon([tf.tensor(a), tf.tensor(b)], [[-2, 1], [1, -1]])  # -1 comes first
    np.testing.assert_allclose(got.numpy(), (a @ b).T, rtol=1e-13)
    got = tf.ncon([tf.tensor(a), tf.tensor(b)], [[-1, 1], [1, -2]], forder=[-2, -1])
    np.testing.assert_allclose(got.numpy(), (a @ b).T, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_mps_expectation_value(dtype):
    """<psi|O_2|psi> for a 3-site MPS, against numpy.einsum."""
    A1, A2, A3, O = random_arrays([(1, 2, 3), (3, 2, 3), (3, 2, 1), (2, 2)], dtype, 1)
    ts = [tf.tensor(x) for x in (A1, A2, A3, O)]
    bra = [tf.conj(t) for t in ts[:3]]
    got = tf.ncon(
        [ts[0], ts[1], ts[2], ts[3], bra[0], bra[1], bra[2]],
        [[1, 2, 3], [3, 4, 5], [5, 6, 7], [8, 4], [1, 2, 9], [9, 8, 10], [10, 6, 7]],
    )
    ref = np.einsum("abc,cde,efg,hd,abi,ihj,jfg->", A1, A2, A3, O,
                    A1.conj(), A2.conj(), A3.conj())
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_partial_trace_and_order():
    t, m = random_arrays([(3, 4, 3, 5), (5, 4)], np.float64, 2)
    for order in (None, [1, 2, 3], [3, 2, 1], [2, 1, 3], "greedy", "optimal"):
        got = tf.ncon([tf.tensor(t), tf.tensor(m)], [[1, 2, 1, 3], [3, 2]], order=order)
        np.testing.assert_allclose(got.numpy(), np.einsum("ijik,kj->", t, m), rtol=1e-12)
    # a single tensor: trace plus open legs
    got = tf.ncon([tf.tensor(t)], [[1, -2, 1, -1]])
    np.testing.assert_allclose(got.numpy(), np.einsum("ijik->kj", t), rtol=1e-12)


def test_order_is_followed():
    """Contracting bond 2 first pairs tensors 1 and 2; bond 1 first pairs tensors 0 and 1."""
    labels = [(-1, 1), (1, 2), (2, -2)]
    assert _path(labels, (1, 2)) == [(0, 1), (0, 1)]
    assert _path(labels, (2, 1)) == [(1, 2), (0, 1)]
    # shared bonds are contracted together: one step for bonds 1 and 2 between two tensors
    assert _path([(1, 2, -1), (2, 1, -2)], (1, 2)) == [(0, 1)]


def test_disconnected_pieces_become_outer_products():
    a, b, c = random_arrays([(2, 3), (3,), (4,)], np.float64, 3)
    got = tf.ncon([tf.tensor(a), tf.tensor(b), tf.tensor(c)], [[-1, 1], [1], [-2]])
    np.testing.assert_allclose(got.numpy(), np.outer(a @ b, c), rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_gradients(dtype):
    a, b, c = (tf.tensor(x) for x in random_arrays([(2, 3, 4), (4, 3, 5), (5, 2)], dtype, 4))
    check_vjp(lambda x, y, z: tf.ncon([x, y, z], [[-1, 2, 3], [3, 2, 4], [4, -2]]), (a, b, c))


@pytest.mark.parametrize(
    "index_lists,kw,match",
    [
        ([[1, 2], [2, 3]], {}, "label 1 appears 1 time"),
        ([[1, 1], [1, -1]], {}, "label 1 appears 3 time"),
        ([[-1, 1], [1, -1]], {}, "open label -1 appears 2 times"),
        ([[0, 1], [1, -1]], {}, "label 0"),
        ([[1.5, 1], [1, -1]], {}, "nonzero integers"),
        ([[-1, 1], [1, -2]], {"order": [1, 2]}, "order"),
        ([[-1, 1], [1, -2]], {"forder": [-1]}, "forder"),
        ([[-1, 1]], {}, "2 tensors but 1 index lists"),
        ([[-1, 1, -3], [1, -2]], {}, "rank"),
    ],
)
def test_errors(index_lists, kw, match):
    a, b = tf.tensor(np.ones((2, 2))), tf.tensor(np.ones((2, 2)))
    with pytest.raises(ShapeError, match=match):
        tf.ncon([a, b], index_lists, **kw)
