"""Consumer libraries take tenferro tensors with no user-side shim and keep the derivative:
array_api_compat finds the namespace (``__array_namespace__``), einops's generic functions find
tenferro's backend (registered at import) and ``einops.array_api`` runs on the namespace. Each
is checked under ``grad``, ``jit`` and ``vmap`` against the same computation written with
tenferro's own functions."""

import os
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf

from .. import skips

X = np.arange(24.0).reshape(2, 3, 4) / 7.0


def test_array_api_compat_finds_the_namespace():
    compat = pytest.importorskip("array_api_compat", reason=skips.COMPAT)
    x = tf.tensor(X)
    assert compat.array_namespace(x) is tf
    assert compat.array_namespace(x, tf.tensor(1.0)) is tf
    assert compat.is_array_api_obj(x)


def _einops_cases(mod):
    return [
        (lambda t: mod.rearrange(t, "a b c -> c (a b)"),
         lambda t: tf.reshape(tf.transpose(t, (2, 0, 1)), (4, 6))),
        (lambda t: mod.reduce(t, "a b c -> a c", "sum"), lambda t: tf.sum(t, axis=1)),
        (lambda t: mod.reduce(t, "a b c -> b", "mean"), lambda t: tf.mean(t, axis=(0, 2))),
        (lambda t: mod.reduce(t, "a b c -> a", "max"), lambda t: tf.max(t, axis=(1, 2))),
        (lambda t: mod.repeat(t, "a b c -> a b c r", r=2),
         lambda t: tf.broadcast_to(t[..., None], (2, 3, 4, 2))),
    ]


