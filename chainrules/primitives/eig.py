"""``eig``: eigendecomposition of general (non-Hermitian) square matrices, A V = V diag(w).

Outputs are complex for real and complex input (w (..., n), V (..., n, n)), in LAPACK's order
(NumPy's). **Gauge**: every eigenvector has unit 2-norm and its largest-magnitude entry is real
and positive (the first such entry at ties), so V is a continuous function of A wherever the
eigenvalues are distinct, and even phase-dependent losses have the derivative finite
differences see. Inside an exactly repeated eigenvalue the basis is a generic one (see
``tie_gauge``).

**JVP.** With dV = V C: V^-1 dA V + W C = C W + dW, so with P = V^-1 dA V

* dw = diag(P);
* C_ij = F_ij P_ij for i != j, F_ij = 1/(w_j - w_i), exact off ties and 0 on them
  (``cut_inverse`` of |w_j - w_i|^2, times the conjugate difference);
* dV0 = V (F o P) has C_jj = 0; the gauge then fixes the diagonal: the unit norm removes
  Re(v_j^H dv_j) (dv_j -= v_j Re(v_j^H dv0_j)), and the phase convention adds i phi_j v_j with
  phi_j = -Im(dv_j[p_j]) / v_j[p_j] at the pivot entry p_j.

**Ties.** Two eigenvalues closer than eps * max|w| are tied (as in ``eigh``) and F is cut
there: what the cut drops is the change of basis inside a repeated eigenvalue, which is free
(GL, not U: any invertible change of basis of the eigenspace). The ``degeneracy_guard``
(op "eig") makes the backward pass report losses that depend on it or on individual values
of the group, and any use of a defective (Jordan) group whose values are tied. It also gets
the condition numbers kappa_i = |row i of V^-1| (unit columns of V), so that a Jordan block
rounding split into a resolved pair (split ~ sqrt(rounding), kappa ~ 1/sqrt(rounding)) is
checked as a group as well (``degeneracy.eig_tie_groups``, ``_inspect_eig``).

Every operation on tangents is linear (products with residuals, V^-1 among them), so reverse
mode is the transpose and higher orders follow.
"""

from __future__ import annotations

from ..core import Primitive, ShapedArray, Zero, static_size
from ..dtypes import complex_dtype, int64, is_inexact
from ..errors import DTypeError, ShapeError, fmt_aval
from ..params import REAL
from . import _batching
from . import elementwise as E
from . import reductions as R
from .degeneracy import cut_inverse_p, guard, tie_eps
from .linalg import _cols, _rows, inv_p
from .tie_gauge import generic_eig_basis


def _eig_cost(in_avals, out_avals, **params):
    a = in_avals[0]
    batch = static_size(ShapedArray(a.shape[:-2], a.dtype))
    if batch is None or not a.is_static:
        return None
    return batch * 25 * a.shape[-1] ** 3  # Hessenberg reduction + QR iterations + vectors


eig_p = Primitive(
    "eig", decomposition=True, cost=_eig_cost, multiple_results=True, params={"eps": REAL},
    convention="A V = V diag(w), complex outputs in LAPACK order; gauge: unit-norm eigenvectors "
    "whose largest-magnitude entry is real and positive; 1/(w_j - w_i) is exact off ties and 0 "
    "on ties (|w_i - w_j| <= eps max|w|); the backward pass reports "
    "losses that depend on the basis or on individual values inside a tie, or on a defective "
    "eigenvalue (DegeneracyWarning)",
)


@eig_p.def_abstract_eval
def _eig_aval(a, *, eps):
    tie_eps(eps)
    if not is_inexact(a.dtype):
        raise DTypeError(
            f"eig: expected a float or complex matrix, got {fmt_aval(a)}; convert it with "
            f".astype(tenferro.float64) (tenferro.linalg.eig does this for integers)."
        )
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"eig: expected square matrices (..., n, n), got {fmt_aval(a)}."
        )
    c = complex_dtype(a.dtype)
    return ShapedArray(a.shape[:-1], c), ShapedArray(a.shape, c)


