"""The graph compiler's specialisation (per-primitive ``specialize`` rules), the seed fold and
fused elementwise regions: compiled results equal the unspecialised / unfused ones (bit for bit,
or within 1e-14 for the PyTorch engine, whose transcendental functions differ from NumPy's by
about an ulp)."""

from __future__ import annotations

import numpy as np
import pytest

import tenferro as tf
from chainrules import primitives as P
from tenferro._src.backends.numpy_backend import host_xp
from tenferro._src.ir import fusion
from tenferro._src.ir.compile import compile_program, specialized
from tenferro.errors import GraphError

RNG = np.random.default_rng(7)


def _unspecialised(f, *args):
    """``f``'s jitted graph run through the plain ``impl`` calls (no specialisation)."""
    g = tf.jit(f).lower(*args)
    run = compile_program(g.program)
    consts = list(g.program.consts.values())
    return run(host_xp(), consts, *[np.asarray(a) for a in args])


@pytest.mark.parametrize("spec", ["ij,jk->ik", "ji,jk->ik", "ij,kj->ik", "ji,kj->ik",
                                  "bij,bjk->bik", "abc,cbd->ad", "i,i->", "ij,j->i",
                                  "ij,kl->ijkl"])
def test_specialised_dot_general_is_bit_identical(spec, _backend):
    a, b = spec.split("->")[0].split(",")
    sizes = dict(zip("ijklabcd", (3, 4, 5, 2, 3, 4, 2, 5)))
    x = tf.tensor(RNG.standard_normal([sizes[c] for c in a]))
    y = tf.tensor(RNG.standard_normal([sizes[c] for c in b]))

    def f(x, y):
        return tf.einsum(spec, x, y)

    got = tf.jit(f)(x, y)  # every backend: the specialised callables use its namespace
    assert np.array_equal(got.numpy(), f(x, y).numpy())
    if _backend == "numpy":
        ref = _unspecialised(f, x, y)[0]
        assert np.array_equal(np.asarray(got), np.asarray(ref))


@pytest.mark.numpy_only
def test_2d_contractions_get_a_specialised_callable():
    x = tf.tensor(RNG.standard_normal((3, 3)))

    def f(x):
        return tf.sum(tf.sin(x @ x.T) * x)

    g = tf.jit(tf.grad(f)).lower(x)
    dots = [e for e in g.program.eqns if e.prim is P.dot_general_p]
    assert dots and all(specialized(e, host_xp()) is not None for e in dots)
    assert np.array_equal(np.asarray(tf.jit(tf.grad(f))(x)),
                          np.asarray(_unspecialised(tf.grad(f), x)[0]))


def test_symbolic_shapes_are_not_specialised():
    x = tf.tensor(RNG.standard_normal((4, 4)))
    g = tf.jit(lambda x: x @ x).lower(x)
    eqn = g.program.eqns[0]
    assert specialized(eqn, None) is None  # no namespace: impl


def test_gradient_graphs_drop_the_multiplication_by_the_ones_seed():
    x = tf.tensor(RNG.standard_normal((3, 3)))

    def f(x):
        return tf.sum(tf.sin(x) * x)

    g = tf.jit(tf.grad(f)).lower(x)
    ones = {id(v) for v, c in g.program.consts.items() if np.all(np.asarray(c) == 1)}
    ones |= {id(e.outputs[0]) for e in g.program.eqns
             if e.prim is P.full_p and e.params["value"] == 1}
    assert not [e for e in g.program.eqns
                if e.prim is P.mul_p and any(id(v) in ones for v in e.inputs)]
    xx = np.asarray(x)
    np.testing.assert_allclose(np.asarray(tf.jit(tf.grad(f))(x)), np.cos(xx) * xx + np.sin(xx),
                               rtol=1e-15)


# ------------------------------------------------------------------- fused regions
N = fusion.MIN_ELEMENTS  # the smallest fused size: keeps these tests fast


