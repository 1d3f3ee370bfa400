"""Type promotion: the array API standard's table, written from its rules (not from NumPy),
checked on ``result_type``, on the arithmetic of tensors (functions and operators), and with
Python scalars (weak: they take the tensor's dtype)."""

import itertools

import numpy as np
import pytest

import tenferro as tf

SIGNED = ["int8", "int16", "int32", "int64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]
COMPLEX = ["complex64", "complex128"]
BITS = {n: int("".join(c for c in n if c.isdigit())) for n in SIGNED + UNSIGNED + FLOATS + COMPLEX}


def _standard(a: str, b: str):
    """The standard's promotion of two dtype names, or None where it defines none."""
    if a == b:
        return a
    if "bool" in (a, b):
        return None
    kinds = {a[:3], b[:3]}
    if kinds <= {"int"}:
        return max(a, b, key=BITS.get)
    if kinds <= {"uin"}:
        return max(a, b, key=BITS.get)
    if kinds == {"int", "uin"}:
        s, u = (a, b) if a.startswith("int") else (b, a)
        if u == "uint64":
            return None
        bits = max(BITS[s], 2 * BITS[u])  # the smallest signed type holding both ranges
        return f"int{bits}" if bits <= 64 else None
    if kinds <= {"flo", "com"}:
        bits = max(BITS[a] if a.startswith("float") else BITS[a] // 2,
                   BITS[b] if b.startswith("float") else BITS[b] // 2)
        cplx = "com" in kinds
        return f"complex{2 * bits}" if cplx else f"float{bits}"
    return None  # integers with floating point: not defined


ALL = ["bool"] + SIGNED + UNSIGNED + FLOATS + COMPLEX
PAIRS = [(a, b, _standard(a, b)) for a, b in itertools.product(ALL, ALL)
         if _standard(a, b) is not None]


def test_the_table_has_the_standards_size():
    # bool, 16 integer pairs + 4 uint64 excluded..., written out as a sanity check of _standard
    assert _standard("uint8", "int8") == "int16" and _standard("uint32", "int8") == "int64"
    assert _standard("uint16", "int32") == "int32" and _standard("float32", "complex128") == \
        "complex128"
    assert _standard("float64", "complex64") == "complex128"
    assert _standard("uint64", "int8") is None and _standard("int8", "float32") is None
    assert len(PAIRS) == 1 + 16 + 16 + 2 * 12 + 16


@pytest.mark.parametrize("a,b,want", PAIRS, ids=[f"{a}-{b}" for a, b, _ in PAIRS])
def test_result_type_and_arithmetic_follow_the_table(a, b, want):
    da, db, dw = np.dtype(a), np.dtype(b), np.dtype(want)
    assert tf.result_type(da, db) == dw
    x, y = tf.ones((2,), dtype=da), tf.ones((3, 1), dtype=db)
    assert tf.result_type(x, y) == dw
    assert tf.equal(x, y).dtype == tf.bool
    if want == "bool":
        assert (x & y).dtype == dw and tf.logical_xor(x, y).dtype == dw
        return
    for f in (tf.add, tf.subtract, tf.multiply, lambda u, v: u + v, lambda u, v: u * v):
        out = f(x, y)
        assert out.dtype == dw and out.shape == (3, 2)
    if want not in COMPLEX:
        assert tf.maximum(x, y).dtype == dw
    if want in FLOATS + COMPLEX:
        assert tf.divide(x, y).dtype == dw


@pytest.mark.parametrize("dtype", ALL)
def test_python_scalars_are_weak(dtype):
    d = np.dtype(dtype)
    x = tf.ones((2,), dtype=d)
    scalars = [True] if dtype == "bool" else [1] if d.kind in "iu" else [1, 1.0] \
        if d.kind == "f" else [1, 1.0, 1j]
    for s in scalars:
        assert tf.result_type(d, s) == d
        if dtype != "bool":
            assert (x + s).dtype == d and (s * x).dtype == d
    assert tf.equal(x, scalars[0]).dtype == tf.bool


def test_result_type_needs_a_dtype_and_is_order_free():
    with pytest.raises(tf.errors.DTypeError):
        tf.result_type(1, 2.0)
    for a, b, _ in PAIRS:
        assert tf.result_type(np.dtype(a), np.dtype(b), np.dtype(a)) == \
            tf.result_type(np.dtype(b), np.dtype(a))


@pytest.mark.parametrize("a", ALL)
def test_can_cast_follows_promotion(a):
    """from_ casts to every dtype it promotes to (with some other dtype), and never to a
    narrower one of its kind."""
    for b in ALL:
        if any(_standard(a, c) == b for c in ALL):
            assert tf.can_cast(np.dtype(a), np.dtype(b)), (a, b)
    if a in SIGNED[1:] + UNSIGNED[1:] + FLOATS[1:] + COMPLEX[1:]:
        group = next(g for g in (SIGNED, UNSIGNED, FLOATS, COMPLEX) if a in g)
        assert not tf.can_cast(np.dtype(a), np.dtype(group[group.index(a) - 1]))


def test_sum_prod_and_cumulative_sum_accumulate_in_the_default_integers():
    for d in SIGNED + ["bool"]:
        x = tf.ones((3,), dtype=np.dtype(d))
        assert tf.sum(x).dtype == tf.int64 and tf.prod(x).dtype == tf.int64
        assert tf.cumulative_sum(x).dtype == tf.int64
    for d in UNSIGNED:
        x = tf.ones((3,), dtype=np.dtype(d))
        assert tf.sum(x).dtype == tf.uint64 and tf.cumulative_sum(x).dtype == tf.uint64
    x = tf.ones((3,), dtype=tf.float32)
    assert tf.sum(x).dtype == tf.float32 and tf.sum(x, dtype=tf.float64).dtype == tf.float64
    assert tf.prod(tf.ones((2,), dtype=tf.int8), dtype=tf.int8).dtype == tf.int8
