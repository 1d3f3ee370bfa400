"""Truncation across sectors under ``jit``: each sector's kept size is a run-time size, so
``jit(f)``, ``grad(jit(f))`` and ``jit(grad(f))`` equal eager mode (and the dense truncated
SVD, kept/discarded coupling included), and the traced graph saves, loads and differentiates."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S

from ._util import assert_close, check_against_dense, legs
from .test_decompositions import charge_of, dense_truncated, recon

DTYPES = [np.float64, np.complex128]
TRUNCATIONS = [dict(max_rank=1), dict(max_rank=4), dict(max_rank=5, relative_cutoff=0.35),
               "cutoff"]


def _x(name="U1", dtype=np.float64, seed=2):
    return S.random(legs(name, [False, True, False]), charge_of(name), dtype=dtype, seed=seed)


def _spectrum(x):
    return np.sort(np.concatenate([v.numpy() for v in S.diagonal(S.svd(x, 2).S).values()]))


def _kw(trunc, x):
    if trunc == "cutoff":  # between the two smallest values
        full = _spectrum(x)
        return dict(cutoff=float((full[0] + full[1]) / 2))
    return trunc


def _same(a: S.SymmetricTensor, b: S.SymmetricTensor, tol=1e-12):
    assert a.legs == b.legs and a.charge == b.charge and set(a.blocks) == set(b.blocks)
    for k in a.blocks:
        assert_close(a.blocks[k].numpy(), b.blocks[k].numpy(), tol)


def _loss(kw):
    def f(a):
        u, s, vh = S.svd(a, 2, **kw)
        vals = tf.concatenate(list(S.diagonal(s).values()))
        r = recon(u, s, vh)
        return tf.sum(vals ** 3) + tf.real(S.inner(r, a)) + S.norm(S.tensordot(u, s, ([2], [0])))
    return f


@pytest.mark.parametrize("name", ["U1", "U1xZ2"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trunc", TRUNCATIONS, ids=str)
def test_jit_truncation_equals_eager(name, dtype, trunc):
    x = _x(name, dtype)
    kw = _kw(trunc, x)
    f = _loss(kw)
    v, g = f(x), tf.grad(f)(x)
    assert_close(tf.jit(f)(x).numpy(), v.numpy())
    _same(tf.jit(tf.grad(f))(x), g)
    _same(tf.grad(tf.jit(f))(x), g)
    # the decomposition itself comes back from jit with the eager bond (empty sectors dropped)
    want = S.svd(x, 2, **kw)
    got = tf.jit(lambda a: S.svd(a, 2, **kw))(x)
    for a, b in zip(got, want):
        _same(a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jit_truncation_matches_dense_truncated_svd_gradient(dtype):
    """Against the dense truncated SVD of to_dense: the jitted function's values and
    gradient (grad of a jitted function) include the kept/discarded coupling."""
    x = _x("U1", dtype)
    n = len(_spectrum(x))
    for rank in (n - 2, 2):
        f = tf.jit(lambda a, r=rank: recon(*S.svd(a, 2, max_rank=r)))
        check_against_dense(f, lambda a, r=rank: dense_truncated(a, 2, r), [x])


def test_one_trace_decides_each_run_per_sector():
    """The per-sector sizes are decided when the graph runs: two inputs whose largest values
    sit in different sectors get different bonds from the same trace."""
    x = _x("U1", seed=2)
    qs = sorted(S.diagonal(S.svd(x, 2).S))
    scaled = [x.with_blocks({k: b * (50.0 if k[0] == q else 1.0) for k, b in x.blocks.items()})
              for q in qs]
    traces = []

    def f(a):
        traces.append(1)
        return S.svd(a, 2, max_rank=2)

    jf = tf.jit(f)
    bonds = set()
    for y in scaled:
        got, want = jf(y), S.svd(y, 2, max_rank=2)
        for a, b in zip(got, want):
            _same(a, b)
        bonds.add(got.U.legs[-1])
    assert len(traces) == 1 and len(bonds) == len(qs)


def test_ties_across_sectors_break_like_eager():
    """An exactly degenerate doublet split by max_rank: the traced rule keeps the same member
    (block order) as eager mode."""
    a = S.Leg(S.U1, ((-1, 2), (1, 2)))
    blk = np.array([[2.0, 0.3], [0.1, 1.0]])
    y = S.SymmetricTensor.build({(-1, -1): blk, (1, 1): blk}, [a, a.flip()])
    for r in (1, 3):
        got, want = tf.jit(lambda t, r=r: S.svd(t, 1, max_rank=r))(y), S.svd(y, 1, max_rank=r)
        for p, q in zip(got, want):
            _same(p, q)


def test_truncated_graph_saves_loads_and_differentiates(tmp_path):
    x = _x("U1")
    f = _loss(dict(max_rank=3))
    tf.make_graph(f, x).save(tmp_path / "trunc.tfg")
    loaded = tf.load(tmp_path / "trunc.tfg")
    assert_close(loaded(x).numpy(), f(x).numpy())
    _same(tf.grad(loaded)(x), tf.grad(f)(x))
    # a graph returning the truncated factors: a symmetric tensor whose legs have the
    # run-time sector sizes of this input (sectors that keep nothing dropped), as eager
    tf.make_graph(lambda a: S.svd(a, 2, max_rank=1).S, x).save(tmp_path / "s.tfg")
    got = tf.load(tmp_path / "s.tfg")(x)
    want = S.svd(x, 2, max_rank=1).S
    assert isinstance(got, S.SymmetricTensor)
    _same(got, want)


def test_saved_symmetric_results_keep_legs_and_charge(tmp_path):
    x = _x("U1xZ2")
    tf.make_graph(lambda a: S.svd(a, 1, max_rank=2).U, x).save(tmp_path / "u.tfg")
    got = tf.load(tmp_path / "u.tfg")(x)
    _same(got, S.svd(x, 1, max_rank=2).U)
