"""Functions of Hermitian matrices (funm, expm(hermitian=True), sqrtm, logm, powm) and
matrix_power: values against SciPy/NumPy, every primitive rule (JVP vs finite differences,
reverse vs forward, transposition, second and third order), exactness at degeneracies,
graphs that save and load."""

import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import tenferro as tf
from chainrules import primitives as P
from chainrules.primitives.spectral import divided_difference, scalar_function
from tenferro import linalg as la
from tenferro._src.core.dispatch import bind
from tenferro.errors import DegeneracyWarning, ShapeError
from tenferro.testing import check_grads, check_transpose
from tests.linalg._util import DTYPES, T, hermitian, rand, rel_err

ORDER2 = {"order": 2, "rtol": 1e-5, "atol": 1e-7}
POSITIVE = [0.5, 1.0, 2.0, 3.0]
# (name, power, reference on a positive-definite Hermitian matrix)
FUNCTIONS = [
    ("exp", None, sl.expm),
    ("log", None, sl.logm),
    ("sqrt", None, sl.sqrtm),
    ("sin", None, sl.sinm),
    ("cos", None, sl.cosm),
    ("pow", 0.3, lambda a: sl.fractional_matrix_power(a, 0.3)),
    ("pow", -1.5, lambda a: sl.fractional_matrix_power(a, -1.5)),
    ("pow", 3.0, lambda a: np.linalg.matrix_power(a, 3)),
]
IDS = [f"{n}{'' if p is None else p}" for n, p, _ in FUNCTIONS]


def _funm(*ops, fn, power):
    return bind(P.funm_p, *ops, fn=fn, power=power)


def _herm(x):
    return (x + tf.conj(tf.swapaxes(x, -1, -2))) / 2


