"""Functions of Hermitian matrices, f(A) = V f(W) V^H, exact at every degeneracy and order.

One primitive, ``funm``, for a *chain* of Hermitian matrices a_1, ..., a_p linked by matrices
e_1, ..., e_{p-1}: it is the top-right block of f(T) for the block upper-bidiagonal matrix T
with diagonal blocks a_q and superdiagonal blocks e_q,

    funm(a_1..a_p; e_1..e_{p-1}) = V_1 [ sum_{k} f[l1_i, l2_k1, ..., lp_j]
                                          E1_{i k1} E2_{k1 k2} ... ] V_p^H,

with a_q = V_q diag(l_q) V_q^H, E_q = V_q^H e_q V_{q+1} and f[...] the divided differences of
the scalar function f. p = 1 is f(A) itself; p = 2 with a_1 = a_2 = A is the Daleckii-Krein
Frechet derivative L(A, E) = V [G o (V^H E V)] V^H, G_ij = f[w_i, w_j] (= f'(w_i) on ties).

The chain is closed under differentiation, which is what makes every order exact at every
degeneracy (no eigenvector derivative, hence no 1/(w_i - w_j), ever appears):

* in a_q (direction H, Hermitian part of the tangent): the chain with a_q repeated and H
  inserted between the copies (d f[.., x, ..]/dx = f[.., x, x, ..]);
* in e_r: the chain with e_r replaced by its tangent (it is linear in each e_r);
* the adjoint in e_r (reverse mode) is again a chain, read backwards around the cycle.

Divided differences are computed tie-robustly: first order from closed forms that never
subtract nearly equal numbers (``exp``: e^y expm1(d)/d, ``sqrt``: 1/(sqrt x + sqrt y), ...);
higher orders by the recursion f[..] = (f[.. \\ x_a] - f[.. \\ x_b]) / (x_b - x_a) over the
most separated pair, and by a Taylor expansion around the mean (derivatives of f, complete
homogeneous polynomials) where all points lie within a relative 1e-4 of each other.

f is a *name* (a static param, so graphs holding ``funm`` can be saved): ``exp``, ``log``,
``sqrt``, ``pow`` (with ``power``), ``sin``, ``cos``. The chain of length p costs an n^p
tensor: p = 2 (first derivatives) is O(n^2) beyond the eigendecompositions, p = 3 (second
derivatives) O(n^3) memory.
"""

from __future__ import annotations

import math

import numpy as np

from ..core import Primitive, ShapedArray, Zero, is_undefined, static_size
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import OPT_REAL, one_of
from . import _batching
from .elementwise import _nonlinear

# relative spread of a cluster of points below which divided differences use the Taylor
# expansion (next neglected term ~ (1e-4)^4 relative; the recursion above it loses ~1e-12)
_CLUSTER = 1e-4


# ============================================================ scalar functions by name
class _Scalar:
    """A named scalar function: value, k-th derivative, tie-robust first divided difference,
    and the scale against which points count as clustered (1: absolute, |x|: relative)."""

    relative = False

    def __init__(self, power=None):
        self.power = power

    def scale(self, xp, c):
        return xp.abs(c) if self.relative else xp.ones_like(c)


def _safe_div(xp, num, den, at_zero):
    """num / den, and ``at_zero`` where den == 0."""
    zero = den == 0
    return xp.where(zero, at_zero, num / xp.where(zero, xp.ones_like(den), den))


def _ordered(xp, x, y):
    return xp.minimum(x, y), xp.maximum(x, y)


class _Exp(_Scalar):
    def f(self, xp, x):
        return xp.exp(x)

    def deriv(self, xp, k, x):
        return xp.exp(x)

    def dd1(self, xp, x, y):
        lo, hi = _ordered(xp, x, y)
        d = lo - hi  # <= 0: no overflow
        return xp.exp(hi) * _safe_div(xp, xp.expm1(d), d, xp.ones_like(d))


