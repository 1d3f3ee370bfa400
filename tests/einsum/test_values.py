"""einsum values against numpy.einsum: every form, random expressions, dtypes, the
interleaved form without a label limit, and every optimize option."""

import numpy as np
import opt_einsum as oe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tenferro as tf
from tests.einsum.problems import einsum_problems, random_arrays


def _check(eq, *shapes, dtype=np.float64, seed=0, **kw):
    arrays = random_arrays(shapes, dtype, seed)
    got = tf.einsum(eq, *[tf.tensor(a) for a in arrays], **kw)
    ref = np.einsum(eq, *arrays)
    assert got.shape == ref.shape, (eq, got.shape, ref.shape)
    assert got.dtype == ref.dtype, (eq, got.dtype, ref.dtype)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)
    return got


CASES = [
    ("ij,jk->ik", (3, 4), (4, 5)),
    ("ij,jk", (3, 4), (4, 5)),
    ("ij,jk->ki", (3, 4), (4, 5)),
    ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("ii->i", (4, 4)),
    ("ii", (4, 4)),
    ("iii->i", (3, 3, 3)),
    ("iij->j", (3, 3, 4)),
    ("ijij->ij", (2, 3, 2, 3)),
    ("jii,ik->jk", (2, 3, 3), (3, 4)),
    ("i,j->ij", (3,), (4,)),
    ("ij,ij->ij", (3, 4), (3, 4)),
    ("ij,ji->ij", (3, 4), (4, 3)),
    ("ij,ij->", (3, 4), (3, 4)),
    ("ij->", (3, 4)),
    ("ijk->kji", (2, 3, 4)),
    ("ij,jk->i", (3, 4), (4, 5)),
    ("ij,ik,il->jkl", (3, 2), (3, 4), (3, 5)),
    ("ij,ik,il->ijkl", (3, 2), (3, 4), (3, 5)),
    ("ai,bi,ci,di->abcd", (2, 3), (2, 3), (2, 3), (2, 3)),
    ("bij,bjk,bkl->bil", (2, 3, 4), (2, 4, 5), (2, 5, 3)),
    ("abc,cd,bde->ae", (2, 3, 4), (4, 5), (3, 5, 2)),
    ("ab,bc,cd,de,ef->af", (2, 3), (3, 4), (4, 5), (5, 6), (6, 2)),
    ("...ij,...jk->...ik", (2, 3, 4), (4, 5)),
    ("...ij,...jk", (2, 1, 3, 4), (5, 4, 2)),
    ("i...,i...->...", (3, 2, 2), (3, 1, 2)),
    ("...,...->...", (2, 3), (3,)),
    ("...i->...", (2, 3, 4)),
    ("i...i->...", (3, 2, 3)),
    ("ij,ij->ij", (1, 3), (2, 3)),
    ("ij,jk->ik", (3, 1), (4, 5)),
    ("ij,j->i", (1, 1), (3,)),
    ("Ba,aC", (2, 3), (3, 4)),
    ("", ()),
    ("->", ()),
    (",->", (), ()),
    ("i,->i", (3,), ()),
    (",ij->ji", (), (2, 3)),
    ("ij,jk->ik", (0, 3), (3, 2)),
    ("ij,jk->ik", (2, 0), (0, 3)),
    ("i j , j k -> i k", (2, 3), (3, 4)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] or "empty" for c in CASES])
def test_fixed_cases_match_numpy(case):
    eq, *shapes = case
    _check(eq, *shapes)
    _check(eq, *shapes, dtype=np.complex128, seed=1)


@settings(max_examples=60, deadline=None)
@given(problem=einsum_problems(), seed=st.integers(0, 2**16),
       dtype=st.sampled_from(["f64", "c128", "i64", "f32"]))
