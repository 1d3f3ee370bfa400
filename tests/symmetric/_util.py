"""Shared fixtures: legs for each symmetry, and the dense-counterpart check (values and
gradients through ``to_dense``)."""

import numpy as np

import tenferro as tf
import tenferro.symmetric as S
from tests import helpers

U1Z2 = S.product(S.U1, S.Z2)
Z3 = S.Zn(3)

SECTORS = {
    "U1": (S.U1, [((-1, 2), (0, 3), (1, 2)), ((0, 2), (1, 1), (2, 2)), ((-1, 1), (0, 2), (1, 2))]),
    "Z3": (Z3, [((0, 2), (1, 2), (2, 1)), ((0, 1), (1, 2), (2, 2)), ((0, 3), (2, 1))]),
    "U1xZ2": (U1Z2, [(((0, 0), 2), ((1, 1), 2), ((-1, 1), 1)),
                     (((0, 0), 1), ((0, 1), 2), ((1, 0), 2)),
                     (((0, 1), 2), ((1, 1), 1), ((-1, 0), 2))]),
}


def legs(name, duals):
    sym, secs = SECTORS[name]
    return [S.Leg(sym, secs[i % len(secs)], d) for i, d in enumerate(duals)]


def assert_close(a, b, tol=1e-12):
    helpers.assert_close(a, b, tol, floor=1.0)


def weights(shape, dtype, seed):
    return tf.asarray(helpers.rand(np.random.default_rng(seed), shape, dtype))


def dense_loss(out_dense, w):
    """A real, phase-sensitive loss of a dense result: Re sum(conj(w) * out)."""
    return tf.real(tf.sum(tf.conj(w) * out_dense))


def check_against_dense(sym_fn, dense_fn, args, seed=0, tol=1e-12):
    """``to_dense(sym_fn(*args)) == dense_fn(*to_dense(args))`` and the gradients of a random
    real loss agree: the symmetric gradient's blocks are the dense gradient's blocks (the
    dense tensor is a linear injection of the blocks)."""
    out = sym_fn(*args)
    dense_args = [S.to_dense(a) for a in args]
    ref = dense_fn(*dense_args)
    od = S.to_dense(out) if isinstance(out, S.SymmetricTensor) else out
    assert_close(od.numpy(), ref.numpy(), tol)
    w = weights(tuple(ref.shape), ref.dtype, seed)

    def loss_sym(*xs):
        o = sym_fn(*xs)
        return dense_loss(S.to_dense(o) if isinstance(o, S.SymmetricTensor) else o, w)

    def loss_dense(*ds):
        return dense_loss(dense_fn(*ds), w)

    argnums = tuple(range(len(args)))
    gs = tf.grad(loss_sym, argnums=argnums)(*args)
    gd = tf.grad(loss_dense, argnums=argnums)(*dense_args)
    for x, g, d in zip(args, gs, gd):
        assert isinstance(g, S.SymmetricTensor) and g.legs == x.legs
        dn = d.numpy()
        for k in x.blocks:
            sl = tuple(l.sector_slice(q) for l, q in zip(x.legs, k))
            assert_close(g.blocks[k].numpy(), dn[sl], tol)
    return out
