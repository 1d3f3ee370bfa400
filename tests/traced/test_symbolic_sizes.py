"""Run-time ranks under jit with gradients: programs that slice, index, pad, concatenate,
reshape, broadcast, reduce and contract the factors of a cutoff-truncated SVD. Each program is
traced once and run at several ranks; values and gradients (jit(grad), grad(jit), jit(hvp))
match eager mode on the same inputs and central finite differences."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError

T = tf.tensor
CUTOFF = 1e-2  # kept singular values are >= 1, dropped ones <= 1e-4: FD steps cannot flip it


def matrix(rng, m, n, rank):
    """An m x n matrix with ``rank`` singular values in [1, 3] and the rest ~1e-4."""
    k = min(m, n)
    sv = np.concatenate([np.linspace(3.0, 1.0, rank), np.linspace(2e-4, 1e-4, k - rank)])
    q1 = np.linalg.qr(rng.standard_normal((m, k)))[0]
    q2 = np.linalg.qr(rng.standard_normal((n, k)))[0]
    return q1 @ np.diag(sv) @ q2.T


def svd(a):
    return tf.linalg.svd(a, relative_cutoff=CUTOFF)


def grad_of_jit(f):
    return tf.grad(tf.jit(f))


def _row(a):
    u, s, vh = svd(a)
    return tf.sum(u[0] * s)


def _cols_from_2(a):
    u, s, vh = svd(a)
    return tf.sum(vh[:, 2:] ** 2 * s[:, None])


def _rows_from_1(a):
    u, s, vh = svd(a)
    return tf.sum(vh[1:] ** 3) + tf.sum(u[:, 1:] * u[:, :-1])


def _last_col(a):
    u, s, vh = svd(a)
    return tf.sum(u[:, -1] ** 3) + s[-1]


def _concat(a):
    u, s, vh = svd(a)
    x = tf.concatenate([s, s[:1]])
    return tf.sum(x * x[::-1]) + tf.sum(tf.concatenate([u, u[:, :1] * 2], axis=1) ** 3)


def _pad(a):
    u, s, vh = svd(a)
    p = tf.pad(s, (1, 2))
    return tf.sum(p[1:] * p[:-1]) + tf.sum(tf.pad(u, ((0, 0), (2, 1))) ** 3)


def _reshape(a):
    u, s, vh = svd(a)
    flat = tf.reshape(u * s, (-1,))
    r = tf.reshape(u * s, (u.shape[1], -1))  # (k, m): a reshape that is not a transpose
    return tf.sum(flat[1:] * flat[:-1]) + tf.sum(r**2 * r[:, :1])


def _sums(a):
    u, s, vh = svd(a)
    return s.sum() + (s**2).mean() + tf.max(s) + tf.sum(tf.mean(u, axis=1) ** 2)


def _diff(a):
    u, s, vh = svd(a)
    return tf.sum((s[1:] - s[:-1]) ** 2)


def _einsum(a):
    u, s, vh = svd(a)
    b = tf.einsum("ik,k,kj->ij", u, s, vh)
    tail = tf.einsum("ik,k,kj->ij", u[:, 1:], s[1:], vh[1:])  # contracted axis k - 1
    return tf.sum(b * a) + tf.sum(tail**2) + tf.sum(tf.einsum("ik,jk->ij", u, u) ** 3)


def _matmul(a):
    u, s, vh = svd(a)
    g = (u[:, :-1] * s[:-1]) @ vh[:-1]  # contracted axis k - 1
    w = u.T @ a  # free axis k
    return tf.sum(g**2) + tf.sum(w * vh) + tf.sum((vh[1:] @ vh[1:].T) * s[1:])


def _outer(a):
    u, s, vh = svd(a)
    d = s[:, None] - s[None, :]
    e = s[1:, None] * s[None, :-1]  # (k - 1, k - 1)
    return tf.sum(d**2 * s) + tf.sum((s[:, None] * vh) ** 2) + tf.sum(e**2)


def _strided(a):
    u, s, vh = svd(a)
    return tf.sum(s[::2]) * tf.sum(s[1::2] + 1) + tf.sum(s[-2:] ** 3)


def _take(a):
    u, s, vh = svd(a)
    return tf.sum(u[:, [0, -1]] ** 3) + tf.sum(tf.take(s, [0, -1, 0]) ** 2)


def _setitem(a):
    u, s, vh = svd(a)
    v = s.at[0].set(s[-1] * 2).at[-1].add(1.0)
    w = u.at[:, -1].set(u[:, 0])
    return tf.sum(v**3) + tf.sum(w**3) + tf.sum(s / s.shape[0])


PROGRAMS = [_row, _cols_from_2, _rows_from_1, _last_col, _concat, _pad, _reshape, _sums, _diff,
            _einsum, _matmul, _outer, _strided, _take, _setitem]
RANKS = (3, 1, 4)


def _fd_directional(f, a, t, eps=1e-6):
    return (f(T(a + eps * t)).item() - f(T(a - eps * t)).item()) / (2 * eps)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__.strip("_"))
def test_values_and_gradients_match_eager_and_finite_differences(f, rng):
    jf, jg, gj = tf.jit(f), tf.jit(tf.grad(f)), grad_of_jit(f)
    for r in RANKS:
        a = matrix(rng, 6, 5, r)
        t = rng.standard_normal(a.shape)
        ref, ref_g = f(T(a)).item(), tf.grad(f)(T(a)).numpy()
        np.testing.assert_allclose(jf(T(a)).item(), ref, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(jg(T(a)).numpy(), ref_g, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(gj(T(a)).numpy(), ref_g, rtol=1e-9, atol=1e-11)
        fd = _fd_directional(jf, a, t)
        np.testing.assert_allclose(np.vdot(jg(T(a)).numpy(), t), fd, rtol=1e-6, atol=1e-7)
    assert jf.traces == jg.traces == 1  # one trace serves every rank


def _complex_program(a):  # gauge invariant: moduli of singular vectors, singular values
    u, s, vh = svd(a)
    x = tf.concatenate([s, s[:1]])
    return (tf.sum(abs(u[:, -1]) ** 2 * tf.arange(6.0)) + tf.sum((s[1:] - s[:-1]) ** 2)
            + tf.sum(abs(tf.concatenate([vh, vh[:1]])) ** 3) + tf.sum(x * x[::-1])
            + tf.sum(abs(tf.pad(u[:, 1:], ((0, 0), (1, 0)))) ** 3))


def test_complex_inputs(rng):
    f = _complex_program
    jf, jg, gj = tf.jit(f), tf.jit(tf.grad(f)), grad_of_jit(f)
    for r in RANKS:
        a = matrix(rng, 6, 5, r).astype(complex)
        q = np.linalg.qr(rng.standard_normal((6, 6)) + 1j * rng.standard_normal((6, 6)))[0]
        a = q @ a  # a complex matrix with the same singular values
        t = rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)
        ref, ref_g = f(T(a)).item(), tf.grad(f)(T(a)).numpy()
        np.testing.assert_allclose(jf(T(a)).item(), ref, rtol=1e-11)
        np.testing.assert_allclose(jg(T(a)).numpy(), ref_g, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(gj(T(a)).numpy(), ref_g, rtol=1e-9, atol=1e-11)
        # grad = dL/dRe + i dL/dIm, so the directional derivative along t is Re <g, t>
        fd = _fd_directional(jf, a, t)
        np.testing.assert_allclose(np.real(np.vdot(jg(T(a)).numpy(), t)), fd, rtol=1e-6,
                                   atol=1e-7)
    assert jf.traces == 1


def _hvp_program(a):
    u, s, vh = svd(a)
    x = tf.concatenate([s, s[:1]])
    return (tf.sum(u[0] * s) + tf.sum(vh[:, 2:] ** 2) + tf.sum((s[1:] - s[:-1]) ** 2)
            + tf.sum(x**3) + tf.sum(tf.pad(u[:, -1], (1, 1)) ** 3))


def test_hvp_under_jit(rng):
    f = _hvp_program
    jh = tf.jit(lambda a, t: tf.hvp(f, (a,), (t,)))
    for r in RANKS:
        a = matrix(rng, 6, 5, r)
        t = rng.standard_normal(a.shape)
        ref = tf.hvp(f, (T(a),), (T(t),))
        got = jh(T(a), T(t))
        ref, got = (x[1] if isinstance(x, tuple) else x for x in (ref, got))
        np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-9, atol=1e-10)
        g = tf.jit(tf.grad(f))
        fd = (g(T(a + 1e-6 * t)).numpy() - g(T(a - 1e-6 * t)).numpy()) / 2e-6
        np.testing.assert_allclose(got.numpy(), fd, rtol=1e-5, atol=1e-6)
    assert jh.traces == 1


@pytest.mark.parametrize("branch", [
    lambda u: u.shape[1] == 4,
    lambda u: u.shape[1] != 4,
    lambda u: u.shape == (6, 4),
    lambda u: u.shape[1] == u.shape[0] - 2,
], ids=["eq", "ne", "shape-eq", "two-sizes"])
def test_branching_on_a_run_time_size_raises(branch, rng):
    def f(a):
        u, s, vh = svd(a)
        return tf.sum(s) * (10.0 if branch(u) else 1.0)

    a = T(matrix(rng, 6, 5, 4))
    f(a)  # eager mode decides with the actual rank
    with pytest.raises(ShapeError, match="known only at run time") as e:
        tf.jit(f)(a)
    assert "test_symbolic_sizes.py" in str(e.value) and "max_rank" in str(e.value)


def test_decidable_size_comparisons_agree_with_eager(rng):
    def f(a):
        u, s, vh = svd(a)
        k = s.shape[0]
        flags = (k == k, k + 1 != k, 2 * k != 1, k >= 1, k <= 5, k != 6, u.shape == u.shape,
                 s[1:].shape[0] == k - 1, k > 5)
        assert flags == (True,) * 8 + (False,)
        return tf.sum(s)

    a = T(matrix(rng, 6, 5, 2))
    np.testing.assert_allclose(tf.jit(f)(a).item(), f(a).item(), rtol=1e-12)


def test_squeeze_agrees_with_eager_or_refuses(rng):
    a = T(matrix(rng, 6, 5, 1))  # rank 1: eager squeeze() would drop the rank axis

    def all_axes(a):
        u, s, vh = svd(a)
        return tf.squeeze(u)

    assert all_axes(a).shape == (6,)
    with pytest.raises(ShapeError, match="axis="):
        tf.jit(all_axes)(a)

    def named(a):  # axes named explicitly or sizes that cannot be 1: same as eager
        u, s, vh = svd(a)
        return tf.squeeze(u[:1], axis=0), tf.squeeze(tf.reshape(u, (1, -1)))

    for r in (1, 3):
        b = T(matrix(rng, 6, 5, r))
        for got, ref in zip(tf.jit(named)(b), named(b)):
            assert got.shape == ref.shape
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)

    def named_symbolic(a):
        u, s, vh = svd(a)
        return tf.squeeze(u, axis=1)

    with pytest.raises(ShapeError, match="run time"):
        tf.jit(named_symbolic)(a)


def test_slices_of_a_run_time_axis_resolve_at_every_rank(rng):
    slices = [slice(1, None), slice(None, -1), slice(None, 1), slice(-1, None),
              slice(None, 2), slice(-2, None), slice(1, -1), slice(None, None, 2),
              slice(1, None, 3), slice(None, None, -1), slice(-1, None, -2), slice(2, 4),
              slice(-3, -1), slice(None, -2, -1)]

    def f(a):
        s = svd(a)[1]
        return [s[sl] for sl in slices] + [s[-1], s[0]]

    def loss(a):
        return sum(tf.sum(x**3) for x in f(a))

    jf, gj, jg = tf.jit(f), grad_of_jit(loss), tf.jit(tf.grad(loss))
    for r in (1, 2, 3, 5):
        a = T(matrix(rng, 5, 5, r))
        for got, ref in zip(jf(a), f(a)):
            assert got.shape == ref.shape
            np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-12)
        ref_g = tf.grad(loss)(a).numpy()
        np.testing.assert_allclose(gj(a).numpy(), ref_g, rtol=1e-9, atol=1e-11)  # interpreter
        np.testing.assert_allclose(jg(a).numpy(), ref_g, rtol=1e-9, atol=1e-11)  # executor
    assert jf.traces == 1


def test_output_shapes_are_size_expressions(rng):
    def f(a):
        u, s, vh = svd(a)
        return s[1:], tf.concatenate([s, s[:1]]), tf.pad(s, (1, 2)), s[::2]

    g = tf.make_graph(f, T(matrix(rng, 6, 5, 3)))
    shapes = [str(av) for av in g.out_avals]
    k = str(g.out_avals[1].shape[0])[:-4]  # "kN + 1"
    assert shapes == [f"f64[{k} - 1]", f"f64[{k} + 1]", f"f64[{k} + 3]", f"f64[({k} + 1)//2]"]


def test_what_cannot_be_symbolic_names_the_op_the_line_and_max_rank(rng):
    a = T(matrix(rng, 6, 5, 3))

    def index_past_the_start(a):
        u, s, vh = svd(a)
        return u[:, 3]  # exists only when the rank is >= 4

    with pytest.raises(ShapeError, match="indexing: index 3") as e:
        tf.jit(index_past_the_start)(a)
    assert "max_rank" in str(e.value) and "test_symbolic_sizes.py" in str(e.value)

    def as_int(a):
        u, s, vh = svd(a)
        return tf.zeros(int(s.shape[0]))

    with pytest.raises(ShapeError, match="max_rank") as e:
        tf.jit(as_int)(a)
    assert "test_symbolic_sizes.py" in str(e.value)

    def broadcast_against_static(a):
        u, s, vh = svd(a)
        return s + tf.ones(3)  # fine in eager only when the rank is 1 or 3

    with pytest.raises(ShapeError, match="broadcast"):
        tf.jit(broadcast_against_static)(a)

    # the same programs with a static rank trace fine
    u3 = tf.jit(lambda a: tf.linalg.svd(a, max_rank=4)[0][:, 3])(a)
    np.testing.assert_allclose(u3.numpy(), tf.linalg.svd(a, max_rank=4)[0][:, 3].numpy())


def test_max_rank_with_cutoff_bounds_the_run_time_size(rng):
    def f(a):
        u, s, vh = tf.linalg.svd(a, relative_cutoff=CUTOFF, max_rank=2)
        k = s.shape[0]
        assert k <= 2 and k != 3  # decided from the bound
        return tf.sum(s)

    for r in (1, 3):
        a = T(matrix(rng, 6, 5, r))
        np.testing.assert_allclose(tf.jit(f)(a).item(), f(a).item(), rtol=1e-12)


def test_constants_of_a_run_time_size():
    """``zeros(k)``, ``arange(k)``, ``arange(1, k)`` with a data-dependent ``k`` under jit."""

    def f(a):
        _, s, _ = svd(a)
        k = s.shape[0]
        return tf.sum(s * tf.arange(k)) + tf.sum(tf.zeros(k) + s) + tf.sum(tf.arange(1, k))

    a = tf.tensor(matrix(np.random.default_rng(3), 5, 6, 3))
    np.testing.assert_allclose(tf.jit(f)(a).item(), f(a).item(), rtol=1e-14)
    np.testing.assert_allclose(tf.jit(tf.grad(f))(a).numpy(), tf.grad(f)(a).numpy(),
                               rtol=1e-12, atol=1e-14)
