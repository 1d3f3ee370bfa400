"""Fuzzing graph files: seeded random damage to real saved graphs must end in a clean load
(whose graph then runs or raises a tenferro error) or a ``GraphFormatError``, each quickly."""

import copy
import io
import json
import math
import random
import re
import time
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GraphFormatError, TenferroError
from tenferro.pytree import tree_unflatten

T = tf.tensor
SEED = 20240611
MUTANTS_PER_SOURCE = 400  # 5 sources: 2,000 files
TIME_PER_LOAD = 1.0
MAX_ELEMENTS = 10**5  # keeps running the loaded graphs cheap
_INTERNAL = re.compile(r"\b(AttributeError|TypeError|KeyError|IndexError|NameError|"
                       r"RecursionError|StopIteration|ZeroDivisionError|UnboundLocalError)\b")


def _chain(x):
    y = x
    for k in range(6):
        y = tf.sin(y) * 1.5 + 0.25 if k % 2 else tf.tanh(y) - y * 0.5
    return {"y": y, "total": tf.sum(y)}


def _svd(a):
    u, s, vh = tf.linalg.svd(a, relative_cutoff=1e-9)
    k = u.shape[-1]
    c = tf.reshape(tf.einsum("ik,kj->ikj", u, vh), (a.shape[0], k, a.shape[1]))
    return tf.sum((u * s) @ vh * a) + tf.sum(c**2), s


@tf.custom_vjp
def _clipped(x):
    return tf.clip(x, -1.0, 1.0)


_clipped.defvjp(lambda x: (_clipped(x), (x,)), lambda res, ct: (ct * (tf.abs(res[0]) < 1),))


@tf.custom_jvp
def _softplus(x):
    return tf.log1p(tf.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), tf.sigmoid(x) * t


def _custom(x):
    """Custom-rule calls: nested programs (version 2), rules that call their own function."""
    return tf.sum(_clipped(x * 2.0) + _softplus(x) * tf.asarray([1.0, 2.0, 3.0, 4.0]))


def _sources(rng):
    a = T(rng.standard_normal((4, 2)) @ rng.standard_normal((2, 5)))
    m = [T(rng.standard_normal(s)) for s in ((3, 4), (4, 5), (5, 2))]
    A, B = T(rng.standard_normal((4, 3))), T(rng.standard_normal((3,)))
    return {
        "chain": tf.make_graph(_chain, m[0]),
        "einsum": tf.make_graph(lambda x, y, z: tf.einsum("ij,jk,kl->il", x, y, z), *m),
        "svd": tf.make_graph(_svd, a),
        "consts": tf.make_graph(lambda x: (x @ A + B, tf.sum(x)), m[0]),
        "custom": tf.make_graph(tf.grad(_custom), m[0]),
    }


# ------------------------------------------------------------------------- mutations
_DTYPE_NAMES = ["float64", "float32", "complex128", "int64", "int8", "bool", "uint8", "float16",
                "object", "<U3", "V8", ""]


def _hostile(r: random.Random):
    return r.choice([
        None, True, False, 0, -1, 1, 2, 7, 2**31, 2**63, 10**13, -(10**9), 1.5, 0.0,
        float("nan"), float("inf"), -float("inf"), "", "x", "float64", [], {}, [1, 2], {"a": 1},
        {"tuple": []}, {"tuple": [1, 2]}, {"sym": [1, [[0, 1]]]}, {"sym": [1, [[999, 1]]]},
        {"dtype": "object"}, {"complex": [1, 2]}, {"kind": "leaf", "children": []},
        {"call": 0}, {"call": 1},  # a call used where it may not be (e.g. by its own function)
        _deep(r.choice([20, 200, 3000])),
    ])


def _deep(n):
    """A placeholder for ``[[[...0...]]]`` nested ``n`` deep (too deep for ``json.dumps``)."""
    return f"@deep{n}@"


def _dumps(doc) -> bytes:
    text = json.dumps(doc)
    return re.sub(r'"@deep(\d+)@"', lambda m: "[" * int(m[1]) + "0" + "]" * int(m[1]),
                  text).encode()