class _Log(_Scalar):
    relative = True

    def f(self, xp, x):
        return xp.log(x)

    def deriv(self, xp, k, x):
        if k == 0:
            return xp.log(x)
        return ((-1.0) ** (k - 1) * math.factorial(k - 1)) * x ** (-float(k))

    def dd1(self, xp, x, y):
        lo, hi = _ordered(xp, x, y)
        t = _safe_div(xp, lo - hi, hi, xp.zeros_like(hi))  # in [-1, 0]
        ratio = _safe_div(xp, xp.log1p(t), t, xp.ones_like(t))
        return ratio / hi


class _Pow(_Scalar):
    relative = True

    def f(self, xp, x):
        return x ** float(self.power)

    def deriv(self, xp, k, x):
        c = 1.0
        for j in range(k):
            c *= self.power - j
        if c == 0.0:
            return xp.zeros_like(x)
        return c * x ** float(self.power - k)

    def dd1(self, xp, x, y):
        p = float(self.power)
        lo, hi = _ordered(xp, x, y)
        t = _safe_div(xp, lo - hi, hi, xp.zeros_like(hi))  # in [-1, 0] for x, y >= 0
        ratio = _safe_div(xp, xp.expm1(p * xp.log1p(t)), t, p * xp.ones_like(t))
        both_zero = hi == 0
        safe_hi = xp.where(both_zero, xp.ones_like(hi), hi)
        at_zero = self.deriv(xp, 1, hi)  # f'(0): 0, 1 or inf
        return xp.where(both_zero, at_zero, safe_hi ** (p - 1.0) * ratio)


class _Sqrt(_Pow):
    def __init__(self, power=None):
        super().__init__(0.5)

    def f(self, xp, x):
        return xp.sqrt(x)

    def dd1(self, xp, x, y):
        return 1.0 / (xp.sqrt(x) + xp.sqrt(y))


class _Sin(_Scalar):
    def f(self, xp, x):
        return xp.sin(x)

    def deriv(self, xp, k, x):
        return (xp.sin, xp.cos, lambda v: -xp.sin(v), lambda v: -xp.cos(v))[k % 4](x)

    def dd1(self, xp, x, y):  # cos(m) sin(h)/h, m = (x + y)/2, h = (x - y)/2
        h = (x - y) * 0.5
        return xp.cos((x + y) * 0.5) * _safe_div(xp, xp.sin(h), h, xp.ones_like(h))


class _Cos(_Scalar):
    def f(self, xp, x):
        return xp.cos(x)

    def deriv(self, xp, k, x):
        return (xp.cos, lambda v: -xp.sin(v), lambda v: -xp.cos(v), xp.sin)[k % 4](x)

    def dd1(self, xp, x, y):
        h = (x - y) * 0.5
        return -xp.sin((x + y) * 0.5) * _safe_div(xp, xp.sin(h), h, xp.ones_like(h))


FUNCTIONS = {"exp": _Exp, "log": _Log, "sqrt": _Sqrt, "pow": _Pow, "sin": _Sin, "cos": _Cos}


def scalar_function(fn: str, power=None) -> _Scalar:
    if fn not in FUNCTIONS:
        raise ShapeError(
            f"funm: unknown function {fn!r}; named functions are {', '.join(FUNCTIONS)} "
            f"(pow takes a power)."
        )
    if (fn == "pow") != (power is not None):
        raise ShapeError(
            f"funm: a power is needed with (and only with) fn='pow'; got fn={fn!r}, "
            f"power={power!r}."
        )
    return FUNCTIONS[fn](power)


