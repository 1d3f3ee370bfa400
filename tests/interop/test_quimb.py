"""quimb on tenferro: its tensor-network algorithms through autoray with no registration (2D
simple-update TEBD, a parametrised circuit's amplitude and its gradient, equal to JAX's), and
``TNOptimizer`` with tenferro as its autodiff backend after ``tenferro.interop.quimb.register()``
(eager and ``jit``, real and complex, gradients and Hessian-vector products against finite
differences). The 1D algorithms (canonize, compress, gates, TEBD) are in test_consumers.py."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf

from .. import skips

REASON = "quimb interop test: needs quimb (the `test` extra: pip install -e '.[test]')"


@pytest.fixture(scope="module")
def qtn():
    pytest.importorskip("quimb", reason=REASON)
    return pytest.importorskip("quimb.tensor", reason=REASON)


def _jax():
    jax = pytest.importorskip("jax", reason=skips.JAX)
    jax.config.update("jax_enable_x64", True)
    return jax


def _optimizer(qtn, backend, dtype="float64", **opts):
    psi0 = qtn.MPS_rand_state(6, 4, seed=3, dtype=dtype)
    H = qtn.MPO_ham_heis(6)

    def norm_fn(psi):
        return psi / (psi.H @ psi) ** 0.5

    def loss_fn(psi, H):
        return qtn.expec_TN_1D(psi.H, H, psi).real

    return qtn.TNOptimizer(psi0, loss_fn=loss_fn, norm_fn=norm_fn, loss_constants={"H": H},
                           autodiff_backend=backend, progbar=False,
                           **{"optimizer": "L-BFGS-B", **opts})


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_tnoptimizer_with_tenferro_as_autodiff_backend(qtn, dtype):
    """The loss and gradient quimb's optimizer sees (its flattened real vector) equal central
    finite differences; eager and jit runs follow the same trajectory; the energy goes down
    to near the ground state of the 6-site Heisenberg chain."""
    tf.interop.quimb.register()
    tf.interop.quimb.register()  # idempotent
    opt = _optimizer(qtn, "tenferro", dtype, jit_fn=False)
    x = opt.vectorizer.vector.copy()
    f0, g = opt.vectorized_value_and_grad(x)
    d = np.random.default_rng(0).standard_normal(x.shape)
    h = 1e-6
    fd = (opt.vectorized_value(x + h * d) - opt.vectorized_value(x - h * d)) / (2 * h)
    assert abs(g @ d - fd) < 1e-7 * max(1.0, abs(fd))
    assert np.isclose(opt.vectorized_value(x), f0, rtol=1e-14)

    eager = _optimizer(qtn, "tenferro", dtype, jit_fn=False)
    eager.optimize(25)
    compiled = _optimizer(qtn, "tenferro", dtype)  # jit_fn=True is the default
    compiled.optimize(25)
    np.testing.assert_allclose(compiled.losses, eager.losses, rtol=1e-10)
    exact = -2.493577133888  # open 6-site Heisenberg chain (S = 1/2 operators)
    assert eager.losses[-1] < eager.losses[0] and eager.loss < exact + 0.05


def test_tnoptimizer_hessian_vector_products(qtn):
    """``hessp`` (forward over reverse, compiled) against finite differences of the
    gradient, and a trust-region Newton-Krylov run that uses it."""
    tf.interop.quimb.register()
    opt = _optimizer(qtn, "tenferro")
    x = opt.vectorizer.vector.copy()
    rng = np.random.default_rng(1)
    p = rng.standard_normal(x.shape)
    h = 1e-6
    plus = opt.vectorized_value_and_grad(x + h * p)[1].copy()  # quimb reuses its buffer
    fd = (plus - opt.vectorized_value_and_grad(x - h * p)[1]) / (2 * h)
    hp = opt.vectorized_hessp(x, p)
    assert np.abs(hp - fd).max() < 1e-6 * max(1.0, np.abs(fd).max())
    newton = _optimizer(qtn, "tenferro", optimizer="trust-krylov")
    newton.optimize(8, hessp=True)
    assert newton.losses[-1] < newton.losses[0]


@pytest.mark.numpy_only
def test_tnoptimizer_matches_jax_and_torch(qtn):
    """The same 10 L-BFGS steps through quimb's JAX (x64) and PyTorch handlers: equal losses
    (complex parameters through JAX: quimb's torch handler refuses complex128 MPS)."""
    tf.interop.quimb.register()
    ours = _optimizer(qtn, "tenferro")
    ours.optimize(10)
    torch = skips.torch()
    torch.set_default_dtype(torch.float64)
    try:
        ref = _optimizer(qtn, "torch", device="cpu")
        ref.optimize(10)
    finally:
        torch.set_default_dtype(torch.float32)
    np.testing.assert_allclose(ours.losses, ref.losses, rtol=1e-9)
    _jax()
    ours = _optimizer(qtn, "tenferro", "complex128")
    ours.optimize(10)
    ref = _optimizer(qtn, "jax", "complex128")
    ref.optimize(10)
    np.testing.assert_allclose(ours.losses, ref.losses, rtol=1e-9)


def test_2d_simple_update_on_tenferro_tensors(qtn):
    """quimb's 2D TEBD (simple update, fixed gate order) on a 3x3 PEPS of tenferro tensors
    gives quimb's NumPy state (the same vector: the tensors themselves differ by the gauge of
    each SVD, whose signs are tenferro's and LAPACK's), and its energy."""
    import quimb as qu

    ham = qtn.LocalHam2D(3, 3, H2=qu.ham_heis(2))
    psi0 = qtn.PEPS.rand(3, 3, bond_dim=2, seed=0, dtype="float64")

    def evolve(psi):
        su = qtn.SimpleUpdate(psi, ham, chi=8, compute_energy_every=None, progbar=False,
                              D=2, ordering="sort")
        su.evolve(4, tau=0.1)
        return su.state

    ours = psi0.copy()
    ours.apply_to_arrays(tf.tensor)
    ours, ref = evolve(ours), evolve(psi0.copy())
    assert all(isinstance(ours[site].data, tf.Tensor) for site in ref.sites)
    nn = float(ref.H @ ref)
    assert abs(float(ours.H @ ref) - nn) < 1e-12 * nn
    assert abs(float(ours.H @ ours) - nn) < 1e-12 * nn
    e = ref.compute_local_expectation(ham.terms, max_bond=8, normalized=True)
    got = ours.compute_local_expectation(ham.terms, max_bond=8, normalized=True)
    assert abs(float(got) - e) < 1e-12


def _circuit_probability(qtn, xp, p):
    """|<101|C(p)|000>|^2 of a 3-qubit circuit with 8 parameters (quimb builds each gate's
    matrix with autoray: ``do("array"/"complex"/"indices", ...)`` on the parameter's backend),
    its two-qubit gates split into two tensors by an SVD (quimb's default)."""
    c = qtn.Circuit(3)
    c.apply_gate("RY", p[0], 0)
    c.apply_gate("RY", p[1], 1)
    c.apply_gate("RX", p[2], 2)
    c.apply_gate("CNOT", 0, 1)
    c.apply_gate("RZZ", p[3], 1, 2)
    c.apply_gate("U3", p[4], p[5], p[6], 0)
    c.apply_gate("CZ", 0, 2)
    c.apply_gate("RY", p[7], 1)
    a = c.amplitude("101")
    return xp.real(a * xp.conj(a))


def test_parametrised_circuit_amplitude_gradient(qtn):
    """The gradient of a circuit probability in its 8 gate angles, through quimb's gate
    construction, gate splitting (SVDs of gates with degenerate singular values) and its
    contraction: finite differences everywhere, and JAX's gradient wherever JAX's is finite
    (JAX 0.10 returns NaN for the RZZ angle, whose split gate has a degenerate spectrum;
    tenferro's derivative there is exact)."""
    p = np.array([0.3, 0.7, -0.4, 0.2, 1.1, -0.5, 0.9, 0.35])

    def f(v):
        return _circuit_probability(qtn, tf, [v[i] for i in range(8)])

    value = f(tf.tensor(p))
    assert isinstance(value, tf.Tensor)
    g = tf.grad(f)(tf.tensor(p)).numpy()
    h = 1e-6
    fd = np.array([(f(tf.tensor(p + h * e)).item() - f(tf.tensor(p - h * e)).item()) / (2 * h)
                   for e in np.eye(8)])
    np.testing.assert_allclose(g, fd, rtol=0, atol=1e-9)
    assert np.abs(g).max() > 1e-2 and abs(g[3]) > 1e-4  # every angle matters
    v = tf.tensor(p, requires_grad=True)  # the PyTorch-style tape gives the same gradient
    f(v).backward()
    np.testing.assert_allclose(v.grad.numpy(), g, rtol=1e-14, atol=1e-20)
    # (not under jit: quimb's gate split reads the number of kept singular values as a Python
    # int, a data-dependent shape, which traced code refuses with ConcretizationError)
    jax = _jax()
    gj = np.asarray(jax.grad(lambda v: _circuit_probability(
        qtn, jax.numpy, [v[i] for i in range(8)]))(jax.numpy.asarray(p)))
    finite = np.isfinite(gj)
    assert finite.sum() >= 7
    np.testing.assert_allclose(g[finite], gj[finite], rtol=1e-9, atol=1e-15)
