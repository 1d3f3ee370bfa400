"""Graph files are untrusted input: every corrupt or hostile file is a ``GraphFormatError``
naming what is wrong, checked before anything is allocated (design/graph-files.md)."""

import gc
import inspect
import io
import json
import os
import re
import sys
import threading
import time
import tracemalloc
import zipfile

import numpy as np
import pytest

import tenferro as tf
from chainrules import PRIMITIVES
from chainrules.symbolic import Sym, bound_of
from tenferro._src.traced import serialize
from tenferro._src.traced.graph_params import NEW_SIZE, PARAM_KINDS, PRODUCES_SIZE
from tenferro.errors import (
    GraphError,
    GraphFileError,
    GraphFormatError,
    ShapeError,
    TenferroError,
)
from tenferro.pytree import tree_leaves

T = tf.tensor


# ------------------------------------------------------------------------ file helpers
def _t(*xs):
    return {"tuple": list(xs)}


def _var(i, shape, dtype="float64"):
    return {"id": i, "shape": list(shape), "dtype": dtype}


def _eqn(prim, ins, outs, **params):
    return {"prim": prim, "inputs": ins, "outputs": outs, "params": params, "source": None}


def _leaf():
    return {"kind": "leaf", "children": []}


def _tuple_tree(n):
    return {"kind": "tuple", "children": [_leaf() for _ in range(n)]}


def _doc(inputs, eqns, outputs, consts=(), **extra):
    doc = {"format": "tenferro-graph", "version": 1, "name": "g", "inputs": list(inputs),
           "consts": list(consts), "outputs": list(outputs), "eqns": list(eqns),
           "in_tree": _tuple_tree(len(inputs)),
           "out_tree": _leaf() if len(outputs) == 1 else _tuple_tree(len(outputs)),
           "sym_bounds": {}}
    doc.update(extra)
    return doc


def _write(path, doc, arrays=None, *, raw_json=None):
    text = raw_json if raw_json is not None else json.dumps(doc).encode()
    out = {"graph.json": np.frombuffer(text, dtype=np.uint8)}
    out.update(arrays or {})
    with open(path, "wb") as fh:
        np.savez(fh, **out)
    return path


_NP_LOAD = threading.Lock()


def _read(path):
    # np.load parses headers with ``ast``, not thread-safe in CPython 3.11 (tenferro.load
    # does not use it; this helper, used from the concurrency test's threads, does)
    with _NP_LOAD, np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    return json.loads(bytes(arrays.pop("graph.json")).decode()), arrays


def _sin_doc(shape=(3,), dtype="float64"):
    """in0 -> sin -> out: the smallest valid graph."""
    return _doc([_var(0, shape, dtype)], [_eqn("sin", [0], [_var(1, shape, dtype)])], [1])


def _refused(path, match, **kw):
    t0 = time.perf_counter()
    with pytest.raises(GraphFormatError, match=match):
        tf.load(path, **kw)
    assert time.perf_counter() - t0 < 1.0


def test_the_smallest_valid_graph_loads_and_runs(tmp_path):
    g = tf.load(_write(tmp_path / "ok.tfg", _sin_doc()))
    np.testing.assert_allclose(g(T(np.arange(3.0))).numpy(), np.sin(np.arange(3.0)))


def test_every_primitive_parameter_has_a_declared_kind():
    """The loader type-checks parameters from ``PARAM_KINDS``: a primitive added without an
    entry there would have its parameters refused by ``load``."""
    for name, prim in PRIMITIVES.items():
        sig = inspect.signature(prim.abstract_eval)
        kw = {p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY}
        assert kw == set(PARAM_KINDS.get(name, {})), name
    for name, param in PRODUCES_SIZE.items():
        assert PARAM_KINDS[name][param] is NEW_SIZE


# ----------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("prim,params,shape", [
    ("full", dict(shape=_t(10**6, 10**6), value=1.0, dtype={"dtype": "float64"}, device=None),
     [10**6, 10**6]),
    ("iota", dict(shape=_t(10**12), dimension=0, dtype={"dtype": "int64"}, device=None),
     [10**12]),
])
def test_declared_sizes_over_the_limit_are_refused_before_anything_runs(tmp_path, prim,
                                                                         params, shape):
    doc = _doc([], [_eqn(prim, [], [_var(1, shape, params["dtype"]["dtype"])], **params)], [1])
    path = _write(tmp_path / "big.tfg", doc)
    _refused(path, r"(10{12} elements, more than|size 10{12};.*) max_elements=4294967296")
    g = tf.load(path, max_elements=10**12)  # a trusted file: the caller raises the limit
    assert g.out_avals[0].shape == tuple(shape)
    _refused(path, "max_elements=1000", max_elements=1000)