# ==================================================================== divided differences
def divided_difference(xp, g: _Scalar, points):
    """f[x_0, ..., x_m] for broadcastable arrays ``points`` (tie-robust, see module doc)."""
    memo: dict = {}

    def dd(idx: tuple):
        if idx in memo:
            return memo[idx]
        if len(idx) == 1:
            out = g.f(xp, points[idx[0]])
        elif len(idx) == 2:
            out = g.dd1(xp, points[idx[0]], points[idx[1]])
        else:
            out = _dd_many(idx)
        memo[idx] = out
        return out

    def _dd_many(idx):
        m = len(idx) - 1
        xs = [points[i] for i in idx]
        c = sum(xs[1:], xs[0]) * (1.0 / len(xs))
        lo = hi = xs[0]
        for x in xs[1:]:
            lo, hi = xp.minimum(lo, x), xp.maximum(hi, x)
        ys = [x - c for x in xs]
        p2 = sum((y * y for y in ys[1:]), ys[0] * ys[0])
        p3 = sum((y * y * y for y in ys[1:]), ys[0] * ys[0] * ys[0])
        taylor = (g.deriv(xp, m, c) * (1.0 / math.factorial(m))
                  + g.deriv(xp, m + 2, c) * (0.5 / math.factorial(m + 2)) * p2
                  + g.deriv(xp, m + 3, c) * (1.0 / (3 * math.factorial(m + 3))) * p3)
        best, best_den = None, None
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                den = xs[b] - xs[a]
                num = dd(idx[:a] + idx[a + 1:]) - dd(idx[:b] + idx[b + 1:])
                val = _safe_div(xp, num, den, xp.zeros_like(num))
                if best is None:
                    best, best_den = val, xp.abs(den)
                else:
                    better = xp.abs(den) > best_den
                    best = xp.where(better, val, best)
                    best_den = xp.where(better, xp.abs(den), best_den)
        clustered = (hi - lo) <= _CLUSTER * g.scale(xp, c)
        return xp.where(clustered, taylor, best)

    return dd(tuple(range(len(points))))


# ================================================================== the funm primitive
def _funm_cost(in_avals, out_avals, **params):
    """One eigendecomposition (~9 n^3) per distinct matrix of the chain (at most p), the
    n^p divided-difference tensor contracted with the p - 1 links, and the basis changes."""
    a = in_avals[0]
    batch = static_size(ShapedArray(a.shape[:-2], a.dtype))
    if batch is None or not a.is_static:
        return None
    n, p = a.shape[-1], (len(in_avals) + 1) // 2
    return batch * (9 * p * n**3 + 4 * (p - 1) * n**3 + (p - 1) * n ** (p + 1))


funm_p = Primitive(
    "funm", decomposition=True, cost=_funm_cost,
    params={"fn": one_of(FUNCTIONS), "power": OPT_REAL},
    convention="f(T)[top-right block] for the block bidiagonal T with Hermitian diagonal "
    "blocks (their Hermitian parts) a_1..a_p and superdiagonal blocks e_1..e_{p-1}; p = 1: "
    "f(A). Divided differences of the named scalar f: exact at every degeneracy, to any order",
)
_batching.leading(funm_p)  # maps over leading axes (one eigh per matrix)


@funm_p.def_abstract_eval
def _funm_aval(*ops, fn, power):
    scalar_function(fn, power)
    if len(ops) % 2 == 0:
        raise ShapeError(
            f"funm: expected p Hermitian matrices and p - 1 links (an odd number of operands), "
            f"got {len(ops)}."
        )
    a = ops[0]
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"funm: expected square matrices (..., n, n), got {fmt_aval(a)}.")
    if a.dtype.kind not in "fc":
        raise DTypeError(f"funm: expected a float or complex matrix, got {fmt_aval(a)}.")
    for o in ops[1:]:
        if o.shape != a.shape or o.dtype != a.dtype:
            raise ShapeError(
                f"funm: every operand must match the first ({fmt_aval(a)}), got {fmt_aval(o)}."
            )
    return a


def _adj(xp, x):
    return xp.conj(xp.matrix_transpose(x))


@funm_p.def_impl
def _funm_impl(xp, *ops, fn, power):
    # both branches of the tie-robust selections are evaluated: silence NumPy's warnings about
    # the branch that is not taken (log(0) in a Taylor term of far-apart points, ...)
    with np.errstate(all="ignore"):
        return _funm_eval(xp, ops, fn, power)


