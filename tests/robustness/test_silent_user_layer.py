"""Silent results of the user-function layer, each now a value NumPy/PyTorch would give or a
named error: ``topk`` skipping NaN, ``matrix_rank`` of a NaN matrix saying 0, nonsense
truncation and broadcast arguments accepted, complex -> real casts dropping the imaginary part
without a warning, and ``solve``'s gradient blaming the matrix for an inf cotangent."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ComplexWarning, DTypeError, LinAlgError, ShapeError


# ---------------------------------------------------------------------------- topk
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_topk_counts_nan_as_the_largest_value(mode):
    f = tf.topk if mode == "eager" else tf.jit(tf.topk, static_argnums=(1,))
    x = tf.tensor([1.0, np.nan, 3.0, np.inf, np.nan])
    v, i = f(x, 3)
    np.testing.assert_array_equal(i.numpy(), [1, 4, 3])  # NaNs first (by index), then inf
    np.testing.assert_array_equal(v.numpy(), [np.nan, np.nan, np.inf])
    v, i = tf.topk(x, 2, largest=False)
    np.testing.assert_array_equal(i.numpy(), [0, 2])


def test_topk_matches_sort_and_torch_order_at_ties_and_for_unsigned():
    x = np.array([[2.0, 5.0, 5.0, -1.0], [0.0, 0.0, 7.0, 7.0]])
    v, i = tf.topk(tf.tensor(x), 3)
    np.testing.assert_array_equal(i.numpy(), [[1, 2, 0], [2, 3, 0]])  # ties: lower index
    np.testing.assert_array_equal(v.numpy(), [[5, 5, 2], [7, 7, 0]])
    u = np.array([0, 200, 3], np.uint8)  # -x would wrap: 0 would come first
    np.testing.assert_array_equal(tf.topk(tf.tensor(u), 2).values.numpy(), [200, 3])
    np.testing.assert_array_equal(tf.topk(tf.tensor([True, False, True]), 2).indices.numpy(),
                                  [0, 2])
    g = tf.grad(lambda t: tf.sum(tf.topk(t, 2).values * tf.tensor([1.0, 10.0])))(
        tf.tensor([3.0, 1.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [1.0, 0.0, 10.0])


# --------------------------------------------------------------------- matrix_rank
@pytest.mark.parametrize("a", [np.full((3, 3), np.nan), np.diag([1.0, np.nan, 2.0]),
                               np.diag([np.inf, 1.0])], ids=["nan", "one-nan", "inf"])
def test_matrix_rank_of_a_non_finite_matrix_raises_as_numpy(a):
    if np.isnan(a).any():  # (NumPy answers nan singular values for inf: no rank either)
        with pytest.raises(np.linalg.LinAlgError):
            np.linalg.matrix_rank(a)
    with pytest.raises(LinAlgError, match="NaN or inf"):
        tf.linalg.matrix_rank(tf.tensor(a))
    with pytest.raises(LinAlgError, match=r"NaN or inf.*\[at "):
        tf.jit(tf.linalg.matrix_rank)(tf.tensor(a))
    with pytest.raises(LinAlgError):
        tf.linalg.svdvals(tf.tensor(a))
    assert tf.linalg.matrix_rank(tf.tensor(np.diag([1.0, 0.0, 2.0]))).item() == 2


# --------------------------------------------------------------- truncation arguments
@pytest.mark.parametrize("kw,err", [
    ({"max_rank": -3}, ShapeError), ({"max_rank": 0}, ShapeError),
    ({"max_rank": True}, DTypeError), ({"max_rank": 2.5}, ShapeError),
    ({"max_rank": float("inf")}, ShapeError),
    ({"max_rank": "2"}, DTypeError), ({"cutoff": -1.0}, ShapeError),
    ({"cutoff": "x"}, DTypeError), ({"relative_cutoff": 2.0}, ShapeError),
    ({"relative_cutoff": float("nan")}, ShapeError), ({"cutoff": False}, DTypeError),
])
def test_truncation_arguments_are_checked(kw, err):
    s = tf.tensor([3.0, 2.0, 1.0])
    with pytest.raises(err, match=r"truncation_rank: (max_rank|cutoff|relative_cutoff)"):
        tf.linalg.truncation_rank(s, **kw)
    with pytest.raises(err, match=r"svd: (max_rank|cutoff|relative_cutoff)"):
        tf.linalg.svd(tf.tensor(np.eye(3)), **kw)


def test_valid_truncation_arguments_still_work():
    s = tf.tensor([3.0, 2.0, 1.0])
    assert tf.linalg.truncation_rank(s, max_rank=2) == 2
    assert tf.linalg.truncation_rank(s, max_rank=np.int64(5)) == 3
    assert tf.linalg.truncation_rank(s, cutoff=1.5) == 2
    assert tf.linalg.truncation_rank(s, relative_cutoff=np.float32(0.5)) == 2


# -------------------------------------------------------------------- broadcasting
@pytest.mark.parametrize("shapes", [((2, -3), (1,)), ((-1,),), (-2, (3,))], ids=str)
def test_broadcast_shapes_refuses_negative_sizes(shapes):
    with pytest.raises(ShapeError, match="negative size"):
        tf.broadcast_shapes(*shapes)
    assert tf.broadcast_shapes((2, 1), (3,)) == (2, 3)


# ------------------------------------------------------------------ complex casts
@pytest.mark.parametrize("cast", [
    lambda z: z.astype("float64"), lambda z: tf.astype(z, tf.float32),
    lambda z: z.to(tf.float64), lambda z: tf.astype(z, tf.int64),
    lambda z: tf.jit(lambda w: w.astype("float64"))(z),
])
def test_a_complex_to_real_cast_warns(cast):
    z = tf.tensor([1.0 + 2.0j, 3.0 - 1.0j])
    with pytest.warns(ComplexWarning, match=r"discards the imaginary part.*x\.real"):
        out = cast(z)
    np.testing.assert_array_equal(out.numpy(), [1, 3])


def test_the_warning_is_numpys_complex_warning_and_real_parts_do_not_warn():
    assert issubclass(ComplexWarning, np.exceptions.ComplexWarning)
    z = tf.tensor([1.0 + 2.0j, 0.0 + 1.0j, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(z.real.astype("float32").numpy(), [1, 0, 0])
        np.testing.assert_array_equal(tf.astype(z, bool).numpy(), [True, True, False])  # NumPy
        tf.astype(tf.tensor([1.0]), tf.complex128)


# ------------------------------------------------------------------ solve gradient
def test_an_inf_cotangent_through_solve_propagates_instead_of_blaming_the_matrix():
    a, b = tf.tensor(np.eye(2) * 2), tf.tensor([1.0, 1.0])
    with np.errstate(invalid="ignore"):
        ga, = tf.vjp(lambda a: tf.linalg.solve(a, b), a)[1](tf.tensor([np.inf, 1.0]))
    assert not np.all(np.isfinite(ga.numpy()))  # inf/nan, as NumPy, PyTorch and JAX
    with pytest.raises(tf.errors.SingularMatrixError, match="singular"):
        tf.linalg.solve(tf.tensor(np.zeros((2, 2))), b)
