"""Data-dependent shapes in traced graphs: an SVD truncated by a cutoff gets a run-time rank;
the graph is traced once, shapes resolve at run time, downstream nodes adapt, gradients stay
correct, and the graph saves and loads with its symbolic sizes."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError

T = tf.tensor


def low_rank(rng, m, n, r):
    return rng.standard_normal((m, r)) @ rng.standard_normal((r, n))


def f(a):
    u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-9)
    b = (u * tf.sqrt(s)) @ (tf.sqrt(s)[:, None] * vh)  # a, rebuilt from the kept part
    k = u.shape[-1]
    c = tf.reshape(tf.einsum("ik,kj->ikj", u, vh), (a.shape[0], k, a.shape[1]))
    return tf.sum(b * a) + tf.sum(tf.sin(s)) + tf.sum(c**2) * 1e-3, s


def test_rank_is_decided_at_run_time(rng):
    jf = tf.jit(f)
    for r in (2, 4, 1, 5):
        a = T(low_rank(rng, 6, 5, r))
        (val, s), (ref_val, ref_s) = jf(a), f(a)
        assert s.shape == (r,) == ref_s.shape
        np.testing.assert_allclose(val.item(), ref_val.item(), rtol=1e-12)
    assert jf.traces == 1
    graph = jf.lower(a)
    assert "truncation_indices" in str(graph) and "k" in str(graph.out_avals[1])


def test_gradients_through_a_run_time_rank(rng):
    loss = lambda a: f(a)[0]  # noqa: E731
    jg = tf.jit(tf.grad(loss))
    for r in (3, 1, 4):
        a = T(low_rank(rng, 5, 6, r) + 1e-13)
        np.testing.assert_allclose(jg(a).numpy(), tf.grad(loss)(a).numpy(), rtol=1e-9,
                                   atol=1e-11)
    assert jg.traces == 1


def test_saved_graph_keeps_symbolic_sizes(rng, tmp_path):
    a = T(low_rank(rng, 6, 6, 3))
    g = tf.make_graph(f, a)
    g.save(tmp_path / "dyn.tfg")
    h = tf.load(tmp_path / "dyn.tfg")
    for r in (3, 5):
        b = T(low_rank(rng, 6, 6, r))
        val, s = h(b)
        assert s.shape == (r,)
        np.testing.assert_allclose(val.item(), f(b)[0].item(), rtol=1e-12)


def test_trg_with_a_cutoff_traces_once_and_matches_eager():
    from tenferro.tn import ising_tensor, trg

    def lnz(beta):
        return trg(ising_tensor(beta), 8, 8, relative_cutoff=1e-10, progress=False)

    jg = tf.jit(tf.value_and_grad(lnz))
    for beta in (0.2, 0.44, 0.7):
        (v, g), (rv, rg) = jg(T(beta)), tf.value_and_grad(lnz)(T(beta))
        np.testing.assert_allclose([v.item(), g.item()], [rv.item(), rg.item()], rtol=1e-10)
    assert jg.traces == 1


def test_what_cannot_be_traced_is_a_clear_error(rng):
    def bad(a):
        u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-3)
        return s[2]  # exists only when the run keeps at least 3 values

    with pytest.raises(ShapeError, match="run time"):
        tf.jit(bad)(T(rng.standard_normal((4, 4))))

    def fine(a):  # parts of a run-time axis whose bounds hold for every rank
        u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-3)
        return s[1:], s[-1], s[:1]

    a = T(rng.standard_normal((4, 4)))
    for got, ref in zip(tf.jit(fine)(a), fine(a)):
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)

    def also_bad(a):
        u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-3)
        return tf.zeros(int(s.shape[0]))

    with pytest.raises(ShapeError, match="run time"):
        tf.jit(also_bad)(T(rng.standard_normal((4, 4))))
