"""tensordot (implemented in tenferro._src.ops.products): NumPy semantics and derivatives."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError
from tenferro.testing import check_grads
from tests.einsum.problems import random_arrays

CASES = [
    ((3, 4), (4, 5), 1),
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3, 4), (4, 3, 5), ((1, 2), (1, 0))),
    ((2, 3, 4), (5, 4), ((-1,), (-1,))),
    ((2, 3), (4,), 0),
    ((3, 4), (3, 4), ([0, 1], [0, 1])),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", CASES, ids=[str(c[2]) for c in CASES])
def test_matches_numpy_and_derivatives(case, dtype):
    sa, sb, axes = case
    a, b = random_arrays([sa, sb], dtype, 0)
    got = tf.tensordot(tf.tensor(a), tf.tensor(b), axes)
    np.testing.assert_allclose(got.numpy(), np.tensordot(a, b, axes), rtol=1e-13)
    check_grads(lambda x, y: tf.tensordot(x, y, axes), (tf.tensor(a), tf.tensor(b)), order=2)


def test_promotes_and_checks_sizes():
    a = np.ones((2, 3), np.float32)
    b = np.ones((3,), np.complex128)
    assert tf.tensordot(tf.tensor(a), tf.tensor(b), 1).dtype == np.complex128
    with pytest.raises(ShapeError, match="does not match"):
        tf.tensordot(tf.tensor(a), tf.tensor(np.ones((4,))), 1)