def test_shape_parameters_are_checked_against_the_limit(tmp_path):
    big = 10**13
    bid = _eqn("broadcast_in_dim", [0], [_var(1, [big, 3])], shape=_t(big, 3),
               broadcast_dimensions=_t(1))
    _refused(_write(tmp_path / "b.tfg", _doc([_var(0, [3])], [bid], [1])),
             r"params\.shape: .*max_elements")
    rs = _eqn("reshape", [0], [_var(1, [3])], new_sizes=_t(big, 0))
    _refused(_write(tmp_path / "r.tfg", _doc([_var(0, [3])], [rs], [1])),
             r"params\.new_sizes: .*max_elements")
    inp = _doc([_var(0, [big])], [], [0])
    _refused(_write(tmp_path / "i.tfg", inp), r"inputs\[0\]\.shape\[0\]: .*max_elements")


@pytest.mark.parametrize("dim,what", [
    (True, "True"), (3.0, "3.0"), (float("nan"), "nan"), (float("inf"), "inf"), (-1, "-1"),
    ("3", "'3'"), (None, "None"), (2**80, str(2**80)),
])
def test_sizes_must_be_non_negative_ints(tmp_path, dim, what):
    doc = _sin_doc()
    doc["inputs"][0]["shape"] = [dim]
    _refused(_write(tmp_path / "d.tfg", doc), rf"inputs\[0\]\.shape\[0\]: .*{what}")


@pytest.mark.parametrize("bad", [True, 0.0, float("nan"), "0", None, 2**70])
def test_integer_parameters_refuse_bools_floats_and_huge_numbers(tmp_path, bad):
    eq = _eqn("reduce_sum", [0], [_var(1, [])], axes=_t(bad))
    _refused(_write(tmp_path / "p.tfg", _doc([_var(0, [3])], [eq], [1])),
             r"eqns\[0\] \(reduce_sum\)\.params\.axes: expected an integer")


@pytest.mark.parametrize("dtype", ["object", "float16", "<U5", "V8", "float64,float64", 3,
                                   "datetime64"])
def test_only_supported_dtypes(tmp_path, dtype):
    doc = _sin_doc()
    doc["inputs"][0]["dtype"] = dtype
    _refused(_write(tmp_path / "v.tfg", doc), r"inputs\[0\]\.dtype: unknown dtype")
    conv = _eqn("convert_element_type", [0], [_var(1, [3])], new_dtype={"dtype": dtype})
    _refused(_write(tmp_path / "p.tfg", _doc([_var(0, [3])], [conv], [1])),
             r"params\.new_dtype.*unknown dtype")


@pytest.mark.parametrize("eqn,match", [
    (_eqn("diagonal", [0], [_var(1, [0])], offset=2**40), r"offset: expected an integer"),
    (_eqn("iota", [], [_var(1, [3], "bool")], shape=_t(3), dimension=0,
          dtype={"dtype": "bool"}, device=None), "iota counts in an integer or real dtype"),
    (_eqn("device_put", [0], [_var(1, [3, 3])], device="../../etc", src=None),
     r"device: expected null or a device"),
    (_eqn("slice", [0], [_var(1, [1, 3])], start_indices=_t(0, 0), limit_indices=_t(1, 3),
          strides=_t(1.0, 1)), r"strides: expected an integer"),
    (_eqn("pad", [0, 0], [_var(1, [3, 3])], padding_config=_t(_t(0, 0), _t(0, 0))),
     r"padding_config: expected a tuple of 3 entries"),
    (_eqn("qr", [0], [_var(1, [3, 3]), _var(2, [3, 3])], complete=1, positive=False),
     r"complete: expected true or false"),
])
def test_parameters_of_the_wrong_kind(tmp_path, eqn, match):
    doc = _doc([_var(0, [3, 3])], [eqn], [1])
    _refused(_write(tmp_path / "k.tfg", doc), match)


def test_full_value_must_fit_its_dtype(tmp_path):
    eq = _eqn("full", [], [_var(1, [2], "int8")], shape=_t(2), value=1000,
              dtype={"dtype": "int8"}, device=None)
    _refused(_write(tmp_path / "f.tfg", _doc([], [eq], [1])), "cannot be stored as int8")


# ----------------------------------------------------------------- structure and ids
def test_duplicate_ids_and_undefined_values(tmp_path):
    doc = _sin_doc()
    doc["eqns"][0]["outputs"][0]["id"] = 0
    _refused(_write(tmp_path / "dup.tfg", doc), "value id 0 is defined twice")
    doc = _sin_doc()
    doc["eqns"][0]["inputs"] = [7]
    _refused(_write(tmp_path / "undef.tfg", doc), r"inputs\[0\]: an integer 7 is not a value")
    doc = _sin_doc()
    doc["outputs"] = [True]
    _refused(_write(tmp_path / "out.tfg", doc), r"outputs\[0\]")


