"""Forward mode, linearize/linear_transpose, HVP, Hessians and derivatives of any order."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import NonLinearError
from tenferro.testing import check_grads, real_inner
from tests.programs import PROGRAMS

T = tf.tensor


# --------------------------------------------------------------- linearize / transpose
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_transpose_of_linearize_reproduces_vjp(prog, rng):
    for dtype in prog.dtypes:
        all_args = prog.args(dtype, rng)
        n = len(prog.shapes)
        args, extra = all_args[:n], all_args[n:]  # index arrays are not differentiated

        def fn(*xs):
            return prog.fn(*xs, *extra)

        out, f_lin = tf.linearize(fn, *args)
        ct = tf.tensor(_like(out, rng))
        via_transpose = tf.linear_transpose(f_lin, *args)(ct)
        _, pull = tf.vjp(fn, *args)
        for a, b in zip(via_transpose, pull(ct)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-13)


def _like(x, rng):
    a = rng.standard_normal(x.shape)
    if x.dtype.kind == "c":
        a = a + 1j * rng.standard_normal(x.shape)
    return a.astype(x.dtype)


def test_linearize_does_not_recompute_the_primal(rng):
    calls = []

    def f(x):
        calls.append(1)
        return tf.sin(x) * x

    x = T(rng.standard_normal(5))
    out, f_lin = tf.linearize(f, x)
    assert len(calls) == 1
    t = T(rng.standard_normal(5))
    np.testing.assert_allclose(f_lin(t).numpy(), tf.jvp(f, (x,), (t,))[1].numpy(), rtol=1e-14)
    f_lin(t)
    assert len(calls) == 2  # the jvp above; f_lin itself never calls f
    assert all(e.prim.name != "sin" for e in f_lin.program.eqns)  # only linear work recorded


def test_linear_transpose_rejects_nonlinear_functions():
    with pytest.raises(NonLinearError, match="exp"):
        tf.linear_transpose(tf.exp, T([1.0]))(T([1.0]))
    with pytest.raises(NonLinearError, match="mul"):
        tf.linear_transpose(lambda x: x * x, T([1.0]))(T([1.0]))


# ----------------------------------------------------------------- nesting, confusion
def test_third_derivative_of_sin_exp():
    f = lambda x: tf.sin(x) * tf.exp(x)  # noqa: E731
    d3 = tf.grad(tf.grad(tf.grad(f)))
    for x in (0.3, -1.1, 2.0):
        np.testing.assert_allclose(d3(T(x)).item(),
                                   2 * np.exp(x) * (np.cos(x) - np.sin(x)), rtol=1e-13)
    # the same through forward mode and mixed orders
    d3_fwd = lambda x: tf.jvp(lambda y: tf.jvp(lambda z: tf.jvp(f, (z,), (T(1.0),))[1],  # noqa
                                               (y,), (T(1.0),))[1], (x,), (T(1.0),))[1]
    d3_mixed = lambda x: tf.jvp(tf.grad(tf.grad(f)), (x,), (T(1.0),))[1]  # noqa: E731
    for g in (d3_fwd, d3_mixed):
        np.testing.assert_allclose(g(T(0.3)).item(), 2 * np.exp(0.3) * (np.cos(0.3)
                                                                      - np.sin(0.3)), rtol=1e-13)


def test_third_derivative_of_a_tensor_function(rng):
    A = rng.standard_normal((3, 3))
    x0 = rng.standard_normal(3)

    def f(x):  # sum_i (A x)_i^3 ; d3/dx_j dx_k dx_l = 6 sum_i A_ij A_ik A_il
        return tf.sum((T(A) @ x) ** 3)

    v = rng.standard_normal(3)

    def d2v(x):  # H(x) v
        return tf.hvp(f, (x,), (T(v),))

    # d/dx (H v) . w = sum 6 A_ij A_ik A_il v_k w_l
    w = rng.standard_normal(3)
    got = tf.jvp(d2v, (T(x0),), (T(w),))[1].numpy()
    expected = 6 * np.einsum("ij,ik,il,k,l->j", A, A, A, v, w)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = 1, for every combination of modes
    def inner_rev(x):
        return tf.grad(lambda y: x + y)(T(3.0))

    def inner_fwd(x):
        return tf.jvp(lambda y: x + y, (T(3.0),), (T(1.0),))[1]

    for inner in (inner_rev, inner_fwd):
        f = lambda x: x * inner(x)  # noqa: E731
        assert tf.grad(f)(T(2.0)).item() == 1.0
        assert tf.jvp(f, (T(2.0),), (T(1.0),))[1].item() == 1.0
    # Siskind & Pearlmutter: d/dx [x * d/dy (x * y)]|_{y=2} at x = 1 is 2x = 2
    g = lambda x: x * tf.grad(lambda y: x * y)(T(2.0))  # noqa: E731
    assert tf.grad(g)(T(1.0)).item() == 2.0
    h = lambda x: x * tf.jvp(lambda y: x * y, (T(2.0),), (T(1.0),))[1]  # noqa: E731
    assert tf.jvp(h, (T(1.0),), (T(1.0),))[1].item() == 2.0


def test_grad_of_jvp_and_grad_of_hvp(rng):
    x0 = rng.standard_normal(4)
    v = rng.standard_normal(4)
    f = lambda x: tf.sum(tf.sin(x) ** 2 * tf.exp(x))  # noqa: E731
    # grad of (J v) = H v
    gjvp = tf.grad(lambda x: tf.jvp(f, (x,), (T(v),))[1])(T(x0))
    np.testing.assert_allclose(gjvp.numpy(), tf.hvp(f, (T(x0),), (T(v),)).numpy(), rtol=1e-12)
    # grad of <w, H v> is a third-derivative contraction; compare with finite differences
    w = rng.standard_normal(4)

    def s(x):
        return tf.sum(tf.hvp(f, (x,), (T(v),)) * T(w))

    g = tf.grad(s)(T(x0)).numpy()
    eps = 1e-5
    for k in range(4):
        e = np.zeros(4)
        e[k] = eps
        fd = (s(T(x0 + e)).item() - s(T(x0 - e)).item()) / (2 * eps)
        np.testing.assert_allclose(g[k], fd, rtol=1e-7, atol=1e-9)


def test_check_grads_to_third_order(rng):
    f = lambda x, y: tf.sum(tf.tanh(x @ y) * tf.cos(x).sum())  # noqa: E731
    args = (T(rng.standard_normal((2, 3)) * 0.5), T(rng.standard_normal((3, 2)) * 0.5))
    check_grads(f, args, order=3, eps=1e-4, rtol=1e-5)


# ----------------------------------------------------------------------- HVP / Hessian
def _fd_hvp(f, x0, v, eps=1e-5):
    g = tf.grad(f)
    return (g(T(x0 + eps * v)).numpy() - g(T(x0 - eps * v)).numpy()) / (2 * eps)


def _softmax_lse(x):
    return tf.logsumexp(x) + tf.sum(tf.softmax(x) * x) + tf.sum(tf.log_softmax(x) ** 2) / 7


@pytest.mark.parametrize("name", ["quadratic", "softmax_logsumexp", "mixed"])
def test_hvp_matches_finite_differences_and_dense_hessian(name, rng):
    n = 5
    A = rng.standard_normal((n, n))
    fs = {
        "quadratic": lambda x: 0.5 * tf.sum(x * (T(A) @ x)),
        "softmax_logsumexp": _softmax_lse,
        "mixed": lambda x: tf.sum(tf.exp(tf.sin(x)) * tf.tanh(T(A) @ x)),
    }
    f = fs[name]
    x0, v = rng.standard_normal(n), rng.standard_normal(n)
    hv = tf.hvp(f, (T(x0),), (T(v),)).numpy()
    np.testing.assert_allclose(hv, _fd_hvp(f, x0, v), rtol=1e-7, atol=1e-9)
    H = tf.hessian(f)(T(x0)).numpy()
    np.testing.assert_allclose(H @ v, hv, rtol=1e-12, atol=1e-13)
    if name == "quadratic":
        np.testing.assert_allclose(H, 0.5 * (A + A.T), rtol=1e-13)


def test_hessian_is_symmetric_on_random_smooth_functions(rng):
    for seed in range(5):
        r = np.random.default_rng(seed)
        W1, W2 = r.standard_normal((4, 6)), r.standard_normal((6,))

        def f(x):
            h = tf.tanh(x @ T(W1)) * tf.sin(x).sum()
            return tf.sum(h * T(W2)) + tf.logsumexp(x) ** 2

        H = tf.hessian(f)(T(r.standard_normal(4))).numpy()
        np.testing.assert_allclose(H, H.T, rtol=0, atol=1e-13 * np.abs(H).max())


def test_reverse_over_reverse_equals_forward_over_reverse(rng):
    x0, v = rng.standard_normal(4), rng.standard_normal(4)
    f = lambda x: tf.sum(tf.sin(x) * tf.exp(x) ** 2) + tf.prod(x)  # noqa: E731
    fwd_over_rev = tf.hvp(f, (T(x0),), (T(v),)).numpy()
    x = T(x0, requires_grad=True)
    f(x).backward(create_graph=True)
    g = x.grad
    x.grad = None
    (g * T(v)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), fwd_over_rev, rtol=1e-13)
    rev_over_rev = tf.grad(lambda y: tf.sum(tf.grad(f)(y) * T(v)))(T(x0)).numpy()
    np.testing.assert_allclose(rev_over_rev, fwd_over_rev, rtol=1e-13)


def test_jacobians(rng):
    A = rng.standard_normal((3, 4))
    f = lambda x: tf.sin(T(A) @ x)  # noqa: E731
    x0 = rng.standard_normal(4)
    expected = np.cos(A @ x0)[:, None] * A
    np.testing.assert_allclose(tf.jacfwd(f)(T(x0)).numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose(tf.jacrev(f)(T(x0)).numpy(), expected, rtol=1e-13)


# ------------------------------------------------------------- zeros, pytrees, complex
def test_unrelated_tangent_outputs_are_zeros_of_the_right_kind():
    out, t = tf.jvp(lambda x, y: (x * 2, tf.ones((2,), tf.complex64)), (T(1.0), T(2.0)),
                    (T(1.0), T(1.0)))
    assert t[1].shape == (2,) and t[1].dtype == tf.complex64 and not t[1].numpy().any()
    assert t[0].item() == 2.0


def test_jvp_pytrees_and_has_aux():
    def f(p):
        return {"y": p["a"] * p["b"]}, p["a"] + 1

    p = {"a": T([1.0, 2.0]), "b": T([3.0, 4.0])}
    t = {"a": T([1.0, 0.0]), "b": T([0.0, 1.0])}
    out, tout, aux = tf.jvp(f, (p,), (t,), has_aux=True)
    np.testing.assert_array_equal(tout["y"].numpy(), [3.0, 2.0])
    np.testing.assert_array_equal(aux.numpy(), [2.0, 3.0])


def test_complex_convention_in_every_transform(rng):
    z0 = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    f = lambda z: tf.sum(tf.abs2(tf.exp(z) + z))  # noqa: E731
    g = tf.grad(f)(T(z0))
    t = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    # <g, t> (real inner product) is the directional derivative along t
    _, d = tf.jvp(f, (T(z0),), (T(t),))
    np.testing.assert_allclose(real_inner(g, t), d.item(), rtol=1e-12)
    # hvp with complex inputs: matches finite differences of the gradient along t
    hv = tf.hvp(f, (T(z0),), (T(t),)).numpy()
    eps = 1e-6
    fd = (tf.grad(f)(T(z0 + eps * t)).numpy() - tf.grad(f)(T(z0 - eps * t)).numpy()) / (2 * eps)
    np.testing.assert_allclose(hv, fd, rtol=1e-7, atol=1e-9)


def test_hvp_through_einsum_and_svd(rng):
    """The acceptance case: a function with an einsum and an SVD (gauge-invariant loss)."""
    B = T(rng.standard_normal((4, 3)))

    def f(x):
        m = tf.einsum("ij,jk,kl->il", x, tf.tanh(x.T), x) + B
        u, s, vh = tf.linalg.svd(m)
        return tf.sum(s[:2] ** 2) + tf.sum((u[:, :2] @ u[:, :2].T) * (m @ m.T)) * 0.1

    x0, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    hv = tf.hvp(f, (T(x0),), (T(v),)).numpy()
    np.testing.assert_allclose(hv, _fd_hvp(f, x0, v), rtol=2e-6, atol=1e-8)
    H = tf.hessian(f)(T(x0)).numpy().reshape(12, 12)
    np.testing.assert_allclose(H @ v.ravel(), hv.ravel(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(H, H.T, atol=1e-10 * np.abs(H).max())
    # reverse-over-reverse agrees, and so does the jitted version
    rr = tf.grad(lambda y: tf.sum(tf.grad(f)(y) * T(v)))(T(x0)).numpy()
    np.testing.assert_allclose(rr, hv, rtol=1e-10, atol=1e-12)
    jh = tf.jit(lambda y, w: tf.hvp(f, (y,), (w,)))(T(x0), T(v)).numpy()
    np.testing.assert_allclose(jh, hv, rtol=1e-10, atol=1e-12)