@pytest.mark.parametrize("fn,power,ref", FUNCTIONS, ids=IDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_values(fn, power, ref, dtype, rng):
    a = hermitian(rng, 4, dtype, POSITIVE)
    got = _funm(T(a), fn=fn, power=power).numpy()
    np.testing.assert_allclose(got, ref(a), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn,power,ref", FUNCTIONS, ids=IDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_primitive_rules(fn, power, ref, dtype, rng):
    """The generated checks of every primitive (tenferro.testing): JVP vs central differences,
    reverse mode vs forward mode and vs differences, second order; batched."""
    a = np.stack([hermitian(rng, 3, dtype, [0.5, 1.5, 2.0]), hermitian(rng, 3, dtype)
                  + 4 * np.eye(3)])
    check_grads(lambda x: _funm(_herm(x), fn=fn, power=power), (T(a),), **ORDER2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_third_order(dtype, rng):
    a = hermitian(rng, 3, dtype, [0.2, 0.9, 1.4])
    check_grads(lambda x: _funm(_herm(x), fn="log", power=None), (T(a),), order=3,
                rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("dtype", DTYPES)
def test_chain_is_linear_in_each_link_and_transposes(dtype, rng):
    """The chain funm(a_1..a_p; e_1..e_{p-1}) is linear in each link; its adjoint is the
    chain read backwards (dot-product identity), for p = 2 and 3 and every slot; and it
    matches the block-triangular definition (top-right block of f of a block-bidiagonal)."""
    a, b, c = (T(hermitian(rng, 3, dtype, ev)) for ev in ([0.5, 1.0, 2.0], [0.7, 1.1, 1.3],
                                                          [0.4, 0.4, 2.5]))
    e1, e2 = T(rand(rng, (3, 3), dtype)), T(rand(rng, (3, 3), dtype))
    check_transpose(lambda q: _funm(a, b, q, fn="exp", power=None), (e1,))
    check_transpose(lambda q: _funm(a, b, c, q, e2, fn="sqrt", power=None), (e1,))
    check_transpose(lambda q: _funm(a, b, c, e1, q, fn="pow", power=0.3), (e2,))
    # definition: f of T = [[a, e1, 0], [0, b, e2], [0, 0, c]], top-right block
    z = np.zeros((3, 3), dtype)
    big = np.block([[a.numpy(), e1.numpy(), z], [z, b.numpy(), e2.numpy()],
                    [z, z, c.numpy()]])
    want = sl.expm(big)[:3, 6:]
    got = _funm(a, b, c, e1, e2, fn="exp", power=None).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    want2 = sl.expm(big[:6, :6])[:3, 3:]
    np.testing.assert_allclose(_funm(a, b, e1, fn="exp", power=None).numpy(), want2,
                               rtol=1e-10, atol=1e-12)


def test_divided_differences_are_tie_robust():
    """First and second divided differences at exact ties, near ties (1e-14 .. 1e-3 apart)
    and far apart agree with high-precision references."""
    from tenferro._src.backends.numpy_backend import host_xp

    xp = host_xp()
    g = scalar_function("exp")
    for d in [0.0, 1e-14, 1e-9, 1e-6, 1e-3, 0.5]:
        x, y = np.array([1.0 + d]), np.array([1.0])
        want = np.exp(1.0) * (np.expm1(d) / d if d else 1.0)
        assert abs(divided_difference(xp, g, [x, y])[0] - want) < 1e-15 * want
        # second: f[x, y, y]; exp: e^y (e^d - 1 - d) / d^2 -> e^y / 2
        want2 = np.exp(1.0) * ((np.expm1(d) - d) / d**2 if d > 1e-4 else
                               0.5 + d / 6 + d * d / 24)
        got2 = divided_difference(xp, g, [x, y, y])[0]
        assert abs(got2 - want2) < 1e-11 * want2, (d, got2, want2)
    g = scalar_function("log")
    for d in [0.0, 1e-12, 1e-6, 0.3]:
        x, y = np.array([2.0 + d]), np.array([2.0])
        want = np.log1p(d / 2) / d if d else 0.5
        assert abs(divided_difference(xp, g, [x, y])[0] - want) < 1e-15


@pytest.mark.parametrize("split", [0.0, 1e-12, 1e-9, 1e-6])
@pytest.mark.parametrize("fn,power", [("exp", None), ("log", None), ("sqrt", None),
                                      ("pow", 0.3)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_at_and_near_degeneracies(split, fn, power, dtype, rng):
    """First and second derivatives at exactly/nearly degenerate spectra, silently; the
    reference for exp is the general expm (block-triangular Frechet derivative, which knows
    nothing about eigenvalues); for the others the Daleckii-Krein formula in closed form."""
    a = hermitian(rng, 4, dtype, [0.5, 1.5, 1.5 + split, 2.5])
    w = rand(rng, (4, 4), dtype)
    t = rand(rng, (4, 4), dtype)
    t = (t + t.conj().T) / 2

    def loss(x):
        return tf.real(tf.sum(tf.conj(T(w)) * _funm(_herm(x), fn=fn, power=power)))

    with warnings.catch_warnings():
        warnings.simplefilter("error", DegeneracyWarning)
        g = tf.grad(loss)(T(a)).numpy()
        hv = tf.hvp(loss, (T(a),), (T(t),)).numpy()
    if fn == "exp":
        def ref(x):
            return tf.real(tf.sum(tf.conj(T(w)) * la.expm(_herm(x))))

        np.testing.assert_allclose(g, tf.grad(ref)(T(a)).numpy(), rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(hv, tf.hvp(ref, (T(a),), (T(t),)).numpy(), rtol=1e-9,
                                   atol=1e-10)
    else:  # Daleckii-Krein with exact arithmetic on the known eigenvalues
        ev, v = np.linalg.eigh(a)
        f, df = {"log": (np.log, lambda x: 1 / x),
                 "sqrt": (np.sqrt, lambda x: 0.5 / np.sqrt(x)),
                 "pow": (lambda x: x**0.3, lambda x: 0.3 * x**-0.7)}[fn]
        gm = np.empty((4, 4))
        for i in range(4):
            for j in range(4):
                d = ev[i] - ev[j]
                gm[i, j] = (f(ev[i]) - f(ev[j])) / d if abs(d) > 1e-5 else df(
                    (ev[i] + ev[j]) / 2)
        want = v @ (gm * (v.conj().T @ w @ v)) @ v.conj().T
        want = (want + want.conj().T) / 2
        tol = 1e-9 if split == 0 or split > 1e-7 else 1e-6
        assert rel_err(g, want) < tol


@pytest.mark.parametrize("dtype", DTYPES)
def test_user_functions(dtype, rng):
    a = hermitian(rng, 4, dtype, POSITIVE)
    np.testing.assert_allclose(la.sqrtm(T(a)).numpy(), sl.sqrtm(a), atol=1e-12)
    np.testing.assert_allclose(la.logm(T(a)).numpy(), sl.logm(a), atol=1e-12)
    np.testing.assert_allclose(la.powm(T(a), -0.5).numpy(),
                               sl.fractional_matrix_power(a, -0.5), atol=1e-12)
    np.testing.assert_allclose(la.expm(T(a), hermitian=True).numpy(), sl.expm(a), atol=1e-11)
    np.testing.assert_allclose(la.funm(T(a), np.sin).numpy(), sl.sinm(a), atol=1e-12)
    np.testing.assert_allclose(la.funm(T(a), ("pow", 2)).numpy(), a @ a, atol=1e-12)
    # any other callable: through eigh (exact away from degeneracies)
    got = la.funm(T(a), lambda x: tf.tanh(x))
    np.testing.assert_allclose(got.numpy(), sl.tanhm(a), atol=1e-12)
    check_grads(lambda x: la.funm(_herm(x), tf.tanh), (T(a),), order=1)


@pytest.mark.default_device_cpu  # the eigh tie check is on by default on the CPU only
def test_callable_through_eigh_warns_at_degeneracy(rng):
    w = rand(rng, (4, 4), "float64")
    with pytest.warns(DegeneracyWarning, match="funm"):
        tf.grad(lambda x: tf.sum(T(w) * la.funm(x, lambda v: tf.tanh(v))))(T(np.eye(4)))


def test_errors(rng):
    a = T(hermitian(rng, 3, "float64"))
    with pytest.raises(ShapeError, match="funm: unknown function 'tan'"):
        la.funm(a, "tan")
    with pytest.raises(ShapeError, match="funm: f must be a function name"):
        la.funm(a, 3)
    with pytest.raises(ShapeError, match="funm: expected square"):
        la.funm(T(rand(rng, (3, 2), "float64")), "exp")
    with pytest.raises(ShapeError, match="a power is needed"):
        bind(P.funm_p, a, fn="pow", power=None)
    with pytest.raises(ShapeError, match="every operand must match"):
        bind(P.funm_p, a, a, T(rand(rng, (2, 2), "float64")), fn="exp", power=None)
    with pytest.raises(ShapeError, match="odd number of operands"):
        bind(P.funm_p, a, a, fn="exp", power=None)
    with pytest.raises(ShapeError, match="matrix_power: the exponent must be an integer"):
        la.matrix_power(a, 1.5)


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_power(n, dtype, rng):
    a = rand(rng, (2, 3, 3), dtype) + 2 * np.eye(3)
    np.testing.assert_allclose(la.matrix_power(T(a), n).numpy(),
                               np.linalg.matrix_power(a, n), rtol=1e-11, atol=1e-12)
    if n:
        check_grads(lambda x: la.matrix_power(x, n), (T(a),), **ORDER2)


def test_traced_graph_saves_and_loads(rng, tmp_path):
    a = hermitian(rng, 4, "float64", POSITIVE)
    w = rand(rng, (4, 4), "float64")

    def loss(x):
        return tf.sum(T(w) * la.sqrtm(x)) + tf.sum(T(w) * la.powm(x, 0.25))

    graph = tf.make_graph(tf.grad(loss), T(a))
    path = tmp_path / "funm.tfg"
    graph.save(path)
    loaded = tf.load(path)
    np.testing.assert_allclose(loaded(T(a)).numpy(), tf.grad(loss)(T(a)).numpy(), rtol=1e-12)
