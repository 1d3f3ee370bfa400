"""tenferro.fft: NumPy's values for every function and argument combination (eager and jit),
derivatives against finite differences (real and complex input), the transposes by the
dot-product identity, and the adjoints of rfft/irfft written out explicitly."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError, ShapeError
from tenferro.testing import check_grads, check_transpose
from tests.numpy_api._util import assert_matches_numpy, sample

NORMS = [None, "backward", "ortho", "forward"]

# name: (function of (module, x), input shape, input kind); module is tf.fft or np.fft
CASES = {
    "fft": (lambda m, x, nm: m.fft(x, norm=nm), (3, 6), "c"),
    "fft_real_input": (lambda m, x, nm: m.fft(x, norm=nm), (3, 6), "r"),
    "fft_n_crop": (lambda m, x, nm: m.fft(x, n=4, axis=0, norm=nm), (5, 2), "c"),
    "fft_n_pad": (lambda m, x, nm: m.fft(x, n=9, norm=nm), (2, 5), "c"),
    "ifft": (lambda m, x, nm: m.ifft(x, norm=nm), (3, 5), "c"),
    "ifft_n": (lambda m, x, nm: m.ifft(x, 7, 0, nm), (4, 3), "c"),
    "fft2": (lambda m, x, nm: m.fft2(x, norm=nm), (2, 3, 4), "c"),
    "fft2_s_axes": (lambda m, x, nm: m.fft2(x, s=(2, 6), axes=(0, 2), norm=nm), (3, 2, 4), "c"),
    "ifft2": (lambda m, x, nm: m.ifft2(x, norm=nm), (3, 4), "c"),
    "fftn": (lambda m, x, nm: m.fftn(x, norm=nm), (2, 3, 4), "c"),
    # s without axes: the last len(s) axes (NumPy 2 deprecates the call, so it is given axes)
    "fftn_s": (lambda m, x, nm: m.fftn(x, s=(5, 3), norm=nm) if m is tf.fft else
               m.fftn(x, s=(5, 3), axes=(1, 2), norm=nm), (2, 3, 4), "c"),
    "fftn_axes": (lambda m, x, nm: m.fftn(x, axes=(-1, 0), norm=nm), (2, 3, 4), "r"),
    "ifftn": (lambda m, x, nm: m.ifftn(x, s=(2, 2, 6), norm=nm) if m is tf.fft else
              m.ifftn(x, s=(2, 2, 6), axes=(0, 1, 2), norm=nm), (2, 3, 4), "c"),
    "rfft_even": (lambda m, x, nm: m.rfft(x, norm=nm), (3, 6), "r"),
    "rfft_odd": (lambda m, x, nm: m.rfft(x, norm=nm), (3, 7), "r"),
    "rfft_n_axis": (lambda m, x, nm: m.rfft(x, n=5, axis=0, norm=nm), (4, 3), "r"),
    "irfft_default_n": (lambda m, x, nm: m.irfft(x, norm=nm), (3, 4), "c"),
    "irfft_odd_n": (lambda m, x, nm: m.irfft(x, n=7, norm=nm), (3, 4), "c"),
    "irfft_crop": (lambda m, x, nm: m.irfft(x, n=4, axis=0, norm=nm), (6, 2), "c"),
    "irfft_real_input": (lambda m, x, nm: m.irfft(x, norm=nm), (2, 5), "r"),
    "rfft2": (lambda m, x, nm: m.rfft2(x, norm=nm), (2, 4, 5), "r"),
    "irfft2": (lambda m, x, nm: m.irfft2(x, norm=nm), (2, 4, 3), "c"),
    "rfftn": (lambda m, x, nm: m.rfftn(x, s=(4, 5), axes=(0, 2), norm=nm), (3, 2, 4), "r"),
    "irfftn": (lambda m, x, nm: m.irfftn(x, s=(3, 2, 5), axes=(0, 1, 2), norm=nm), (3, 4, 3),
               "c"),
    "fftshift": (lambda m, x, nm: m.fftshift(x), (4, 5), "c"),
    "fftshift_axes": (lambda m, x, nm: m.fftshift(x, axes=1), (4, 5), "r"),
    "ifftshift": (lambda m, x, nm: m.ifftshift(x), (4, 5), "c"),
}


def _x(rng, shape, kind):
    return sample(rng, shape, "complex128" if kind == "c" else "float64")


def _cases():
    for name, (f, shape, kind) in CASES.items():
        for nm in (NORMS if "shift" not in name else [None]):
            yield pytest.param(f, shape, kind, nm, id=f"{name}-{nm}")


@pytest.mark.parametrize("f,shape,kind,norm", list(_cases()))
def test_values_match_numpy(f, shape, kind, norm, rng):
    assert_matches_numpy(lambda t: f(tf.fft, t, norm), lambda a: f(np.fft, a, norm),
                         _x(rng, shape, kind), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f,shape,kind,norm", list(_cases()))
def test_derivatives_and_transposes(f, shape, kind, norm, rng):
    x = tf.tensor(_x(rng, shape, kind))
    check_grads(lambda t: f(tf.fft, t, norm), (x,))
    check_transpose(lambda t: f(tf.fft, t, norm), (x,))


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_rfft_and_irfft_adjoints_are_the_hermitian_weighted_transforms(n, norm, rng):
    """<ct, rfft(x)> = <x, R^T ct> with R^T ct = irfft(w ct, norm=dual) * ..., written out
    with the dense DFT matrix: the half spectrum's interior frequencies count twice."""
    m = n // 2 + 1
    k, j = np.arange(m)[:, None], np.arange(n)[None, :]
    scale = {"backward": 1.0, "ortho": 1 / np.sqrt(n), "forward": 1.0 / n}[norm]
    dft = scale * np.exp(-2j * np.pi * k * j / n)  # rfft as an (m, n) complex matrix
    ct = sample(rng, (m,), "complex128")
    (g,) = tf.vjp(lambda t: tf.fft.rfft(t, norm=norm), tf.tensor(np.zeros(n)))[1](
        tf.tensor(ct))
    np.testing.assert_allclose(g.numpy(), np.real(dft.conj().T @ ct), atol=1e-13)
    # irfft as a real-linear map of (Re y, Im y): its adjoint, column by column
    inv = {"backward": 1.0 / n, "ortho": 1 / np.sqrt(n), "forward": 1.0}[norm]
    ctr = sample(rng, (n,))
    (h,) = tf.vjp(lambda t: tf.fft.irfft(t, n=n, norm=norm),
                  tf.tensor(np.zeros(m, complex)))[1](tf.tensor(ctr))
    want = np.zeros(m, complex)
    for q in range(m):
        e = np.zeros(m, complex)
        e[q] = 1.0
        re = np.fft.irfft(e, n=n, norm=norm) @ ctr
        e[q] = 1j
        im = np.fft.irfft(e, n=n, norm=norm) @ ctr
        want[q] = re + 1j * im
    np.testing.assert_allclose(h.numpy(), want, atol=1e-13)
    assert inv > 0


