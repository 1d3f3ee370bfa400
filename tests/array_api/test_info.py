"""The inspection API (``__array_namespace_info__``) and the data type functions (``finfo``,
``iinfo``, ``isdtype``), with the standard's return types."""

import numpy as np
import pytest

import tenferro as tf

from .standard import DTYPES


@pytest.mark.default_device_cpu
def test_capabilities_devices_and_default_dtypes():
    info = tf.__array_namespace_info__()
    caps = info.capabilities()
    assert caps == {"boolean indexing": True, "data-dependent shapes": True,
                    "max dimensions": 64}
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert tf.ones((1,), device=info.devices()[0]).device == info.devices()[0]
    assert info.default_dtypes() == {"real floating": tf.float64,
                                     "complex floating": tf.complex128,
                                     "integral": tf.int64, "indexing": tf.int64}
    assert info.default_dtypes(device="cpu") == info.default_dtypes()


def test_the_defaults_are_what_creation_gives():
    d = tf.__array_namespace_info__().default_dtypes()
    assert tf.ones((2,)).dtype == tf.ones((2,), dtype=None).dtype == d["real floating"]
    assert tf.zeros(2).dtype == tf.empty(2).dtype == tf.eye(2).dtype == d["real floating"]
    assert tf.asarray([1, 2]).dtype == tf.full((1,), 3).dtype == d["integral"]
    assert tf.asarray([1j]).dtype == tf.full((1,), 1j).dtype == d["complex floating"]
    assert tf.argmax(tf.ones((3,))).dtype == tf.nonzero(tf.ones((3,)))[0].dtype == d["indexing"]
    assert tf.linspace(0, 1, 3).dtype == d["real floating"]
    assert tf.full((1,), True).dtype == tf.bool


def test_dtypes_by_kind():
    info = tf.__array_namespace_info__()
    assert list(info.dtypes()) == list(DTYPES)
    assert all(info.dtypes()[n] == np.dtype(n) for n in DTYPES)
    assert set(info.dtypes(kind="integral")) == {"int8", "int16", "int32", "int64", "uint8",
                                                  "uint16", "uint32", "uint64"}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {"bool", "complex64",
                                                                    "complex128"}
    assert set(info.dtypes(kind="numeric")) == set(DTYPES) - {"bool"}
    with pytest.raises(ValueError, match="kind"):
        info.dtypes(kind="floating")


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    real = {"complex64": "float32", "complex128": "float64"}.get(name, name)
    want = np.finfo(real)
    for arg in (getattr(tf, name), tf.ones((1,), dtype=getattr(tf, name)), np.dtype(name)):
        f = tf.finfo(arg)
        assert type(f.bits) is int and f.bits == want.bits
        for k in ("eps", "max", "min", "smallest_normal"):
            assert type(getattr(f, k)) is float and getattr(f, k) == float(getattr(want, k))
        assert f.dtype == np.dtype(real)
    with pytest.raises(tf.errors.DTypeError, match="iinfo"):
        tf.finfo(tf.int32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                  "uint64"])
def test_iinfo(name):
    want = np.iinfo(name)
    for arg in (getattr(tf, name), tf.ones((1,), dtype=getattr(tf, name))):
        i = tf.iinfo(arg)
        assert (i.bits, i.max, i.min) == (want.bits, int(want.max), int(want.min))
        assert all(type(v) is int for v in (i.bits, i.max, i.min)) and i.dtype == np.dtype(name)
    with pytest.raises(tf.errors.DTypeError, match="finfo"):
        tf.iinfo(tf.float32)


KINDS = {
    "bool": {"bool"},
    "signed integer": {"int8", "int16", "int32", "int64"},
    "unsigned integer": {"uint8", "uint16", "uint32", "uint64"},
    "integral": {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"},
    "real floating": {"float32", "float64"},
    "complex floating": {"complex64", "complex128"},
    "numeric": set(DTYPES) - {"bool"},
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_isdtype(kind):
    for name in DTYPES:
        d = getattr(tf, name)
        assert tf.isdtype(d, kind) is (name in KINDS[kind])
        assert tf.isdtype(d, (kind, d)) is True
        assert tf.isdtype(d, tf.bool) is (name == "bool")
    with pytest.raises(ValueError, match="kind"):
        tf.isdtype(tf.float32, "floating")


def test_an_axis_out_of_range_is_an_index_error():
    """The standard asks for IndexError; tenferro's AxisError is also its ShapeError (and a
    ValueError), like NumPy's AxisError."""
    x = tf.ones((2, 3))
    for f in (lambda: tf.expand_dims(x, axis=3), lambda: tf.expand_dims(x, axis=-4),
              lambda: tf.sum(x, axis=2), lambda: tf.argmax(x, axis=-3),
              lambda: tf.unstack(x, axis=2), lambda: tf.cumulative_sum(x, axis=5)):
        with pytest.raises(IndexError, match="out of range") as e:
            f()
        assert isinstance(e.value, tf.errors.AxisError)
        assert isinstance(e.value, tf.errors.ShapeError) and isinstance(e.value, ValueError)
