"""Devices: tensors know theirs, mixing raises, transfers are explicit and differentiable.
Without a GPU the strict backend's fake devices ("strict:1", "strict:2") stand in."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DeviceError


def test_tensors_know_their_device():
    assert tf.ones(2).device == "cpu"
    assert tf.ones(2, device="strict:1").device == "strict:1"


def test_mixing_devices_raises():
    a = tf.ones(2)
    b = tf.ones(2, device="strict:1")
    with pytest.raises(DeviceError, match="different devices.*cpu.*strict:1|strict:1.*cpu"):
        a + b


def test_constants_follow_their_operand_device():
    b = tf.tensor([1.0, 2.0], device="strict:2")
    assert (b * 2 + 1).device == "strict:2"
    assert tf.exp(b).device == "strict:2"


def test_transfers_are_differentiable():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = x.to("strict:1")
    assert y.device == "strict:1"
    z = (tf.sin(y) * y).sum().to("cpu")
    z.backward()
    xv = np.array([1.0, 2.0])
    np.testing.assert_allclose(x.grad.numpy(), np.sin(xv) + xv * np.cos(xv))
    assert x.grad.device == "cpu"

    g = tf.grad(lambda t: (t.to("strict:2") ** 2).sum())(tf.tensor([3.0]))
    assert g.device == "cpu" and g.item() == 6.0


def test_default_device_context():
    with tf.default_device("strict:1"):
        assert tf.zeros(3).device == "strict:1"
        assert tf.tensor([1.0]).device == "strict:1"
    assert tf.zeros(3).device == "cpu"


def test_unknown_device():
    with pytest.raises(DeviceError, match="unknown device"):
        tf.ones(2, device="tpu")


def test_cuda_without_gpu_is_a_clear_error():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed; the GPU suite covers CUDA devices")
    except ImportError:
        pass
    with pytest.raises(DeviceError, match="CuPy"):
        tf.ones(2, device="cuda")
