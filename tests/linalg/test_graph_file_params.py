"""Graph files holding the degeneracy and funm primitives: their parameters have declared
kinds, so a saved gradient graph loads, and a file with a wrong parameter is refused on load
(naming the equation and the parameter) instead of failing when the graph runs."""

import json

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import GraphFormatError
from tests.linalg._util import T, hermitian, rand


def _read(path):
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(bytes(arrays.pop("graph.json")).decode()), arrays


def _write(path, doc, arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **{"graph.json": np.frombuffer(json.dumps(doc).encode(), np.uint8)},
                 **arrays)
    return path


@pytest.fixture
def saved(rng, tmp_path):
    """A gradient graph through svd (cut_inverse, degeneracy guard/check) and funm."""
    a = hermitian(rng, 4, "float64", [0.5, 1.0, 2.0, 3.0])
    w = rand(rng, (4, 4), "float64")

    def loss(x):
        u, s, vh = la.svd(x)
        return tf.sum(s**3) + tf.sum(T(w) * (u[:, :2] @ vh[:2])) + tf.sum(T(w) * la.sqrtm(x))

    path = tmp_path / "g.tfg"
    tf.make_graph(tf.grad(loss), T(a)).save(path)
    return path, a, tf.grad(loss)(T(a)).numpy()


def _first(doc, prim):
    return next(e for e in doc["eqns"] if e["prim"] == prim)


def test_saved_graph_with_the_new_primitives_loads_and_runs(saved):
    path, a, want = saved
    doc, _ = _read(path)
    names = {e["prim"] for e in doc["eqns"]}
    assert {"funm", "degeneracy_check", "cut_inverse"} <= names
    np.testing.assert_allclose(tf.load(path)(T(a)).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("prim,param,value,match", [
    ("funm", "fn", "tan", r"\.fn: expected one of exp, log"),
    ("funm", "power", "half", r"\.power: expected a real number"),
    ("degeneracy_check", "op", "qr", r"\.op: expected one of"),
    ("degeneracy_check", "parts", {"tuple": ["values", "phase"]}, r"\.parts: expected one of"),
    ("degeneracy_check", "eps", True, r"\.eps: expected a real number"),
])
def test_a_wrong_parameter_is_refused_on_load(saved, tmp_path, prim, param, value, match):
    path, _, _ = saved
    doc, arrays = _read(path)
    _first(doc, prim)["params"][param] = value
    with pytest.raises(GraphFormatError, match=match):
        tf.load(_write(tmp_path / "bad.tfg", doc, arrays))
