"""TRG / HOTRG with svd="partial": the same ln Z and derivative as the full decomposition
(the timing target is benchmarks/trg.py: chi=32, 20 steps, at most 0.5x)."""

import pytest

import tenferro as tf
from tenferro.tn import hotrg, ising_tensor, trg


@pytest.mark.numpy_only
def test_trg_partial_equals_full():
    """chi=16: the 256 x 256 splits go through the block Krylov svds (above the dense
    threshold), including the rank-deficient first ones."""
    def lnz(beta, svd):
        return trg(ising_tensor(beta), 16, 8, svd=svd, progress=False)

    b = tf.tensor(0.44)
    vp, vf = lnz(b, "partial").item(), lnz(b, "full").item()
    assert abs(vp - vf) <= 1e-12
    gp = tf.grad(lambda t: lnz(t, "partial"))(b).item()
    gf = tf.grad(lambda t: lnz(t, "full"))(b).item()
    assert abs(gp - gf) <= 1e-9 * abs(gf)


@pytest.mark.numpy_only
def test_hotrg_partial_equals_full():
    def lnz(beta, svd):
        return hotrg(ising_tensor(beta), 16, 6, svd=svd, progress=False)

    b = tf.tensor(0.42)
    assert abs(lnz(b, "partial").item() - lnz(b, "full").item()) <= 1e-11
    gp = tf.grad(lambda t: lnz(t, "partial"))(b).item()
    gf = tf.grad(lambda t: lnz(t, "full"))(b).item()
    assert abs(gp - gf) <= 1e-8 * abs(gf)


def test_unknown_svd_method():
    with pytest.raises(ValueError, match="svd"):
        trg(ising_tensor(0.4), 8, 2, svd="lanczos")
    with pytest.raises(ValueError, match="svd"):
        hotrg(ising_tensor(0.4), 8, 2, svd="lanczos")
