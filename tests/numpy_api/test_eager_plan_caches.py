"""The per-signature caches of the ops layer ([eager-speed]): a cache hit gives the same
result as the checked path, errors are raised on every call (never cached), and only plain
Python ints share an entry (1.0, True and NumPy integers are checked every time)."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.ops import _base, indexing, shape
from tenferro.errors import ShapeError


def _x():
    return tf.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)


def test_reshape_cached_plan_matches_and_errors_repeat():
    x = _x()
    for _ in range(3):  # the first call fills the cache, the others hit it
        y = x.reshape(-1)
        np.testing.assert_array_equal(y.detach().numpy(), np.arange(6.0))
        assert x.reshape(2, 3) is x
        assert x.reshape((3, -1)).shape == (3, 2)
    for _ in range(2):
        with pytest.raises(ShapeError, match="only one -1"):
            x.reshape(-1, -1)
        with pytest.raises(ShapeError, match="cannot reshape"):
            x.reshape(-1, 4)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


def test_reshape_cache_only_for_exact_ints(monkeypatch):
    x = _x()
    x.reshape(3, 2)  # fills the entry for the ints (3, 2)
    calls = []
    real = shape._as_shape
    monkeypatch.setattr(shape, "_as_shape", lambda s: calls.append(s) or real(s))
    x.reshape(3, 2)
    assert calls == []  # a hit
    for request in [(3.0, 2), (True, 6), (np.int64(3), 2)]:
        try:
            shape.reshape(x, request)
        except Exception:  # whatever the checked path says about it; it must be asked
            pass
        assert calls and calls[-1] == request


def test_transpose_cached_permutation_matches_and_errors_repeat(monkeypatch):
    x = tf.tensor(np.arange(24.0).reshape(2, 3, 4))
    for _ in range(2):
        np.testing.assert_array_equal(tf.transpose(x, (2, 0, 1)).numpy(),
                                      np.transpose(np.arange(24.0).reshape(2, 3, 4), (2, 0, 1)))
        np.testing.assert_array_equal(x.T.numpy(), np.arange(24.0).reshape(2, 3, 4).T)
        assert tf.transpose(x, [0, 1, 2]) is x
        with pytest.raises(ShapeError, match="not a permutation"):
            tf.transpose(x, (0, 0, 1))
    calls = []
    real = shape._permutation
    monkeypatch.setattr(shape, "_permutation", lambda a, n: calls.append(a) or real(a, n))
    tf.transpose(x, (2, 0, 1))
    assert calls == []
    try:
        tf.transpose(x, (2.0, 0, 1))
    except Exception:  # whatever the checked path says about it; it must be asked
        pass
    assert calls == [(2.0, 0, 1)]


def test_getitem_cached_spec_whole_and_errors_repeat():
    x = _x()
    for _ in range(2):
        assert x[:] is x and x[...] is x
        np.testing.assert_array_equal(x[1].detach().numpy(), [3.0, 4.0, 5.0])
        np.testing.assert_array_equal(x[:, 1:].detach().numpy(), [[1.0, 2.0], [4.0, 5.0]])
        with pytest.raises(ShapeError, match="out of bounds"):
            x[2]
    assert isinstance(indexing._BASIC_SPECS, dict)


def test_reduction_axes_cache_only_for_exact_ints(monkeypatch):
    calls = []
    real = _base.normalize_axes
    monkeypatch.setattr(_base, "normalize_axes", lambda op, a, n: calls.append(a) or real(op, a, n))
    _base._reduction_axes.cache_clear()
    assert _base.reduction_axes("sum", 1, 2) == (1,)
    assert _base.reduction_axes("sum", (1, 0), 2) == (0, 1)
    n = len(calls)
    assert _base.reduction_axes("sum", 1, 2) == (1,)
    assert len(calls) == n  # a hit
    for axis in [1.0, True, (1.0, 0), np.int64(1)]:
        try:
            _base.reduction_axes("sum", axis, 2)
        except Exception:  # whatever the checked path says about it; it must be asked
            pass
        assert calls[-1] is axis  # checked, not served from the entry of 1


def test_float_axis_outcome_does_not_depend_on_an_earlier_int_axis():
    x = tf.tensor(np.ones((2, 3)))

    def outcome():
        try:
            return x.sum(1.0).shape
        except Exception as e:
            return type(e)

    _base._reduction_axes.cache_clear()
    first = outcome()
    x.sum(1)
    assert outcome() == first


def test_mean_matches_numpy_and_keepdims():
    a = np.arange(6.0).reshape(2, 3)
    x = tf.tensor(a, requires_grad=True)
    np.testing.assert_allclose(x.mean().detach().numpy(), a.mean())
    np.testing.assert_allclose(x.mean(1, keepdims=True).detach().numpy(), a.mean(1, keepdims=True))
    np.testing.assert_allclose(tf.mean(tf.tensor(np.arange(4)), 0).numpy(), 1.5)
    x.mean(0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 0.5))


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_small_qr_r_is_exactly_upper_triangular(shape, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    for _ in range(2):  # the triangle mask is cached per shape
        q, r = tf.linalg.qr(tf.tensor(a))
        r = r.numpy()
        assert r.dtype == dtype and r.shape == (min(shape), shape[1])
        assert not np.tril(r, -1).any()
        np.testing.assert_allclose(q.numpy() @ r, a, atol=1e-5 if dtype == np.float32 else 1e-12)
