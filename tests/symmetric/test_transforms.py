"""Symmetric tensors through the transformations: grad/jit/custom_vjp take and return them,
and a traced graph with symmetric tensors saves, loads and differentiates like eager."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S

from ._util import assert_close, legs


def _x(dtype=np.float64, seed=0):
    return S.random(legs("U1", [False, True, False]), 1, dtype=dtype, seed=seed)


def _env(x):
    return S.random([x.legs[2].flip(), x.legs[1].flip(), x.legs[0].flip()], -1,
                    dtype=x.dtype, seed=9)


def model(x, e):
    """Contractions, an (untruncated) SVD and a norm: a scalar loss."""
    y = S.tensordot(x, e, ([2], [0]))  # [a, b, b', a']
    u, s, vh = S.svd(y, 2)
    vals = tf.concatenate(list(S.diagonal(s).values()))
    return tf.sum(vals ** 2 * tf.sin(vals)) + S.norm(S.tensordot(u, s, ([2], [0]))) ** 2


def _same(a: S.SymmetricTensor, b: S.SymmetricTensor, tol=1e-12):
    assert type(a) is type(b) and set(a.blocks) == set(b.blocks)
    for k in a.blocks:
        assert_close(a.blocks[k].numpy(), b.blocks[k].numpy(), tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_jit_and_grad_agree_with_eager(dtype):
    x = _x(dtype)
    e = _env(x)
    f = lambda a: model(a, e)  # noqa: E731
    v = f(x)
    g = tf.grad(f)(x)
    assert isinstance(g, S.SymmetricTensor) and g.legs == x.legs
    assert_close(tf.jit(f)(x).numpy(), v.numpy())
    _same(tf.jit(tf.grad(f))(x), g)
    _same(tf.grad(tf.jit(f))(x), g)
    # a symmetric result from jit keeps its structure
    y = tf.jit(lambda a: S.tensordot(a, e, ([2], [0])))(x)
    _same(y, S.tensordot(x, e, ([2], [0])))


def test_custom_vjp_with_symmetric_argument_and_result():
    @tf.custom_vjp
    def scale(a):
        return a * 2.0

    def fwd(a):
        return scale(a), None

    def bwd(_, ct):
        return (ct * 3.0,)  # deliberately not the true derivative: proves the rule is used

    scale.defvjp(fwd, bwd)
    x = _x()
    g = tf.grad(lambda a: S.norm(scale(a)) ** 2)(x)
    for k in x.blocks:
        assert_close(g.blocks[k].numpy(), 3.0 * 2 * 2.0 * x.blocks[k].numpy())


def test_saved_graph_runs_and_differentiates_like_eager(tmp_path):
    x = _x()
    e = _env(x)
    graph = tf.make_graph(model, x, e)
    path = tmp_path / "sym.tfg"
    graph.save(path)
    loaded = tf.load(path)
    # a loaded graph takes and returns symmetric tensors, like the traced function
    assert_close(loaded(x, e).numpy(), model(x, e).numpy())
    g_loaded = tf.grad(lambda b: loaded(b, e))(x)
    want = tf.grad(model)(x, e)
    assert g_loaded.legs == want.legs
    for k in want.blocks:
        assert_close(g_loaded.blocks[k].numpy(), want.blocks[k].numpy())
    f2 = lambda a, b: S.tensordot(a, b, ([2], [0]))  # noqa: E731
    tf.make_graph(f2, x, e).save(tmp_path / "sym2.tfg")
    out = tf.load(tmp_path / "sym2.tfg")(x, e)
    ref = f2(x, e)
    assert isinstance(out, S.SymmetricTensor) and out.legs == ref.legs
    for k in ref.blocks:
        assert_close(out.blocks[k].numpy(), ref.blocks[k].numpy())
    # a tuple of blocks is not a symmetric tensor: a clear structure error
    with pytest.raises(tf.errors.TenferroError):
        loaded(tuple(x), e)


def test_static_sector_ranks_under_jit():
    """(Data-dependent truncation under jit: test_traced_truncation.py.)"""
    x = _x()
    full = S.diagonal(S.svd(x, 2).S)
    ranks = {q: max(1, v.shape[0] - 1) for q, v in full.items()}
    f = lambda a: S.norm(S.svd(a, 2, sector_ranks=ranks).S)  # noqa: E731
    assert_close(tf.jit(f)(x).numpy(), f(x).numpy())
    _same(tf.jit(tf.grad(f))(x), tf.grad(f)(x))