def test_random_expressions_match_numpy(problem, seed, dtype):
    eq, shapes = problem
    dt = {"f64": np.float64, "c128": np.complex128, "i64": np.int64, "f32": np.float32}[dtype]
    arrays = random_arrays(shapes, dt, seed)
    got = tf.einsum(eq, *[tf.tensor(a) for a in arrays])
    ref = np.einsum(eq, *arrays)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    tol = 1e-4 if dt == np.float32 else 1e-11
    np.testing.assert_allclose(got.numpy(), ref, rtol=tol, atol=tol)


@settings(max_examples=25, deadline=None)
@given(problem=einsum_problems(), seed=st.integers(0, 2**16))
def test_random_expressions_in_interleaved_form(problem, seed):
    """The same expression written with integer sublists (Ellipsis for '...')."""
    eq, shapes = problem
    arrays = random_arrays(shapes, np.float64, seed)
    lhs, _, rhs = eq.partition("->")

    def sub(term):
        term = term.replace("...", ".")
        return [Ellipsis if c == "." else ord(c) for c in term]

    args = []
    for a, t in zip(arrays, lhs.split(","), strict=True):
        args += [tf.tensor(a), sub(t)]
    if "->" in eq:
        args.append(sub(rhs))
    got = tf.einsum(*args)
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *arrays), rtol=1e-11, atol=1e-11)


def test_promotion_like_numpy():
    a32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    b64 = np.ones((3, 2))
    c64 = (np.ones((3, 2)) * (1 + 1j)).astype(np.complex64)
    ints = np.arange(6).reshape(3, 2)
    assert tf.einsum("ij,jk", tf.tensor(a32), tf.tensor(b64)).dtype == np.float64
    assert tf.einsum("ij,jk", tf.tensor(a32), tf.tensor(c64)).dtype == np.complex64
    r = tf.einsum("ij,jk", tf.tensor(ints), tf.tensor(ints.T.copy()))
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r.numpy(), np.einsum("ij,jk", ints, ints.T))
    # a Python float is float64, as in numpy.einsum
    r = tf.einsum(",i->i", 2.0, tf.tensor(np.ones(3, np.float32)))
    assert r.dtype == np.einsum(",i->i", 2.0, np.ones(3, np.float32)).dtype


def test_bool_operands_count_as_int64():
    a = np.array([[True, False], [True, True]])
    r = tf.einsum("ij,jk->ik", tf.tensor(a), tf.tensor(a))
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r.numpy(), a.astype(np.int64) @ a.astype(np.int64))


def test_numpy_arrays_lists_and_scalars_as_operands():
    a = np.arange(6.0).reshape(2, 3)
    r = tf.einsum("ij,j->i", tf.tensor(a), [1.0, 2.0, 3.0])
    np.testing.assert_allclose(r.numpy(), a @ [1, 2, 3])
    r = tf.einsum("ij,->ij", a, 3.0)
    assert isinstance(r, tf.Tensor)
    np.testing.assert_allclose(r.numpy(), 3 * a)


# ------------------------------------------------------------------ interleaved form


def test_interleaved_basic_and_implicit():
    a, b = np.random.default_rng(0).standard_normal((2, 3, 3))
    ta, tb = tf.tensor(a), tf.tensor(b)
    np.testing.assert_allclose(tf.einsum(ta, [0, 1], tb, [1, 2], [0, 2]).numpy(), a @ b)
    np.testing.assert_allclose(tf.einsum(ta, [0, 1], tb, [1, 2]).numpy(), a @ b)
    np.testing.assert_allclose(tf.einsum(ta, [1, 0], tb, [1, 2], [0, 2]).numpy(), a.T @ b)
    np.testing.assert_allclose(tf.einsum(ta, [0, 0]).numpy(), np.trace(a))