def test_gradient_of_power_spectrum_matches_parseval(rng):
    """sum |fft(x)|^2 = n sum |x|^2 (Parseval), so its gradient is 2 n x; for the half
    spectrum the interior frequencies stand for two."""
    x = sample(rng, (8,))
    g = tf.grad(lambda t: tf.sum(tf.abs2(tf.fft.fft(t))))(tf.tensor(x))
    np.testing.assert_allclose(g.numpy(), 2 * 8 * x, rtol=1e-12)
    w = np.array([1, 2, 2, 2, 1.0])

    def half(t):
        return tf.sum(tf.abs2(tf.fft.rfft(t)) * tf.tensor(w))

    np.testing.assert_allclose(tf.grad(half)(tf.tensor(x)).numpy(), 2 * 8 * x, rtol=1e-12)


def test_dtypes_follow_numpy():
    x32 = tf.tensor(np.ones((2, 4), np.float32))
    assert tf.fft.fft(x32).dtype == np.complex64
    assert tf.fft.rfft(x32).dtype == np.complex64
    assert tf.fft.irfft(tf.fft.rfft(x32)).dtype == np.float32
    assert tf.fft.fft(tf.tensor([1, 2, 3])).dtype == np.complex128


def test_frequencies_match_numpy():
    for n, d in [(8, 1.0), (7, 0.25)]:
        for f in ("fftfreq", "rfftfreq"):
            out = getattr(tf.fft, f)(n, d)
            np.testing.assert_array_equal(out.numpy(), getattr(np.fft, f)(n, d))
    assert tf.fft.fftfreq(4, device="strict:1").device == "strict:1"


def test_errors():
    with pytest.raises(DTypeError, match="real input"):
        tf.fft.rfft(tf.tensor([1.0 + 1j, 2.0]))
    with pytest.raises(ShapeError, match="norm"):
        tf.fft.fft(tf.tensor([1.0, 2.0]), norm="unitary")
    with pytest.raises(ShapeError, match="data points"):
        tf.fft.fft(tf.tensor([1.0, 2.0]), n=0)
    with pytest.raises(ShapeError, match="repeated axes"):
        tf.fft.fftn(tf.tensor(np.ones((2, 2))), axes=(0, 0))
    with pytest.raises(ShapeError, match="same length"):
        tf.fft.fftn(tf.tensor(np.ones((2, 2))), s=(2,), axes=(0, 1))
    with pytest.raises(ShapeError, match="output length"):
        tf.fft.irfft(tf.tensor([1.0 + 0j]))
