"""Shared checks for the nn tests: the same program run by tenferro and by PyTorch (values and
gradients compared at 1e-12 in float64), and by finite differences (always, torch or not)."""

from __future__ import annotations

import numpy as np

import tenferro as tf
from tenferro.testing import check_grads
from tests import helpers, skips

RTOL = 1e-12


class Const:
    """An input that is not differentiated (class weights, masks): no gradient compared."""

    def __init__(self, a):
        self.a = np.asarray(a)


def _is_float(a) -> bool:
    return not isinstance(a, Const) and np.asarray(a).dtype.kind in "fc"


def _raw(a):
    return a.a if isinstance(a, Const) else a


def tenferro_run(fn, arrays, ct_seed=7):
    """Values of ``fn(*tensors)`` and the gradients of <ct, out> for every float input, on the
    eager tape."""
    xs = [tf.tensor(_raw(a), requires_grad=_is_float(a)) for a in arrays]
    out = fn(*xs)
    ct = np.random.default_rng(ct_seed).standard_normal(out.shape)
    tf.sum(out * tf.tensor(ct, dtype=out.dtype)).backward()
    grads = [x.grad.numpy() if x.grad is not None else np.zeros(x.shape)
             for x, a in zip(xs, arrays) if _is_float(a)]
    return out.detach().numpy(), grads


def torch_run(fn, arrays, ct_seed=7):
    torch = skips.torch()
    xs = [torch.tensor(np.asarray(_raw(a)), requires_grad=_is_float(a)) for a in arrays]
    out = fn(*xs)
    ct = np.random.default_rng(ct_seed).standard_normal(tuple(out.shape))
    (out * torch.tensor(ct, dtype=out.dtype)).sum().backward()
    grads = [x.grad.numpy() if x.grad is not None else np.zeros(tuple(x.shape))
             for x, a in zip(xs, arrays) if _is_float(a)]
    return out.detach().numpy(), grads


def as_numpy(x):
    """A tenferro or torch tensor (detached) or array-like as a NumPy array."""
    if hasattr(x, "detach"):
        x = x.detach()
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def assert_close(got, want, what="", rtol=RTOL):
    """Max-norm relative agreement: max|got - want| <= rtol * max|want|."""
    helpers.assert_close(got, want, rtol, what=what)


def assert_matches_torch(tf_fn, torch_fn, arrays, rtol=RTOL):
    """tenferro and PyTorch agree on values and on every float input's gradient."""
    want, want_g = torch_run(torch_fn, arrays)
    got, got_g = tenferro_run(tf_fn, arrays)
    assert_close(got, want, "value", rtol)
    for i, (g, w) in enumerate(zip(got_g, want_g)):
        assert_close(g, w, f"gradient of float input {i}", rtol)


def assert_finite_differences(fn, arrays, order=1, **kw):
    """Forward and reverse mode against central differences (and against each other)."""
    xs = [tf.tensor(_raw(a)) for a in arrays]
    floats = [i for i, a in enumerate(arrays) if _is_float(a)]

    def f(*fl):
        args = list(xs)
        for i, v in zip(floats, fl):
            args[i] = v
        return fn(*args)

    check_grads(f, [xs[i] for i in floats], order=order, **kw)
