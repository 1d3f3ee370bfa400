"""The NumPy names and signatures legacy (HIPS autograd) code uses: NumPy's values (eager and
jit), derivatives against finite differences, and the refusals (design/numpy-surface.md)."""

import pickle

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, DTypeError, ShapeError
from tenferro.testing import check_grads
from tests.numpy_api._util import assert_matches_numpy, sample

RNG = np.random.default_rng(7)


# ------------------------------------------------------------------------ array
def test_array_stacks_tensors_with_their_derivatives():
    def f(x):
        return tf.array([[x, x * 2.0, 3.0], [x**2, np.float64(1.5), x / 2.0]])

    x = tf.tensor(0.7)
    ref = np.array([[0.7, 1.4, 3.0], [0.49, 1.5, 0.35]])
    np.testing.assert_allclose(f(x).numpy(), ref, rtol=1e-15)
    np.testing.assert_allclose(tf.jit(f)(x).numpy(), ref, rtol=1e-15)
    check_grads(f, (x,), order=2)
    assert float(tf.grad(lambda x: tf.sum(f(x)))(x)) == pytest.approx(1 + 2 + 2 * 0.7 + 0.5)


def test_array_of_tensors_and_arrays():
    a, b = sample(RNG, (2, 3)), sample(RNG, (2, 3))
    check_grads(lambda x: tf.array([x, b, x * x]), (tf.tensor(a),))
    out = tf.array([tf.tensor(a), b])
    np.testing.assert_array_equal(out.numpy(), np.array([a, b]))


def test_array_copies_like_numpy():
    x = tf.tensor([1.0, 2.0])
    y = tf.array(x)
    assert y is not x
    y[0] = 5.0
    assert x.numpy().tolist() == [1.0, 2.0]  # copy=True: a new tensor
    assert tf.array(x, copy=None) is x
    with pytest.raises(ValueError, match="copy"):
        tf.array([1.0, 2.0], copy=False)  # host data needs a copy (NumPy 2 raises too)
    host = np.arange(3.0)
    t = tf.array(host)
    host[0] = 9.0
    assert t.numpy()[0] == 0.0


@pytest.mark.parametrize("data, kw", [
    ([1, 2, 3], {}), ([[1.0, 2.0]], {"dtype": "float32"}), (2.5, {"ndmin": 2}),
    ([1 + 2j, 3], {}), ([[1, 2]], {"ndmin": 3, "dtype": tf.complex128}), (True, {}),
])
def test_array_values_dtypes_and_ndmin(data, kw):
    ref = np.array(data, **{k: (np.dtype(v) if k == "dtype" else v) for k, v in kw.items()})
    out = tf.array(data, **kw)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    np.testing.assert_array_equal(out.numpy(), ref)


def test_array_refuses_subclasses_and_bad_order():
    with pytest.raises(DTypeError, match="subok"):
        tf.array([1.0], subok=True)
    with pytest.raises(ShapeError, match="order"):
        tf.array([1.0], order="X")
    with pytest.raises(DTypeError, match="array: .*rectangular"):
        tf.array([[1.0], [1.0, 2.0]])


# ------------------------------------------------------------------------ r_ / c_
R_CASES = {
    "vectors": lambda m, x, c: m.r_[x, c, x],
    "one": lambda m, x, c: m.r_[x],
    "slice": lambda m, x, c: m.r_[x, c, 1:10:3],
    "linspace": lambda m, x, c: m.r_[x, 0:1:4j, 2.5],
    "scalars": lambda m, x, c: m.r_[x, 7, -1.5],
    "0d": lambda m, x, c: m.r_[x[0], x],
    "axis directive": lambda m, x, c: m.r_["0,2", x, c],
    "axis ndmin trans": lambda m, x, c: m.r_["0,2,0", x, c],
    "c vectors": lambda m, x, c: m.c_[x, c, x],
    "c slice": lambda m, x, c: m.c_[x, 0:4],
    "c scalar": lambda m, x, c: m.c_[x[:1], 3.0],
}