def chain(x, w):
    y = x
    for _ in range(3):
        y = tf.tanh(tf.sin(y * w) + x) * 0.9
        y = 1.0 - y / (2.0 + tf.exp(-y))  # scalar-first sub, div, neg
    z = tf.sqrt(tf.cos(y) ** 2 + 1.0) / 3.0
    return tf.sum(z) + tf.sum(y * w)


def _run(engine, monkeypatch, f, *args):
    monkeypatch.setattr(fusion, "ENGINE", engine)
    return tf.jit(f)(*args)


def _flat(out):
    v, g = out
    return [np.asarray(v), *map(np.asarray, g)]


@pytest.mark.numpy_only  # fusion runs on NumPy arrays
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_engine_is_bit_identical_to_the_unfused_graph(monkeypatch, dtype):
    x, w = (tf.tensor(RNG.uniform(0.1, 0.5, N).astype(dtype)) for _ in range(2))
    vg = tf.value_and_grad(chain, argnums=(0, 1))
    ref = _flat(_run("off", monkeypatch, vg, x, w))
    got = _flat(_run("numpy", monkeypatch, vg, x, w))
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.numpy_only  # fusion runs on NumPy arrays
def test_torch_engine_agrees_with_the_unfused_graph(monkeypatch):
    pytest.importorskip("torch", reason="the fusion engine 'torch' (tenferro[compile])")
    x, w = (tf.tensor(RNG.uniform(0.1, 0.5, N)) for _ in range(2))
    vg = tf.value_and_grad(chain, argnums=(0, 1))
    ref = _flat(_run("off", monkeypatch, vg, x, w))
    got = _flat(_run("torch", monkeypatch, vg, x, w))
    for a, b in zip(got, ref):  # 1e-14 of the array's scale (elements that cancel to ~0
        # keep the absolute error of the terms they cancel)
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-14 * np.max(np.abs(b)))
        assert not np.array_equal(a, 0 * a)


@pytest.mark.numpy_only  # fusion runs on NumPy arrays
@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_fused_regions_reuse_dead_buffers(monkeypatch, engine):
    if engine == "torch":
        pytest.importorskip("torch", reason="the fusion engine 'torch' (tenferro[compile])")
    sources = []
    make = fusion.region_kernel

    def spy(*a):
        out = make(*a)
        sources.append(out[0].source)
        return out

    monkeypatch.setattr(fusion, "region_kernel", spy)
    x, w = (tf.tensor(RNG.uniform(0.1, 0.5, N)) for _ in range(2))

    def long_chain(x, w):
        y = x
        for _ in range(10):
            y = tf.tanh(tf.sin(y * w) + x) * 0.9
        return tf.sum(y)

    _run(engine, monkeypatch, long_chain, x, w)
    assert len(sources) == 1  # the 50 elementwise operations: one region
    src = sources[0]
    ops = src.count("out=")  # every operation writes into a buffer
    temps = [line for line in src.splitlines() if line.lstrip().startswith("T")
             and "empty(BLOCK" in line]
    assert ops == 50 and 1 <= len(temps) <= 3  # the chain runs in place in 1-3 buffers


@pytest.mark.numpy_only  # fusion runs on NumPy arrays
def test_small_arrays_and_views_are_left_to_the_executor(monkeypatch):
    monkeypatch.setattr(fusion, "ENGINE", "numpy")
    x = tf.tensor(RNG.standard_normal((8, 8)))
    g = tf.jit(lambda x: tf.sin(x) * x + 1.0).lower(x)
    _, spans = fusion.schedule(g.program.eqns)
    assert spans == []  # below MIN_ELEMENTS
    big = tf.tensor(RNG.standard_normal((256, 256)))

    def f(a):  # a transposed view feeds the region; the region never writes its inputs
        t = a.T
        return tf.sin(t) * t + tf.cos(a), t

    a0 = np.asarray(big).copy()
    got, t = tf.jit(f)(big)
    monkeypatch.setattr(fusion, "ENGINE", "off")
    ref, _ = tf.jit(f)(big)
    assert np.array_equal(np.asarray(got), np.asarray(ref))
    assert np.array_equal(np.asarray(big), a0) and np.array_equal(np.asarray(t), a0.T)