@eig_p.def_impl
def _eig_impl(xp, a, *, eps):
    w, v = xp.eig(a)
    return xp.fix_eig_gauge(*generic_eig_basis(xp, w, v))


# ----------------------------------------------------------------------- rule helpers
def _col_sum(b, x):
    """Sum over the row axis: (..., r, k) -> (..., k)."""
    return b.reduce_sum(x, (x.ndim - 2,))


def _pivot_phase(b, v, dv):
    """phi (..., k) with v_j -> v_j (1 + i phi_j) restoring a real pivot entry: the pivot p_j is
    the largest-magnitude entry of column j (real and positive by the gauge convention)."""
    nd = v.ndim
    p = b.bind(R.argmax_p, b.abs(v), axis=nd - 2)
    rows = b.iota(v.shape, nd - 2, int64)
    onehot = b.convert(b.eq(rows, _cols(b, p, v.shape)), v.dtype)
    vp = b.real(_col_sum(b, b.mul(onehot, v)))
    return b.neg(b.div(b.imag(_col_sum(b, b.mul(onehot, dv))), vp))


@eig_p.def_jvp
def _eig_jvp(b, primals, tangents, *, eps):
    (a,), (da,) = primals, tangents
    w, v = b.bind(eig_p, a, eps=eps)
    if type(da) is Zero or a.shape[-1] == 0:
        return (w, v), (Zero(ShapedArray(w.shape, w.dtype)), Zero(ShapedArray(v.shape, v.dtype)))
    dt = v.dtype
    nd = v.ndim
    batch = tuple(range(nd - 2))
    da = b.convert(da, dt)
    vinv = b.bind(inv_p, v)  # rows: left eigenvectors u_i^H / (u_i^H v_i)
    p = b.matmul(vinv, b.matmul(da, v))  # V^-1 dA V
    kk = v.shape
    # condition numbers kappa_i = |row i of V^-1| and the tie tolerances (constants)
    kappa = b.bind(E.stop_gradient_p, b.sqrt(b.reduce_sum(b.abs2(vinv), (nd - 1,))))
    scale = b.bind(E.stop_gradient_p, b.reduce_max(b.abs(w), (w.ndim - 1,)))
    width = b.broadcast_in_dim(b.mul(scale, eps), kk, batch)
    delta = b.sub(_cols(b, w, kk), _rows(b, w, kk))  # w_j - w_i
    inv2 = b.bind(cut_inverse_p, b.abs2(delta), b.mul(width, width))  # 1/|d|^2, 0 on ties
    f = b.mul(b.conj(delta), b.convert(inv2, dt))
    row = w.shape[:-1] + (1, w.shape[-1])
    spectrum = b.bind(E.stop_gradient_p, b.concatenate(  # (..., 3, k): degeneracy._inspect_eig
        [b.reshape(b.real(w), row), b.reshape(b.imag(w), row), b.reshape(kappa, row)], nd - 2))
    dw, om = guard(b, spectrum, op="eig", eps=eps, values=b.diagonal(p),
                   rotation=b.mul(f, p))
    dv = b.matmul(v, om)
    # unit norm: remove the component Re(v_j^H dv_j) along v_j
    along = b.real(_col_sum(b, b.mul(b.conj(v), dv)))
    dv = b.sub(dv, b.mul(v, _cols(b, b.convert(along, dt), kk)))
    # phase: keep the pivot entry real
    phi = _pivot_phase(b, v, dv)
    iphi = b.mul(b.convert(phi, dt), b.full(phi.shape, 1j, dt))
    dv = b.add(dv, b.mul(v, _cols(b, iphi, kk)))
    return (w, v), (dw, dv)


_batching.leading(eig_p)  # maps over leading axes (xp.eig is batched)