@pytest.mark.parametrize("name", list(R_CASES))
def test_index_tricks_match_numpy_and_differentiate(name):
    f = R_CASES[name]
    c = sample(RNG, (4,))
    assert_matches_numpy(lambda x: f(tf, x, c), lambda x: f(np, x, c), sample(RNG, (4,)))
    check_grads(lambda x: f(tf, x, c), (tf.tensor(sample(RNG, (4,))),))


def test_index_tricks_on_matrices():
    c = sample(RNG, (3, 2))
    for f in (lambda m, x: m.r_[x, c, x], lambda m, x: m.c_[x, c], lambda m, x: m.r_["1", x, c],
              lambda m, x: m.c_[x, np.ones(3)]):
        assert_matches_numpy(lambda x: f(tf, x), lambda x: f(np, x), sample(RNG, (3, 2)))
        check_grads(lambda x: f(tf, x), (tf.tensor(sample(RNG, (3, 2))),))


def test_index_tricks_promote_like_numpy():
    x = tf.ones(2, dtype=tf.float32)
    assert tf.r_[x, 1].dtype == np.r_[np.ones(2, np.float32), 1].dtype == np.float32
    assert tf.r_[1, 2].dtype == np.r_[1, 2].dtype
    assert tf.r_[x, np.ones(1)].dtype == np.float64


def test_index_tricks_refusals():
    with pytest.raises(ShapeError, match="matrix"):
        tf.r_["r", [1, 2]]
    with pytest.raises(ShapeError, match="directive"):
        tf.r_["a,b", [1]]
    with pytest.raises(ShapeError, match="stop"):
        tf.r_[1:]
    with pytest.raises(ShapeError, match="nothing"):
        tf.r_[()]


# ------------------------------------------------------------------------ small names
def test_ndim_and_complex_tests_match_numpy():
    z = np.array([1.0, 2 + 1e-3j, 3j])
    for v in (3.0, [[1, 2]], np.ones((2, 3, 1)), 1j, z):
        assert tf.ndim(v) == np.ndim(v)
        assert tf.iscomplexobj(v) == np.iscomplexobj(v)
        assert tf.isrealobj(v) == np.isrealobj(v)
        assert tf.ndim(tf.asarray(v)) == np.ndim(v)
        assert tf.iscomplexobj(tf.asarray(v)) == np.iscomplexobj(v)
        np.testing.assert_array_equal(tf.iscomplex(v).numpy(), np.iscomplex(v))
    assert tf.ndim([tf.ones(3), tf.ones(3)]) == 2


def test_real_if_close():
    for a in (np.array([1.0 + 1e-15j, 2.0]), np.array([1.0 + 1e-3j, 2.0]), np.array([1.0, 2.0])):
        out, ref = tf.real_if_close(a), np.real_if_close(a)
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(out.numpy(), ref)
    a = np.array([1.0 + 1e-3j])
    assert tf.real_if_close(a, tol=1e-2).dtype == np.real_if_close(a, tol=1e-2).dtype
    z = tf.tensor([1.0 + 0j, 2.0 + 0j])
    check_grads(lambda z: tf.real_if_close(z) * tf.tensor([1.0, 3.0]), (z,))
    with pytest.raises(ConcretizationError, match="real_if_close"):
        tf.jit(tf.real_if_close)(z)


@pytest.mark.parametrize("axis, start", [(0, 0), (2, 0), (0, 3), (1, 3), (-1, 1), (1, -2),
                                         (2, 2)])
def test_rollaxis(axis, start):
    assert_matches_numpy(lambda x: tf.rollaxis(x, axis, start),
                         lambda x: np.rollaxis(x, axis, start), sample(RNG, (2, 3, 4)))
    check_grads(lambda x: tf.rollaxis(x, axis, start), (tf.tensor(sample(RNG, (2, 3, 4))),))