# ------------------------------------------------------- saving, source lines
def _f(x):
    y = tf.sin(x) * x  # the forward line the backward equations point to
    return tf.sum(y)


@pytest.mark.numpy_only
def test_save_takes_a_function_a_jitted_function_or_a_graph(tmp_path):
    x = tf.tensor(RNG.standard_normal(5))
    want = np.asarray(tf.grad(_f)(x))
    jg = tf.jit(tf.grad(_f))
    tf.save(tf.grad(_f), tmp_path / "a.tfg", x)
    tf.save(jg, tmp_path / "b.tfg", x)
    jg.save(tmp_path / "c.tfg", x)
    tf.save(jg.lower(x), tmp_path / "d.tfg")
    for name in "abcd":
        assert np.array_equal(np.asarray(tf.load(tmp_path / f"{name}.tfg")(x)), want)
    with pytest.raises(GraphError, match="example arguments are for a function"):
        tf.save(jg.lower(x), tmp_path / "e.tfg", x)
    with pytest.raises(GraphError, match="expected a Graph or a function, got int"):
        tf.save(3, tmp_path / "f.tfg")
    with pytest.raises(GraphError, match="path must be a file name"):
        tf.save(_f, None, x)


@pytest.mark.numpy_only
def test_backward_equations_carry_the_forward_line():
    x = tf.tensor(RNG.standard_normal(5))
    g = tf.jit(tf.grad(_f)).lower(x)
    fwd_line = _f.__code__.co_firstlineno + 1
    where = f"test_compiler.py:{fwd_line} (_f)"
    cos = [e for e in g.program.eqns if e.prim is P.cos_p]
    assert cos and all(e.source and where in e.source and e.source.endswith("backward")
                       for e in cos)
    assert f"{where}, backward" in str(g)
    # the forward equations keep their plain line
    sin = [e for e in g.program.eqns if e.prim is P.sin_p]
    assert sin and all(e.source.endswith("(_f)") for e in sin)


@pytest.mark.numpy_only
def test_long_programs_run_specialised_in_a_loop(monkeypatch):
    from tenferro._src.ir import compile as C

    x = tf.tensor(RNG.standard_normal((3, 3)))

    def f(x):
        y = x
        for _ in range(4):
            y = tf.sin(y @ x.T) + y
        return tf.sum(y)

    want = np.asarray(tf.jit(tf.grad(f))(x))
    monkeypatch.setattr(C, "STRAIGHT_LINE_MAX", 3)  # every program: the loop
    assert np.array_equal(np.asarray(tf.jit(tf.grad(f))(x)), want)


@pytest.mark.numpy_only
def test_complex_products_by_one_are_not_folded():
    # (a + bj) * (1 + 0j) is not (a + bj) in IEEE arithmetic when b is infinite
    x = tf.tensor(np.array([1.0 + np.inf * 1j, -0.0 - 1j]))

    def f(x):
        return x * tf.ones_like(x)

    with np.errstate(invalid="ignore"):
        got = np.asarray(tf.jit(f)(x))
        want = np.asarray(x) * np.ones(2, complex)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got.real), np.signbit(want.real))


@pytest.mark.numpy_only
@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_fused_regions_with_non_finite_constants(monkeypatch, engine):
    if engine == "torch":
        pytest.importorskip("torch", reason="the fusion engine 'torch' (tenferro[compile])")
    x = tf.tensor(RNG.uniform(0.1, 0.5, N))

    def f(x):
        return tf.minimum(tf.sin(x) * np.inf + x, 3.0), tf.sin(x) - 2.0 * x

    got = _run(engine, monkeypatch, f, x)
    ref = _run("off", monkeypatch, f, x)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-14)
