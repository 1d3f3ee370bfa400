"""CTMRG with implicit (fixed-point) derivatives: equal to the unrolled derivative, memory
independent of the number of iterations, exact gauge fixing (signs and rotations inside
degenerate multiplets of the corner spectrum)."""

import tracemalloc

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.tn.ctmrg import ctm_gauge_fix, ctmrg_step
from tenferro.tn import peps

# The optimal single-site C4v D=2 iPEPS of the Heisenberg model (E = -0.66023109348, from
# examples/ipeps_heisenberg.py): SU(2) symmetric to the optimiser's accuracy, so its corner
# spectrum has multiplets degenerate to ~1e-7, which the SVD's basis choice rotates freely.
A_D2 = np.array([
    0.7536717390132969, 0.0402421047656053, 0.0402421047656053, -0.0062108664668999,
    0.0402421047656053, -0.0062109282505555, -0.0062108664668999, 0.0005365963748678,
    0.0402421047656053, -0.0062108664668999, -0.0062109282505555, 0.0005365963748678,
    -0.0062108664668999, 0.0005365963748678, 0.0005365963748678, -3.91995267975e-05,
    -0.1235595767880831, 0.3176392501454096, 0.3176392501454096, -0.0326524537140782,
    0.3176392501454096, -0.0326527361571987, -0.0326524537140782, 0.0025343646929391,
    0.3176392501454096, -0.0326524537140782, -0.0326527361571987, 0.0025343646929391,
    -0.0326524537140782, 0.0025343646929391, 0.0025343646929391, -0.0001748836448605,
]).reshape(2, 2, 2, 2, 2)


def _energy(chi, implicit, its=None, tol=1e-12):
    def e(A):
        return peps.heisenberg_energy(A, chi, implicit=implicit, tol=tol if implicit else None,
                                      max_iter=300 if implicit else its, progress=False)
    return e


@pytest.mark.numpy_only
@pytest.mark.parametrize("case", ["random-D2", "optimum-D2-multiplets"])
def test_implicit_gradient_equals_the_unrolled_one(case):
    if case == "random-D2":
        A = peps.symmetrize_c4v(peps.random_c4v_peps(2, seed=1, noise=0.5))
        chi = 12
    else:
        A = peps.symmetrize_c4v(tf.tensor(A_D2))
        chi = 24
    e_imp, e_unr = _energy(chi, True), _energy(chi, False, its=80)
    np.testing.assert_allclose(e_imp(A).item(), e_unr(A).item(), rtol=1e-12)
    gi = tf.grad(e_imp)(A).numpy()
    gu = tf.grad(e_unr)(A).numpy()
    # measured against the gradient's natural size |E| / |A|: at the optimum the physical (C4v
    # projected) gradient itself is ~1e-7, so its own size is no yardstick there
    scale = abs(e_unr(A).item()) / np.linalg.norm(A.numpy())
    assert np.abs(gi - gu).max() <= 1e-10 * scale
    if case != "random-D2":
        env = tf.tn.ctmrg(peps.double_layer(A / tf.norm(A)), chi, tol=1e-12, implicit=True,
                          progress=False)
        s = env.spectrum
        assert np.isclose(s[1], s[2], rtol=1e-6)  # a (near-)degenerate multiplet, and yet
        assert env.converged  # the tensors converged: rotations inside it are fixed


@pytest.mark.numpy_only
def test_gauge_fix_removes_sign_and_rotation_freedom():
    """A converged environment transformed by a random orthogonal U that is block diagonal
    over the corner multiplets (signs, and a rotation inside a degenerate pair) is brought
    back exactly."""
    A = peps.symmetrize_c4v(tf.tensor(A_D2))
    a = peps.double_layer(A / tf.norm(A))
    env = tf.tn.ctmrg(a, 24, tol=1e-12, implicit=True, progress=False)
    C, T = env.C.numpy(), env.T.numpy()
    rng = np.random.default_rng(0)
    U = np.diag(rng.choice([-1.0, 1.0], size=24))
    th = rng.uniform(0, 2 * np.pi)
    U[1:3, 1:3] = [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]
    Cg = U @ C @ U.T
    Tg = np.einsum("ia,arb,jb->irj", U, T, U)
    Cf, Tf = ctm_gauge_fix((tf.tensor(Cg), tf.tensor(Tg)), (env.C, env.T))
    np.testing.assert_allclose(Cf.numpy(), C, atol=1e-12)
    np.testing.assert_allclose(Tf.numpy(), T, atol=1e-11)
    # and a CTMRG step of the converged environment is a fixed point after the fix
    Cn, Tn, _ = ctmrg_step(a, env.C, env.T, 24)
    Cf, Tf = ctm_gauge_fix((Cn, Tn), (env.C, env.T))
    np.testing.assert_allclose(Tf.numpy(), T, atol=1e-10)


def _peak_grad_bytes(f, A):
    tracemalloc.start()
    tf.grad(f)(A)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


@pytest.mark.numpy_only
def test_memory_does_not_grow_with_the_number_of_iterations():
    A = peps.symmetrize_c4v(peps.random_c4v_peps(2, seed=1, noise=0.5))
    chi = 20
    few = _peak_grad_bytes(_energy(chi, True, tol=1e-4), A)
    many = _peak_grad_bytes(_energy(chi, True, tol=1e-13), A)
    env_few = tf.tn.ctmrg(peps.double_layer(A / tf.norm(A)), chi, tol=1e-4, implicit=True,
                          progress=False)
    env_many = tf.tn.ctmrg(peps.double_layer(A / tf.norm(A)), chi, tol=1e-13, implicit=True,
                           progress=False)
    assert env_many.iterations >= 2 * env_few.iterations
    assert many <= 1.3 * few
    # unrolled: memory grows with the iterations
    u_few = _peak_grad_bytes(_energy(chi, False, its=env_few.iterations), A)
    u_many = _peak_grad_bytes(_energy(chi, False, its=env_many.iterations), A)
    assert u_many >= 1.5 * u_few


def test_implicit_needs_a_tolerance_and_no_multiplet_tol():
    a = tf.tn.ising_tensor(0.3)
    with pytest.raises(ValueError, match="tol"):
        tf.tn.ctmrg(a, 8, tol=None, implicit=True, progress=False)
    with pytest.raises(ValueError, match="multiplet_tol"):
        tf.tn.ctmrg(a, 8, implicit=True, multiplet_tol=1e-3, progress=False)


def test_ising_free_energy_derivative_implicit():
    """Classical Ising: d lnZ/d beta through the implicit CTMRG equals the unrolled one."""
    def lnz(beta, implicit):
        a = tf.tn.ising_tensor(beta)
        env = tf.tn.ctmrg(a, 16, tol=1e-12 if implicit else None, max_iter=300 if implicit
                          else 200, implicit=implicit, progress=False)
        return tf.tn.ctm_lnz(a, env)

    b = tf.tensor(0.38)
    gi = tf.grad(lambda t: lnz(t, True))(b).item()
    gu = tf.grad(lambda t: lnz(t, False))(b).item()
    assert abs(gi - gu) <= 1e-9 * abs(gu)