def test_rollaxis_refuses_a_bad_start():
    with pytest.raises(ShapeError, match="rollaxis"):
        tf.rollaxis(tf.ones((2, 3)), 0, 3)


def test_row_stack_swapaxes_keywords_where_one_argument():
    a, b = sample(RNG, (3,)), sample(RNG, (2, 3))
    assert_matches_numpy(lambda x, y: tf.row_stack([x, y]), lambda x, y: np.vstack([x, y]), a, b)
    x = sample(RNG, (2, 3, 4))
    assert_matches_numpy(lambda x: tf.swapaxes(x, axis1=0, axis2=-1),
                         lambda x: np.swapaxes(x, axis1=0, axis2=-1), x)
    c = np.array([[0, 1.5], [0, 0], [2, 0]])
    for got, want in zip(tf.where(c), np.where(c), strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
        assert got.dtype == tf.int64
    with pytest.raises(ShapeError, match="both x and y"):
        tf.where(c, 1.0)
    check_grads(lambda x, y: tf.where(c > 0, x, y), (tf.tensor(sample(RNG, (3, 2))),
                                                      tf.tensor(sample(RNG, (3, 2)))))


def test_dtype_and_ndarray():
    assert tf.dtype("float32") == tf.float32 and tf.dtype is np.dtype
    assert isinstance(tf.ones(2).dtype, tf.dtype)
    seen = []
    tf.grad(lambda x: seen.append(isinstance(x, tf.ndarray)) or tf.sum(x))(tf.ones(2))
    tf.jit(lambda x: seen.append(isinstance(x, tf.ndarray)) or x)(tf.ones(2))
    assert seen == [True, True] and isinstance(tf.ones(2), tf.ndarray)
    assert not isinstance(np.ones(2), tf.ndarray)


def test_float16_is_refused_with_a_reason():
    with pytest.raises(AttributeError, match="float16.*float32"):
        tf.float16  # noqa: B018


# ------------------------------------------------------------------------ products
@pytest.mark.parametrize("sa, sb", [((2,), (3,)), ((2, 3), (4, 5)), ((2,), (3, 4)),
                                    ((2, 1, 3), (4, 2)), ((), (3,)), ((), ()),
                                    ((2, 2, 2), (1, 3, 2))])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_kron_any_ranks(sa, sb, dtype):
    a, b = sample(RNG, sa, dtype), sample(RNG, sb, dtype)
    assert_matches_numpy(tf.kron, np.kron, a, b)
    check_grads(tf.kron, (tf.tensor(a), tf.tensor(b)), order=2)


def test_kron_of_bools_and_ints():
    a, b = np.array([True, False]), np.array([[True], [True]])
    assert_matches_numpy(tf.kron, np.kron, a, b)
    assert_matches_numpy(tf.kron, np.kron, np.arange(4).reshape(2, 2), np.arange(3))


@pytest.mark.parametrize("sa, sb", [((), (3,)), ((2, 3), ()), ((), ()), ((3,), (2, 3))])
def test_inner_with_a_scalar(sa, sb):
    a, b = sample(RNG, sa), sample(RNG, sb)
    assert_matches_numpy(tf.inner, np.inner, a, b)
    check_grads(tf.inner, (tf.tensor(a), tf.tensor(b)), order=2)
    assert tf.inner(2.0, tf.tensor([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]


def test_inner_refuses_mismatched_lengths():
    with pytest.raises(ShapeError, match="inner"):
        tf.inner(tf.ones(3), tf.ones(2))


def test_trace_has_numpys_signature():
    x = sample(RNG, (3, 4, 5))
    assert_matches_numpy(lambda x: tf.trace(x, 1, 0, 2), lambda x: np.trace(x, 1, 0, 2), x)
    assert_matches_numpy(lambda x: tf.trace(x, offset=-1, axis1=2, axis2=1),
                         lambda x: np.trace(x, offset=-1, axis1=2, axis2=1), x)


# ------------------------------------------------------------------------ eigh's UPLO
@pytest.mark.parametrize("uplo", ["L", "U", "l"])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_eigh_uplo_reads_one_triangle(uplo, dtype):
    a = sample(RNG, (2, 4, 4), dtype)  # not Hermitian: only the triangle counts
    w, v = tf.linalg.eigh(a, uplo)
    wr, vr = np.linalg.eigh(a, uplo.upper())
    np.testing.assert_allclose(w.numpy(), wr, rtol=1e-12, atol=1e-12)
    # eigenvectors up to phase: compare the projectors
    p, pr = (np.einsum("...ik,...jk->...kij", u, u.conj()) for u in (v.numpy(), vr))
    np.testing.assert_allclose(p, pr, atol=1e-10)
    np.testing.assert_allclose(tf.linalg.eigvalsh(a, UPLO=uplo).numpy(), wr, rtol=1e-12,
                               atol=1e-12)
    check_grads(lambda a: tf.linalg.eigvalsh(a, uplo), (tf.tensor(a),), order=2)
    # the other triangle does not matter
    other = np.triu(np.ones((4, 4)), 1) if uplo.upper() == "L" else np.tril(np.ones((4, 4)), -1)
    g = tf.grad(lambda a: tf.sum(tf.linalg.eigh(a, uplo).eigenvalues ** 3).real)(tf.tensor(a))
    assert np.all(g.numpy() * other == 0)


def test_eigh_default_is_the_hermitian_part():
    a = sample(RNG, (4, 4))
    np.testing.assert_allclose(tf.linalg.eigh(a).eigenvalues.numpy(),
                               np.linalg.eigvalsh((a + a.T) / 2), rtol=1e-12)
    assert tf.jit(lambda a: tf.linalg.eigh(a, "U").eigenvalues)(tf.tensor(a)).shape == (4,)


def test_eigh_second_positional_number_points_at_eps():
    a = tf.eye(3)
    for bad in (1e-3, 0, tf.float64):
        with pytest.raises(DTypeError, match="eps="):
            tf.linalg.eigh(a, bad)
    with pytest.raises(DTypeError, match="eps="):
        tf.linalg.eigvalsh(a, 1e-8)
    with pytest.raises(DTypeError, match="'L' or 'U'"):
        tf.linalg.eigh(a, "X")
    w = tf.linalg.eigh(a, eps=1e-3).eigenvalues
    np.testing.assert_allclose(w.numpy(), [1.0, 1.0, 1.0])


# ------------------------------------------------------------------------ dtypes
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", DTYPES)
def test_dtypes_are_numpy_dtypes_and_callable(name):
    d = getattr(tf, name)
    nd = np.dtype(name)
    assert d == nd and nd == d and hash(d) == hash(nd) and np.dtype(d) == nd
    assert d == nd.type and nd.type == d and not (d != nd)  # equal to the scalar type too
    assert d.kind == nd.kind and d.itemsize == nd.itemsize and d.type is nd.type
    assert np.zeros(2, dtype=d).dtype == nd and np.ones(1).astype(d).dtype == nd
    assert tf.zeros(2, dtype=d).dtype == d and {d: 1}[nd] == 1
    assert pickle.loads(pickle.dumps(d)) == d
    assert str(d) == str(nd) and repr(d) == f"tenferro.{name}"
    t = d([1, 0, 2])  # NumPy's scalar-type call: a cast
    assert t.dtype == nd
    np.testing.assert_array_equal(t.numpy(), nd.type(np.array([1, 0, 2])))


def test_scalar_type_casts_like_numpy_and_differentiate():
    w = tf.tensor([[0.2, 1.0], [0.7, 0.0]])
    idx = tf.int64(w[:, -1])
    assert idx.dtype == tf.int64 and idx.numpy().tolist() == [1, 0]
    assert float(tf.float32(2.5)) == 2.5 and tf.float32(2.5).dtype == np.float32
    check_grads(lambda x: tf.complex128(x) * (1 + 2j), (tf.tensor([0.3, -1.2]),))