def test_missing_unexpected_and_repeated_keys(tmp_path):
    doc = _sin_doc()
    del doc["eqns"]
    _refused(_write(tmp_path / "a.tfg", doc), "missing key 'eqns'")
    doc = _sin_doc()
    doc["eqns"][0]["extra"] = 1
    _refused(_write(tmp_path / "b.tfg", doc), r"eqns\[0\]: unexpected key 'extra'")
    doc = _sin_doc()
    doc["eqns"][0]["params"] = {"axes": _t(0)}
    _refused(_write(tmp_path / "c.tfg", doc), r"params: unexpected key 'axes'")
    text = json.dumps(_sin_doc()).replace('"name": "g"', '"name": "g", "name": "h"').encode()
    _refused(_write(tmp_path / "d.tfg", None, raw_json=text), "'name' appears twice")


def test_equation_arity_is_checked_against_the_primitive(tmp_path):
    """Old files could declare more outputs than the primitive makes (silently dropped)."""
    doc = _sin_doc()
    doc["eqns"][0]["outputs"].append(_var(2, [3]))
    doc["outputs"] = [1, 2]
    doc["out_tree"] = _tuple_tree(2)
    _refused(_write(tmp_path / "o.tfg", doc), r"declares 2 outputs, but sin produces 1")
    doc = _doc([_var(0, [3]), _var(1, [3])],
               [_eqn("add", [0, 1, 0], [_var(2, [3])])], [2])
    _refused(_write(tmp_path / "i.tfg", doc), r"add takes 2 operands, the file gives 3")
    doc = _doc([_var(0, [3])], [_eqn("eq", [0], [_var(2, [3], "bool")])], [2])
    _refused(_write(tmp_path / "eq.tfg", doc), r"eq takes 2 operands, the file gives 1")
    doc = _doc([_var(0, [3, 3])], [_eqn("svd", [0], [_var(1, [3, 3]), _var(2, [3])],
                                        full_matrices=False, eps=1e-12)], [1, 2])
    _refused(_write(tmp_path / "svd.tfg", doc), r"declares 2 outputs, but svd produces 3")


def test_tree_leaves_must_match_inputs_and_outputs(tmp_path):
    """Old files failed at call time (StopIteration) or silently dropped outputs."""
    doc = _sin_doc()
    doc["in_tree"] = _tuple_tree(2)
    _refused(_write(tmp_path / "in.tfg", doc), r"in_tree: the structure has 2 leaves but the "
                                               r"program has 1 inputs")
    doc = _sin_doc()
    doc["eqns"].append(_eqn("cos", [0], [_var(2, [3])]))
    doc["outputs"] = [1, 2]  # out_tree still a single leaf: output 2 would vanish
    _refused(_write(tmp_path / "out.tfg", doc), r"out_tree: .* 1 leaves .* 2 outputs")
    doc["out_tree"] = {"kind": "dict", "keys": ["a", "a"], "children": [_leaf(), _leaf()]}
    _refused(_write(tmp_path / "keys.tfg", doc), "repeated dictionary key")
    doc["out_tree"] = {"kind": "dict", "keys": ["a"], "children": [_leaf(), _leaf()]}
    _refused(_write(tmp_path / "nkeys.tfg", doc), "1 keys for 2 children")
    doc = _sin_doc()
    doc["in_tree"] = _leaf()
    _refused(_write(tmp_path / "top.tfg", doc), "must be a tuple")


