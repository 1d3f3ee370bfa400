"""Symmetric tensors: groups, legs, construction and the structural operations, each equal to
its dense counterpart on ``to_dense`` (values and gradients, real and complex)."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro.errors import ShapeError

from ._util import U1Z2, Z3, assert_close, check_against_dense, legs

SYMS = ["U1", "Z3", "U1xZ2"]
DTYPES = [np.float64, np.complex128]


def charge_of(name, i=1):
    return {"U1": i, "Z3": i % 3, "U1xZ2": (i, i % 2)}[name]


# ---------------------------------------------------------------- groups and legs
def test_groups_fuse_dual_identity():
    assert S.U1.fuse(2, -5) == -3 and S.U1.dual(4) == -4 and S.U1.identity == 0
    assert Z3.fuse(2, 2) == 1 and Z3.dual(1) == 2 and Z3.identity == 0
    assert S.Z2.fuse(1, 1) == 0
    assert U1Z2.fuse((1, 1), (2, 1)) == (3, 0) and U1Z2.dual((1, 1)) == (-1, 1)
    assert U1Z2.identity == (0, 0)
    assert S.product(S.U1, S.U1).fuse_all([(1, 2), (3, 4), (-1, 0)]) == (3, 6)
    with pytest.raises(ShapeError, match="not a charge"):
        S.Leg(Z3, ((3, 1),))
    with pytest.raises(ShapeError, match="repeated charge"):
        S.Leg(S.U1, ((0, 1), (0, 2)))
    with pytest.raises(ShapeError, match="dimension"):
        S.Leg(S.U1, ((0, 0),))
    with pytest.raises(ShapeError, match="n must be"):
        S.Zn(1)


def test_leg_from_charges_sorts_stably():
    leg, perm = S.leg_from_charges(S.U1, [1, -1, 1, 0, -1])
    assert leg.sectors == ((-1, 2), (0, 1), (1, 2))
    assert perm.tolist() == [1, 4, 3, 0, 2]


# ------------------------------------------------------------- construction
@pytest.mark.parametrize("name", SYMS)
def test_conservation_is_checked(name):
    ls = legs(name, [False, True, False])
    c = charge_of(name)
    x = S.random(ls, c, seed=1)
    sym = ls[0].symmetry
    for k in x.blocks:
        eff = sym.fuse_all(l.effective(q) for l, q in zip(ls, k))
        assert eff == c
    bad = next(k for k in __import__("itertools").product(*[l.charges for l in ls])
               if k not in x.blocks)
    with pytest.raises(ShapeError, match="violates charge conservation"):
        S.SymmetricTensor.build({bad: np.ones([l.sector_dim(q) for l, q in zip(ls, bad)])},
                                ls, c)
    k0 = next(iter(x.blocks))
    with pytest.raises(ShapeError, match="has shape"):
        S.SymmetricTensor.build({k0: np.ones((7, 7, 7))}, ls, c)


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_dense_round_trip_and_symmetry_check(name, dtype):
    ls = legs(name, [False, True, True])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=2)
    d = S.to_dense(x)
    assert tuple(d.shape) == x.shape and d.dtype == np.dtype(dtype)
    y = S.from_dense(d, ls, charge_of(name))
    assert set(y.blocks) == set(x.blocks)
    for k in x.blocks:
        assert_close(y.blocks[k].numpy(), x.blocks[k].numpy(), 0)
    # weight outside the allowed blocks is rejected, and projected with check=False
    dn = d.numpy().copy()
    k = next(iter(__import__("itertools").product(*[l.charges for l in ls])))
    if k not in x.blocks:
        dn[tuple(l.sector_slice(q) for l, q in zip(ls, k))] += 1.0
        with pytest.raises(ShapeError, match="does not respect the symmetry"):
            S.from_dense(tf.asarray(dn), ls, charge_of(name))
        z = S.from_dense(tf.asarray(dn), ls, charge_of(name), check=False)
        assert_close(S.to_dense(z).numpy(), d.numpy(), 0)
    zz = S.zeros(ls, charge_of(name), dtype=dtype)
    assert set(zz.blocks) == set(x.blocks) and float(S.norm(zz).numpy()) == 0.0


def test_from_dense_shape_error():
    ls = legs("U1", [False, True])
    with pytest.raises(ShapeError, match="does not match the legs"):
        S.from_dense(np.zeros((3, 3)), ls)


def test_from_dense_gradient_is_block_extraction():
    ls = legs("U1", [False, True])
    d = S.to_dense(S.random(ls, seed=3))
    w = S.random(ls, seed=4)
    g = tf.grad(lambda a: S.inner(w, S.from_dense(a, ls)))(d)
    assert_close(g.numpy(), S.to_dense(w).numpy(), 0)


# -------------------------------------------------------- elementwise/structural
@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_operations_match_dense(name, dtype):
    ls = legs(name, [False, True, False])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=5)
    check_against_dense(lambda a: a.conj(), tf.conj, [x])
    check_against_dense(lambda a: a.transpose(2, 0, 1), lambda a: tf.transpose(a, (2, 0, 1)),
                        [x])
    check_against_dense(lambda a: 2.5 * a, lambda a: 2.5 * a, [x])
    check_against_dense(lambda a: -a / 3.0, lambda a: -a / 3.0, [x])
    check_against_dense(S.norm, tf.linalg.norm, [x])


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_operations_match_dense(name, dtype):
    ls = legs(name, [False, True, False])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=6)
    y = S.random(ls, charge_of(name), dtype=dtype, seed=7)
    # y with a block missing: addition takes the union of blocks
    y = y.with_blocks({k: b for i, (k, b) in enumerate(y.blocks.items()) if i})
    check_against_dense(lambda a, b: a + b, lambda a, b: a + b, [x, y])
    check_against_dense(lambda a, b: a - b, lambda a, b: a - b, [x, y])
    check_against_dense(S.inner, lambda a, b: tf.sum(tf.conj(a) * b), [x, y])


def test_binary_operation_errors():
    x = S.random(legs("U1", [False, True]), seed=0)
    y = S.random(legs("U1", [False, False]), charge=1, seed=0)
    with pytest.raises(ShapeError, match="legs/charges differ"):
        x + y
    with pytest.raises(ShapeError, match="only scalars"):
        x * tf.ones((2,))
    with pytest.raises(ShapeError, match="both operands are symmetric"):
        x * x


@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_fuse_split_layout_and_gradients(name, dtype):
    ls = legs(name, [False, True, False, True])
    x = S.random(ls, charge_of(name), dtype=dtype, seed=8)
    f = S.fuse_legs(x, [1, 2], dual=True)
    leg = f.legs[1]
    # dense layout: the fused index is a permutation of the C-ordered product index
    perm = []
    a, b = ls[1], ls[2]
    for _q, (entries, _size) in leg.fusion_map().items():
        for (qa, qb), _off, _dims in entries:
            sa, sb = a.sector_slice(qa), b.sector_slice(qb)
            for i in range(sa.start, sa.stop):
                for j in range(sb.start, sb.stop):
                    perm.append(i * b.dim + j)
    assert sorted(perm) == list(range(a.dim * b.dim))

    def dense_fuse(d):
        r = tf.reshape(d, (d.shape[0], a.dim * b.dim, d.shape[3]))
        return tf.take(r, tf.asarray(np.asarray(perm)), axis=1)

    check_against_dense(lambda t: S.fuse_legs(t, [1, 2], dual=True), dense_fuse, [x])
    back = S.split_legs(f, 1)
    assert back.legs == x.legs
    for k, blk in x.blocks.items():
        assert_close(back.blocks[k].numpy(), blk.numpy(), 0)
    check_against_dense(lambda t: S.split_legs(S.fuse_legs(t, [0, 1, 2]), 0), lambda d: d, [x])
    with pytest.raises(ShapeError, match="consecutive"):
        S.fuse_legs(x, [0, 2])
    with pytest.raises(ShapeError, match="not made by fuse_legs"):
        S.split_legs(x, 0)


# ------------------------------------------------------------------ contractions
@pytest.mark.parametrize("name", SYMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_contractions_match_dense(name, dtype):
    la = legs(name, [False, True, False])
    x = S.random(la, charge_of(name), dtype=dtype, seed=9)
    lb = [la[2].flip(), la[1].flip(), S.Leg(la[0].symmetry, la[0].sectors, True)]
    y = S.random(lb, charge_of(name, 2), dtype=dtype, seed=10)
    out = check_against_dense(lambda a, b: S.tensordot(a, b, ([1, 2], [1, 0])),
                              lambda a, b: tf.tensordot(a, b, ([1, 2], [1, 0])), [x, y])
    assert out.charge == la[0].symmetry.fuse(x.charge, y.charge)
    check_against_dense(lambda a, b: S.einsum("abc,cbd->da", a, b),
                        lambda a, b: tf.einsum("abc,cbd->da", a, b), [x, y])
    check_against_dense(lambda a, b: S.ncon([a, b], [[-2, 1, 2], [2, 1, -1]]),
                        lambda a, b: tf.einsum("abc,cbd->da", a, b), [x, y])
    # three operands, one contraction chain
    z = S.random([la[0].flip(), S.Leg(la[0].symmetry, la[1].sectors)], dtype=dtype, seed=11)
    check_against_dense(lambda a, b, c: S.einsum("abc,cbd,ae->de", a, b, c),
                        lambda a, b, c: tf.einsum("abc,cbd,ae->de", a, b, c), [x, y, z])


def test_contraction_plans_are_cached_and_errors_are_clear():
    from tenferro._src.symmetric import contract

    la = legs("U1", [False, True])
    x = S.random(la, seed=0)
    y = S.random([la[1].flip(), la[0].flip()], seed=1)
    S.tensordot(x, y, ([1], [0]))
    n = len(contract._PLANS)
    S.tensordot(S.random(la, seed=2), S.random([la[1].flip(), la[0].flip()], seed=3),
                ([1], [0]))
    assert len(contract._PLANS) == n
    with pytest.raises(ShapeError, match="point the same way"):
        S.tensordot(x, x, ([1], [1]))
    with pytest.raises(ShapeError, match="sectors differ"):
        S.tensordot(x, y, ([0], [0]))
    with pytest.raises(ShapeError, match="traces are not"):
        S.einsum("aa->", S.random([la[0], la[0].flip()], seed=0))
    with pytest.raises(ShapeError, match="explicitly"):
        S.einsum("ab,bc", x, y)


def test_vector_view_round_trip():
    ls = legs("U1xZ2", [False, True, False])
    x = S.random(ls, (1, 1), dtype=np.complex128, seed=12)
    partial = x.with_blocks({k: b for i, (k, b) in enumerate(x.blocks.items()) if i})
    v = S.to_vector(partial)
    assert tuple(v.shape) == (sum(b.numpy().size for b in x.blocks.values()),)
    back = S.from_vector(v, x)
    assert_close(S.to_dense(back).numpy(), S.to_dense(partial).numpy(), 0)
    with pytest.raises(ShapeError, match="expected a vector of length"):
        S.from_vector(tf.zeros((3,)), x)
