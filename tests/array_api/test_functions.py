"""Values of the functions tenferro gained for the array API standard, against NumPy (whose
functions of the same names follow the standard), their modes (eager, ``jit``, saved graphs;
the data-dependent ones with run-time sizes in traced code, a named error under ``vmap``), and
the fixes of behaviour the standard asks for. Their derivatives are checked by the generic
rule checks (``tests/programs.py``: the ``array_api_*`` programs) and, for the data-dependent
ones, here."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError, ShapeError
from tenferro.testing import check_jvp, check_vjp

T = tf.asarray


def close(t, want):
    np.testing.assert_allclose(np.asarray(t), want, rtol=1e-13, atol=1e-15)


# ------------------------------------------------------------------ the fixes
def test_creation_defaults_and_fixes():
    assert tf.ones((2,), dtype=None).dtype == tf.float64
    assert tf.zeros_like(T([1, 2]), dtype=None).dtype == tf.int64
    assert tf.ones_like(T([1.0]), device="cpu").device == "cpu"
    for a, b, n in ((0.1, 0.7, 7), (-3.3, 1e-3, 11), (1.0, 0.3, 4)):
        x = tf.linspace(a, b, n).numpy()
        assert x[-1] == b and x[0] == a  # exact endpoints (before: 1 ulp off)
        np.testing.assert_allclose(x, np.linspace(a, b, n), rtol=1e-15)
    close(tf.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False))
    close(tf.linspace(1j, 2.0, 3), np.linspace(1j, 2.0, 3))
    assert tf.linspace(0, 1, 3, dtype=tf.float32).dtype == tf.float32
    close(tf.eye(3, 4, k=1), np.eye(3, 4, k=1))
    assert tf.eye(2, k=2**63).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert tf.empty((2, 3), dtype=tf.int8).shape == (2, 3)
    assert tf.empty_like(T([1.0, 2.0])).dtype == tf.float64


def test_concat_axis_none_and_expand_dims_repeated_axes():
    a, b = tf.ones((2, 2)), tf.zeros((3,))
    close(tf.concat([a, b], axis=None), np.concatenate([np.ones((2, 2)), np.zeros(3)], None))
    with pytest.raises(ShapeError, match="repeated"):
        tf.expand_dims(tf.ones((2,)), (0, 0))
    with pytest.raises(ShapeError, match="repeated"):
        tf.expand_dims(tf.ones((2,)), (1, -2))  # the same position of the result
    assert tf.expand_dims(tf.ones((2,)), (0, 2)).shape == (1, 2, 1)


def test_signatures_the_standard_changed():
    x = T([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    close(tf.std(x, axis=1, correction=1), np.std(x.numpy(), axis=1, ddof=1))
    close(tf.var(x, correction=0.5), np.var(x.numpy(), ddof=0.5))
    with pytest.raises(TypeError, match="not both"):
        tf.var(x, ddof=1, correction=1)
    assert tf.argmax(x, axis=1, keepdims=True).tolist() == [[0], [1]]
    assert tf.argmin(x, keepdims=True).shape == (1, 1)
    close(tf.sort(x, axis=1, descending=True), -np.sort(-x.numpy(), axis=1))
    assert tf.argsort(T([1, 3, 1, 3]), descending=True).tolist() == [1, 3, 0, 2]  # stable
    assert tf.argsort(T([1, 3, 1, 3]), stable=True).tolist() == [0, 2, 1, 3]
    close(tf.clip(x, min=1.0, max=3.0), np.clip(x.numpy(), 1.0, 3.0))
    assert tf.clip(T([-100, 5], dtype=tf.int8), -300, 3).tolist() == [-100, 3]  # wide
    assert tf.prod(T([2, 3], dtype=tf.int8), dtype=tf.int16).dtype == tf.int16
    close(tf.fft.fftfreq(5, d=0.5, dtype=tf.float32),
          np.fft.fftfreq(5, 0.5).astype(np.float32))
    assert tf.fft.rfftfreq(6, dtype=tf.float32).dtype == tf.float32


# ------------------------------------------------------------------- new functions
def test_elementwise_additions():
    x = T([-2.0, -0.0, 0.0, 3.0, np.inf, -np.inf, np.nan])
    y = T([1.0, -1.0, -1.0, -2.0, 1.0, 0.0, -1.0])
    xs, ys = x.numpy(), y.numpy()
    assert tf.isinf(x).tolist() == np.isinf(xs).tolist()
    assert tf.signbit(x).tolist() == np.signbit(xs).tolist()
    np.testing.assert_array_equal(tf.copysign(x, y).numpy(), np.copysign(xs, ys))
    np.testing.assert_array_equal(tf.nextafter(x, y).numpy(), np.nextafter(xs, ys))
    b1, b2 = T([True, False, True]), T([True, True, False])
    assert tf.logical_xor(b1, b2).tolist() == [False, True, True]
    assert (b1 ^ b2).tolist() == [False, True, True]
    assert tf.positive(x) is x
    assert tf.isinf(T([complex(1, np.inf)])).tolist() == [True]


def test_all_any_count_nonzero():
    x = T([[0.0, 1.0, np.nan], [0.0, 0.0, 0.0]])
    xs = x.numpy()
    for axis in (None, 0, 1, (0, 1)):
        for kd in (False, True):
            np.testing.assert_array_equal(tf.all(x, axis=axis, keepdims=kd).numpy(),
                                          np.all(xs, axis=axis, keepdims=kd))
            np.testing.assert_array_equal(tf.any(x, axis=axis, keepdims=kd).numpy(),
                                          np.any(xs, axis=axis, keepdims=kd))
            np.testing.assert_array_equal(tf.count_nonzero(x, axis=axis, keepdims=kd).numpy(),
                                          np.count_nonzero(xs, axis=axis, keepdims=kd))
    assert tf.all(tf.ones((0,))).item() is True and tf.any(tf.ones((0,))).item() is False


def test_cumulative_sum_and_prod():
    x = T([[1.0, 2.0, 0.0], [3.0, -1.0, 2.0]])
    close(tf.cumulative_sum(x, axis=1), np.cumsum(x.numpy(), 1))
    close(tf.cumulative_prod(x, axis=0), np.cumprod(x.numpy(), 0))
    close(tf.cumulative_sum(x, axis=1, include_initial=True),
          np.concatenate([np.zeros((2, 1)), np.cumsum(x.numpy(), 1)], 1))
    close(tf.cumulative_prod(T([2.0, 3.0, 4.0]), include_initial=True), [1, 2, 6, 24])
    assert tf.cumulative_sum(T([1, 2], dtype=tf.int8)).dtype == tf.int64
    with pytest.raises(ShapeError, match="axis=None"):
        tf.cumulative_sum(x)
    # the derivative of the product scan is exact at zeros (no division)
    g = tf.grad(lambda v: tf.sum(tf.cumulative_prod(v)))(T([2.0, 0.0, 3.0]))
    close(g, [1.0, 2 + 6, 0.0])


def test_searchsorted():
    s = T([1.0, 2.0, 2.0, 3.0, np.nan])
    v = T([[2.0, 0.0], [np.nan, 3.5]])
    for side in ("left", "right"):
        np.testing.assert_array_equal(tf.searchsorted(s, v, side=side).numpy(),
                                      np.searchsorted(s.numpy(), v.numpy(), side=side))
    assert tf.searchsorted(T([5, 1, 3]), T([2, 4]), sorter=T([1, 2, 0])).tolist() == [1, 2]
    assert tf.searchsorted(T([1, 2, 3]), T([2.5])).tolist() == [2]  # promotes
    # a primitive: jit and vmap give the same
    f = tf.jit(lambda a, b: tf.searchsorted(a, b, side="right"))
    assert f(s, v).tolist() == tf.searchsorted(s, v, side="right").tolist()
    batched = tf.vmap(lambda a: tf.searchsorted(a, T([2.0, 0.5])))(T([[1.0, 2.0, 3.0],
                                                                       [0.0, 1.0, 2.5]]))
    assert batched.tolist() == [[1, 0], [2, 1]]
    per_value = tf.vmap(lambda b: tf.searchsorted(s, b))(v)
    assert per_value.tolist() == tf.searchsorted(s, v).tolist()


def test_nonzero_and_unique():
    x = T([[3.0, 0.0, 1.0], [np.nan, 3.0, np.nan]])
    xs = x.numpy()
    for got, want in zip(tf.nonzero(x), np.nonzero(xs)):
        assert got.dtype == tf.int64 and got.tolist() == want.tolist()
    with pytest.raises(ShapeError, match="0-d"):
        tf.nonzero(T(1.0))
    u = tf.unique_all(x)
    w = np.unique_all(xs)
    for name in ("values", "indices", "inverse_indices", "counts"):
        np.testing.assert_array_equal(getattr(u, name).numpy(), getattr(w, name))
    assert u.inverse_indices.shape == x.shape  # 2023.12: the shape of x
    np.testing.assert_array_equal(tf.unique_values(x).numpy(), np.unique_values(xs))
    assert tf.unique_counts(x).counts.tolist() == np.unique_counts(xs).counts.tolist()
    assert tf.unique_inverse(x).inverse_indices.tolist() == \
        np.unique_inverse(xs).inverse_indices.tolist()
    assert tf.unique_values(tf.ones((0,))).shape == (0,)


DATA_DEPENDENT = {
    "nonzero": lambda v: tf.nonzero(v > 0.5),
    "mask": lambda v: v[v > 0.5] * 2.0,
    "mask_rows": lambda v: v[v[:, 0] > 0.5],
    "mask_set": lambda v: _masked_set(v),
    "unique_all": lambda v: tuple(tf.unique_all(tf.round(v))),
    "unique_values": lambda v: tf.unique_values(tf.round(v)) ** 2,
}


def _masked_set(v):
    v = v * 1.0
    v[v < 0] = 0.0
    return v


@pytest.mark.parametrize("name", list(DATA_DEPENDENT))
def test_data_dependent_shapes_in_traced_code(name, tmp_path):
    """The output length is a run-time size: one graph serves every run (0 included), equals
    eager mode, saves and loads, and differentiates (jit of grad, grad of jit)."""
    f = DATA_DEPENDENT[name]
    jf = tf.jit(f)
    rng = np.random.default_rng(3)
    graph = tf.make_graph(f, T(rng.standard_normal((4, 3))))
    graph.save(tmp_path / "g.tfg")
    loaded = tf.load(tmp_path / "g.tfg")
    for x in (rng.standard_normal((4, 3)) * 2, np.full((4, 3), -1.0), np.ones((4, 3)),
              np.array([[np.nan, 0.0, -0.0], [1.0, 1.0, 2.0], [3.0, np.nan, 0.7], [0, 0, 0]])):
        want = f(T(x))
        for got in (jf(T(x)), loaded(T(x))):
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                np.testing.assert_array_equal(g.numpy(), w.numpy())
    if name in ("mask", "mask_set", "unique_values"):
        loss = lambda v: tf.sum(f(v) ** 2)  # noqa: E731
        x = T(rng.standard_normal((4, 3)))
        close(tf.jit(tf.grad(loss))(x), tf.grad(loss)(x).numpy())
        close(tf.grad(tf.jit(loss))(x), tf.grad(loss)(x).numpy())


def test_data_dependent_shapes_under_vmap_raise_a_named_error():
    for name in ("nonzero", "mask", "unique_values"):
        with pytest.raises(ShapeError, match="vmap"):
            tf.vmap(lambda v, f=DATA_DEPENDENT[name]: tf.sum(f(v)[0]))(tf.ones((2, 4, 3)))
    with pytest.raises(DTypeError, match="traced"):
        tf.jit(tf.unique_values)(T([1j, 2.0]))  # no order to sort complex numbers by
    close(tf.unique_values(T([1j, 2.0, 1j])), [1j, 2.0])  # eager: sorted (NumPy's order)


def test_unique_values_are_differentiable():
    """Each unique value is its first occurrence: its derivative is that entry's."""
    x = T([2.0, -1.0, 2.0, 0.5])
    g = tf.grad(lambda v: tf.sum(tf.unique_values(v) * T([1.0, 2.0, 3.0])))(x)
    close(g, [3.0, 1.0, 0.0, 2.0])  # sorted values -1, 0.5, 2 (first 2 at index 0)
    y = T([2.0, -1.0, 0.3, 0.5])  # finite differences need distinct values (ties split)
    check_jvp(tf.unique_values, (y,))
    check_vjp(tf.unique_values, (y,))
    check_vjp(lambda v: tf.unique_counts(v).values * 2, (y,))


