"""``dot_general``: contraction over paired axes with optional batch axes.

``dimension_numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``. The output axes
are: batch axes (in the order given), then the lhs free axes, then the rhs free axes (each in
their original order). Bilinear, so its JVP is two dot_generals and its transposes are
dot_generals with the conjugated other operand.
"""

from __future__ import annotations

import functools
import math

from ..core import Primitive, ShapedArray, is_undefined, static_size
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import DIMENSION_NUMBERS
from . import _batching
from .elementwise import _nonlinear
from .shape import inverse_permutation


def free_axes(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _dot_cost(in_avals, out_avals, *, dimension_numbers):
    """2 M N K real multiply-adds (x4 for complex)."""
    (lc, _), _ = dimension_numbers
    x = in_avals[0]
    k = static_size(ShapedArray([x.shape[a] for a in lc], x.dtype))
    out = static_size(out_avals[0])
    if k is None or out is None:
        return None
    return 2 * out * k * (4 if x.dtype.kind == "c" else 1)


dot_general_p = Primitive("dot_general", cost=_dot_cost,
                          params={"dimension_numbers": DIMENSION_NUMBERS})


@dot_general_p.def_abstract_eval
def _dot_aval(x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers

    def desc():  # formatted only when an error is raised: this runs on every eager call
        return f"{fmt_aval(x)} and {fmt_aval(y)} with dimension_numbers {dimension_numbers}"

    if x.dtype != y.dtype:
        raise DTypeError(
            f"dot_general: operand dtypes differ ({desc()}); use tenferro.tensordot/einsum "
            f"(which promote) or .astype first."
        )
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise ShapeError(f"dot_general: unpaired contracting or batch axes ({desc()}).")
    for axes, nd in ((list(lc) + list(lb), x.ndim), (list(rc) + list(rb), y.ndim)):
        if len(set(axes)) != len(axes) or any(not 0 <= a < nd for a in axes):
            raise ShapeError(f"dot_general: repeated or out-of-range axes ({desc()}).")
    for kind, la, ra in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, c in zip(la, ra):
            if x.shape[a] != y.shape[c]:
                raise ShapeError(
                    f"dot_general: {kind} axis {a} of the lhs has size {x.shape[a]} but axis {c} "
                    f"of the rhs has size {y.shape[c]} ({desc()})."
                )
    shape = [x.shape[a] for a in lb]
    shape += [x.shape[a] for a in free_axes(x.ndim, lc, lb)]
    shape += [y.shape[a] for a in free_axes(y.ndim, rc, rb)]
    return ShapedArray(shape, x.dtype)


@functools.lru_cache(maxsize=4096)
def _layout(xnd, ynd, dimension_numbers):
    """Permutations bringing the operands to (batch, free, contract) / (batch, contract,
    free) order (None when already so), computed once per signature."""
    (lc, rc), (lb, rb) = dimension_numbers
    xf = tuple(free_axes(xnd, lc, lb))
    yf = tuple(free_axes(ynd, rc, rb))
    xperm = tuple(lb) + xf + tuple(lc)
    yperm = tuple(rb) + tuple(rc) + yf
    xperm = None if xperm == tuple(range(xnd)) else xperm
    yperm = None if yperm == tuple(range(ynd)) else yperm
    # already (batch..., m, k) @ (batch..., k, n): one matmul, nothing to move
    direct = xperm is None and yperm is None and len(xf) == len(yf) == len(lc) == 1
    return xperm, yperm, xf, yf, direct


@dot_general_p.def_impl
def _dot_impl(xp, x, y, *, dimension_numbers):
    # permute (a view) + reshape (a copy only when the axis groups are not contiguous) +
    # one BLAS matmul: what tensordot does, without its per-call argument handling
    xperm, yperm, xf, yf, direct = _layout(x.ndim, y.ndim, dimension_numbers)
    if direct:
        return xp.matmul(x, y)
    (lc, _), (lb, _) = dimension_numbers
    xs, ys = x.shape, y.shape
    bshape = tuple([xs[a] for a in lb])
    fx, fy = tuple([xs[a] for a in xf]), tuple([ys[a] for a in yf])
    m, k, n = math.prod(fx), math.prod([xs[a] for a in lc]), math.prod(fy)
    if xperm is not None:
        x = xp.permute_dims(x, xperm)
    if yperm is not None:
        y = xp.permute_dims(y, yperm)
    if lb:
        bsz = math.prod(bshape)
        out = xp.matmul(xp.reshape(x, (bsz, m, k)), xp.reshape(y, (bsz, k, n)))
    else:
        out = xp.matmul(xp.reshape(x, (m, k)), xp.reshape(y, (k, n)))
    return xp.reshape(out, bshape + fx + fy)


@dot_general_p.def_specialize
def _dot_specialize(xp, in_avals, *, dimension_numbers):
    """The layout of ``_dot_impl`` computed once for static shapes (compiled graphs): the
    four 2-D contractions without batch axes become one matmul of (transposed) views, the
    same BLAS call ``_dot_impl`` makes on the same views, without its per-call layout work.
    A namespace may offer ``matmul_2d``, a cheaper call for two matrices."""
    x, y = in_avals
    (lc, rc), (lb, rb) = dimension_numbers
    if x.ndim == 2 and y.ndim == 2 and not lb:
        mm = getattr(xp, "matmul_2d", None) or xp.matmul
        fast = {
            ((1,), (0,)): mm,
            ((0,), (0,)): lambda x, y: mm(x.T, y),
            ((1,), (1,)): lambda x, y: mm(x, y.T),
            ((0,), (1,)): lambda x, y: mm(x.T, y.T),
        }.get((tuple(lc), tuple(rc)))
        if fast is not None:
            return fast
    xperm, yperm, xf, yf, direct = _layout(x.ndim, y.ndim, dimension_numbers)
    if direct:
        return xp.matmul
    xs, ys = x.shape, y.shape
    bshape = tuple([xs[a] for a in lb])
    fx, fy = tuple([xs[a] for a in xf]), tuple([ys[a] for a in yf])
    m, k, n = math.prod(fx), math.prod([xs[a] for a in lc]), math.prod(fy)
    if lb:
        bsz = math.prod(bshape)
        xshape, yshape = (bsz, m, k), (bsz, k, n)
    else:
        xshape, yshape = (m, k), (k, n)
    oshape = bshape + fx + fy
    permute, reshape, matmul = xp.permute_dims, xp.reshape, xp.matmul

    def run(x, y):
        if xperm is not None:
            x = permute(x, xperm)
        if yperm is not None:
            y = permute(y, yperm)
        return reshape(matmul(reshape(x, xshape), reshape(y, yshape)), oshape)

    return run


@dot_general_p.def_jvp
def _dot_jvp(b, primals, tangents, *, dimension_numbers):
    (x, y), (tx, ty) = primals, tangents
    dn = dimension_numbers
    out = b.dot_general(x, y, dn)
    return out, b.add(b.dot_general(tx, y, dn), b.dot_general(x, ty, dn))


@dot_general_p.def_transpose
def _dot_transpose(b, ct, x, y, *, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    ux, uy = is_undefined(x), is_undefined(y)
    if ux and uy:
        _nonlinear("dot_general", "both operands depend on the input")
    nb = len(lb)
    xf, yf = free_axes(x.ndim, lc, lb), free_axes(y.ndim, rc, rb)
    ct_batch = tuple(range(nb))
    ct_xfree = tuple(range(nb, nb + len(xf)))
    ct_yfree = tuple(range(nb + len(xf), nb + len(xf) + len(yf)))
    if ux:
        r = b.dot_general(ct, b.conj(y), ((ct_yfree, tuple(yf)), (ct_batch, tuple(rb))))
        src = list(lb) + list(xf) + [lc[list(rc).index(d)] for d in sorted(rc)]
        return b.permute(r, inverse_permutation(src)), None
    r = b.dot_general(b.conj(x), ct, ((tuple(xf), ct_xfree), (tuple(lb), ct_batch)))
    src = list(rb) + [rc[list(lc).index(d)] for d in sorted(lc)] + list(yf)
    return None, b.permute(r, inverse_permutation(src))


@dot_general_p.def_batch
def _dot_batch(b, args, dims, *, dimension_numbers):
    """Both operands mapped: the batch is one more batch axis (output axis 0). One mapped:
    it is a free axis of that operand, placed first among them."""
    (x, y), (dx, dy) = args, dims
    (lc, rc), (lb, rb) = dimension_numbers
    sh = lambda axes: tuple(a + 1 for a in axes)  # noqa: E731
    if dx is not None and dy is not None:
        x, y = _batching.move_axis(b, x, dx, 0), _batching.move_axis(b, y, dy, 0)
        dn = ((sh(lc), sh(rc)), ((0,) + sh(lb), (0,) + sh(rb)))
        return [b.dot_general(x, y, dn)], [0]
    if dx is not None:
        x = _batching.move_axis(b, x, dx, 0)
        return [b.dot_general(x, y, ((sh(lc), rc), (sh(lb), rb)))], [len(lb)]
    y = _batching.move_axis(b, y, dy, 0)
    n_lhs_free = x.ndim - len(lc) - len(lb)
    return [b.dot_general(x, y, ((lc, sh(rc)), (lb, sh(rb))))], [len(lb) + n_lhs_free]
