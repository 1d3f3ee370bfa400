"""Block-wise svd/qr/eigh against dense decompositions of ``to_dense``: values and gradients
(real and complex), including truncation across sectors with the kept/discarded coupling."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro.errors import ShapeError

from ._util import assert_close, check_against_dense, legs

DTYPES = [np.float64, np.complex128]
SYMS = ["U1", "Z3", "U1xZ2"]


def charge_of(name):
    return {"U1": 1, "Z3": 1, "U1xZ2": (1, 1)}[name]


def recon(u, s, vh):
    us = S.tensordot(u, s, ([u.ndim - 1], [0]))
    return S.tensordot(us, vh, ([us.ndim - 1], [0]))


def dense_matrix(d, nr):
    m = int(np.prod(d.shape[:nr]))
    return tf.reshape(d, (m, -1))


def dense_truncated(d, nr, r):
    u, s, vh = tf.linalg.svd(dense_matrix(d, nr), max_rank=r)
    return tf.reshape((u * s.astype(u.dtype)[None, :]) @ vh, d.shape)


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_svd_full_matches_dense(name, dtype):
    ls = legs(name, [False, True, False])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=1)
    u, s, vh = S.svd(x, 2)
    d = S.to_dense(x)
    sv = np.sort(np.concatenate([v.numpy() for v in S.diagonal(s).values()]))[::-1]
    ref = tf.linalg.svdvals(dense_matrix(d, 2)).numpy()
    assert_close(sv, ref[: len(sv)])
    assert np.all(np.abs(ref[len(sv):]) < 1e-12)
    assert_close(S.to_dense(recon(u, s, vh)).numpy(), d.numpy())
    # U is an isometry: U^dagger U = 1 on the bond
    uu = S.tensordot(u.conj(), u, ([0, 1], [0, 1]))
    assert_close(S.to_dense(uu).numpy(), np.eye(uu.shape[0]))
    # gradients of gauge-invariant functions: reconstruction and singular values
    check_against_dense(lambda a: recon(*S.svd(a, 2)), lambda a: a, [x])
    check_against_dense(
        lambda a: tf.sum(tf.concatenate(list(S.diagonal(S.svd(a, 2).S).values())) ** 3),
        lambda a: tf.sum(tf.linalg.svdvals(dense_matrix(a, 2)) ** 3), [x])


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("drop", [1, 2])
def test_truncated_svd_matches_dense_including_gradient(name, dtype, drop):
    """The global max_rank keeps the largest values over all sectors, as a dense truncated SVD;
    the gradient carries the kept/discarded coupling (discarded values are non-zero here)."""
    ls = legs(name, [False, True, False])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=2)
    n_all = sum(b.shape[0] for b in S.diagonal(S.svd(x, 2).S).values())
    rank = n_all - drop
    assert rank >= 1
    u, s, vh = S.svd(x, 2, max_rank=rank)
    assert sum(v.shape[0] for v in S.diagonal(s).values()) == rank
    check_against_dense(lambda a: recon(*S.svd(a, 2, max_rank=rank)),
                        lambda a: dense_truncated(a, 2, rank), [x])


@pytest.mark.parametrize("dtype", DTYPES)
def test_truncation_by_cutoff_across_sectors(dtype):
    ls = legs("U1", [False, True, False])
    x = S.random(ls, 1, dtype=dtype, seed=3)
    full = np.sort(np.concatenate([v.numpy() for v in S.diagonal(S.svd(x, 2).S).values()]))
    cut = float((full[2] + full[3]) / 2)
    u, s, vh = S.svd(x, 2, cutoff=cut)
    kept = np.concatenate([v.numpy() for v in S.diagonal(s).values()])
    assert len(kept) == len(full) - 3 and kept.min() > cut
    r = len(kept)
    check_against_dense(lambda a: recon(*S.svd(a, 2, cutoff=cut)),
                        lambda a: dense_truncated(a, 2, r), [x])


def test_sector_ranks_and_degenerate_blocks():
    ls = legs("U1", [False, True, False])
    x = S.random(ls, 1, seed=4)
    u, s, vh = S.svd(x, 2, sector_ranks={0: 1, 1: 2})
    assert {q: v.shape[0] for q, v in S.diagonal(s).items()} == {0: 1, 1: 2}
    # exactly degenerate spectrum across two sectors (an SU(2)-like doublet): finite gradients
    a = S.Leg(S.U1, ((-1, 2), (1, 2)))
    blk = np.diag([2.0, 1.0])
    y = S.SymmetricTensor.build({(-1, -1): blk, (1, 1): blk}, [a, a.flip()])
    g = tf.grad(lambda t: S.norm(recon(*S.svd(t, 1, max_rank=3))) ** 2)(y)
    for b in g.blocks.values():
        assert np.all(np.isfinite(b.numpy()))
    with pytest.raises(ShapeError, match="not both"):
        S.svd(x, 2, max_rank=2, sector_ranks={0: 1})


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_qr_matches_dense(name, dtype):
    ls = legs(name, [False, True, False])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=5)
    q, r = S.qr(x, 2, positive=True)
    assert_close(S.to_dense(S.tensordot(q, r, ([2], [0]))).numpy(), S.to_dense(x).numpy())
    qq = S.tensordot(q.conj(), q, ([0, 1], [0, 1]))
    assert_close(S.to_dense(qq).numpy(), np.eye(qq.shape[0]))

    def sym_proj(a):
        qa = S.qr(a, 2).Q
        return S.tensordot(qa, qa.conj(), ([2], [2]))

    def dense_proj(a):
        m = dense_matrix(a, 2)
        u = tf.linalg.svd(m).U
        k = int(np.linalg.matrix_rank(tf.stop_gradient(m).numpy()))
        u = u[:, :k]
        p = u @ tf.conj(tf.transpose(u))
        return tf.reshape(p, tuple(a.shape[:2]) * 2)

    # the projector onto the column space: gauge invariant, the dense one from a dense SVD
    check_against_dense(sym_proj, dense_proj, [x])


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh_matches_dense(name, dtype):
    ls = legs(name, [False, True])
    a = S.random(ls + [l.flip() for l in ls], dtype=dtype, seed=6)
    h = a + a.conj().transpose(2, 3, 0, 1)
    w, v = S.eigh(h, 2)
    d = S.to_dense(h)
    n = ls[0].dim * ls[1].dim
    ref = tf.linalg.eigvalsh(tf.reshape(d, (n, n))).numpy()
    mine = np.sort(np.concatenate([x.numpy() for x in S.diagonal(w).values()]))
    assert_close(mine, ref)
    back = S.tensordot(S.tensordot(v, w, ([2], [0])), v.conj(), ([2], [2]))
    assert_close(S.to_dense(back).numpy(), d.numpy())
    check_against_dense(
        lambda t: tf.sum(tf.concatenate(list(S.diagonal(S.eigh(t, 2).eigenvalues).values())) ** 3),
        lambda t: tf.sum(tf.linalg.eigvalsh(tf.reshape(t, (n, n))) ** 3), [h])
    with pytest.raises(ShapeError, match="flips of the row legs"):
        S.eigh(S.random(ls + ls, seed=0), 2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_krylov_eigsh_on_a_symmetric_linear_map(dtype):
    """tenferro._src.linalg.eigsh on a LinearOperator whose matvec contracts symmetric blocks
    (through to_vector/from_vector): the lowest eigenvalue equals the block-wise eigh's, and
    its gradient with respect to the operator's blocks equals the dense one."""
    ls = legs("U1", [False, True])
    a = S.random(ls + [l.flip() for l in ls], dtype=dtype, seed=7)
    h = a + a.conj().transpose(2, 3, 0, 1)
    x0 = S.random(ls, dtype=dtype, seed=8)

    def lowest(hh):
        def mv(v):
            return S.to_vector(S.tensordot(hh, S.from_vector(v, x0), ([2, 3], [0, 1])))

        n = S.to_vector(x0).shape[0]
        op = tf.linalg.LinearOperator(mv, (n, n), dtype)
        return tf.linalg.eigsh(op, k=1, v0=S.to_vector(x0), tol=1e-13).eigenvalues[0]

    w = lowest(h)
    # the solver works in x0's charge sector: the charge-0 block of the matrix
    ref = float(np.min(S.diagonal(S.eigh(h, 2).eigenvalues)[0].numpy()))
    assert abs(float(w.numpy()) - ref) < 1e-10
    n = ls[0].dim * ls[1].dim
    charge = [ls[0].effective(q0) + ls[1].effective(q1)
              for q0, d0 in ls[0].sectors for _ in range(d0)
              for q1, d1 in ls[1].sectors for _ in range(d1)]
    idx = tf.asarray(np.array([i for i, c in enumerate(charge) if c == 0]))

    def dense_lowest(t):
        m = tf.take(tf.take(tf.reshape(t, (n, n)), idx, axis=0), idx, axis=1)
        return tf.linalg.eigvalsh(m)[0]

    check_against_dense(lowest, dense_lowest, [h], tol=1e-9)
