"""Special-case values of the elementwise functions, as the array API standard states them
(IEEE 754 zeros with their signs, infinities, NaN), real and complex, checked exactly: a
signed zero must have the stated sign. Includes the cases NumPy itself gets wrong and tenferro
corrects (``floor_divide`` with an infinite operand, complex ``expm1``)."""

import math

import numpy as np
import pytest

import tenferro as tf

# The special cases are IEEE edge values (log(0), arccos(2), inf - inf): NumPy warns about
# each ("divide by zero", "invalid value") while returning the value the standard states.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

inf, nan = math.inf, math.nan


def same(got, want) -> bool:
    """Equal as IEEE values: NaN matches NaN, and a zero's sign must match."""
    if isinstance(want, complex):
        return same(got.real, want.real) and same(got.imag, want.imag)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


UNARY = [
    ("abs", -0.0, 0.0), ("abs", -inf, inf), ("abs", nan, nan),
    ("acos", 1.0, 0.0), ("acos", 2.0, nan), ("acosh", 1.0, 0.0), ("acosh", inf, inf),
    ("asin", -0.0, -0.0), ("asinh", -inf, -inf), ("atan", -inf, -math.pi / 2),
    ("atanh", 1.0, inf), ("atanh", -1.0, -inf), ("atanh", -0.0, -0.0),
    ("ceil", -0.5, -0.0), ("cos", inf, nan), ("cosh", -inf, inf), ("exp", -inf, 0.0),
    ("exp", inf, inf), ("expm1", -0.0, -0.0), ("expm1", -inf, -1.0), ("floor", 0.5, 0.0),
    ("floor", -0.0, -0.0), ("isfinite", inf, False), ("isinf", -inf, True), ("isinf", nan, False),
    ("isnan", nan, True), ("log", 0.0, -inf), ("log", -1.0, nan), ("log", 1.0, 0.0),
    ("log1p", -1.0, -inf), ("log1p", -0.0, -0.0), ("log2", 0.0, -inf), ("log10", inf, inf),
    ("logical_not", 0.0, True), ("negative", 0.0, -0.0), ("positive", -0.0, -0.0),
    ("round", 2.5, 2.0), ("round", -0.4, -0.0), ("round", 0.5, 0.0), ("sign", -0.0, 0.0),
    ("sign", nan, nan), ("sign", -inf, -1.0), ("signbit", -0.0, True), ("signbit", 0.0, False),
    ("signbit", -nan, True), ("signbit", -inf, True), ("sin", -0.0, -0.0), ("sin", inf, nan),
    ("sinh", -0.0, -0.0), ("sinh", -inf, -inf), ("sqrt", -0.0, -0.0), ("sqrt", -1.0, nan),
    ("sqrt", inf, inf), ("square", -inf, inf), ("tan", -0.0, -0.0), ("tanh", -inf, -1.0),
    ("tanh", -0.0, -0.0), ("trunc", -0.5, -0.0), ("trunc", inf, inf),
    # complex (z = a + bj)
    ("expm1", complex(0.0, 0.0), complex(0.0, 0.0)),
    ("expm1", complex(-0.0, 0.0), complex(0.0, 0.0)),
    ("expm1", complex(inf, 0.0), complex(inf, 0.0)),
    ("expm1", complex(-inf, inf), complex(-1.0, 0.0)),
    ("expm1", complex(inf, nan), complex(inf, nan)),
    ("expm1", complex(nan, 0.0), complex(nan, 0.0)),
    ("expm1", complex(-inf, nan), complex(-1.0, 0.0)),
    ("exp", complex(0.0, 0.0), complex(1.0, 0.0)), ("exp", complex(-0.0, 0.0), complex(1.0, 0.0)),
    ("exp", complex(inf, 0.0), complex(inf, 0.0)), ("exp", complex(nan, 0.0), complex(nan, 0.0)),
    ("log", complex(-0.0, 0.0), complex(-inf, math.pi)),
    ("log", complex(0.0, 0.0), complex(-inf, 0.0)), ("log", complex(1.0, 0.0), complex(0.0, 0.0)),
    ("sqrt", complex(0.0, 0.0), complex(0.0, 0.0)), ("sqrt", complex(-4.0, 0.0), complex(0, 2.0)),
    ("sqrt", complex(1.0, inf), complex(inf, inf)), ("sqrt", complex(-inf, 1.0), complex(0, inf)),
    ("sign", complex(0.0, 0.0), complex(0.0, 0.0)), ("abs", complex(inf, nan), inf),
    ("tanh", complex(inf, 2.0), complex(1.0, 0.0)),  # C99 and NumPy: 1 - 0j (sin(4) < 0)
    ("tanh", complex(-inf, -2.0), complex(-1.0, -0.0)), ("tanh", complex(inf, 1.0), 1 + 0j),
    ("isinf", complex(1.0, -inf), True), ("isnan", complex(nan, 1.0), True),
    ("isfinite", complex(1.0, nan), False),
]


