"""linsolve: values and implicit derivatives against the dense solve and finite differences."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError, ShapeError

from ._util import DTYPES, close, fd_directional, grad_dot, rand

N = 60


def _system(rng, dtype, spd=False):
    a = rand(rng, (N, N), dtype)
    if spd:
        return a @ a.conj().T / N + np.eye(N)
    return a + 3 * np.sqrt(N) * np.eye(N)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("method", ["gmres", "bicgstab", "cg"])
def test_gradient_matches_dense_solve(dtype, method):
    rng = np.random.default_rng(0)
    a0 = _system(rng, dtype, spd=method == "cg")
    b0 = rand(rng, (N,), dtype)
    w = tf.arange(N) / N

    def loss(solver):
        return lambda a, b: tf.sum(tf.abs2(solver(a, b)) * w)

    it_loss = loss(lambda a, b: tf.linalg.linsolve(a, b, method=method))
    dense = loss(tf.linalg.solve)
    a, b = tf.tensor(a0), tf.tensor(b0)
    np.testing.assert_allclose(it_loss(a, b).item(), dense(a, b).item(), rtol=1e-11)
    gi = tf.grad(it_loss, argnums=(0, 1))(a, b)
    gd = tf.grad(dense, argnums=(0, 1))(a, b)
    for x, y in zip(gi, gd):
        assert close(x.numpy(), y.numpy(), 1e-9)
    d = rand(rng, (N, N), dtype)
    if method == "cg":  # CG needs a Hermitian matrix: difference along a Hermitian direction
        d = (d + d.conj().T) / 2
    fd = fd_directional(lambda t: it_loss(t, b), a0, d)
    assert abs(fd - grad_dot(gi[0].numpy(), d)) <= 1e-7 * abs(fd)


@pytest.mark.parametrize("dtype", DTYPES)
def test_operator_closing_over_a_differentiated_tensor(dtype):
    """The operator's matvec closes over a matrix being differentiated: by closure
    conversion the matrix becomes a parameter and receives its cotangent (grad, eager tape)."""
    rng = np.random.default_rng(1)
    a0 = _system(rng, dtype)
    b = tf.tensor(rand(rng, (N,), dtype))

    def loss_op(a):
        op = tf.linalg.LinearOperator(lambda v: a @ v, (N, N), a.dtype)
        return tf.sum(tf.abs2(tf.linalg.linsolve(op, b)))

    def loss_dense(a):
        return tf.sum(tf.abs2(tf.linalg.solve(a, b)))

    g = tf.grad(loss_op)(tf.tensor(a0))
    gd = tf.grad(loss_dense)(tf.tensor(a0))
    assert close(g.numpy(), gd.numpy(), 1e-9)
    at = tf.tensor(a0, requires_grad=True)
    loss_op(at).backward()
    assert close(at.grad.numpy(), gd.numpy(), 1e-9)


@pytest.mark.numpy_only
def test_operator_with_a_structured_matvec_and_two_parameters():
    """A Kronecker-structured operator (I + x kron(P, Q)) with two closed-over parameters,
    never materialised: gradients of both match the dense equivalent."""
    rng = np.random.default_rng(2)
    p0, q0 = rng.standard_normal((6, 6)) / 6, rng.standard_normal((5, 5)) / 5
    b = tf.tensor(rng.standard_normal(30))

    def loss(p, q):
        def mv(v):
            return v + tf.reshape(p @ tf.reshape(v, (6, 5)) @ q.T, (30,))

        op = tf.linalg.LinearOperator(mv, (30, 30), tf.float64)
        return tf.sum(tf.linalg.linsolve(op, b) ** 3)

    def dense(p, q):
        return tf.sum(tf.linalg.solve(tf.eye(30) + tf.kron(p, q), b) ** 3)

    g = tf.grad(loss, argnums=(0, 1))(tf.tensor(p0), tf.tensor(q0))
    gd = tf.grad(dense, argnums=(0, 1))(tf.tensor(p0), tf.tensor(q0))
    for x, y in zip(g, gd):
        assert close(x.numpy(), y.numpy(), 1e-9)


def test_forward_mode_through_the_iterative_adjoint_is_a_named_error():
    rng = np.random.default_rng(3)
    a = tf.tensor(_system(rng, "float64"))
    b = tf.tensor(rng.standard_normal(N))
    with pytest.raises(GradientError, match="linsolve"):
        tf.jvp(lambda t: tf.linalg.linsolve(a, t), (b,), (b,))


def test_errors():
    a = tf.tensor(np.eye(4))
    with pytest.raises(ShapeError, match="linsolve: b"):
        tf.linalg.linsolve(a, tf.ones(5))
    with pytest.raises(ShapeError, match="square"):
        tf.linalg.linsolve(tf.ones((3, 4)), tf.ones(3))
    with pytest.raises(ValueError, match="method"):
        tf.linalg.linsolve(a, tf.ones(4), method="lu")
    with pytest.raises(ShapeError, match="matvec maps"):
        tf.linalg.LinearOperator(lambda v: v[:2], (4, 4), tf.float64)


@pytest.mark.parametrize("method", ["gmres", "bicgstab", "cg"])
def test_a_real_problem_has_a_real_solution(method):
    """The solvers' scalars are complex Python numbers; a real system must still give a real
    solution (bicgstab used to return complex128, and its gradient was refused)."""
    a = np.eye(5) * 3 + np.diag(np.ones(4), 1) + np.diag(np.ones(4), -1)
    x = tf.linalg.linsolve(tf.tensor(a), tf.tensor(np.ones(5)), method=method)
    assert x.dtype == tf.float64
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, np.ones(5)), rtol=1e-10)
