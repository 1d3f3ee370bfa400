"""Devices: tensors know theirs, mixing raises, transfers are explicit and differentiable.
Without a GPU the strict backend's fake devices ("strict:1", "strict:2") stand in."""

import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.backends import host_reads
from tenferro.errors import DeviceError
from tenferro.testing import check_grads
from tests import skips

# these tests are about the default device itself: TENFERRO_DEVICE does not apply to them
pytestmark = pytest.mark.default_device_cpu


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

        pytest.skip(skips.CUPY_PRESENT)
    except ImportError:
        pass
    with pytest.raises(DeviceError, match="CuPy"):
        tf.ones(2, device="cuda")


def test_cupy_is_never_imported_without_a_cuda_device():
    code = ("import sys, tenferro as tf; x = tf.tensor([1.0, 2.0], requires_grad=True); "
            "(tf.linalg.svd(tf.outer(x, x))[1].sum()).backward(); "
            "tf.jit(lambda a: a * 2)(x); assert 'cupy' not in sys.modules, 'cupy imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def _trg_value_and_grad(device, **svd_options):
    from tenferro._src.tn.ising import normalize, trace_torus
    from tenferro.tn import ising_tensor, trg_step

    with tf.default_device(device):
        b = tf.tensor(0.44, requires_grad=True)
        t, lnz = normalize(ising_tensor(b))
        for k in range(1, 5):
            t, ln_n = normalize(trg_step(t, 6, **svd_options))
            lnz = lnz + ln_n / 2**k
        lnz = lnz + tf.log(trace_torus(t)) / 2**4
        lnz.backward()
        return lnz, b.grad


def test_truncation_by_max_rank_never_reads_back_to_the_host():
    """Transfers are explicit: a TRG forward and backward on a (stand-in) accelerator with
    max_rank truncation alone copies nothing to the host (on a GPU: no synchronisation)."""
    before = host_reads["strict:1"]
    lnz, g = _trg_value_and_grad("strict:1")
    assert host_reads["strict:1"] == before
    ref, gref = _trg_value_and_grad("cpu")
    assert lnz.device == g.device == "strict:1"
    np.testing.assert_allclose(lnz.to("cpu").item(), ref.item(), rtol=1e-13)
    np.testing.assert_allclose(g.to("cpu").item(), gref.item(), rtol=1e-10)


def test_truncation_by_a_cutoff_reads_the_spectrum_once_per_decomposition():
    """A cutoff needs the singular values on the host to choose the rank: one read per SVD
    (two SVDs per TRG step), nothing else."""
    before = host_reads["strict:1"]
    _trg_value_and_grad("strict:1", relative_cutoff=1e-12)
    assert host_reads["strict:1"] - before == 2 * 4


def test_transfer_rules_pass_the_derivative_checks():
    """``device_put``'s rules (a transfer; its transpose transfers the cotangent back) against
    finite differences and the dot-product identity, forward and reverse, to second order."""
    x = tf.tensor([0.3, -1.2, 2.0])

    def f(t):
        y = t.to("strict:1")
        return (tf.sin(y) * y).to("cpu") + t

    check_grads(f, (x,), order=2, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", ["nowhere", "cuda"])
def test_default_device_checks_the_device_on_entry(device):
    """An unknown or unavailable device fails when the block is entered, before its code runs
    (a script fails before printing anything), with the fix in the message."""
    if device == "cuda":
        try:
            import cupy  # noqa: F401

            pytest.skip(skips.CUPY_PRESENT)
        except ImportError:
            pass
    ran = []
    with pytest.raises(DeviceError, match="CuPy|unknown device"):
        with tf.default_device(device):
            ran.append(True)
    assert not ran