def _slots(doc):
    """Every (container, key) in the document."""
    out, stack = [], [doc]
    while stack:
        obj = stack.pop()
        items = obj.items() if isinstance(obj, dict) else enumerate(obj)
        for k, v in items:
            out.append((obj, k))
            if isinstance(v, (dict, list)):
                stack.append(v)
    return out


def _tweak(v, r: random.Random):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return r.choice([v + 1, v - 1, -v, v * 1000, 10**13, 2**63, 0, float(v), str(v),
                         float("nan"), True])
    if isinstance(v, float):
        return r.choice([-v, v * 1e300, float("nan"), float("inf"), 0, 1,
                         int(v) if math.isfinite(v) else 2])
    if isinstance(v, str):
        return r.choice(_DTYPE_NAMES + [v[:-1], v + "x", "sin", "full", "reshape", "dict"])
    return _hostile(r)


def _mutate_doc(doc, r: random.Random) -> str:
    slots = _slots(doc)
    obj, key = r.choice(slots)
    op = r.choices(range(9), weights=[2, 3, 5, 3, 2, 1, 1, 4, 4])[0]
    if op == 0:
        del obj[key]
        return f"delete {key!r}"
    if op == 1:
        obj[key] = _hostile(r)
        return f"replace {key!r} by {str(obj[key])[:40]}"
    if op == 2:  # nudge a number (sizes, axes, ids, parameters) or a name
        ints = [(o, k) for o, k in slots if type(o[k]) in (int, float, str)] or [(obj, key)]
        o, k = r.choice(ints)
        o[k] = _tweak(o[k], r)
        return f"tweak {k!r} to {str(o[k])[:40]}"
    if op == 3:  # swap two integers (value ids, sizes, axes...)
        ints = [(o, k) for o, k in slots if type(o[k]) is int] or [(obj, key)]
        (o1, k1), (o2, k2) = r.choice(ints), r.choice(ints)
        o1[k1], o2[k2] = o2[k2], o1[k1]
        return f"swap {k1!r} and {k2!r}"
    if op == 4:  # dtypes
        strs = [(o, k) for o, k in slots if isinstance(o[k], str) and o[k] in _DTYPE_NAMES]
        strs = strs or [(obj, key)]
        o, k = r.choice(strs)
        o[k] = r.choice(_DTYPE_NAMES)
        return f"dtype {o[k]!r}"
    if op == 5:  # duplicate a list element
        lists = [o[k] for o, k in slots if isinstance(o[k], list) and o[k]] or [[0]]
        lst = r.choice(lists)
        lst.append(copy.deepcopy(r.choice(lst)))
        return "duplicate an element"
    if op == 6:
        obj[key] = _deep(r.choice([50, 500, 100_000]))
        return "deep nesting"
    if op == 8:  # a small integer where one was: most likely to pass every check and run
        ints = [(o, k) for o, k in slots if type(o[k]) is int and k != "id"] or [(obj, key)]
        o, k = r.choice(ints)
        o[k] = r.randint(-1, 6)
        return f"small {k!r} = {o[k]}"
    try:
        return _rewire(doc, r)
    except (AttributeError, TypeError, KeyError, IndexError):  # an earlier step broke it
        return "nothing to rewire"


def _rewire(doc, r: random.Random) -> str:
    """An equation reads another value, or the graph returns another value."""
    ids = [v["id"] for v in doc.get("inputs", []) + doc.get("consts", [])
           if isinstance(v, dict) and "id" in v]
    for e in doc.get("eqns", []):
        ids += [v["id"] for v in e.get("outputs", []) if isinstance(v, dict) and "id" in v]
    uses = [(e["inputs"], j) for e in doc.get("eqns", []) for j in range(len(e.get("inputs", [])))]
    uses += [(doc["outputs"], j) for j in range(len(doc.get("outputs", [])))]
    if not uses or not ids:
        return "nothing to rewire"
    lst, j = r.choice(uses)
    lst[j] = r.choice(ids)
    return f"rewire to {lst[j]}"


def _npz(doc_bytes, arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **{"graph.json": np.frombuffer(doc_bytes, np.uint8)}, **arrays)
    return buf.getvalue()