def test_interleaved_with_ellipsis_matches_numpy():
    a = np.random.default_rng(1).standard_normal((2, 4, 3, 5))
    b = np.random.default_rng(2).standard_normal((5, 6))
    got = tf.einsum(tf.tensor(a), [Ellipsis, 0, 1], tf.tensor(b), [1, 2], [Ellipsis, 2, 0])
    ref = np.einsum(a, [Ellipsis, 0, 1], b, [1, 2], [Ellipsis, 2, 0])
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_interleaved_any_hashable_labels():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2, 3, 4))  # (left, phys, right)
    O = rng.standard_normal((3, 3))
    got = tf.einsum(
        tf.tensor(A), ["left", ("phys", 0), "right"],
        tf.tensor(O), [("phys", 1), ("phys", 0)],
        tf.tensor(A), ["left", ("phys", 1), "right"],
        [],
    )
    np.testing.assert_allclose(got.numpy(), np.einsum("lpr,qp,lqr->", A, O, A), rtol=1e-12)
    # labels of mixed, unorderable types: implicit output keeps first-appearance order
    got = tf.einsum(tf.tensor(A), ["x", 1, None], tf.tensor(O), [1, 2.5])
    np.testing.assert_allclose(got.numpy(), np.einsum("abc,bd->acd", A, O), rtol=1e-12)


