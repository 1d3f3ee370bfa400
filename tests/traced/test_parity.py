"""Parity: every program of the shared collection gives the same values and gradients in
eager mode, under jit (both jit(vjp) and grad-through-jit), and after save -> load -> run."""

import numpy as np
import pytest

import tenferro as tf
from tests.programs import PROGRAMS

CASES = [(p, dt) for p in PROGRAMS for dt in p.dtypes]
IDS = [f"{p.name}-{dt}" for p, dt in CASES]


def _split(prog, args):
    n = len(prog.shapes)
    return args[:n], args[n:]


def _cotangent(out, rng):
    a = rng.standard_normal(out.shape)
    if out.dtype.kind == "c":
        a = a + 1j * rng.standard_normal(out.shape)
    return tf.tensor(a.astype(out.dtype))


def _value_and_vjp(prog, n_diff):
    def f(*args):
        diff, extra = args[:n_diff], args[n_diff:-1]
        ct = args[-1]
        out, pull = tf.vjp(lambda *xs: prog.fn(*xs, *extra), *diff)
        return out, pull(ct)

    return f


def test_the_collection_is_large_enough():
    assert len(PROGRAMS) >= 40


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_eager_jit_and_saved_graph_agree(prog, dtype, rng, tmp_path):
    args = prog.args(dtype, rng)
    diff, extra = _split(prog, args)
    eager_out = prog.fn(*diff, *extra)
    ct = _cotangent(eager_out, rng)
    f = _value_and_vjp(prog, len(diff))
    ref_out, ref_grads = f(*args, ct)
    np.testing.assert_allclose(ref_out.numpy(), eager_out.numpy(), rtol=0, atol=0)

    jf = tf.jit(f)
    out, grads = jf(*args, ct)
    _assert_same(out, grads, ref_out, ref_grads)
    out, grads = jf(*args, ct)  # second call: cached graph
    assert jf.traces == 1
    _assert_same(out, grads, ref_out, ref_grads)

    graph = jf.lower(*args, ct)
    path = tmp_path / "g.tfg"
    graph.save(path)
    loaded = tf.load(path)
    out, grads = loaded(*args, ct)
    _assert_same(out, grads, ref_out, ref_grads)

    # grad through a jitted forward: the graph is interpreted by the tape
    _, pull = tf.vjp(lambda *xs: tf.jit(prog.fn)(*xs, *extra), *diff)
    for a, b in zip(pull(ct), ref_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)


def _assert_same(out, grads, ref_out, ref_grads):
    np.testing.assert_allclose(out.numpy(), ref_out.numpy(), rtol=1e-12, atol=1e-12)
    for a, b in zip(grads, ref_grads):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