@pytest.mark.parametrize("name,x,want", UNARY, ids=[f"{n}({x})" for n, x, _ in UNARY])
def test_unary_special_cases(name, x, want):
    dt = tf.complex128 if isinstance(x, complex) else tf.float64
    got = getattr(tf, name)(tf.asarray([x], dtype=dt)).tolist()[0]
    if isinstance(want, bool):
        assert got is want
    else:
        assert same(got, want), (got, want)


BINARY = [
    ("add", inf, -inf, nan), ("add", -0.0, -0.0, -0.0), ("add", -0.0, 0.0, 0.0),
    ("atan2", 0.0, -0.0, math.pi), ("atan2", -0.0, -0.0, -math.pi), ("atan2", -0.0, 0.0, -0.0),
    ("atan2", inf, -inf, 3 * math.pi / 4), ("atan2", 1.0, inf, 0.0), ("copysign", 2.0, -0.0, -2.0),
    ("copysign", -inf, 0.0, inf), ("copysign", nan, -1.0, -nan), ("divide", 1.0, -0.0, -inf),
    ("divide", 0.0, 0.0, nan), ("divide", -1.0, inf, -0.0), ("equal", nan, nan, False),
    ("floor_divide", inf, 2.0, inf), ("floor_divide", inf, -2.0, -inf),
    ("floor_divide", -inf, 2.0, -inf), ("floor_divide", 3.0, -inf, -0.0),
    ("floor_divide", -3.0, inf, -0.0), ("floor_divide", 3.0, inf, 0.0),
    ("floor_divide", 7.0, 2.0, 3.0), ("greater", nan, 1.0, False), ("hypot", inf, nan, inf),
    ("hypot", nan, 1.0, nan), ("logaddexp", -inf, -inf, -inf), ("logaddexp", inf, 1.0, inf),
    ("maximum", nan, 1.0, nan), ("minimum", 1.0, nan, nan), ("multiply", inf, 0.0, nan),
    ("multiply", -0.0, 2.0, -0.0), ("nextafter", 0.0, 1.0, 5e-324), ("nextafter", 1.0, 1.0, 1.0),
    ("nextafter", nan, 1.0, nan), ("nextafter", 0.0, -1.0, -5e-324), ("not_equal", nan, nan, True),
    ("pow", nan, 0.0, 1.0), ("pow", 1.0, nan, 1.0), ("pow", -0.0, -1.0, -inf),
    ("pow", 0.0, -2.0, inf), ("pow", -inf, 3.0, -inf), ("pow", -1.0, 0.5, nan),
    ("remainder", 5.0, -3.0, -1.0), ("remainder", -0.0, 2.0, 0.0), ("remainder", inf, 2.0, nan),
    ("remainder", 3.0, inf, 3.0), ("remainder", -3.0, inf, inf), ("subtract", inf, inf, nan),
]


@pytest.mark.parametrize("name,x1,x2,want", BINARY,
                         ids=[f"{n}({a},{b})" for n, a, b, _ in BINARY])
def test_binary_special_cases(name, x1, x2, want):
    a, b = tf.asarray([x1]), tf.asarray([x2])
    got = getattr(tf, name)(a, b).tolist()[0]
    if isinstance(want, bool):
        assert got is want
    else:
        assert same(got, want), (got, want)
        if name in ("floor_divide", "add", "subtract", "multiply", "divide", "remainder", "pow"):
            op = {"floor_divide": "__floordiv__", "add": "__add__", "subtract": "__sub__",
                  "multiply": "__mul__", "divide": "__truediv__", "remainder": "__mod__",
                  "pow": "__pow__"}[name]
            assert same(getattr(a, op)(b).tolist()[0], want)  # the operator agrees


def test_products_keep_the_sign_of_zero():
    """An outer product is a_i * b_j exactly: -0.0 where one factor is -1 and the other 0
    (a matrix product would give +0.0)."""
    got = tf.outer(tf.asarray([0.0, 1.0]), tf.asarray([-1.0, 2.0])).tolist()
    assert same(got[0][0], -0.0) and same(got[0][1], 0.0)
    assert same(tf.linalg.outer(tf.asarray([-0.0]), tf.asarray([3.0])).tolist()[0][0], -0.0)
    assert tf.outer(tf.asarray([True, False]), tf.asarray([True])).dtype == tf.bool


def test_in_place_floor_division_by_infinity():
    x = tf.asarray([inf, 3.0])
    x //= tf.asarray([2.0, -inf])
    assert same(x.tolist()[0], inf) and same(x.tolist()[1], -0.0)


def test_float32_special_cases_keep_the_dtype():
    x = tf.asarray([-0.0, inf, nan], dtype=tf.float32)
    assert tf.sqrt(x).dtype == tf.float32 and same(tf.sqrt(x).tolist()[0], -0.0)
    assert tf.nextafter(tf.zeros((1,), dtype=tf.float32), tf.ones((1,), dtype=tf.float32)
                        ).tolist()[0] == float(np.nextafter(np.float32(0), np.float32(1)))
