"""Derivatives of einsum: it has no rule of its own, so these check that the lowering composes
correctly under every transformation, in eager and traced mode, real and complex."""

from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
from tenferro._src.contract import lower as lower_mod
from tenferro.testing import check_grads, check_jvp, check_transpose, check_vjp
from tests.einsum.problems import einsum_problems, random_arrays, run_program, stage


@settings(max_examples=40, deadline=None)
@given(problem=einsum_problems(), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([np.float64, np.complex128]))
def test_random_expressions_gradients_match_finite_differences(problem, seed, dtype):
    eq, shapes = problem
    args = [tf.tensor(a) for a in random_arrays(shapes, dtype, seed)]

    def f(*xs):
        return tf.einsum(eq, *xs)

    check_vjp(f, args, seed=seed)  # reverse vs forward (dot-product identity) and vs FD
    check_jvp(f, args, seed=seed + 1)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_operand_used_twice(dtype):
    """d/da sum_ij a_ij a_ij = 2a; for complex a, the real loss sum |a_ij|^2 has gradient 2a."""
    a0 = random_arrays([(3, 4)], dtype, 0)[0]
    a = tf.tensor(a0)
    if dtype == np.float64:
        g = tf.grad(lambda x: tf.einsum("ij,ij->", x, x))(a)
        np.testing.assert_allclose(g.numpy(), 2 * a0, rtol=1e-14)
        leaf = tf.tensor(a0, requires_grad=True)
        tf.einsum("ij,ij->", leaf, leaf).backward()
        np.testing.assert_allclose(leaf.grad.numpy(), 2 * a0, rtol=1e-14)
        check_grads(lambda x: tf.einsum("ij,ij->", x, x), (a,), order=2)
    else:
        def loss(x):
            return tf.real(tf.einsum("ij,ij->", tf.conj(x), x))

        g = tf.grad(loss)(a)
        np.testing.assert_allclose(g.numpy(), 2 * a0, rtol=1e-14)
        check_grads(loss, (a,), order=2)
    # the same operand in three slots, with a trace
    sq = tf.tensor(random_arrays([(4, 4)], dtype, 1)[0])
    check_grads(lambda x: tf.einsum("ij,jk,ki->", x.T, x, x.T), (sq,), order=2)