def _mutant(data: bytes, doc: dict, arrays: dict, r: random.Random):
    kind = r.randrange(10)
    if kind == 0:  # flip bits anywhere in the zip
        b = bytearray(data)
        for _ in range(r.randint(1, 4)):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
        return bytes(b), "bit flips"
    if kind == 1:
        return data[: r.randrange(len(data))], "truncated file"
    if kind == 2:  # damage the JSON text itself
        text = _dumps(doc)
        if r.random() < 0.5:
            text = text[: r.randrange(len(text))]
        else:
            i = r.randrange(len(text))
            text = text[:i] + bytes([r.randrange(256)]) + text[i + 1:]
        return _npz(text, arrays), "damaged JSON text"
    if kind == 3 and arrays:  # constants of the wrong shape or dtype, or missing, or extra
        arrays = dict(arrays)
        name = r.choice(sorted(arrays))
        what = r.randrange(4)
        if what == 0:
            arrays[name] = arrays[name].astype(np.float32)
        elif what == 1:
            arrays[name] = arrays[name].ravel()[:-1]
        elif what == 2:
            del arrays[name]
        else:
            arrays[f"const_{len(arrays)}"] = np.ones(2)
        return _npz(_dumps(doc), arrays), f"constant {name} ({what})"
    doc = copy.deepcopy(doc)
    steps = [_mutate_doc(doc, r) for _ in range(r.choice([1, 1, 1, 2, 3]))]
    return _npz(_dumps(doc), arrays), "; ".join(steps)


# ---------------------------------------------------------------------------- running
def _example(aval, rng):
    shape, dt = tuple(aval.shape), aval.dtype
    if dt.kind == "b":
        return T(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        return T(rng.integers(0, 3, shape).astype(dt))
    x = rng.standard_normal(shape)
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return T(x.astype(dt))


def _run(g, rng):
    args = tree_unflatten(g.in_tree, [_example(a, rng) for a in g.in_avals])
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        g(*args)


@pytest.mark.numpy_only  # the loader is backend-free; running the mutants once is enough
def test_damaged_graph_files_load_cleanly_or_raise_graph_format_error(tmp_path):
    rng = np.random.default_rng(SEED)
    r = random.Random(SEED)
    outcomes = {"refused": 0, "ran": 0, "raised": 0}
    problems = []
    path = tmp_path / "mutant.tfg"
    start = time.perf_counter()
    sources = _sources(rng)
    for name, graph in sources.items():
        graph.save(tmp_path / f"{name}.tfg")
        data = (tmp_path / f"{name}.tfg").read_bytes()
        with np.load(tmp_path / f"{name}.tfg") as z:
            arrays = {k: z[k] for k in z.files}
        doc = json.loads(bytes(arrays.pop("graph.json")).decode())
        _run(tf.load(tmp_path / f"{name}.tfg"), rng)  # the source itself is fine
        for i in range(MUTANTS_PER_SOURCE):
            blob, how = _mutant(data, doc, arrays, r)
            path.write_bytes(blob)
            t0 = time.perf_counter()
            try:
                g = tf.load(path, max_elements=MAX_ELEMENTS)
            except GraphFormatError as e:
                outcomes["refused"] += 1
                g = None
                if _INTERNAL.search(str(e)):  # a refusal, but one that names no rule
                    problems.append(f"{name} #{i} ({how}): the refusal carries an internal "
                                    f"error: {e}")
            except BaseException as e:  # noqa: BLE001 - anything else is the bug we hunt
                problems.append(f"{name} #{i} ({how}): load raised {type(e).__name__}: {e}")
                continue
            took = time.perf_counter() - t0
            if took > TIME_PER_LOAD:
                problems.append(f"{name} #{i} ({how}): load took {took:.2f} s")
            if g is None:
                continue
            try:
                _run(g, rng)
                outcomes["ran"] += 1
            except TenferroError:
                outcomes["raised"] += 1
            except BaseException as e:  # noqa: BLE001
                problems.append(f"{name} #{i} ({how}): the loaded graph raised "
                                f"{type(e).__name__}: {e}")
    elapsed = time.perf_counter() - start
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:20])
    total = sum(outcomes.values())
    assert total == len(sources) * MUTANTS_PER_SOURCE
    # the fuzzer reaches both sides: most damage is refused, some still loads and runs
    assert outcomes["refused"] > total // 2 and outcomes["ran"] > total // 50, outcomes
    assert elapsed < 60, f"{elapsed:.1f} s"