def test_shape_functions():
    a, b = tf.ones((2, 1)), tf.arange(3.0)
    ba, bb = tf.broadcast_arrays(a, b)
    assert ba.shape == bb.shape == (2, 3) and ba.dtype == tf.float64
    x = tf.arange(6.0).reshape(2, 3)
    for axis in (0, 1, -1):
        got = tf.unstack(x, axis=axis)
        want = [np.take(x.numpy(), i, axis=axis) for i in range(x.shape[axis])]
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w)
    for ind in ("xy", "ij"):
        for g, w in zip(tf.meshgrid(T([1.0, 2.0]), T([3.0, 4.0, 5.0]), T([6.0]), indexing=ind),
                        np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0], indexing=ind)):
            close(g, w)
    assert tf.matrix_transpose(tf.ones((4, 2, 3))).shape == (4, 3, 2)
    with pytest.raises(ShapeError, match="two axes"):
        tf.matrix_transpose(tf.ones((3,)))


def test_vecdot_and_the_linalg_extension():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((3, 4))
    close(tf.vecdot(T(a), T(b)), np.vecdot(a, b))
    close(tf.linalg.vecdot(T(a), T(b[:, :1]), axis=-2), np.vecdot(a, b[:, :1], axis=-2))
    with pytest.raises(ShapeError, match="vecdot"):
        tf.vecdot(T(a), T(b[:, :3]))
    m = T(a.real)
    close(tf.linalg.trace(m, offset=1), np.linalg.trace(a.real, offset=1))
    close(tf.linalg.diagonal(m, offset=-1), np.linalg.diagonal(a.real, offset=-1))
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        close(tf.linalg.matrix_norm(m, ord=ord), np.linalg.matrix_norm(a.real, ord=ord))
    for ord in (2, 1, 3.5, np.inf, -np.inf, 0):
        for axis in (None, -1, (0, 2)):
            close(tf.linalg.vector_norm(T(a), axis=axis, ord=ord, keepdims=True),
                  np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=True))
    close(tf.linalg.cross(T(b[:, :3]), T(b[::-1, 1:])), np.linalg.cross(b[:, :3], b[::-1, 1:]))
    close(tf.linalg.outer(T(b[0]), T(b[1])), np.linalg.outer(b[0], b[1]))
    close(tf.linalg.matmul(m, m.mT), a.real @ np.swapaxes(a.real, -1, -2))
    c = rng.standard_normal((3, 4, 2))
    close(tf.linalg.tensordot(m, T(c), axes=2), np.tensordot(a.real, c, axes=2))
    close(tf.linalg.pinv(m, rtol=T([0.1, 0.5])), np.linalg.pinv(a.real, rtol=[0.1, 0.5]))
    assert tf.linalg.matrix_rank(T(np.ones((2, 3, 3))), rtol=0.1).tolist() == [1, 1]