SECOND_ORDER = [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij,ik,il->jkl", [(3, 2), (3, 2), (3, 2)]),
    ("bij,bjk,bkl->bil", [(2, 2, 3), (2, 3, 2), (2, 2, 2)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 2, 3), (3, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
]


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("case", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order(case, dtype):
    eq, shapes = case
    args = [tf.tensor(a) for a in random_arrays(shapes, dtype, 3)]
    check_grads(lambda *xs: tf.einsum(eq, *xs), args, order=2)


def test_hvp_and_nested_transformations():
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    a, b = tf.tensor(a0), tf.tensor(b0)

    def f(x):  # tr(x b x b): quadratic in x, Hessian-vector product = 2 (b^T v^T b^T)^T ...
        return tf.einsum("ij,jk,kl,li->", x, b, x, b)

    v0 = rng.standard_normal((3, 4))
    hv = tf.hvp(f, (a,), (tf.tensor(v0),))
    ref = 2 * (b0 @ v0 @ b0).T
    np.testing.assert_allclose(hv.numpy(), ref, rtol=1e-12)
    # jvp of grad equals grad of jvp
    g_of_jvp = tf.grad(lambda x: tf.jvp(f, (x,), (tf.tensor(v0),))[1])(a)
    np.testing.assert_allclose(g_of_jvp.numpy(), ref, rtol=1e-12)
    # grad of grad: the inner gradient at y = a is 2 x a, so the outer one is 4 a x = 4 a^2
    h = tf.grad(lambda x: tf.sum(tf.grad(lambda y: tf.einsum("ij,ij->", x, y * y))(a) * x))(a)
    np.testing.assert_allclose(h.numpy(), 4 * a0 * a0, rtol=1e-12)  # d/dx sum(2 x a x)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_linear_in_one_operand_transposes(dtype):
    b = tf.tensor(random_arrays([(4, 5, 3)], dtype, 1)[0])
    x = tf.tensor(random_arrays([(3, 4)], dtype, 2)[0])
    check_transpose(lambda x: tf.einsum("ij,jkl->kli", x, b), (x,))
    _, f_lin = tf.linearize(lambda x, y: tf.einsum("ij,jkl->ilk", x, y), x, b)
    check_transpose(f_lin, (x, b))


def test_tape_backward_equals_functional_grad():
    rng = np.random.default_rng(1)
    shapes = [(2, 3, 4), (4, 5), (3, 5, 2)]
    arrays = [rng.standard_normal(s) for s in shapes]
    eq = "abc,cd,bde->ae"
    ct = rng.standard_normal((2, 2))
    _, pull = tf.vjp(lambda *xs: tf.einsum(eq, *xs), *[tf.tensor(a) for a in arrays])
    expected = pull(tf.tensor(ct))
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
    tf.einsum(eq, *leaves).backward(tf.tensor(ct))
    for leaf, e in zip(leaves, expected, strict=True):
        np.testing.assert_allclose(leaf.grad.numpy(), e.numpy(), rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_large_steps_use_the_matricized_lowering_and_stay_correct(dtype):
    """Steps above MATRICIZE_MIN are lowered through explicit (batch, rows, cols) reshapes
    when the reverse pass may run; values and gradients must not change."""
    shapes = [(16, 8, 16, 16), (16, 8, 8, 8), (8, 16)]
    eq = "abcd,dbef,ea->cf"
    assert 16 * 8 * 16 * 16 >= lower_mod.MATRICIZE_MIN
    arrays = random_arrays(shapes, dtype, 4)
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
    out = tf.einsum(eq, *leaves)
    np.testing.assert_allclose(out.detach().numpy(), np.einsum(eq, *arrays), rtol=1e-11)
    from tenferro._src.contract.api import get_plan

    plan, _, grad = get_plan("einsum", (eq, *leaves))
    assert grad and any(p.name == "reshape" for p, *_ in plan.lowered(True).instrs)
    check_vjp(lambda *xs: tf.einsum(eq, *xs), [tf.tensor(a) for a in arrays])


@contextmanager
def matricize_everything():
    """Plan every contraction step with the matricized lowering (fresh cache entries)."""
    tf.einsum.cache_clear()
    try:
        with mock.patch.object(lower_mod, "MATRICIZE_MIN", 0):
            yield
    finally:
        tf.einsum.cache_clear()


@settings(max_examples=30, deadline=None)
@given(problem=einsum_problems(), seed=st.integers(0, 2**16),
       dtype=st.sampled_from([np.float64, np.complex128]))
def test_matricized_lowering_on_random_expressions(problem, seed, dtype):
    eq, shapes = problem
    arrays = random_arrays(shapes, dtype, seed)
    args = [tf.tensor(a) for a in arrays]
    with matricize_everything():
        check_vjp(lambda *xs: tf.einsum(eq, *xs), args, seed=seed)
        leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
        out = tf.einsum(eq, *leaves)
        ref = np.einsum(eq, *arrays)
        np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------ traced mode


def test_traced_mode_matches_eager_and_plans_once():
    rng = np.random.default_rng(2)
    shapes = [(2, 3, 4), (4, 5), (3, 5, 2)]
    arrays = [tf.tensor(rng.standard_normal(s)) for s in shapes]
    eq = "abc,cd,bde->ae"

    def f(*xs):
        return tf.einsum(eq, *xs, optimize="optimal")

    tf.einsum.cache_clear()
    prog = stage(f, *arrays)
    assert tf.einsum.cache_info().misses == 1
    prims = {e.prim.name for e in prog.eqns}
    assert "dot_general" in prims
    assert prims <= {"dot_general", "transpose", "reshape", "reduce_sum", "diagonal",
                     "broadcast_in_dim", "mul", "convert_element_type"}
    eager = f(*arrays)
    for _ in range(2):  # the staged program runs without planning again
        np.testing.assert_allclose(run_program(prog, *arrays).numpy(), eager.numpy(),
                                   rtol=1e-13)
    assert tf.einsum.cache_info().misses == 1  # eager (grad=False) shares the plan
    stage(f, *arrays)
    assert tf.einsum.cache_info().misses == 1  # tracing again hits the cache


def test_traced_gradient_matches_eager():
    rng = np.random.default_rng(3)
    a, b = (tf.tensor(rng.standard_normal(s) + 1j * rng.standard_normal(s))
            for s in [(3, 3, 4), (4, 2)])

    def loss(x, y):
        z = tf.einsum("iij,jk->ik", x, y)
        return tf.sum(tf.abs2(z))

    def g(x, y):
        gx, gy = tf.grad(loss, argnums=(0, 1))(x, y)
        return tf.einsum("ijk,kl->", gx, gy)

    prog = stage(g, a, b)
    np.testing.assert_allclose(run_program(prog, a, b).numpy(), g(a, b).numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_jit_and_trace_of_einsum_and_its_gradient(dtype):
    shapes = [(16, 8, 16, 16), (16, 8, 8, 8), (8, 16)]  # large enough to matricize
    eq = "abcd,dbef,ea->cf"
    args = [tf.tensor(a) for a in random_arrays(shapes, dtype, 5)]

    def loss(*xs):
        return tf.sum(tf.abs2(tf.einsum(eq, *xs)))

    graph = tf.make_graph(lambda *xs: tf.einsum(eq, *xs), *args)
    assert "dot_general" in str(graph)
    eager = tf.einsum(eq, *args)
    np.testing.assert_allclose(tf.jit(lambda *xs: tf.einsum(eq, *xs))(*args).numpy(),
                               eager.numpy(), rtol=1e-12)
    g_eager = tf.grad(loss, argnums=(0, 1, 2))(*args)
    g_jit = tf.jit(tf.grad(loss, argnums=(0, 1, 2)))(*args)
    for a, b in zip(g_jit, g_eager, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-11)
