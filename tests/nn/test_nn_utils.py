"""``tenferro.nn.utils`` against ``torch.nn.utils``: clipped gradients and returned norms
(every norm type, with and without clipping), values/gradients of the flattened vector, and
writing a vector back into the parameters."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError, ShapeError
from tenferro.nn import utils as tnu
from tests import skips
from tests.helpers import assert_close as _assert_close

R = np.random.default_rng(5)


def assert_close(got, want, what):
    _assert_close(got, want, 1e-12, what=what)
SHAPES = [(3, 4), (5,), (2, 2, 2)]
GRADS = [R.standard_normal(s) for s in SHAPES]


def _params(lib, grads=GRADS, skip_last=False):
    ps = [lib.tensor(np.ones(g.shape), requires_grad=True) for g in grads]
    for i, (p, g) in enumerate(zip(ps, grads)):
        if not (skip_last and i == len(ps) - 1):
            p.grad = lib.tensor(g)
    return ps


def _grads(ps):
    return [None if p.grad is None else p.grad.numpy() for p in ps]


@pytest.mark.numpy_only
@pytest.mark.parametrize("skip_last", [False, True])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.5, float("inf")])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, skip_last):
    torch = skips.torch()
    tp, fp = _params(torch, skip_last=skip_last), _params(tf, skip_last=skip_last)
    want = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    got = tnu.clip_grad_norm_(fp, max_norm, norm_type=norm_type)
    assert got.shape == () and isinstance(got, tf.Tensor)
    assert_close(got.numpy(), want.numpy(), "total norm")
    for g, w in zip(_grads(fp), _grads(tp)):
        assert (g is None) == (w is None)
        if g is not None:
            assert_close(g, w, "clipped gradient")


def test_clip_grad_norm_values():
    """Without torch: the returned norm is the norm of all gradients together, and clipping
    scales them to max_norm (up to PyTorch's 1e-6)."""
    ps = _params(tf)
    total = np.sqrt(sum((g ** 2).sum() for g in GRADS))
    out = tnu.clip_grad_norm_(ps, 1.0)
    np.testing.assert_allclose(float(out), total, rtol=1e-14)
    for p, g in zip(ps, GRADS):
        np.testing.assert_allclose(p.grad.numpy(), g / (total + 1e-6), rtol=1e-14)
    assert float(tnu.clip_grad_norm_(ps[0], 100.0)) < 100  # one tensor; no change below max
    assert float(tnu.clip_grad_norm_([tf.tensor(np.ones(2), requires_grad=True)], 1.0)) == 0


def test_clip_grad_norm_nonfinite():
    ps = _params(tf, [np.array([1.0, np.inf])])
    with pytest.raises(GradientError, match="error_if_nonfinite"):
        tnu.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)


@pytest.mark.numpy_only
def test_clip_grad_value_matches_torch():
    torch = skips.torch()
    tp, fp = _params(torch, skip_last=True), _params(tf, skip_last=True)
    assert torch.nn.utils.clip_grad_value_(tp, 0.7) is None
    assert tnu.clip_grad_value_(fp, clip_value=0.7) is None
    for g, w in zip(_grads(fp), _grads(tp)):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_array_equal(g, w)
    assert np.abs(_grads(fp)[0]).max() == 0.7


@pytest.mark.numpy_only
def test_parameters_to_vector_matches_torch():
    torch = skips.torch()
    vals = [R.standard_normal(s) for s in SHAPES]
    ct = R.standard_normal(sum(v.size for v in vals))
    out = {}
    for lib in (torch, tf):
        ps = [lib.tensor(v, requires_grad=True) for v in vals]
        vec = (tf.nn.utils if lib is tf else torch.nn.utils).parameters_to_vector(ps)
        (vec * lib.tensor(ct)).sum().backward()
        out[lib] = vec.detach().numpy(), [p.grad.numpy() for p in ps]
    np.testing.assert_array_equal(out[tf][0], out[torch][0])
    for g, w in zip(out[tf][1], out[torch][1]):
        np.testing.assert_array_equal(g, w)


@pytest.mark.numpy_only
def test_vector_to_parameters_matches_torch():
    torch = skips.torch()
    vec = R.standard_normal(sum(int(np.prod(s)) for s in SHAPES))
    tp = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in SHAPES]
    fp = [tf.zeros(s) for s in SHAPES]
    for p in fp:
        p.requires_grad = True
    torch.nn.utils.vector_to_parameters(torch.tensor(vec), tp)
    tnu.vector_to_parameters(tf.tensor(vec), fp)
    for p, q in zip(fp, tp):
        assert p.dtype == tf.float64 and p.is_leaf and p.requires_grad
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_vectors_round_trip_and_bad_sizes():
    ps = [tf.tensor(R.standard_normal(s), requires_grad=True) for s in SHAPES]
    vec = tnu.parameters_to_vector(ps)
    qs = [tf.zeros(s) for s in SHAPES]
    tnu.vector_to_parameters(vec * 2, qs)
    for p, q in zip(ps, qs):
        np.testing.assert_array_equal(q.detach().numpy(), 2 * p.detach().numpy())
    low = [tf.zeros(s, dtype=tf.float32) for s in SHAPES]
    tnu.vector_to_parameters(vec, low)  # the parameters keep their dtype (PyTorch's .data
    assert low[0].dtype == tf.float32   # assignment would make them float64)
    np.testing.assert_allclose(low[1].numpy(), ps[1].detach().numpy(), rtol=1e-7)
    with pytest.raises(ShapeError, match="entries"):
        tnu.vector_to_parameters(vec[:-1], qs)
    with pytest.raises(tf.errors.DTypeError, match="eager tensor"):
        tnu.vector_to_parameters(vec.detach().numpy(), qs)
