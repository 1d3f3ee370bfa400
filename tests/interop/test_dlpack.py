"""DLPack both ways (design/interop.md): ``Tensor.__dlpack__``/``__dlpack_device__`` with the
array API standard's arguments, and ``tenferro.from_dlpack``. NumPy always; PyTorch and JAX
when installed (they are optional: those tests skip only when the package is absent)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, DTypeError, GradientError

from .. import skips
from ..helpers import rand

DTYPES = ["float32", "float64", "complex64", "complex128", "int32", "int64", "bool"]


def _values(rng, shape, dtype):
    if dtype == "bool":
        return rng.standard_normal(shape) > 0
    return rand(rng, shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_round_trip_keeps_values_dtype_and_shape(rng, dtype):
    a = _values(rng, (3, 4), dtype)
    t = tf.from_dlpack(a)
    assert t.dtype == np.dtype(dtype) and t.shape == (3, 4)
    back = np.from_dlpack(t)
    assert back.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(tf.from_dlpack(t).numpy(), a)


def test_strided_and_broadcast_buffers_export_their_values(rng):
    a = rng.standard_normal((4, 5))
    np.testing.assert_array_equal(tf.from_dlpack(a.T[::2]).numpy(), a.T[::2])
    t = tf.asarray(a)
    np.testing.assert_array_equal(np.from_dlpack(t.T), a.T)
    c = tf.full((300, 300), 2.5)  # a large constant can be a read-only broadcast view
    np.testing.assert_array_equal(np.from_dlpack(c), np.full((300, 300), 2.5))


@pytest.mark.numpy_only
def test_zero_copy_both_ways_and_copy_flags(rng):
    a = rng.standard_normal(5)
    t = tf.from_dlpack(a)
    assert np.shares_memory(t.numpy(), a)  # zero-copy import (DLPack shares memory)
    assert not np.shares_memory(tf.from_dlpack(a, copy=True).numpy(), a)
    assert np.shares_memory(tf.from_dlpack(a, copy=False).numpy(), a)
    out = np.from_dlpack(t)
    assert np.shares_memory(out, a) and not out.flags.writeable  # exported read-only
    assert not np.shares_memory(np.from_dlpack(t, copy=True), a)
    assert np.from_dlpack(t, copy=True).flags.writeable


def test_export_arguments_follow_the_standard(rng):
    t = tf.asarray(rng.standard_normal(3))
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU
    assert t.__dlpack__(max_version=(1, 0), dl_device=(1, 0)) is not None
    with pytest.raises(BufferError):
        t.__dlpack__(max_version=(1, 0), dl_device=(2, 0))  # CUDA: not this buffer's device
    c = tf.full((300, 300), 1.0)  # NumPy backend: a read-only broadcast view
    if tf.get_backend().name == "numpy":
        assert not c._value.flags.writeable
        with pytest.raises(BufferError):  # legacy capsule of a read-only buffer needs a copy
            c.__dlpack__(copy=False)
        assert c.__dlpack__() is not None  # copy=None: copied


def test_exporting_a_tensor_that_requires_grad_says_detach():
    w = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradientError, match=r"DLPack export.*requires grad.*detach\(\)"):
        np.from_dlpack(w)
    with pytest.raises(GradientError, match=r"requires grad.*detach\(\)"):
        tf.from_dlpack(w)
    assert w.__dlpack_device__() == (1, 0)  # the device is no secret
    np.testing.assert_array_equal(np.from_dlpack(w.detach()), [1.0, 2.0])


def test_traced_and_differentiated_values_cannot_be_exported():
    x = tf.tensor([1.0, 2.0])
    with pytest.raises(ConcretizationError, match="DLPack"):
        tf.jit(lambda v: np.from_dlpack(v))(x)
    with pytest.raises(GradientError, match="DLPack export"):
        tf.grad(lambda v: tf.asarray(np.from_dlpack(v)).sum())(x)


def test_imported_tensor_is_a_leaf_without_grad_and_can_start_one(rng):
    a = rng.standard_normal(4)
    t = tf.from_dlpack(a)
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None
    t.requires_grad_()
    (t * t).sum().backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * a)


def test_from_dlpack_refuses_non_dlpack_objects():
    with pytest.raises(DTypeError, match="from_dlpack: expected an object with __dlpack__"):
        tf.from_dlpack([1.0, 2.0])
    with pytest.raises(DTypeError, match="copy must be True, False or None"):
        tf.from_dlpack(np.zeros(2), copy="yes")


def test_from_dlpack_device_argument(rng):
    a = rng.standard_normal(3)
    t = tf.from_dlpack(a, device="strict:1")
    assert t.device == "strict:1"
    np.testing.assert_array_equal(t.numpy(), a)
    with pytest.raises(BufferError, match="copy=False"):
        tf.from_dlpack(a, device="strict:1", copy=False)


# ------------------------------------------------------------------------------ PyTorch
@pytest.mark.numpy_only
def test_torch_round_trip_shares_memory(rng):
    torch = skips.torch()
    a = rng.standard_normal((2, 3))
    t = tf.asarray(a)
    pt = torch.from_dlpack(t)
    assert pt.dtype == torch.float64 and pt.data_ptr() == t.numpy().ctypes.data
    np.testing.assert_array_equal(pt.numpy(), a)
    src = torch.arange(6.0).reshape(2, 3)
    back = tf.from_dlpack(src)
    assert back.dtype == np.float32 and back.numpy().ctypes.data == src.data_ptr()
    src.add_(1)  # DLPack shares memory: the producer's writes show (copy=True does not)
    np.testing.assert_array_equal(back.numpy(), src.numpy())
    independent = tf.from_dlpack(src, copy=True)
    src.add_(1)
    np.testing.assert_array_equal(independent.numpy(), src.numpy() - 1)


def test_torch_interop_values_and_grads(rng):
    torch = skips.torch()
    a = rand(rng, (3,), "complex128")
    t = tf.from_dlpack(torch.from_dlpack(tf.asarray(a)))
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(torch.as_tensor(tf.asarray(a)).numpy(), a)
    with pytest.raises(BufferError):  # PyTorch refuses to export a tensor that requires grad
        tf.from_dlpack(torch.ones(2, requires_grad=True))
    x = tf.from_dlpack(torch.arange(3.0, dtype=torch.float64).detach())
    np.testing.assert_allclose(tf.grad(lambda v: (v ** 3).sum())(x).numpy(),
                               3 * np.arange(3.0) ** 2)


# ---------------------------------------------------------------------------------- JAX
def test_jax_round_trip(rng):
    jnp = pytest.importorskip("jax.numpy", reason=skips.JAX)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    j = jnp.from_dlpack(tf.asarray(a))
    np.testing.assert_array_equal(np.asarray(j), a)
    t = tf.from_dlpack(jnp.asarray(a) * 2)
    assert t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), 2 * a)