@pytest.mark.parametrize("flavour", ["generic", "array_api"])
def test_einops_keeps_values_and_gradients(flavour):
    einops = pytest.importorskip("einops", reason=skips.EINOPS)
    if flavour == "array_api":
        from einops import array_api as mod
    else:
        mod = einops
    x = tf.tensor(X)
    w = tf.tensor(np.cos(np.arange(48.0)))
    for f, ref in _einops_cases(mod):
        np.testing.assert_allclose(f(x).numpy(), ref(x).numpy(), rtol=1e-15)

        def loss(t, f=f):
            y = f(t)
            return tf.sum(tf.reshape(y, (-1,)) * w[: y.size] * tf.reshape(y, (-1,)))

        def want(t, ref=ref):
            y = ref(t)
            return tf.sum(tf.reshape(y, (-1,)) * w[: y.size] * tf.reshape(y, (-1,)))

        g = tf.grad(want)(x).numpy()
        np.testing.assert_allclose(tf.grad(loss)(x).numpy(), g, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(tf.jit(tf.grad(loss))(x).numpy(), g, rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(tf.vmap(tf.grad(loss))(tf.stack([x, 2 * x])).numpy()[1],
                                   tf.grad(want)(2 * x).numpy(), rtol=1e-14, atol=1e-15)


def test_einops_einsum_is_tenferros():
    einops = pytest.importorskip("einops", reason=skips.EINOPS)
    a, b = tf.tensor(X), tf.tensor(X[::-1].copy())
    out = einops.einsum(a, b, "i j k, i j k -> i")
    np.testing.assert_allclose(out.numpy(), np.einsum("ijk,ijk->i", X, X[::-1]), rtol=1e-14)
    g = tf.grad(lambda t: einops.einsum(t, b, "i j k, i j k -> i").sum())(a)
    np.testing.assert_allclose(g.numpy(), X[::-1], rtol=1e-15)


def test_cotengra_contracts_tenferro_tensors_with_gradients():
    """cotengra's ``array_contract`` and a sliced ``ContractionTree.contract`` run on tenferro
    tensors through autoray (which infers the backend "tenferro"): values equal NumPy's and the
    gradient equals tenferro's own einsum's, eagerly and under jit."""
    ctg = pytest.importorskip("cotengra", reason="cotengra interop test: needs cotengra (the "
                              "`test` extra: pip install -e '.[test]')")
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in ((4, 5), (5, 6), (6, 4))]
    inputs, output = [("i", "j"), ("j", "k"), ("k", "l")], ("i", "l")
    ts = [tf.tensor(a) for a in arrays]
    want = np.einsum("ij,jk,kl->il", *arrays)
    np.testing.assert_allclose(ctg.array_contract(ts, inputs, output).numpy(), want, rtol=1e-13)

    def loss(a):
        return tf.sum(ctg.array_contract([a, ts[1], ts[2]], inputs, output) ** 2)

    def ref(a):
        return tf.sum(tf.einsum("ij,jk,kl->il", a, ts[1], ts[2]) ** 2)

    g = tf.grad(ref)(ts[0]).numpy()
    np.testing.assert_allclose(tf.grad(loss)(ts[0]).numpy(), g, rtol=1e-13)
    np.testing.assert_allclose(tf.jit(tf.grad(loss))(ts[0]).numpy(), g, rtol=1e-13)

    size_dict = {"i": 4, "j": 5, "k": 6, "l": 4}
    tree = ctg.ContractionTree.from_path(inputs, output, size_dict, path=[(0, 1), (0, 1)])
    tree.slice_(target_slices=2)
    assert tree.multiplicity >= 2
    np.testing.assert_allclose(tree.contract(ts).numpy(), want, rtol=1e-13)
    np.testing.assert_allclose(
        tf.grad(lambda a: tf.sum(tree.contract([a, ts[1], ts[2]]) ** 2))(ts[0]).numpy(), g,
        rtol=1e-13)


def test_quimb_runs_on_tenferro_tensors_through_autoray():
    """quimb dispatches through autoray, which infers "tenferro": canonize, compress, a split
    gate, a local expectation and TEBD run on tenferro tensors with quimb's NumPy values, and an
    energy written with quimb differentiates (against central finite differences)."""
    qu = pytest.importorskip("quimb", reason="quimb interop test: needs quimb (the `test` "
                             "extra: pip install -e '.[test]')")
    qtn = pytest.importorskip("quimb.tensor", reason="quimb interop test: needs quimb")

    def on_tenferro(tn):
        tn.apply_to_arrays(tf.tensor)
        return tn

    ref = qtn.MPS_rand_state(6, 4, seed=1)
    psi = on_tenferro(ref.copy())
    psi.canonize(2)
    assert abs(complex(psi.H @ psi) - complex(ref.H @ ref)) < 1e-12
    psi.compress(max_bond=2)
    ref2 = ref.copy()
    ref2.compress(max_bond=2)
    assert abs(complex(psi.H @ psi) - complex(ref2.H @ ref2)) < 1e-12
    assert isinstance(psi[0].data, tf.Tensor)

    h = np.asarray(qu.ham_heis(2))
    want = complex(ref.local_expectation(h, (2, 3)))
    assert abs(complex(on_tenferro(ref.copy()).local_expectation(tf.tensor(h), (2, 3))) - want) \
        < 1e-12
    gated, gref = on_tenferro(ref.copy()), ref.copy()
    gated.gate_(tf.tensor(np.asarray(qu.CNOT())), (2, 3), contract="split")
    gref.gate_(np.asarray(qu.CNOT()), (2, 3), contract="split")
    assert abs(complex(gated.H @ gated) - complex(gref.H @ gref)) < 1e-12

    start = qtn.MPS_computational_state("010101")
    evo = qtn.TEBD(on_tenferro(start.copy()), qtn.ham_1d_heis(6), progbar=False)
    evo.update_to(0.2, tol=1e-4)
    evo_ref = qtn.TEBD(start.copy(), qtn.ham_1d_heis(6), progbar=False)
    evo_ref.update_to(0.2, tol=1e-4)
    assert abs(complex(evo.pt.H @ evo_ref.pt) - complex(evo_ref.pt.H @ evo_ref.pt)) < 1e-12

    mps = qtn.MPS_rand_state(4, 3, seed=2, dtype="float64")
    mpo = qtn.MPO_ham_heis(4)
    arrays = [np.asarray(t.data) for t in mps]

    def energy(*arrs):
        m = mps.copy()
        for t, a in zip(m, arrs):
            t.modify(data=a)
        H = mpo.copy()
        if isinstance(arrs[0], tf.Tensor):
            H.apply_to_arrays(tf.tensor)
        return qtn.expec_TN_1D(m.H, H, m) / (m.H @ m)

    g = tf.grad(energy, argnums=1)(*[tf.tensor(a) for a in arrays]).numpy()
    d = np.random.default_rng(0).standard_normal(arrays[1].shape)
    h_ = 1e-5
    plus = [a.copy() for a in arrays]
    minus = [a.copy() for a in arrays]
    plus[1] += h_ * d
    minus[1] -= h_ * d
    fd = (float(np.real(energy(*plus))) - float(np.real(energy(*minus)))) / (2 * h_)
    assert abs(np.sum(g * d) - fd) < 1e-7 * max(1.0, abs(fd))
    # and equal to JAX's gradient of the same quimb code (x64), when JAX is installed
    jax = pytest.importorskip("jax", reason=skips.JAX)
    jax.config.update("jax_enable_x64", True)

    def energy_jax(*arrs):
        m = mps.copy()
        for t, a in zip(m, arrs):
            t.modify(data=a)
        H = mpo.copy()
        H.apply_to_arrays(jax.numpy.asarray)
        return jax.numpy.real(qtn.expec_TN_1D(m.H, H, m) / (m.H @ m))

    gj = np.asarray(jax.grad(energy_jax, argnums=1)(*map(jax.numpy.asarray, arrays)))
    np.testing.assert_allclose(g, gj, rtol=1e-10, atol=1e-13)


@pytest.mark.numpy_only  # a fresh process on the default backend
def test_scipy_array_api_mode_returns_tenferro_tensors_with_gradients():
    """With ``SCIPY_ARRAY_API=1`` (read when SciPy is imported, so in a fresh process) SciPy's
    array-API functions take tenferro's namespace: ``special.logsumexp`` and ``fft.fft`` return
    tenferro tensors, and their gradients are softmax and 2 N x."""
    code = (
        "import numpy as np, tenferro as tf, scipy.special as ss, scipy.fft as sf\n"
        "x = tf.tensor(np.arange(5.0))\n"
        "assert isinstance(ss.logsumexp(x), tf.Tensor) and isinstance(sf.fft(x), tf.Tensor)\n"
        "g = tf.grad(lambda t: ss.logsumexp(t))(x).numpy()\n"
        "e = np.exp(np.arange(5.0)); assert np.allclose(g, e / e.sum(), rtol=1e-14)\n"
        "g = tf.grad(lambda t: tf.sum(tf.abs(sf.fft(t)) ** 2))(x).numpy()\n"
        "assert np.allclose(g, 10 * np.arange(5.0), atol=1e-12)\n"
        "print('ok')\n")
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def _fresh_process(check: str) -> None:
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-m", "tests.interop.fresh_process_checks", check],
                         env=env, cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


@pytest.mark.numpy_only  # a fresh process on the default backend
def test_scipy_stats_array_api_functions_differentiate():
    """``scipy.stats`` functions that support the array API (zscore, skew, kurtosis, gmean,
    variation, moment): NumPy's values, gradients equal to finite differences."""
    _fresh_process("scipy_stats")


@pytest.mark.numpy_only  # a fresh process on the default backend
def test_scikit_learn_array_api_dispatch():
    """scikit-learn's ``array_api_dispatch``: PCA and LinearDiscriminantAnalysis fit,
    transform and predict on tenferro tensors (tests/interop/fresh_process_checks.py)."""
    pytest.importorskip("sklearn", reason=skips.SKLEARN)
    _fresh_process("sklearn")