def test_interleaved_more_than_100_distinct_labels():
    """A ring of 120 matrices: 120 labels, far beyond einsum's 52 letters."""
    n = 120
    rng = np.random.default_rng(4)
    mats = [rng.standard_normal((2, 2)) / 1.5 for _ in range(n)]
    args = []
    for k, m in enumerate(mats):
        args += [tf.tensor(m), [k, (k + 1) % n]]
    ring = tf.einsum(*args, [])
    chain = tf.einsum(*args[:-2], tf.tensor(mats[-1]), [n - 1, n], [0, n])
    ref = np.linalg.multi_dot(mats)
    np.testing.assert_allclose(chain.numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(ring.numpy(), np.trace(ref), rtol=1e-10)
    plan = tf.contract_path(*args, [])
    assert len(plan.path) == n - 1 and plan.flops > 0


def test_interleaved_mps_norm_with_tuple_labels():
    """<psi|psi> of a 30-site MPS (91 labels) against a site-by-site NumPy contraction."""
    L, d, chi = 30, 2, 3
    rng = np.random.default_rng(5)
    bonds = [1] + [chi] * (L - 1) + [1]
    As = [rng.standard_normal((bonds[k], d, bonds[k + 1])) / 2 for k in range(L)]
    args = []
    for k, A in enumerate(As):
        args += [tf.tensor(A), [("ket", k), ("s", k), ("ket", k + 1)]]
        args += [tf.tensor(A.conj()), [("bra", k), ("s", k), ("bra", k + 1)]]
    got = tf.einsum(*args, [])
    env = np.ones((1, 1))
    for A in As:
        env = np.einsum("ab,asc,bsd->cd", env, A, A.conj())
    np.testing.assert_allclose(got.numpy(), env[0, 0], rtol=1e-10)


# ------------------------------------------------------------------ optimize options

OPTIMIZE = ["auto", "greedy", "optimal", "dp", "random-greedy", "branch-2", "auto-hq", True,
            False, None]


@pytest.mark.parametrize("optimize", OPTIMIZE, ids=str)
def test_every_optimize_option_gives_the_same_result(optimize):
    eq = "abc,cd,bde,ea,fd->f"
    shapes = [(2, 3, 4), (4, 5), (3, 5, 2), (2, 2), (6, 5)]
    arrays = random_arrays(shapes, np.float64, 7)
    ref = np.einsum(eq, *arrays)
    got = tf.einsum(eq, *[tf.tensor(a) for a in arrays], optimize=optimize)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_explicit_paths_and_optimizer_objects():
    eq = "ab,bc,cd,de->ae"
    shapes = [(2, 3), (3, 4), (4, 5), (5, 2)]
    arrays = random_arrays(shapes, np.float64, 8)
    ts = [tf.tensor(a) for a in arrays]
    ref = np.einsum(eq, *arrays)
    for path in ([(0, 1), (0, 1), (0, 1)], [(2, 3), (0, 1), (0, 1)], [(0, 1, 2, 3)],
                 [(1, 2), (0, 2), (0, 1)], ["einsum_path", (0, 1), (0, 1), (0, 1)],
                 np.einsum_path(eq, *arrays, optimize="optimal")[0]):
        np.testing.assert_allclose(tf.einsum(eq, *ts, optimize=path).numpy(), ref, rtol=1e-12)
    got = tf.einsum(eq, *ts, optimize=oe.RandomGreedy(max_repeats=4))
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    path = tf.contract_path(eq, *ts, optimize="optimal").path
    np.testing.assert_allclose(tf.einsum(eq, *ts, optimize=path).numpy(), ref, rtol=1e-12)


def test_memory_limit_is_an_alias_of_max_memory_and_slices():
    eq = "ab,bc,cd,da->"
    shapes = [(10, 20), (20, 20), (20, 10), (10, 10)]
    free = tf.contract_path(eq, *shapes, shapes=True, optimize="optimal")
    capped = tf.contract_path(eq, *shapes, shapes=True, optimize="optimal", memory_limit=60)
    assert free.n_slices == 1 and free.peak_memory > 60
    assert capped.n_slices > 1 and capped.peak_memory <= 60
    assert capped.flops >= free.flops
    arrays = random_arrays(shapes, np.float64, 9)
    ref = np.einsum(eq, *arrays)
    for opts in ({"memory_limit": 60}, {"max_memory": 60}, {"memory_limit": "max_input"}):
        got = tf.einsum(eq, *[tf.tensor(a) for a in arrays], **opts)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


# ------------------------------------------------------------------ plan cache


def test_second_call_hits_the_plan_cache(monkeypatch):
    from tenferro._src.contract import plan as plan_mod

    calls = {"search": 0}
    real_search = plan_mod._search

    def counting_search(*a, **k):
        calls["search"] += 1
        return real_search(*a, **k)

    monkeypatch.setattr(plan_mod, "_search", counting_search)
    tf.einsum.cache_clear()
    arrays = [tf.tensor(a) for a in random_arrays([(3, 4), (4, 5), (5, 6)], np.float64, 0)]
    r1 = tf.einsum("ij,jk,kl->il", *arrays, optimize="optimal")
    assert calls["search"] == 1
    info = tf.einsum.cache_info()
    assert (info.hits, info.misses, info.currsize) == (0, 1, 1)
    r2 = tf.einsum("ij,jk,kl->il", *arrays, optimize="optimal")
    assert calls["search"] == 1, "second call must not plan again"
    info = tf.einsum.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    np.testing.assert_array_equal(r1.numpy(), r2.numpy())
    # other shapes or another optimizer: a new plan
    tf.einsum("ij,jk,kl->il", *arrays, optimize="greedy")
    assert calls["search"] == 2
    # contract_path shares the cache
    tf.contract_path("ij,jk,kl->il", *arrays, optimize="greedy")
    assert calls["search"] == 2


def test_contract_path_reports_flops_like_opt_einsum():
    eq = "ea,fb,abcd,gc,hd->efgh"
    shapes = [(10, 10)] * 2 + [(10, 10, 10, 10)] + [(10, 10)] * 2
    info = tf.contract_path(eq, *shapes, shapes=True, optimize="greedy")
    path = info.path
    oe_path, oe_info = oe.contract_path(eq, *shapes, shapes=True, optimize=path)
    assert [tuple(p) for p in oe_path] == path
    assert info.flops == oe_info.opt_cost == info.opt_cost
    assert info.largest_intermediate == oe_info.largest_intermediate
    assert info.naive_flops == oe_info.naive_cost
    assert "Optimized FLOP count" in str(info) and len(info.steps) == 4
    # arrays give the same answer as shapes
    arrays = random_arrays(shapes, np.float64, 0)
    assert tf.contract_path(eq, *arrays, optimize="greedy").path == path
