"""Gradients on non-degenerate inputs equal PyTorch's (torch.linalg), real and complex.

Losses are gauge-invariant where the decompositions have a gauge freedom (torch fixes the
phases of singular vectors differently; for complex SVD it rejects gauge-dependent losses), so
the comparison is between two implementations of the same function.
"""

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tests import skips
from tests.linalg._util import DTYPES, SHAPE_IDS, SHAPES, T, hermitian, rand

torch = skips.torch()


def _tt(a):
    return torch.tensor(np.asarray(a))


def _both(tf_loss, torch_loss, a):
    g_tf = tf.grad(tf_loss)(T(a)).numpy()
    x = _tt(a).requires_grad_()
    torch_loss(x).backward()
    return g_tf, x.grad.numpy()  # both: dL/dRe + i dL/dIm for complex inputs


def _close(g_tf, g_t):
    np.testing.assert_allclose(g_tf, g_t, rtol=1e-9, atol=1e-11 * max(1.0, np.abs(g_t).max()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_svd(shape, dtype, rng):
    m, n = shape
    a = rand(rng, shape, dtype)
    hu, hv = hermitian(rng, m, dtype), hermitian(rng, n, dtype)
    w = rng.standard_normal(min(shape))
    c = rand(rng, shape, dtype)

    def f_tf(x):
        u, s, vh = la.svd(x)
        v0 = tf.conj(vh[0])
        return (tf.real(tf.sum(tf.conj(u[:, 0]) * (T(hu) @ u[:, 0])))
                + tf.real(tf.sum(tf.conj(v0) * (T(hv) @ v0))) + tf.sum(s * T(w))
                + tf.real(tf.sum(T(c) * (u[:, :2] @ vh[:2]))))

    def f_t(x):
        u, s, vh = torch.linalg.svd(x, full_matrices=False)
        v0 = vh[0].conj()
        return ((u[:, 0].conj() * (_tt(hu) @ u[:, 0])).sum().real
                + (v0.conj() * (_tt(hv) @ v0)).sum().real + (s * _tt(w)).sum()
                + (_tt(c) * (u[:, :2] @ vh[:2])).sum().real)

    _close(*_both(f_tf, f_t, a))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_qr(shape, dtype, rng):
    a = rand(rng, shape, dtype)
    wq = rand(rng, (shape[0], min(shape)), dtype)
    wr = rand(rng, (min(shape), shape[1]), dtype)

    def f_tf(x):
        q, r = la.qr(x)
        return tf.real(tf.sum(T(wq) * q)) + tf.real(tf.sum(T(wr) * r))

    def f_t(x):
        q, r = torch.linalg.qr(x)
        return (_tt(wq) * q).sum().real + (_tt(wr) * r).sum().real

    _close(*_both(f_tf, f_t, a))


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(dtype, rng):
    """A = X + X^H for both libraries (torch does not symmetrise its input)."""
    n = 5
    x0 = rand(rng, (n, n), dtype)
    hm = hermitian(rng, n, dtype)
    c = rng.standard_normal(n)

    def f_tf(x):
        w, v = la.eigh(x + tf.conj(x.T))
        return tf.sum(w * T(c)) + tf.real(tf.sum(tf.conj(v[:, 1]) * (T(hm) @ v[:, 1])))

    def f_t(x):
        w, v = torch.linalg.eigh(x + x.conj().T)
        return (w * _tt(c)).sum() + (v[:, 1].conj() * (_tt(hm) @ v[:, 1])).sum().real

    _close(*_both(f_tf, f_t, x0))


FUNCS = {
    "cholesky": (lambda x: la.cholesky(x @ tf.conj(x.T) + 4.0 * tf.eye(4, dtype=x.dtype)),
                 lambda x: torch.linalg.cholesky(x @ x.conj().T
                                                 + 4.0 * torch.eye(4, dtype=x.dtype))),
    "inv": (la.inv, torch.linalg.inv),
    "det": (la.det, torch.linalg.det),
    "logabsdet": (lambda x: la.slogdet(x)[1], lambda x: torch.linalg.slogdet(x)[1]),
    "solve": (lambda x: la.solve(x, x[:, :2] * 1.5),
              lambda x: torch.linalg.solve(x, x[:, :2] * 1.5)),
    "pinv": (la.pinv, torch.linalg.pinv),
    "expm": (la.expm, torch.linalg.matrix_exp),
    "svdvals": (la.svdvals, torch.linalg.svdvals),
    "eigvalsh": (lambda x: la.eigvalsh(x + tf.conj(x.T)),
                 lambda x: torch.linalg.eigvalsh(x + x.conj().T)),
    "nuc": (lambda x: la.norm(x, "nuc"), lambda x: torch.linalg.matrix_norm(x, "nuc")),
    "spectral": (lambda x: la.norm(x, 2), lambda x: torch.linalg.matrix_norm(x, 2)),
}


@pytest.mark.parametrize("name", list(FUNCS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_other_functions(name, dtype, rng):
    f_ours, f_torch = FUNCS[name]
    a = rand(rng, (4, 4), dtype) + 2 * np.eye(4)
    out = np.asarray(f_ours(T(a)).numpy())
    wgt = rand(rng, out.shape, dtype) if out.dtype.kind == "c" else rng.standard_normal(out.shape)

    def f_tf(x):
        return tf.real(tf.sum(tf.conj(T(wgt)) * f_ours(x)))

    def f_t(x):
        return (_tt(wgt).conj() * f_torch(x)).sum().real

    np.testing.assert_allclose(out, f_torch(_tt(a)).numpy(), rtol=1e-10, atol=1e-12)
    _close(*_both(f_tf, f_t, a))
