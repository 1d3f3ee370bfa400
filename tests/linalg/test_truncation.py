"""Truncated SVD: the rank decision, and gradients that include the coupling between kept and
discarded singular vectors (truncation is a thin SVD followed by slicing)."""

import numpy as np
import pytest

import chainrules
import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import ShapeError
from tenferro.testing import check_grads
from tests.linalg._util import DTYPES, T, fd_gradient, rand, rel_err

# ------------------------------------------------------------------------ rank decision


def test_truncation_rank_rules():
    s = np.array([4.0, 2.0, 1.0, 0.5, 1e-3, 0.0])
    assert la.truncation_rank(s) == 6
    assert la.truncation_rank(s, max_rank=3) == 3
    assert la.truncation_rank(s, cutoff=0.5) == 4  # values below the cutoff are dropped
    assert la.truncation_rank(s, cutoff=0.6) == 3
    assert la.truncation_rank(s, relative_cutoff=0.2) == 3  # s >= 0.2 * 4
    assert la.truncation_rank(s, cutoff=0.1, max_rank=2) == 2
    assert la.truncation_rank(s, cutoff=100.0) == 1  # at least one value is kept
    assert la.truncation_rank(np.zeros((0,))) == 0
    batch = np.array([[4.0, 3.0, 0.1], [4.0, 0.1, 0.1]])
    assert la.truncation_rank(batch, cutoff=1.0) == 2  # the largest rank over the batch


@pytest.mark.parametrize("kw,k", [({"max_rank": 3}, 3), ({"cutoff": 1.5}, 2),
                                  ({"relative_cutoff": 0.45}, 2), ({"max_rank": 10}, 4)])
def test_svd_truncation_shapes(kw, k, rng):
    from tests.linalg._util import with_singular_values

    a = with_singular_values(rng, 6, 4, [4.0, 2.0, 1.0, 0.5], "float64")
    u, s, vh = la.svd(T(a), **kw)
    assert u.shape == (6, k) and s.shape == (k,) and vh.shape == (k, 4)
    np.testing.assert_allclose(s.numpy(), [4.0, 2.0, 1.0, 0.5][:k], rtol=1e-12)
    assert la.svd(T(a), compute_uv=False, **kw).shape == (k,)


def test_batched_truncation_keeps_the_largest_rank(rng):
    from tests.linalg._util import with_singular_values

    a = np.stack([with_singular_values(rng, 5, 4, sv, "float64")
                  for sv in ([4.0, 3.0, 2.0, 0.01], [4.0, 0.01, 0.01, 0.001])])
    u, s, vh = la.svd(T(a), cutoff=0.1)
    assert s.shape == (2, 3)


@pytest.mark.parametrize("kw", [{"max_rank": 0}, {"max_rank": 2.5}, {"cutoff": -1.0},
                                {"relative_cutoff": 1.5}])
def test_bad_truncation_arguments(kw, rng):
    with pytest.raises(ShapeError, match="svd"):
        la.svd(T(rand(rng, (4, 3), "float64")), **kw)


def test_truncation_needs_thin_svd(rng):
    with pytest.raises(ShapeError, match="full_matrices=False"):
        la.svd(T(rand(rng, (4, 3), "float64")), full_matrices=True, max_rank=2)


def test_traced_truncation_max_rank_is_static_cutoff_is_a_run_time_size():
    """In a traced program max_rank alone is decided at trace time; a cutoff needs the data,
    so the rank becomes a symbolic size resolved when the graph runs
    (tests/traced/test_dynamic_shapes.py runs such graphs)."""
    from chainrules.symbolic import Sym
    from tenferro._src.core.dispatch import new_trace
    from tenferro._src.traced.staging import StagingTrace

    with new_trace(StagingTrace) as st:
        x = st.new_arg(chainrules.ShapedArray((6, 5), np.float64))
        u, s, vh = la.svd(x, max_rank=2)
        assert u.shape == (6, 2) and s.shape == (2,) and vh.shape == (2, 5)
        u, s, vh = la.svd(x, cutoff=1e-3, max_rank=4)
        (k,) = s.shape
        assert isinstance(k, Sym) and k.bound() == 4
        assert u.shape == (6, k) and vh.shape == (k, 5)


# ------------------------------------------------------------------ truncated gradients
def _truncated_loss(m, n, k, dtype, rng):
    """A gauge-invariant loss of (U_k, S_k, V_k): low-rank reconstruction error plus
    projector terms on both sides."""
    b = T(rand(rng, (m, n), dtype))
    c = T(rand(rng, (m, m), dtype))
    d = T(rand(rng, (n, n), dtype))

    def of_factors(u, s, vh):
        approx = (u * tf.astype(s, u.dtype)) @ vh
        pu = u @ tf.conj(u.T)
        pv = tf.conj(vh.T) @ vh
        return tf.sum(tf.abs2(approx - b)) + tf.real(tf.sum(c * pu)) + tf.real(tf.sum(d * pv))

    return of_factors, lambda a: of_factors(*la.svd(a, max_rank=k))


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncated_12x9_to_4_gradient_matches_finite_differences(dtype, rng):
    m, n, k = 12, 9, 4
    a = rand(rng, (m, n), dtype)
    _, loss = _truncated_loss(m, n, k, dtype, rng)
    g = tf.grad(loss)(T(a)).numpy()
    assert rel_err(g, fd_gradient(loss, a)) < 1e-6


