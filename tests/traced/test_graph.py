"""Graph inspection, saving/loading, and memory of the executor."""

import gc
import json
import tracemalloc
import zipfile

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GraphError

T = tf.tensor


def model(x, w):
    h = tf.tanh(x @ w)
    return {"loss": tf.sum(h * h), "h": h}


def example():
    rng = np.random.default_rng(0)
    return T(rng.standard_normal((3, 4))), T(rng.standard_normal((4, 2)))


def test_listing_is_readable_ssa():
    g = tf.make_graph(model, tf.ShapeDtype((3, 4)), tf.ShapeDtype((4, 2)))
    text = str(g)
    lines = text.splitlines()
    assert lines[0] == "graph model(%in0:f64[3,4], %in1:f64[4,2]) {"
    assert any("= dot_general(%in0, %in1)" in line and "dimension_numbers" in line
               for line in lines)
    assert any(line.strip().startswith("%") and "tanh(" in line and "f64[3,2]" in line
               for line in lines)
    assert "test_graph.py" in text  # source lines
    assert lines[-2].strip().startswith("return ") and lines[-1] == "}"
    assert len([ln for ln in lines if " = " in ln]) == g.num_nodes


def test_dot_and_summary():
    g = tf.make_graph(model, tf.ShapeDtype((3, 4)), tf.ShapeDtype((4, 2)))
    dot = g.to_dot()
    assert dot.startswith('digraph "model"') and dot.count("->") >= g.num_nodes
    s = g.summary()
    assert s["nodes"] == g.num_nodes
    assert s["flops"] >= 2 * 3 * 4 * 2  # at least the matmul
    assert s["input_bytes"] == (12 + 8) * 8
    assert s["primitives"]["dot_general"] == 1


def test_save_load_runs_rejits_and_differentiates(tmp_path):
    x, w = example()
    g = tf.make_graph(model, x, w)
    g.save(tmp_path / "m.tfg")
    h = tf.load(tmp_path / "m.tfg")
    assert str(h).splitlines()[1:] == str(g).splitlines()[1:]
    ref = model(x, w)
    out = h(x, w)
    np.testing.assert_allclose(out["loss"].numpy(), ref["loss"].numpy(), rtol=1e-15)
    np.testing.assert_allclose(tf.jit(h)(x, w)["h"].numpy(), ref["h"].numpy(), rtol=1e-15)
    g_loaded = tf.grad(lambda a: h(a, w)["loss"])(x)
    g_ref = tf.grad(lambda a: model(a, w)["loss"])(x)
    np.testing.assert_allclose(g_loaded.numpy(), g_ref.numpy(), rtol=1e-14)
    # a gradient graph saves and loads too
    gg = tf.make_graph(tf.grad(lambda a, b: model(a, b)["loss"], argnums=(0, 1)), x, w)
    gg.save(tmp_path / "grad.tfg")
    ga, gb = tf.load(tmp_path / "grad.tfg")(x, w)
    np.testing.assert_allclose(ga.numpy(), g_ref.numpy(), rtol=1e-14)


def test_constants_are_stored_as_arrays(tmp_path):
    A = T(np.arange(6.0).reshape(2, 3))
    g = tf.make_graph(lambda x: x @ A, tf.ShapeDtype((4, 2)))
    g.save(tmp_path / "c.tfg")
    with zipfile.ZipFile(tmp_path / "c.tfg") as z:
        names = z.namelist()
        doc = json.loads(np.load(z.open("graph.json.npy")).tobytes())
    assert "const_0.npy" in names and doc["version"] == 2
    assert not any(n.endswith(".pkl") for n in names)


def test_version_1_files_still_load(tmp_path):
    """Version 2 added custom-rule calls; a version-1 file (no ``calls``) loads as before."""
    A = T(np.arange(6.0).reshape(2, 3))
    g = tf.make_graph(lambda x: tf.sin(x @ A), tf.ShapeDtype((4, 2)))
    g.save(tmp_path / "v2.tfg")

    def as_v1(doc):
        doc["version"] = 1
        del doc["calls"]

    _rewrite(tmp_path / "v2.tfg", tmp_path / "v1.tfg", as_v1)
    x = T(np.ones((4, 2)))
    np.testing.assert_allclose(tf.load(tmp_path / "v1.tfg")(x).numpy(), g(x).numpy())


def _rewrite(src, dst, edit):
    with np.load(src) as z:
        arrays = {k: z[k] for k in z.files}
    doc = json.loads(bytes(arrays["graph.json"]).decode())
    edit(doc)
    arrays["graph.json"] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    with open(dst, "wb") as fh:
        np.savez(fh, **arrays)


def test_newer_version_unknown_primitive_and_corruption(tmp_path):
    x, w = example()
    src = tmp_path / "m.tfg"
    tf.make_graph(model, x, w).save(src)

    _rewrite(src, tmp_path / "new.tfg", lambda d: d.update(version=99))
    with pytest.raises(GraphError, match="version 99, newer"):
        tf.load(tmp_path / "new.tfg")

    def rename(d):
        d["eqns"][0]["prim"] = "frobnicate"

    _rewrite(src, tmp_path / "prim.tfg", rename)
    with pytest.raises(GraphError, match="unknown primitive 'frobnicate'"):
        tf.load(tmp_path / "prim.tfg")

    def bad_shape(d):
        d["eqns"][0]["outputs"][0]["shape"] = [7, 7]

    _rewrite(src, tmp_path / "shape.tfg", bad_shape)
    with pytest.raises(GraphError, match="declares output"):
        tf.load(tmp_path / "shape.tfg")

    (tmp_path / "junk.tfg").write_bytes(b"not a zip at all")
    with pytest.raises(GraphError, match="not a readable tenferro graph"):
        tf.load(tmp_path / "junk.tfg")
    data = src.read_bytes()
    (tmp_path / "cut.tfg").write_bytes(data[: len(data) // 2])
    with pytest.raises(GraphError):
        tf.load(tmp_path / "cut.tfg")


@pytest.mark.numpy_only  # tracemalloc sees NumPy's allocations; the logic is backend-free
def test_jitted_elementwise_chain_keeps_few_buffers_alive():
    n = 1000
    buf = n * n * 8

    def chain(x):
        y = x
        for k in range(50):
            y = tf.sin(y) * 1.0001 + 0.5 if k % 2 else tf.tanh(y) - y * 0.5
        return y

    jf = tf.jit(chain)
    x = T(np.random.default_rng(0).standard_normal((n, n)))
    jf(x)  # trace + compile outside the measurement
    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    out = jf(x)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak <= 4 * buf, f"peak {peak / buf:.1f} buffers"
    np.testing.assert_allclose(out.numpy(), chain(x).numpy(), rtol=1e-13)
