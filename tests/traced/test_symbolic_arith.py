"""Size arithmetic of ``chainrules.symbolic``: every expression evaluates like the same
arithmetic on ints, ranges and decisions are sound for every value the run can produce,
slice bounds follow Python's rules, and sizes round-trip through JSON."""

import itertools
import json
import operator

import numpy as np
import pytest

from chainrules.symbolic import (
    Sym,
    decide,
    decode_size,
    encode_size,
    floordiv,
    same_shape,
    same_size,
    size_range,
    sym_max,
    sym_min,
)
from tenferro._src.ops.indexing import slice_indices
from tenferro.errors import ShapeError

K_BOUND, J_BOUND = 6, 4


def _int_ops():
    return [operator.add, operator.sub, operator.mul, lambda a, b: a // 3 + b,
            lambda a, b: a // (b if isinstance(b, Sym) else max(b, 1)) if _pos(b) else a,
            lambda a, b: sym_min(a, b), lambda a, b: sym_max(a, b), lambda a, b: (a + 1) // 2 - b]


def _pos(b):
    return size_range(b)[0] >= 1


def _random_exprs(rng, k, j, n=150):
    """Random expressions of depth <= 2 as (symbolic value, the same function on ints)."""
    leaves = [(k, lambda a, b: a), (j, lambda a, b: b), (1, lambda a, b: 1),
              (2, lambda a, b: 2), (k - 1, lambda a, b: a - 1)]
    ops = _int_ops()

    def combine(pool, count):
        out = []
        while len(out) < count:
            (x, fx), (y, fy) = pool[rng.integers(len(pool))], pool[rng.integers(len(pool))]
            i = int(rng.integers(len(ops)))
            if i == 4 and not _pos(y):
                continue
            try:
                v = ops[i](x, y)
            except ShapeError:
                continue
            out.append((v, lambda a, b, op=ops[i], fx=fx, fy=fy: op(fx(a, b), fy(a, b))))
        return out

    level1 = combine(leaves, n // 3)
    return leaves + level1 + combine(leaves + level1, n - n // 3)


def _all_values():
    return itertools.product(range(1, K_BOUND + 1), range(1, J_BOUND + 1))


def test_expressions_evaluate_like_ints_and_stay_in_their_range():
    rng = np.random.default_rng(0)
    k, j = Sym.new(K_BOUND), Sym.new(J_BOUND)
    checked = 0
    for v, f in _random_exprs(rng, k, j):
        lo, hi = size_range(v)
        for a, b in _all_values():
            env = {k.symbol: a, j.symbol: b}
            got = v.evaluate(env) if isinstance(v, Sym) else v
            assert got == f(a, b), (v, a, b)
            assert lo <= got <= hi, (v, (lo, hi), got)
            checked += 1
    assert checked > 1000


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_decisions_are_sound(op):
    rng = np.random.default_rng(1)
    k, j = Sym.new(K_BOUND), Sym.new(J_BOUND)
    py = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
          ">": operator.gt, ">=": operator.ge}[op]
    exprs = _random_exprs(rng, k, j, 90)
    decided = 0
    for (x, fx), (y, fy) in zip(exprs, exprs[7:] + exprs[:7]):
        r = decide(x, op, y)
        truth = {py(fx(a, b), fy(a, b)) for a, b in _all_values()}
        if r is not None:
            decided += 1
            assert truth == {r}, (x, op, y)
        else:  # small bounds: undecided only when the run really can go either way
            assert truth == {True, False}, (x, op, y)
    assert decided > 10


def test_decisions_shapes_need():
    k = Sym.new(8)
    assert decide(k + 1, "!=", k) and decide(2 * k, "!=", 1) and decide(k, ">=", 1)
    assert decide(sym_min(2, k), "<=", k) and decide(sym_max(k - 2, 0), "<=", k)
    assert decide(k, "==", 9) is False and decide(k, "==", 8) is None
    assert decide(k - 1, ">=", 0) and decide(k - 1, "==", 0) is None
    assert same_size(sym_min(1, k // 2) + sym_max(0, k // 2 - 1), k // 2)  # canonical forms
    assert same_size((k - 1) // 2 + 1, (k + 1) // 2)
    assert same_size((3 * k + 3) // (k + 1), 3) and same_size(k * k // k, k)
    assert same_size(k % 2 + 2 * (k // 2), k)


def test_user_comparisons_decide_or_raise_library_comparisons_are_structural():
    k, j = Sym.new(8), Sym.new(8)
    assert (k, 3) == (k, 3) and k + 1 != k and not (k == 9) and k != 0
    with pytest.raises(ShapeError, match="known only at run time"):
        k == 4  # noqa: B015
    with pytest.raises(ShapeError, match="known only at run time"):
        k != j  # noqa: B015
    with pytest.raises(ShapeError, match="known only at run time"):
        bool(k - 1)
    with pytest.raises(ShapeError, match="max_rank"):
        int(k)
    with pytest.raises(ShapeError, match="floor division"):
        k / 2  # noqa: B018
    with pytest.raises(ShapeError, match="float"):
        float(k)
    assert np.int64(2) + k == k + 2 and k * np.int64(3) == 3 * k
    assert not same_size(k, 4) and not same_shape((k, 3), (3, k)) and same_shape((k,), (k,))
    assert {(k, 3): 1}[(k * 1, 3)] == 1  # structural hashing: shapes work as dict keys


def test_slice_indices_follow_python():
    bounds = [None, -7, -3, -1, 0, 1, 2, 5, 9]
    for d in range(0, 6):
        for start, stop, step in itertools.product(bounds, bounds, [None, 1, 2, 3, -1, -2, -3]):
            sl = slice(start, stop, step)
            assert slice_indices(sl, d) == sl.indices(d), (sl, d)


@pytest.mark.parametrize("sl", [slice(1, None), slice(None, -1), slice(-2, None),
                                slice(None, None, 2), slice(None, None, -1), slice(1, 3)])
def test_symbolic_slice_indices_evaluate_like_python(sl):
    k = Sym.new(7)
    s, e, st = slice_indices(sl, k)
    for v in range(1, 8):
        env = {k.symbol: v}
        got = tuple(x.evaluate(env) if isinstance(x, Sym) else x for x in (s, e, st))
        assert got == sl.indices(v)


def test_sizes_round_trip_through_json():
    k, j = Sym.new(8), Sym.new(5)
    sizes = [3, k, 2 * k * j, k - 1, (k + 1) // 2, sym_min(2, k), sym_max(k - 2, 0) * j + 1,
             floordiv(6, k), k % 3]
    table = {k.symbol: k, j.symbol: j}
    for d in sizes:
        text = json.dumps(encode_size(d))
        assert same_size(decode_size(json.loads(text), table.__getitem__), d), d
    assert encode_size(2 * k) == {"sym": [2, [[k.symbol, 1]]]}  # graph format version 1


def test_division_by_a_size_that_may_be_zero_is_refused():
    k = Sym.new(8)
    with pytest.raises(ShapeError, match="may be 0"):
        floordiv(3 * k, k - 1)