def _naive_truncated_adjoint(u, s, v, gu, gs, gv):
    """The textbook real SVD adjoint (Townsend 2016) applied to the truncated factors as if
    they were a complete thin SVD: it knows nothing about the discarded singular values."""
    m, n = u.shape[0], v.shape[0]
    d2 = s[None, :] ** 2 - s[:, None] ** 2
    np.fill_diagonal(d2, 1.0)
    f = 1.0 / d2
    np.fill_diagonal(f, 0.0)
    j = f * (u.T @ gu - gu.T @ u)
    kk = f * (v.T @ gv - gv.T @ v)
    inner = j * s[None, :] + np.diag(gs) + s[:, None] * kk
    return (u @ inner @ v.T + (np.eye(m) - u @ u.T) @ gu / s[None, :] @ v.T
            + u @ (gv / s[None, :]).T @ (np.eye(n) - v @ v.T))


def test_dropping_the_kept_discarded_coupling_fails(rng):
    """The truncated-only adjoint is right for the untruncated thin SVD, and wrong (far beyond
    the 1e-6 tolerance met above) once the discarded singular values are non-zero."""
    m, n = 12, 9
    a = rand(rng, (m, n), "float64")
    for k, should_pass in ((9, True), (4, False)):
        of_factors, loss = _truncated_loss(m, n, k, "float64", rng)
        u, s, vh = la.svd(T(a), max_rank=k)
        gu, gs, gvh = tf.grad(of_factors, argnums=(0, 1, 2))(u, s, vh)
        naive = _naive_truncated_adjoint(u.numpy(), s.numpy(), vh.numpy().T, gu.numpy(),
                                         gs.numpy(), gvh.numpy().T)
        fd = fd_gradient(loss, a)
        ours = tf.grad(loss)(T(a)).numpy()
        assert rel_err(ours, fd) < 1e-6
        if should_pass:
            assert rel_err(naive, fd) < 1e-6
        else:
            assert rel_err(naive, fd) > 1e-2


def test_truncated_hvp(rng):
    m, n, k = 7, 5, 3
    a = T(rand(rng, (m, n), "float64"))
    t = T(rand(rng, (m, n), "float64"))
    _, loss = _truncated_loss(m, n, k, "float64", rng)
    hv = tf.hvp(loss, (a,), (t,)).numpy()
    g = tf.grad(loss)
    eps = 1e-5
    fd = (g(a + eps * t).numpy() - g(a - eps * t).numpy()) / (2 * eps)
    assert rel_err(hv, fd) < 1e-7


def test_truncation_by_cutoff_under_grad_and_tape(rng):
    """The rank is decided from concrete values also while the tape records (eager) and under
    the functional transforms."""
    from tests.linalg._util import with_singular_values

    a = with_singular_values(rng, 6, 5, [5.0, 3.0, 1.0, 1e-4, 1e-5], "float64")

    def loss(x):
        u, s, vh = la.svd(x, relative_cutoff=1e-3)
        assert s.shape == (3,)
        return tf.sum(tf.abs2((u * s) @ vh))

    x = T(a).requires_grad_()
    loss(x).backward()
    g = tf.grad(loss)(T(a)).numpy()
    np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-12)
    assert rel_err(g, fd_gradient(loss, a)) < 1e-6


def test_truncation_rank_of_a_differentiated_tensor(rng):
    """The rank is read from values that carry a derivative (under grad and jvp): it looks
    through them (stop_gradient) instead of refusing to convert a traced value."""
    a = rng.standard_normal((5, 4))
    ranks = []

    def loss(x):
        s = la.svdvals(x)
        r = la.truncation_rank(s, relative_cutoff=0.3)
        ranks.append(r)
        return tf.sum(s[:r])

    tf.grad(loss)(tf.tensor(a))
    tf.jvp(loss, (tf.tensor(a),), (tf.tensor(a),))
    s = np.linalg.svd(a, compute_uv=False)
    assert ranks == [int((s >= 0.3 * s[0]).sum())] * 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_cutoff_truncation_in_a_compiled_graph_passes_the_rule_checks(dtype, rng):
    """Under jit a cutoff's rank is a run-time size (``truncation_indices`` runs in the
    graph): forward and reverse mode of the compiled function, to second order, agree with
    finite differences and with each other, and the derivative matches eager mode."""
    from tests.linalg._util import with_singular_values

    a = T(with_singular_values(rng, 6, 5, [5.0, 3.0, 1.0, 1e-4, 1e-5], dtype))
    w = T(rand(rng, (6, 5), dtype))

    def loss(x):
        u, s, vh = la.svd(x, relative_cutoff=1e-3)
        return tf.sum(tf.abs2((u * tf.astype(s, u.dtype)) @ vh - w)) + tf.sum(s**3)

    jitted = tf.jit(loss)
    check_grads(jitted, (a,), order=2, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(tf.grad(jitted)(a).numpy(), tf.grad(loss)(a).numpy(),
                               rtol=1e-10, atol=1e-12)