def test_hermitian_fft_matches_numpy():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    for norm in (None, "backward", "ortho", "forward"):
        close(tf.fft.hfft(T(z), norm=norm), np.fft.hfft(z, norm=norm))
        close(tf.fft.hfft(T(z), n=7, axis=0, norm=norm), np.fft.hfft(z, n=7, axis=0, norm=norm))
        close(tf.fft.ihfft(T(z.real), norm=norm), np.fft.ihfft(z.real, norm=norm))


def test_trace_is_numpys_and_make_graph_traces():
    a = np.arange(24.0).reshape(2, 3, 4)
    close(tf.trace(T(a)), np.trace(a))
    close(tf.trace(T(a), 1, 1, 2), np.trace(a, 1, 1, 2))
    assert tf.trace(T(np.eye(3, dtype=np.int8))).dtype == tf.int64
    assert tf.trace(T(np.eye(3)), dtype=tf.float32).dtype == tf.float32
    close(T(a).trace(offset=1, axis1=0, axis2=2), np.trace(a, 1, 0, 2))
    g = tf.make_graph(lambda x: tf.sin(x) * 2, T([1.0, 2.0]))
    assert isinstance(g, tf.Graph)
    with warnings.catch_warnings(record=True) as w:  # the former name, for one minor version
        warnings.simplefilter("always")
        g2 = tf.trace(lambda x: tf.sin(x) * 2, T([1.0, 2.0]))
    assert isinstance(g2, tf.Graph)
    assert any(issubclass(x.category, DeprecationWarning) and "make_graph" in str(x.message)
               for x in w)


@pytest.mark.parametrize("name", ["vecdot", "cumulative_prod", "copysign", "vector_norm",
                                  "trace", "meshgrid", "searchsorted", "sort_descending"])
def test_jit_agrees_with_eager(name):
    x = T(np.random.default_rng(2).standard_normal((3, 4)))
    f = {
        "vecdot": lambda v: tf.vecdot(v, v[0]),
        "cumulative_prod": lambda v: tf.cumulative_prod(v, axis=1, include_initial=True),
        "copysign": lambda v: tf.copysign(v, -v[::-1]),
        "vector_norm": lambda v: tf.linalg.vector_norm(v, axis=(0, 1), ord=3),
        "trace": lambda v: tf.linalg.trace(v) + tf.trace(v, 1),
        "meshgrid": lambda v: tf.meshgrid(v[0], v[:, 0])[0],
        "searchsorted": lambda v: tf.searchsorted(tf.sort(v[0]), v),
        "sort_descending": lambda v: tf.sort(v, axis=0, descending=True),
    }[name]
    np.testing.assert_array_equal(tf.jit(f)(x).numpy(), f(x).numpy())
