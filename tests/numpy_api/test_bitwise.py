"""Bitwise operations with NumPy's semantics: ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` (and
the array API's ``bitwise_*`` functions) are bitwise on integers and logical on bools; they
used to be logical on integers (``int32 [3, 5] & [1, 4]`` gave ``[True, True]``) or missing.
``int ** int`` keeps the integer dtype and refuses negative exponents, as NumPy."""

import operator

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError

A = np.array([3, 5, -8, 0, 127], dtype=np.int32)
B = np.array([1, 4, 3, 7, 2], dtype=np.int32)

BINARY = [
    ("bitwise_and", operator.and_, np.bitwise_and),
    ("bitwise_or", operator.or_, np.bitwise_or),
    ("bitwise_xor", operator.xor, np.bitwise_xor),
    ("bitwise_left_shift", operator.lshift, np.left_shift),
    ("bitwise_right_shift", operator.rshift, np.right_shift),
]


@pytest.mark.parametrize("name,op,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_integer_operators_and_functions_match_numpy(name, op, ref, dtype):
    a, b = np.abs(A).astype(dtype), B.astype(dtype)
    want = ref(a, b)
    for got in (op(tf.tensor(a), tf.tensor(b)), getattr(tf, name)(tf.tensor(a), tf.tensor(b)),
                tf.jit(op)(tf.tensor(a), tf.tensor(b))):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want)


def test_the_example_of_the_report():
    a = tf.tensor(np.array([3, 5], np.int32))
    b = tf.tensor(np.array([1, 4], np.int32))
    np.testing.assert_array_equal((a & b).numpy(), [1, 4])
    np.testing.assert_array_equal((a | b).numpy(), [3, 5])
    np.testing.assert_array_equal((~a).numpy(), [-4, -6])
    assert (a & b).dtype == np.int32


def test_reflected_and_in_place_forms():
    a = tf.tensor(A)
    np.testing.assert_array_equal((6 & a).numpy(), 6 & A)
    np.testing.assert_array_equal((6 | a).numpy(), 6 | A)
    np.testing.assert_array_equal((6 ^ a).numpy(), 6 ^ A)
    np.testing.assert_array_equal((1 << tf.tensor(B)).numpy(), 1 << B)
    np.testing.assert_array_equal((64 >> tf.tensor(B)).numpy(), 64 >> B)
    x, y = tf.tensor(A), A.copy()
    for op in ("&=", "|=", "^=", "<<=", ">>="):
        loc = {"x": x, "y": y, "B": B, "tf": tf}
        exec(f"x {op} tf.tensor(B)\ny {op} B", loc)
        x, y = loc["x"], loc["y"]
        assert x.dtype == np.int32
        np.testing.assert_array_equal(x.numpy(), y)


def test_invert_is_twos_complement_on_integers_and_not_on_bools():
    for name in ("bitwise_invert", "bitwise_not", "invert"):
        np.testing.assert_array_equal(getattr(tf, name)(tf.tensor(A)).numpy(), ~A)
    b = np.array([True, False])
    np.testing.assert_array_equal((~tf.tensor(b)).numpy(), ~b)
    np.testing.assert_array_equal((~tf.tensor(np.uint8(5))).numpy(), np.uint8(250))


def test_bools_are_logical_and_shift_as_int8():
    p, q = np.array([True, True, False]), np.array([True, False, False])
    for op in (operator.and_, operator.or_, operator.xor):
        got = op(tf.tensor(p), tf.tensor(q))
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), op(p, q))
    got = tf.tensor(p) << tf.tensor(q)
    assert got.dtype == (p << q).dtype
    np.testing.assert_array_equal(got.numpy(), p << q)
    got = tf.tensor(p) & tf.tensor(np.array([1, 2, 3]))  # bool promotes to int, as NumPy
    np.testing.assert_array_equal(got.numpy(), p & np.array([1, 2, 3]))


def test_shifts_by_the_bit_width_follow_numpy():
    a = np.array([1, -8, 5], np.int32)
    s = np.array([40, 1, 32], np.int32)
    np.testing.assert_array_equal((tf.tensor(a) << tf.tensor(s)).numpy(), a << s)
    np.testing.assert_array_equal((tf.tensor(a) >> tf.tensor(s)).numpy(), a >> s)


@pytest.mark.parametrize("expr", ["x & 1", "x | y", "x ^ y", "~x", "x << 1", "y >> x",
                                  "tf.bitwise_and(x, y)"])
def test_floats_raise_a_named_error(expr):
    names = {"tf": tf, "x": tf.tensor([1.5, 2.0]), "y": tf.tensor([1.0, 0.0])}
    with pytest.raises(DTypeError, match=r"bitwise_\w+: operands must be integers"):
        eval(expr, names)


def test_bitwise_under_vmap_and_grad_of_a_program_using_them():
    out = tf.vmap(lambda r: (r & 3) ^ (r >> 1))(tf.tensor(np.abs(A).reshape(1, -1)))
    np.testing.assert_array_equal(out.numpy()[0], (np.abs(A) & 3) ^ (np.abs(A) >> 1))

    def f(x):
        k = tf.astype(x > 0, tf.int64) | (tf.astype(x > 1, tf.int64) << 1)
        return tf.sum(x * tf.astype(k, tf.float64))

    x = tf.tensor([-1.0, 0.5, 2.0])
    np.testing.assert_array_equal(tf.grad(f)(x).numpy(), [0.0, 1.0, 3.0])
    np.testing.assert_array_equal(tf.jit(tf.grad(f))(x).numpy(), [0.0, 1.0, 3.0])


# ------------------------------------------------------------------- integer powers
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_int_to_an_int_power_keeps_the_integer_dtype(dtype):
    a, b = np.array([3, 5, 2], dtype), np.array([2, 3, 0], dtype)
    for got in (tf.tensor(a) ** tf.tensor(b), tf.jit(operator.pow)(tf.tensor(a), tf.tensor(b)),
                tf.power(tf.tensor(a), tf.tensor(b))):
        assert got.dtype == (a ** b).dtype
        np.testing.assert_array_equal(got.numpy(), a ** b)
    got = tf.tensor(a) ** 3
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got.numpy(), a ** 3)
    assert (tf.tensor(a) ** 2.0).dtype == np.float64  # a float exponent gives floats
    assert (tf.tensor(np.array([True])) ** 2).dtype == np.int8  # as NumPy


def test_negative_integer_exponents_of_integers_raise_as_numpy():
    a = tf.tensor(np.array([2, 3]))
    with pytest.raises(DTypeError, match="negative integer powers"):
        a ** -1
    with pytest.raises(DTypeError, match="negative integer powers"):
        a ** tf.tensor([1, -2])
    with pytest.raises(DTypeError, match=r"negative integer powers.*\[at "):
        tf.jit(operator.pow)(a, tf.tensor([1, -2]))
    np.testing.assert_allclose((a ** -1.0).numpy(), [0.5, 1 / 3])  # a float exponent is fine
    np.testing.assert_allclose((tf.astype(a, tf.float64) ** -1).numpy(), [0.5, 1 / 3])
