"""Shared helpers of the NumPy-surface tests: random inputs on a domain, and the check that
a function gives NumPy's values eagerly and the same values under ``jit``."""

import numpy as np

import tenferro as tf

DOMAINS = {
    "any": lambda a: a,
    "pos": lambda a: np.abs(a) + 0.5,
    "unit": lambda a: 0.9 * np.tanh(a),
    "gt1": lambda a: np.abs(a) + 1.2,
}


def sample(rng, shape, dtype="float64", domain="any"):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
        return (a + (2.0 if domain in ("pos", "gt1") else 0.0)).astype(dtype)
    return DOMAINS[domain](a).astype(dtype)


def assert_matches_numpy(tf_fn, np_fn, *args, rtol=1e-12, atol=1e-12, dtype=True):
    """Eager values equal NumPy's; ``jit`` gives the eager values; dtypes agree."""
    tensors = [tf.tensor(a) for a in args]
    out = tf_fn(*tensors)
    ref = np_fn(*args)
    outs, refs = (out, ref) if isinstance(out, (tuple, list)) else ((out,), (ref,))
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        r = np.asarray(r)
        assert tuple(o.shape) == r.shape, (o.shape, r.shape)
        if dtype:
            assert o.dtype == r.dtype, (o.dtype, r.dtype)
        np.testing.assert_allclose(o.numpy(), r, rtol=rtol, atol=atol)
    jitted = tf.jit(tf_fn)(*tensors)
    jouts = jitted if isinstance(jitted, (tuple, list)) else (jitted,)
    for o, j in zip(outs, jouts):
        np.testing.assert_allclose(j.numpy(), o.numpy(), rtol=1e-14, atol=1e-14)
    return out