def test_deep_nesting_is_refused_without_recursion_errors(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(_sin_doc()).replace('"g"', deep).encode()
    _refused(_write(tmp_path / "json.tfg", None, raw_json=text), "nests too deeply")
    shallow_but_over = "[" * 500 + "]" * 500
    text = json.dumps(_sin_doc()).replace('"g"', shallow_but_over).encode()
    _refused(_write(tmp_path / "json2.tfg", None, raw_json=text), "nests more than 160")
    tree = _leaf()
    for _ in range(70):
        tree = {"kind": "tuple", "children": [tree]}
    doc = _sin_doc()
    doc["in_tree"] = {"kind": "tuple", "children": [tree]}
    _refused(_write(tmp_path / "tree.tfg", doc), "structure nests deeper than 64")
    value = 0
    for _ in range(20):
        value = _t(value)
    doc = _doc([_var(0, [3])], [_eqn("reduce_sum", [0], [_var(1, [])], axes=value)], [1])
    _refused(_write(tmp_path / "value.tfg", doc), "value nests deeper than 8")


# ------------------------------------------------------------------ run-time sizes
def _svd_doc(size):
    """a (4x4) -> svd -> truncation_indices(s; size) -> gather(s, idx)."""
    sym = {"sym": [1, [[5, 1]]]}
    return _doc(
        [_var(0, [4, 4])],
        [_eqn("svd", [0], [_var(1, [4, 4]), _var(2, [4]), _var(3, [4, 4])],
              full_matrices=False, eps=1e-12),
         _eqn("truncation_indices", [2], [_var(4, [size if size is not None else sym],
                                                "int64")],
              max_rank=None, cutoff=None, relative_cutoff=1e-9,
              size=size if size is not None else sym),
         _eqn("gather", [2, 4], [_var(5, [size if size is not None else sym])], axis=0)],
        [5], sym_bounds={"5": 4})


def test_run_time_sizes_are_produced_before_use(tmp_path, rng):
    g = tf.load(_write(tmp_path / "ok.tfg", _svd_doc(None)))
    a = rng.standard_normal((4, 2)) @ rng.standard_normal((2, 4))
    np.testing.assert_allclose(g(T(a)).numpy(), np.linalg.svd(a, compute_uv=False)[:2])
    assert bound_of(g.out_avals[0].shape[0]) == 4

    _refused(_write(tmp_path / "int.tfg", _svd_doc(3)), r"params\.size: expected a run-time")
    doc = _svd_doc(None)
    doc["inputs"][0]["shape"] = [{"sym": [1, [[5, 1]]]}, 4]
    _refused(_write(tmp_path / "in.tfg", doc), "inputs and constants must have static sizes")
    doc = _svd_doc(None)  # a second, different producer of the same size
    doc["eqns"].append(_eqn("truncation_indices", [2], [_var(6, [{"sym": [1, [[5, 1]]]}],
                                                              "int64")],
                            max_rank=2, cutoff=None, relative_cutoff=1e-9,
                            size={"sym": [1, [[5, 1]]]}))
    _refused(_write(tmp_path / "twice.tfg", doc), "already produced by another equation")
    doc = _svd_doc(None)  # full() of a size nobody produced
    doc["eqns"].insert(0, _eqn("full", [], [_var(9, [{"sym": [1, [[7, 1]]]}])],
                               shape=_t({"sym": [1, [[7, 1]]]}), value=0.0,
                               dtype={"dtype": "float64"}, device=None))
    _refused(_write(tmp_path / "unbound.tfg", doc), "before an equation produces it")
    doc = _svd_doc(None)
    doc["sym_bounds"] = {"5": 0}
    _refused(_write(tmp_path / "bound.tfg", doc), r"sym_bounds\['5'\]")
    doc = _svd_doc(None)
    doc["eqns"][2]["outputs"][0]["shape"] = [{"sym": [1, [[5, 10**6]]]}]
    _refused(_write(tmp_path / "exp.tfg", doc), "expected an integer from 1 to 64")


# ------------------------------------------------------------------------- versions
@pytest.mark.parametrize("version,match", [
    (3, r"version 3, newer than this tenferro understands; this tenferro reads graph format "
        r"versions 1 to 2\. Upgrade tenferro"),
    (0, r"version 0, which is no longer supported; this tenferro reads graph format versions "
        r"1 to 2\. Load it with the older tenferro"),
    ("missing", r"has no format version; this tenferro reads graph format versions 1 to 2\. "
                r".*save the graph again"),
    ("1", r"format version a string '1' is not an integer; this tenferro reads graph format "
          r"versions 1 to 2\. .*save the graph again"),
    (1.0, r"format version a number 1\.0 is not an integer"),
    (True, r"format version a boolean True is not an integer"),
    (None, r"format version null None is not an integer"),
])
def test_version_messages_say_what_the_file_has_what_is_read_and_what_to_do(tmp_path, version,
                                                                            match):
    doc = _sin_doc()
    if version == "missing":
        del doc["version"]
    else:
        doc["version"] = version
    doc["new_field_of_a_later_version"] = 1  # the version message wins over unknown keys
    _refused(_write(tmp_path / "v.tfg", doc), match)


def test_files_of_version_1_without_sym_bounds_still_load(tmp_path):
    """Early version-1 files (before run-time sizes) have no ``sym_bounds``."""
    doc = _sin_doc()
    del doc["sym_bounds"]
    g = tf.load(_write(tmp_path / "old.tfg", doc))
    np.testing.assert_allclose(g(T(np.ones(3))).numpy(), np.sin(np.ones(3)))


def test_not_a_graph_file(tmp_path):
    doc = _sin_doc()
    doc["format"] = "something-else"
    _refused(_write(tmp_path / "f.tfg", doc), "not a tenferro graph file")
    _refused(_write(tmp_path / "list.tfg", None, raw_json=b"[1, 2]"), "must hold an object")
    _refused(_write(tmp_path / "utf.tfg", None, raw_json=b'{"a": "\xff"}'), "not valid UTF-8")
    with pytest.raises(FileNotFoundError):
        tf.load(tmp_path / "nothing-here.tfg")
    with pytest.raises(GraphError, match="max_elements must be"):
        tf.load(tmp_path / "f.tfg", max_elements=-1)


# ------------------------------------------------------------------------ container
def _zip(path, entries, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", method, compresslevel=1) as z:
        for name, data in entries:
            if callable(data):
                with z.open(name, "w", force_zip64=True) as fh:
                    data(fh)
            else:
                z.writestr(name, data)
    return path


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _const_doc(n):
    """out = in0 + const0, both f64[n]."""
    return _doc([_var(0, [n])], [_eqn("add", [0, 1], [_var(2, [n])])], [2],
                consts=[_var(1, [n])])


def _zeros_npy(nbytes):
    def write(fh):
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            header, {"descr": "<f8", "fortran_order": False, "shape": (nbytes // 8,)})
        fh.write(header.getvalue())
        chunk = bytes(1 << 20)
        for _ in range(nbytes >> 20):
            fh.write(chunk)

    return write


@pytest.mark.numpy_only  # tracemalloc sees NumPy's allocations; the reader is backend-free
def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path):
    """A few hundred kB that decompress to 80 MiB: refused from the central directory (the
    old loader read it all, then complained)."""
    big = 80 << 20
    json_small = _npy(np.frombuffer(json.dumps(_const_doc(3)).encode(), np.uint8))
    bomb = _zip(tmp_path / "bomb.tfg", [("graph.json.npy", json_small),
                                        ("const_0.npy", _zeros_npy(big))], zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < big // 100
    # consistent with its declared constant, but over max_bytes
    honest = _zip(tmp_path / "honest.tfg", [
        ("graph.json.npy", _npy(np.frombuffer(json.dumps(_const_doc(big // 8)).encode(),
                                              np.uint8))),
        ("const_0.npy", _zeros_npy(big))], zipfile.ZIP_DEFLATED)
    json_bomb = _zip(tmp_path / "jbomb.tfg", [("graph.json.npy", _zeros_npy(big))],
                     zipfile.ZIP_DEFLATED)
    for path, match, kw in [
        (bomb, r"const_0\.npy is \d+ bytes decompressed, but a float64 array of shape \(3,\) "
               r"needs 24 bytes", {}),
        (honest, rf"constants take {big} bytes, more than max_bytes=1000000",
         {"max_bytes": 10**6}),
        (json_bomb, r"graph\.json\.npy is \d+ bytes decompressed; the limit is 67108864", {}),
    ]:
        tracemalloc.start()
        try:
            _refused(path, match, **kw)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 << 20, f"{path.name}: {peak / 2**20:.1f} MiB"


def test_unexpected_missing_and_mismatched_entries(tmp_path):
    doc = _const_doc(3)
    js = _npy(np.frombuffer(json.dumps(doc).encode(), np.uint8))
    c = _npy(np.arange(3.0))
    cases = [
        ([("graph.json.npy", js), ("const_0.npy", c), ("payload.pkl", b"x")],
         "unexpected entry 'payload.pkl'"),
        ([("graph.json.npy", js), ("const_00.npy", c)], "unexpected entry 'const_00.npy'"),
        ([("graph.json.npy", js)], r"no entry const_0\.npy"),
        ([("graph.json.npy", js), ("const_0.npy", c), ("const_1.npy", c)],
         r"holds const_1\.npy but the graph declares only 1"),
        ([("const_0.npy", c)], r"no graph\.json\.npy entry"),
        ([("graph.json.npy", js), ("const_0.npy", _npy(np.arange(3)))],
         r"const_0\.npy holds a <i8 array of shape \(3,\); the graph declares float64"),
        ([("graph.json.npy", js), ("const_0.npy", _npy(np.arange(3.0).astype(">f8")))],
         r"unsupported dtype '>f8'"),
        ([("graph.json.npy", js), ("const_0.npy", _npy(np.array([None, 1, 2], object)))],
         "unsupported dtype '|O'"),
        ([("graph.json.npy", _npy(np.frombuffer(json.dumps(doc).encode(), np.int8))),
          ("const_0.npy", c)], "must be a 1-d uint8 array"),
    ]
    for i, (entries, match) in enumerate(cases):
        _refused(_zip(tmp_path / f"c{i}.tfg", entries), match)
    with zipfile.ZipFile(tmp_path / "dup.tfg", "w") as z:
        z.writestr("graph.json.npy", js)
        with pytest.warns(UserWarning, match="Duplicate name"):
            z.writestr("graph.json.npy", js)
    _refused(tmp_path / "dup.tfg", "holds the entry 'graph.json.npy' twice")
    # a good archive, also deflated, also Fortran-ordered constants
    g = tf.load(_zip(tmp_path / "ok.tfg", [("graph.json.npy", js), ("const_0.npy", c)],
                     zipfile.ZIP_DEFLATED))
    np.testing.assert_allclose(g(T(np.ones(3))).numpy(), np.arange(3.0) + 1)
    doc2 = _doc([_var(0, [2, 3])], [_eqn("add", [0, 1], [_var(2, [2, 3])])], [2],
                consts=[_var(1, [2, 3])])
    f = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    g = tf.load(_write(tmp_path / "f.tfg", doc2, {"const_0": f}))
    np.testing.assert_allclose(g(T(np.zeros((2, 3)))).numpy(), f)


def test_bytes_flipped_in_constants_are_caught_by_the_zip_checksum(tmp_path):
    a = T(np.arange(64.0))
    tf.make_graph(lambda x: x * a, a).save(tmp_path / "c.tfg")
    data = bytearray((tmp_path / "c.tfg").read_bytes())
    with zipfile.ZipFile(tmp_path / "c.tfg") as z:
        info = z.getinfo("const_0.npy")
    data[info.header_offset + 30 + len("const_0.npy") + 200] ^= 0xFF  # inside the array data
    (tmp_path / "flip.tfg").write_bytes(bytes(data))
    _refused(tmp_path / "flip.tfg", "Bad CRC-32")


# --------------------------------------------------------------------- thread safety
def _svd_fn(a):
    u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-9)
    return tf.sum((u * s) @ vh), s


def test_concurrent_saves_and_loads_do_not_mix_graphs(tmp_path, rng):
    """Each thread saves and loads its own graphs. Bounds of run-time sizes used to be
    collected in a module-global dict, so a file could get other graphs' bounds (or lose its
    own)."""
    jobs = []
    for i in range(8):
        n = 3 + i  # different matrix sizes: different bounds of the run-time rank
        a = T(rng.standard_normal((n, 2)) @ rng.standard_normal((2, n + 1)))
        if i % 2:
            w = T(rng.standard_normal((n, n + 1)))
            jobs.append((tf.make_graph(lambda x, w=w: (tf.sin(x) * w, tf.sum(x @ w.T)), a), (a,)))
        else:
            jobs.append((tf.make_graph(_svd_fn, a), (a,)))
    errors = []

    def work(k):
        try:
            g, args = jobs[k]
            want = [np.asarray(x.numpy()) for x in tree_leaves(g(*args))]
            bounds = [bound_of(d) for v in g.out_avals for d in v.shape]
            own = {str(s): bound_of(Sym.make(1, {s: 1})) for e in g.eqns for v in e.outputs
                   for d in v.aval.shape if isinstance(d, Sym) for s in d.symbols()}
            for rep in range(25):
                path = tmp_path / f"t{k}_{rep}.tfg"
                g.save(path)
                assert _read(path)[0]["sym_bounds"] == own  # its own sizes, no others
                h = tf.load(path)
                got = [np.asarray(x.numpy()) for x in tree_leaves(h(*args))]
                assert [bound_of(d) for v in h.out_avals for d in v.shape] == bounds
                for x, y in zip(got, want, strict=True):
                    np.testing.assert_allclose(x, y, rtol=1e-13, atol=1e-13)
        except Exception as e:  # collected and re-raised in the main thread
            errors.append((k, e))

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so races show up
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[0]
    assert any(isinstance(d, Sym) for g, _ in jobs for v in g.out_avals for d in v.shape)


def test_save_refuses_what_load_would_refuse(tmp_path):
    tree = (T(np.ones(2)),)
    for _ in range(serialize.MAX_TREE_DEPTH + 1):
        tree = (tree,)
    g = tf.make_graph(lambda t: tf.sin(tree_leaves(t)[0]), tree)
    with pytest.raises(GraphError, match="nests deeper than 64"):
        g.save(tmp_path / "deep.tfg")


# ------------------------------------------------------------------ what a path may be
def _load_in_thread(path, timeout=10.0, **kw):
    """``tf.load(path)`` in a daemon thread: a loader that blocks (a FIFO) or reads without
    end (a device) must not hang the test run. Returns the exception it raised."""
    out = []

    def work():
        try:
            tf.load(path, **kw)
            out.append(None)
        except BaseException as e:  # noqa: BLE001 - examined by the caller
            out.append(e)

    t = threading.Thread(target=work, daemon=True)
    t0 = time.perf_counter()
    t.start()
    t.join(timeout)
    assert not t.is_alive(), f"load({path}) did not return within {timeout} s"
    return out[0], time.perf_counter() - t0


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero and mkfifo (POSIX)")
def test_devices_fifos_and_links_to_them_are_refused_before_reading(tmp_path):
    os.symlink("/dev/zero", tmp_path / "zeros.tfg")
    os.mkfifo(tmp_path / "pipe.tfg")
    os.symlink(tmp_path / "pipe.tfg", tmp_path / "to_pipe.tfg")
    for path, kind in (("/dev/zero", "character device"), ("/dev/urandom", "character device"),
                       (tmp_path / "zeros.tfg", "character device"),
                       (tmp_path / "pipe.tfg", "FIFO"), (tmp_path / "to_pipe.tfg", "FIFO"),
                       (tmp_path, "directory")):
        err, took = _load_in_thread(path)
        assert isinstance(err, GraphFileError) and isinstance(err, OSError), (path, err)
        assert kind in str(err) and "not a graph file" in str(err), str(err)
        assert took < 1.0, (path, took)
    assert "leads to '/dev/zero'" in str(_load_in_thread(tmp_path / "zeros.tfg")[0])
    with open("/dev/zero", "rb") as fh:  # an open file is checked the same way
        assert isinstance(_load_in_thread(fh)[0], GraphFileError)


def _chain_doc(n, prims=("sin", "cos")):
    """in0 -> n elementwise equations -> out."""
    eqns = [_eqn(prims[k % len(prims)], [k], [_var(k + 1, [3])]) for k in range(n)]
    return _doc([_var(0, [3])], eqns, [n])


def test_the_number_of_equations_and_the_file_size_are_bounded(tmp_path):
    path = _write(tmp_path / "long.tfg", _chain_doc(1001))
    _refused(path, r"eqns: the file holds more than max_eqns=1000 equations.*larger max_eqns",
             max_eqns=1000)
    assert len(tf.load(path, max_eqns=1001).eqns) == 1001
    assert serialize.MAX_EQNS >= 200_000  # the documented default
    size = os.path.getsize(path)
    _refused(path, rf"the file is {size} bytes, more than max_file_bytes={size - 1}",
             max_file_bytes=size - 1)
    tf.load(path, max_file_bytes=size)
    for bad in (-1, 1.5, None, True):
        with pytest.raises(GraphError, match="max_eqns must be a non-negative int"):
            tf.load(path, max_eqns=bad)


def test_equations_of_call_programs_count_too(tmp_path):
    g = tf.make_graph(_with_custom_rule, T(np.ones(3)))
    g.save(tmp_path / "c.tfg")
    doc, arrays = _read(tmp_path / "c.tfg")
    total = len(doc["eqns"]) + sum(len(p["eqns"]) for c in doc["calls"]
                                   for p in c["programs"].values())
    assert len(tf.load(tmp_path / "c.tfg", max_eqns=total).eqns) == len(doc["eqns"])
    _refused(tmp_path / "c.tfg", "more than max_eqns", max_eqns=total - 1)


@tf.custom_vjp
def _clip(x):
    return tf.clip(x, -1.0, 1.0)


_clip.defvjp(lambda x: (_clip(x), (x,)), lambda res, ct: (ct * (tf.abs(res[0]) < 1),))


def _with_custom_rule(x):
    return tf.sum(_clip(x * 2.0))


def test_a_call_whose_function_calls_itself_is_refused_by_name(tmp_path):
    """The function of a custom-rule call may not use the call itself (its rules may): the
    file is refused with a message that says so, not an internal AttributeError."""
    g = tf.make_graph(_with_custom_rule, T(np.ones(3)))
    g.save(tmp_path / "c.tfg")
    doc, arrays = _read(tmp_path / "c.tfg")
    fun = doc["calls"][0]["programs"]["fun"]
    x = fun["inputs"][0]
    fun["eqns"] = [_eqn("custom_vjp_call", [x["id"]], [_var(900, x["shape"])],
                        call={"call": 0})]
    fun["outputs"] = [900]
    path = _write(tmp_path / "self.tfg", doc, arrays)
    with pytest.raises(GraphFormatError) as e:
        tf.load(path)
    msg = str(e.value)
    assert "calls[0].programs.fun.eqns[0] (custom_vjp_call).params.call" in msg
    assert "cannot call itself" in msg and "Error" not in msg.split("load:")[1]


# ------------------------------------------------------------------ parameters as eager checks them
def _svd_trunc_doc(**trunc):
    params = {"max_rank": None, "cutoff": 1e-3, "relative_cutoff": None,
              "size": {"sym": [1, [[0, 1]]]}}
    params.update(trunc)
    return _doc([_var(0, [4, 3])],
                 [_eqn("svd", [0], [_var(1, [4, 3]), _var(2, [3]), _var(3, [3, 3])],
                       full_matrices=False, eps=1e-10),
                  _eqn("truncation_indices", [2], [_var(4, [{"sym": [1, [[0, 1]]]}], "int64")],
                       **params)],
                 [4], sym_bounds={"0": 3})


@pytest.mark.parametrize("option,value", [("cutoff", float("nan")), ("cutoff", -1.0),
                                          ("relative_cutoff", float("nan")),
                                          ("relative_cutoff", 2.0)])
def test_truncation_options_are_checked_as_eager_svd_checks_them(tmp_path, option, value):
    with pytest.raises(ShapeError) as eager:
        tf.linalg.svd(T(np.random.default_rng(0).standard_normal((4, 3))), **{option: value})
    path = _write(tmp_path / "t.tfg", _svd_trunc_doc(**{option: value}))
    _refused(path, re.escape(str(eager.value)))
    tf.load(_write(tmp_path / "ok.tfg", _svd_trunc_doc()))  # the unmodified file loads


@pytest.mark.parametrize("prim,outs", [
    ("svd", [[4, 3], [3], [3, 3]]), ("svdvals", [[3]]), ("eigh", [[4], [4, 4]]),
    ("eigvalsh", [[4]]), ("eig", None)])
@pytest.mark.parametrize("eps", [float("nan"), -1.0, float("inf")])
def test_tie_tolerances_are_checked_as_eager_checks_them(tmp_path, prim, outs, eps):
    square = prim != "svd" and prim != "svdvals"
    shape = [4, 4] if square else [4, 3]
    fn = {"svd": tf.linalg.svd, "svdvals": tf.linalg.svdvals, "eigh": tf.linalg.eigh,
          "eigvalsh": tf.linalg.eigvalsh, "eig": tf.linalg.eig}[prim]
    with pytest.raises(ShapeError) as eager:
        fn(T(np.eye(shape[0])[:, : shape[1]]), eps=eps)
    params = {"full_matrices": False} if prim == "svd" else {}
    if outs is None:  # eig: complex eigenvalues and vectors
        out_vars = [_var(1, [4], "complex128"), _var(2, [4, 4], "complex128")]
    else:
        out_vars = [_var(1 + j, s) for j, s in enumerate(outs)]
    doc = _doc([_var(0, shape)], [_eqn(prim, [0], out_vars, eps=eps, **params)], [1])
    _refused(_write(tmp_path / "e.tfg", doc), re.escape(str(eager.value)))
    doc["eqns"][0]["params"]["eps"] = 1e-10
    tf.load(_write(tmp_path / "ok.tfg", doc))


# ------------------------------------------------------------------ linear time and memory
@pytest.mark.numpy_only  # the loader and the loop are backend-free
def test_long_graphs_load_and_run_in_time_and_memory_proportional_to_their_length(tmp_path):
    """What made long files superlinear: the cyclic garbage collector rescanning every object
    alive, again and again, while loading (it is paused: no collection runs), and the first
    call compiling the program into one Python function (~5 kB of memory per equation, 1.3 GB
    at 200,000: long programs run in a loop instead)."""
    n = 6_000
    path = _write(tmp_path / "chain.tfg", _chain_doc(n))
    collections = []

    def count(phase, info):
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        g = tf.load(path)
    finally:
        gc.callbacks.remove(count)
    assert 2 not in collections, f"{collections.count(2)} full collections while loading"
    x = np.linspace(0.0, 1.0, 3)
    tracemalloc.start()
    try:
        y = g(T(x))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    want = x
    for k in range(n):
        want = np.sin(want) if k % 2 == 0 else np.cos(want)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12)
    assert peak < 10 * 2**20, f"first call peaked at {peak / 2**20:.0f} MiB"


@pytest.mark.numpy_only
def test_a_long_graph_names_the_equation_that_fails(tmp_path):
    """Programs run as a loop (not generated code) still say which equation failed."""
    doc = _doc([_var(0, [2, 2])], [_eqn("sin", [k], [_var(k + 1, [2, 2])]) for k in range(2500)]
               + [_eqn("cholesky", [2500], [_var(2501, [2, 2])])], [2501])
    doc["eqns"][-1]["source"] = "model.py:7 (f)"
    g = tf.load(_write(tmp_path / "chol.tfg", doc))
    with pytest.raises(TenferroError, match=r"cholesky.*\[at model\.py:7 \(f\)\]"):
        g(T(-np.eye(2)))


def test_loading_leaves_the_garbage_collector_as_it_was(tmp_path):
    path = _write(tmp_path / "ok.tfg", _sin_doc())
    bad = _write(tmp_path / "bad.tfg", _chain_doc(10), raw_json=b"{")
    for enabled in (True, False):
        (gc.enable if enabled else gc.disable)()
        try:
            tf.load(path)
            with pytest.raises(GraphFormatError):
                tf.load(bad)
            assert gc.isenabled() is enabled
        finally:
            gc.enable()


def test_a_graph_runs_the_same_as_generated_code_and_as_a_loop(tmp_path, monkeypatch, rng):
    """Long programs run as a loop over their equations: run-time sizes (a truncated SVD),
    several results per equation, constants and custom-rule calls give what the generated
    code gives."""
    from tenferro._src.ir import compile as ir_compile

    a = T(rng.standard_normal((5, 3)) @ rng.standard_normal((3, 4)))
    c = T(rng.standard_normal(4))

    def f(x):
        u, s, vh = tf.linalg.svd(x, cutoff=1e-9)
        return tf.sum((u * s) @ vh * x) + tf.sum(x @ c), s, tf.sum(_clip(x))

    tf.make_graph(f, a).save(tmp_path / "f.tfg")
    want = tree_leaves(tf.load(tmp_path / "f.tfg")(a))
    monkeypatch.setattr(ir_compile, "STRAIGHT_LINE_MAX", 0)
    got = tree_leaves(tf.load(tmp_path / "f.tfg")(a))
    assert got[1].shape == (3,)  # the rank the cutoff keeps, found at run time
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