def _funm_eval(xp, ops, fn, power):
    g = scalar_function(fn, power)
    ext = xp.linalg_ext
    p = (len(ops) + 1) // 2
    mats, links = ops[:p], ops[p:]
    dtype = mats[0].dtype
    eig: dict = {}
    ws, vs = [], []
    for a in mats:  # a chain repeats its matrices: decompose each distinct one once
        if id(a) not in eig:
            eig[id(a)] = ext.eigh(ext.hermitian_part(a))
        w, v = eig[id(a)]
        ws.append(w)
        vs.append(v)
    if p == 1:
        fw = xp.astype(g.f(xp, ws[0]), dtype)
        return xp.matmul(vs[0] * fw[..., None, :], _adj(xp, vs[0]))
    nb = mats[0].ndim - 2
    n = mats[0].shape[-1]
    batch = tuple(mats[0].shape[:-2])
    points = []
    for q, w in enumerate(ws):  # l_q along index axis q of an n^p tensor
        points.append(xp.reshape(w, batch + (1,) * q + (n,) + (1,) * (p - q - 1)))
    ddt = xp.astype(divided_difference(xp, g, points), dtype)
    prod = ddt
    for r, e in enumerate(links):
        et = xp.matmul(_adj(xp, vs[r]), xp.matmul(e, vs[r + 1]))
        prod = prod * xp.reshape(et, batch + (1,) * r + (n, n) + (1,) * (p - r - 2))
    if p > 2:
        prod = xp.sum(prod, axis=tuple(range(nb + 1, nb + p - 1)))
    return xp.matmul(vs[0], xp.matmul(prod, _adj(xp, vs[-1])))


@funm_p.def_jvp
def _funm_jvp(b, primals, tangents, *, fn, power):
    p = (len(primals) + 1) // 2
    out = b.bind(funm_p, *primals, fn=fn, power=power)
    mats, links = tuple(primals[:p]), tuple(primals[p:])
    t = Zero(ShapedArray(out.shape, out.dtype))
    for q in range(p):
        da = tangents[q]
        if type(da) is Zero:
            continue
        h = b.mul(b.add(da, b.mH(da)), 0.5)  # f acts on the Hermitian part
        chain = mats[:q + 1] + mats[q:] + links[:q] + (h,) + links[q:]
        t = b.add(t, b.bind(funm_p, *chain, fn=fn, power=power))
    for r in range(p - 1):
        de = tangents[p + r]
        if type(de) is Zero:
            continue
        chain = mats + links[:r] + (de,) + links[r + 1:]
        t = b.add(t, b.bind(funm_p, *chain, fn=fn, power=power))
    return out, t


@funm_p.def_transpose
def _funm_transpose(b, ct, *ops, fn, power):
    p = (len(ops) + 1) // 2
    mats, links = ops[:p], ops[p:]
    if any(is_undefined(a) for a in mats):
        _nonlinear("funm", "a matrix of the chain (not only a link) depends on the input")
    linear = [r for r, e in enumerate(links) if is_undefined(e)]
    if len(linear) != 1:
        _nonlinear("funm", "more than one link of the chain depends on the input")
    r = linear[0]
    out = [None] * len(ops)
    if type(ct) is Zero:
        out[p + r] = Zero(links[r].aval)
        return tuple(out)
    # around the cycle a_r -> ... -> a_1 -> (ct) -> a_p -> ... -> a_{r+1}, read backwards
    new_mats = tuple(mats[r::-1]) + tuple(mats[:r:-1])
    new_links = (tuple(b.mH(e) for e in links[:r][::-1]) + (ct,)
                 + tuple(b.mH(e) for e in links[r + 1:][::-1]))
    out[p + r] = b.bind(funm_p, *new_mats, *new_links, fn=fn, power=power)
    return tuple(out)


__all__ = ["funm_p"]
