"""Linear-algebra primitives: decompositions, solves, determinants, the matrix exponential.

Every primitive works on the last two axes and is batched over the leading ones; real and
complex. So each one's vmap rule is ``_batching.leading`` (the batch is one more leading axis),
declared after the primitive. The derivation of each JVP is sketched next to it;
``design/linalg.md`` has the full story. All JVPs apply only linear operations to tangents
(``dot_general`` with residuals, elementwise products with residuals, triangular solves,
``solve`` and ``expm_frechet`` in their linear argument), so reverse mode is their transpose
and every order of derivative works.

Conventions shared by the spectral decompositions:

* **Ties.** Two values closer than ``eps * scale`` (``scale`` = the largest singular value, or
  the largest eigenvalue magnitude; held constant under differentiation) are *tied*: exactly
  degenerate as far as the rules are concerned (LAPACK splits exact degeneracies by rounding).
  The SVD's ``1/(s_j^2 - s_i^2)`` is split as ``E_ij D_ij`` with ``E = 1/(s_j - s_i)`` and
  ``D = 1/(s_i + s_j)``; each factor is exact off ties and 0 on them (``cut_inverse``), as is
  ``1/s`` for zero singular values and ``eigh``'s ``1/(w_j - w_i)``. What the cut drops is only
  the rotation inside a degenerate subspace, which a gauge-invariant loss does not feel; where a
  loss does feel it, or depends on individual values of a multiplet, ``degeneracy_guard``
  makes the backward pass report it (``DegeneracyWarning``; ``degeneracy.py``).
  design/linalg.md derives which losses are exact and why the rest cannot be.
* **Gauge.** ``svd``: the largest-magnitude entry of every right singular vector (column of
  ``V``) is real and positive, and ``U`` follows from ``A v_j = s_j u_j``. ``eigh``: the
  largest-magnitude entry of every eigenvector is real and positive. The JVPs differentiate
  exactly this gauge-fixed function, so even phase-dependent losses match finite differences.
  ``qr``: ``diag(R)`` is real (and non-negative with ``positive=True``).
* ``eigh`` and ``cholesky`` are functions of the Hermitian part ``(A + A^H)/2`` of their input.
"""

from __future__ import annotations

import numpy as np

from ..core import Primitive, ShapedArray, Zero, is_undefined, static_size
from ..dtypes import int64, is_complex, is_inexact, real_dtype
from ..errors import DTypeError, LinAlgError, ShapeError, SingularMatrixError, fmt_aval
from ..params import BOOL, NEW_SIZE, OPT_POS_INT, OPT_REAL, REAL
from . import _batching
from . import elementwise as _elementwise
from . import reductions as _reductions
from ._checks import require_inexact, require_real, same_shape_and_dtype
from .degeneracy import (
    check_truncation_ties,
    checks_on,
    cut_inverse_p,
    default_tie_eps,
    degeneracy_check_p,
    degeneracy_guard_p,
    guard,
    on_host,
    tie_eps,
)
from .elementwise import _nonlinear
from .spectral import funm_p
from .tie_gauge import generic_eigh_basis, generic_svd_basis


# ============================================================================ errors
def _lapack(xp, op: str, fn, a, problem: str, fix: str, *others):
    """Run a LAPACK call; turn its failure (or a non-finite result of finite input, which some
    GPU libraries return instead of failing) into a ``SingularMatrixError``. A non-finite
    right-hand side in ``others`` (an inf cotangent in solve's backward pass) makes a
    non-finite result the right answer, not a sign of singularity."""
    try:
        out = fn()
    except np.linalg.LinAlgError as e:
        raise SingularMatrixError(_singular_message(xp, op, a, problem, fix)) from e
    if not bool(xp.all(xp.isfinite(out))) and all(
            bool(xp.all(xp.isfinite(x))) for x in (a, *others)):
        raise SingularMatrixError(_singular_message(xp, op, a, problem, fix))
    return out


def _singular_message(xp, op, a, problem, fix):
    aval = ShapedArray(a.shape, xp.np_dtype(a.dtype))
    return f"{op}: {problem} ({fmt_aval(aval)}). {fix}"


_SINGULAR_FIX = (
    "Use tenferro.linalg.pinv (the pseudo-inverse) or regularise the matrix. det is "
    "differentiable at singular matrices (its derivative is the adjugate); inv, solve and "
    "log|det| (slogdet) are not, and their derivatives use the inverse."
)


# ============================================================================== costs
def _lapack_cost(per_matrix):
    """A cost formula: ``per_matrix(m, n)`` FLOPs for each (m, n) matrix of the first operand."""

    def cost(in_avals, out_avals, **params):
        a = in_avals[0]
        batch = static_size(ShapedArray(a.shape[:-2], a.dtype))
        if batch is None or not a.is_static:
            return None
        return batch * per_matrix(*a.shape[-2:])

    return cost


_SVD_COST = _lapack_cost(lambda m, n: 4 * m * n * min(m, n) + 8 * min(m, n) ** 3)
_CUBIC = {  # LAPACK estimates for square (n, n) problems
    "eigh": 9, "cholesky": 1 / 3, "solve": 2 / 3, "lu": 2 / 3, "expm": 20, "expm_frechet": 40,
    "adjugate": 2,  # LU and the inverse (the SVD fallback only near singular matrices)
}


def _cubic_cost(name):
    k = _CUBIC[name]
    return _lapack_cost(lambda m, n: int(k * n**3))


# ============================================================================ checks
def _require_matrix(op: str, a, *, square: bool = False) -> None:
    if not is_inexact(a.dtype):
        raise DTypeError(
            f"{op}: expected a float or complex matrix, got {fmt_aval(a)}; convert it with "
            f".astype(tenferro.float64) (the tenferro.linalg functions do this for integers)."
        )
    if a.ndim < 2:
        raise ShapeError(
            f"{op}: expected a matrix (or a batch of matrices, shape (..., m, n)), got "
            f"{fmt_aval(a)}; reshape a vector to (n, 1) or (1, n)."
        )
    if square and a.shape[-1] != a.shape[-2]:
        raise ShapeError(
            f"{op}: expected square matrices (..., n, n), got {fmt_aval(a)}; {op} is defined "
            f"for square matrices only."
        )


def _require_same_batch_and_dtype(op: str, a, b) -> None:
    if a.dtype != b.dtype:
        raise DTypeError(
            f"{op}: operand dtypes differ ({fmt_aval(a)}, {fmt_aval(b)}); the primitive does "
            f"not promote. Use the tenferro.linalg function (which promotes) or .astype first."
        )
    if a.shape[:-2] != b.shape[:-2]:
        raise ShapeError(
            f"{op}: batch shapes differ ({fmt_aval(a)} vs {fmt_aval(b)}); the primitive does not "
            f"broadcast. Use the tenferro.linalg function (which broadcasts batch axes)."
        )


def _zero(x) -> Zero:
    return Zero(ShapedArray(x.shape, x.dtype))


# ==================================================================== rule helpers


def _batch(nd: int) -> tuple:
    return tuple(range(nd - 2))


def _adjmul(b, x, y):
    """x^H y over the last two axes (no explicit transpose copy)."""
    nd = x.ndim
    bt = _batch(nd)
    return b.dot_general(b.conj(x), y, (((nd - 2,), (nd - 2,)), (bt, bt)))


def _cols(b, v, shape):
    """(..., k) -> shape (..., r, k): entry [..., i, j] = v[..., j] (scales columns)."""
    nd = len(shape)
    return b.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 1,))


def _rows(b, v, shape):
    """(..., r) -> shape (..., r, k): entry [..., i, j] = v[..., i] (scales rows)."""
    nd = len(shape)
    return b.broadcast_in_dim(v, shape, tuple(range(nd - 2)) + (nd - 2,))


def _per_matrix(b, c, shape):
    """(...,) -> shape (..., *rest): one value per matrix of the batch."""
    return b.broadcast_in_dim(c, shape, tuple(range(c.ndim)))


def _scale(b, x):
    """max |x| over the last axis, held constant under differentiation."""
    return b.bind(_elementwise.stop_gradient_p, b.reduce_max(b.abs(x), (x.ndim - 1,)))


def _cut(b, d, w):
    """1/d where |d| > w, 0 on ties (see ``cut_inverse_p``)."""
    return b.bind(cut_inverse_p, d, w)


def _c(b, x, dtype):
    """A real residual in the dtype of the tangent it multiplies."""
    return b.convert(x, dtype)


def _i_times(b, x, dtype):
    """i * x for real x, as ``dtype`` (linear in x)."""
    return b.mul(b.convert(x, dtype), b.full(x.shape, 1j, dtype))


def _gauge_phase(b, v, dv):
    """The rotation keeping the largest-magnitude entry of each column of ``v`` real.

    ``v[p_j, j]`` is real and positive (the gauge convention); a tangent ``dv`` that ignores
    the convention is corrected by ``v_j -> v_j (1 + i phi_j)`` with
    ``phi_j = -Im(dv[p_j, j]) / v[p_j, j]``. Returns ``phi`` (..., k), linear in ``dv``.
    """
    nd = v.ndim
    p = b.bind(_reductions.argmax_p, b.abs(v), axis=nd - 2)
    rows = b.iota(v.shape, nd - 2, int64)
    onehot = b.convert(b.eq(rows, _cols(b, p, v.shape)), v.dtype)
    vp = b.real(b.reduce_sum(b.mul(onehot, v), (nd - 2,)))
    dvp = b.reduce_sum(b.mul(onehot, dv), (nd - 2,))
    return b.neg(b.div(b.imag(dvp), vp))


def _slice_last2(b, x, rows=None, cols=None):
    """x[..., r0:r1, c0:c1] with ``rows``/``cols`` as (start, stop) pairs or None."""
    nd = x.ndim
    start = [0] * nd
    limit = list(x.shape)
    if rows is not None:
        start[nd - 2], limit[nd - 2] = rows
    if cols is not None:
        start[nd - 1], limit[nd - 1] = cols
    return b.slice(x, tuple(start), tuple(limit))


def _trisolve(b, a, rhs, *, left_side=True, lower=True, transpose_a=False, conjugate_a=False):
    return b.bind(triangular_solve_p, a, rhs, left_side=left_side, lower=lower,
                  transpose_a=transpose_a, conjugate_a=conjugate_a)


# =================================================================== broadening
# No rule uses the Lorentzian any more (ties are cut instead: ``cut_inverse_p``). It stays
# registered so that gradient graphs saved by earlier versions still load and run.
broadened_inverse_p = Primitive(
    "broadened_inverse",
    convention="F = d / (d^2 + w^2) (0 where d = w = 0), the Lorentzian-broadened 1/d; its "
    "derivative in d is taken as -F^2 (the derivative of 1/d at the broadened value; exact "
    "Lorentzian: (w^2 - d^2)/(d^2 + w^2)^2, equal up to O(w^2/d^2)), so every order stays "
    "finite at d = 0 instead of being amplified by 1/w^2; the derivative in w is exact",
)
_batching.leading(broadened_inverse_p)


@broadened_inverse_p.def_abstract_eval
def _broadened_inverse_aval(d, w):
    a = same_shape_and_dtype("broadened_inverse", d, w)
    require_real("broadened_inverse", a)
    require_inexact("broadened_inverse", a)
    return a


broadened_inverse_p.def_impl(lambda xp, d, w: xp.linalg_ext.broadened_inverse(d, w))


@broadened_inverse_p.def_jvp
def _broadened_inverse_jvp(b, primals, tangents):
    """Why -F^2: exactly degenerate values come out of LAPACK split by rounding (d ~ 1e-16),
    where the Lorentzian's own slope 1/w^2 (~1e20) would multiply rounding noise in every
    second derivative. -F^2 is the slope of 1/d for d >> w and vanishes smoothly at d = 0."""
    (d, w), (td, tw) = primals, tangents
    f = b.bind(broadened_inverse_p, d, w)
    t = Zero(ShapedArray(f.shape, f.dtype))
    if type(td) is not Zero:
        t = b.mul(td, b.neg(b.mul(f, f)))
    if type(tw) is not Zero:  # dF/dw = -2 w d / (d^2 + w^2)^2 = -2 w F / (d^2 + w^2)
        den = b.add(b.mul(d, d), b.mul(w, w))
        safe = b.select(b.eq(den, 0), b.ones_like(den), den)
        t = b.add(t, b.mul(tw, b.div(b.mul(b.mul(w, f), -2.0), safe)))
    return f, t


# ============================================================================== SVD
svd_p = Primitive(
    "svd", decomposition=True, cost=_SVD_COST,
    params={"full_matrices": BOOL, "eps": REAL},
    multiple_results=True,
    convention="thin (or full) SVD A = U diag(S) Vh; gauge: the largest-magnitude entry of each "
    "column of V is real and positive; 1/(s_j^2 - s_i^2) = 1/(s_j - s_i) * 1/(s_j + s_i) and 1/s "
    "are exact off ties and 0 on ties (values closer than eps * max(S)); the backward pass "
    "reports losses that depend on the basis or on individual values inside a tie "
    "(DegeneracyWarning)",
)
_batching.leading(svd_p)


def _svd_shapes(a, full_matrices):
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    if full_matrices:
        return batch + (m, m), batch + (k,), batch + (n, n)
    return batch + (m, k), batch + (k,), batch + (k, n)


@svd_p.def_abstract_eval
def _svd_aval(a, *, full_matrices, eps):
    tie_eps(eps)
    _require_matrix("svd", a)
    us, ss, vs = _svd_shapes(a, full_matrices)
    return (ShapedArray(us, a.dtype), ShapedArray(ss, real_dtype(a.dtype)),
            ShapedArray(vs, a.dtype))


@svd_p.def_impl
def _svd_impl(xp, a, *, full_matrices, eps):
    ext = xp.linalg_ext
    u, s, vh = ext.svd(a, full_matrices)
    return ext.fix_svd_gauge(*generic_svd_basis(xp, u, s, vh))


def _values_part(dtype, square: bool) -> str:
    """The guard's name for dS: ``signed_values`` for a real square matrix, whose single zero
    singular value has a signed branch the rule differentiates (``degeneracy._zero_values``)."""
    return "signed_values" if square and not is_complex(dtype) else "values"


def _svd_tangents_tall(b, u, s, v, da, *, eps, u_perp=None):
    """Tangents of the thin SVD of a tall (or square) matrix, before the gauge is fixed.

    ``u`` (..., m, k), ``v`` (..., k, k) square, ``da`` (..., m, k). With X = dA V and
    dP = U^H X: dS = Re diag dP and, writing A = dP + dP^H, B = dP - dP^H,

        U^H dU = F o (dP S + S dP^H) = (E o A + D o B) / 2,
        V^H dV = F o (S dP + dP^H S) = (E o A - D o B) / 2,

    with F_ij = 1/(s_j^2 - s_i^2) = E_ij D_ij, E_ij = 1/(s_j - s_i), D_ij = 1/(s_i + s_j).
    E o A is the rotation of U and V *together*; inside a tie it is pure gauge, and E is cut
    there. D o B, their relative rotation, is determined whenever s_i + s_j > 0 and stays exact
    inside a tie (the derivative of U_k V_k^H needs it); D is cut only for pairs of zero
    singular values, where the relative rotation is gauge too. The diagonal of D o B is the
    complex phase term i Im(dP_jj)/(2 s_j), split evenly between U and V. The guards make the
    backward pass check that the loss is blind to what was cut (``degeneracy.py``).
    (I - U U^H) dU = (X - U dP) S^-1, and ``u_perp`` (full_matrices): dU_perp = -U S^-1 X^H U_perp.
    1/s is cut like D (0 for zero singular values).
    """
    dt = u.dtype
    m, k = u.shape[-2:]
    kk = s.shape[:-1] + (k, k)
    x = b.matmul(da, v)
    dp = _adjmul(b, u, x)
    width = b.mul(_scale(b, s), eps)
    w = _per_matrix(b, width, kk)
    s_c, s_r = _cols(b, s, kk), _rows(b, s, kk)
    e_half = _c(b, b.mul(_cut(b, b.sub(s_c, s_r), w), 0.5), dt)
    d_half = _c(b, b.mul(_cut(b, b.add(s_c, s_r), w), 0.5), dt)
    sinv = _cut(b, s, _per_matrix(b, width, s.shape))
    dph = b.mH(dp)
    parts = {_values_part(dt, m == k): b.real(b.diagonal(dp)),
             "rotation": b.mul(e_half, b.add(dp, dph)),
             "zero_rotation": b.mul(d_half, b.sub(dp, dph))}
    if m > k:  # X S^-1, whose complement part is (I - U U^H) dU (see below)
        parts["complement"] = b.mul(x, _c(b, _cols(b, sinv, x.shape), dt))
    ds, ea, db, *comp = guard(b, s, op="svd", eps=eps, **parts)
    om_u, om_v = b.add(ea, db), b.sub(ea, db)
    if m > k:
        sinv_kk = _c(b, _cols(b, sinv, kk), dt)
        du = b.add(b.matmul(u, b.sub(om_u, b.mul(dp, sinv_kk))), comp[0])
    else:
        du = b.matmul(u, om_u)
    dv = b.matmul(v, om_v)
    du_perp = None
    if u_perp is not None:
        xu = _adjmul(b, x, u_perp)  # X^H U_perp (..., k, m - k)
        du_perp = b.neg(b.matmul(u, b.mul(_c(b, _rows(b, sinv, xu.shape), dt), xu)))
    return du, ds, dv, du_perp


@svd_p.def_jvp
def _svd_jvp(b, primals, tangents, *, full_matrices, eps):
    (a,), (da,) = primals, tangents
    u, s, vh = b.bind(svd_p, a, full_matrices=full_matrices, eps=eps)
    m, n = a.shape[-2:]
    k = min(m, n)
    if type(da) is Zero or k == 0:
        return (u, s, vh), (_zero(u), _zero(s), _zero(vh))
    dt = a.dtype
    u_t = _slice_last2(b, u, cols=(0, k)) if u.shape[-1] != k else u
    vh_t = _slice_last2(b, vh, rows=(0, k)) if vh.shape[-2] != k else vh
    v_t = b.mH(vh_t)
    if m >= n:
        u_perp = _slice_last2(b, u, cols=(k, m)) if full_matrices and m > k else None
        du, ds, dv, du_perp = _svd_tangents_tall(
            b, u_t, s, v_t, da, eps=eps, u_perp=u_perp)
        dv_perp = None
    else:
        v_perp = b.mH(_slice_last2(b, vh, rows=(k, n))) if full_matrices and n > k else None
        dv, ds, du, dv_perp = _svd_tangents_tall(
            b, v_t, s, u_t, b.mH(da), eps=eps, u_perp=v_perp)
        du_perp = None
    if is_complex(dt):
        iphi = _i_times(b, _gauge_phase(b, v_t, dv), dt)
        dv = b.add(dv, b.mul(v_t, _cols(b, iphi, v_t.shape)))
        du = b.add(du, b.mul(u_t, _cols(b, iphi, u_t.shape)))
    if full_matrices and m > k and du_perp is not None:
        du = b.concatenate([du, du_perp], u.ndim - 1)
    dvh = b.mH(dv)
    if full_matrices and n > k and dv_perp is not None:
        dvh = b.concatenate([dvh, b.mH(dv_perp)], vh.ndim - 2)
    return (u, s, vh), (du, ds, dvh)


svdvals_p = Primitive(
    "svdvals", decomposition=True, cost=_SVD_COST,
    params={"eps": REAL},
    convention="singular values only (no vectors computed); derivative dS = Re diag(U^H dA V) "
    "with the vectors recomputed by svd when needed; a matrix with NaN or inf entries raises "
    "LinAlgError (as svd and NumPy's svd)",
)
_batching.leading(svdvals_p)


@svdvals_p.def_abstract_eval
def _svdvals_aval(a, *, eps):
    tie_eps(eps)
    _require_matrix("svdvals", a)
    return ShapedArray(a.shape[:-2] + (min(a.shape[-2:]),), real_dtype(a.dtype))


@svdvals_p.def_impl
def _svdvals_impl(xp, a, *, eps):
    # NaN/inf have no singular values: NumPy's and svd's LinAlgError, not NaN (whose count
    # above a tolerance, matrix_rank's, would silently be 0); checked before LAPACK sees them
    if not bool(xp.all(xp.isfinite(a))):
        raise LinAlgError(
            f"svdvals: the matrix {fmt_aval(ShapedArray(a.shape, xp.np_dtype(a.dtype)))} has "
            f"NaN or inf entries, so its singular values (and rank) are not defined; check "
            f"the input (tenferro.isfinite)."
        )
    return xp.linalg_ext.svdvals(a)


@svdvals_p.def_jvp
def _svdvals_jvp(b, primals, tangents, *, eps):
    (a,), (da,) = primals, tangents
    s = b.bind(svdvals_p, a, eps=eps)
    if type(da) is Zero or s.shape[-1] == 0:
        return s, _zero(s)
    u, _, vh = b.bind(svd_p, a, full_matrices=False, eps=eps)
    w = _adjmul(b, u, da)  # U^H dA (..., k, n); dS_j = Re sum_q w_jq conj(Vh_jq)
    ds = b.real(b.reduce_sum(b.mul(w, b.conj(vh)), (a.ndim - 1,)))
    square = a.shape[-1] == a.shape[-2]
    return s, guard(b, s, op="svd", eps=eps, **{_values_part(a.dtype, square): ds})


# ============================================================================== eigh
eigh_p = Primitive(
    "eigh", decomposition=True, cost=_cubic_cost("eigh"),
    params={"eps": REAL},
    multiple_results=True,
    convention="eigendecomposition of the Hermitian part (A + A^H)/2, ascending eigenvalues; "
    "gauge: the largest-magnitude entry of each eigenvector is real and positive; "
    "1/(w_j - w_i) is exact off ties and 0 on ties (eigenvalues closer than eps * max|w|); the "
    "backward pass reports losses that depend on the basis or on individual eigenvalues inside "
    "a tie (DegeneracyWarning)",
)
_batching.leading(eigh_p)


@eigh_p.def_abstract_eval
def _eigh_aval(a, *, eps):
    tie_eps(eps)
    _require_matrix("eigh", a, square=True)
    return ShapedArray(a.shape[:-1], real_dtype(a.dtype)), ShapedArray(a.shape, a.dtype)


@eigh_p.def_impl
def _eigh_impl(xp, a, *, eps):
    ext = xp.linalg_ext
    w, v = ext.eigh(ext.hermitian_part(a))
    return ext.fix_eigh_gauge(*generic_eigh_basis(xp, w, v))


@eigh_p.def_jvp
def _eigh_jvp(b, primals, tangents, *, eps):
    """A V = V W: with P = V^H dA_h V, dw = diag P, V^H dV = F o P (F_ij = 1/(w_j - w_i)).

    Inside a tie F is cut: the rotation there is pure gauge. A loss that depends on it, or on
    individual eigenvalues of the multiplet (e.g. V diag(f(w)) V^H, whose derivative needs the
    divided difference (f(w_i) - f(w_j))/(w_i - w_j) -> f'(w) that the rotation carries), is
    reported by the guards; ``funm`` is the exact way to compute such functions."""
    (a,), (da,) = primals, tangents
    w, v = b.bind(eigh_p, a, eps=eps)
    if type(da) is Zero or a.shape[-1] == 0:
        return (w, v), (_zero(w), _zero(v))
    dt = a.dtype
    p = _adjmul(b, v, b.matmul(da, v))
    ph = b.mul(b.add(p, b.mH(p)), 0.5)
    kk = v.shape
    delta = b.sub(_cols(b, w, kk), _rows(b, w, kk))
    width = _per_matrix(b, b.mul(_scale(b, w), eps), kk)
    f = _c(b, _cut(b, delta, width), dt)
    dw, om = guard(b, w, op="eigh", eps=eps, values=b.real(b.diagonal(ph)),
                   rotation=b.mul(f, ph))
    dv = b.matmul(v, om)
    if is_complex(dt):
        iphi = _i_times(b, _gauge_phase(b, v, dv), dt)
        dv = b.add(dv, b.mul(v, _cols(b, iphi, v.shape)))
    return (w, v), (dw, dv)


eigvalsh_p = Primitive(
    "eigvalsh", decomposition=True, cost=_cubic_cost("eigh"),
    params={"eps": REAL},
    convention="eigenvalues of the Hermitian part (A + A^H)/2, ascending; dw = diag(V^H dA V) "
    "with the eigenvectors recomputed by eigh when needed",
)
_batching.leading(eigvalsh_p)


@eigvalsh_p.def_abstract_eval
def _eigvalsh_aval(a, *, eps):
    tie_eps(eps)
    _require_matrix("eigvalsh", a, square=True)
    return ShapedArray(a.shape[:-1], real_dtype(a.dtype))


eigvalsh_p.def_impl(
    lambda xp, a, *, eps: xp.linalg_ext.eigvalsh(xp.linalg_ext.hermitian_part(a)))


@eigvalsh_p.def_jvp
def _eigvalsh_jvp(b, primals, tangents, *, eps):
    (a,), (da,) = primals, tangents
    w = b.bind(eigvalsh_p, a, eps=eps)
    if type(da) is Zero or a.shape[-1] == 0:
        return w, _zero(w)
    _, v = b.bind(eigh_p, a, eps=eps)
    x = b.matmul(da, v)  # dw_j = Re sum_i conj(v_ij) (dA v)_ij
    dw = b.real(b.reduce_sum(b.mul(b.conj(v), x), (a.ndim - 2,)))
    return w, guard(b, w, op="eigh", eps=eps, values=dw)


# ================================================================================ QR
qr_p = Primitive(
    "qr", decomposition=True, cost=_lapack_cost(lambda m, n: 2 * m * n * min(m, n)),
    params={"complete": BOOL, "positive": BOOL},
    multiple_results=True,
    convention="Householder QR; diag(R) real (non-negative with positive=True); wide matrices: "
    "the leading square block determines Q",
)
_batching.leading(qr_p)


@qr_p.def_abstract_eval
def _qr_aval(a, *, complete, positive):
    _require_matrix("qr", a)
    m, n = a.shape[-2:]
    k = m if complete else min(m, n)
    batch = a.shape[:-2]
    return ShapedArray(batch + (m, k), a.dtype), ShapedArray(batch + (k, n), a.dtype)


@qr_p.def_impl
def _qr_impl(xp, a, *, complete, positive):
    ext = xp.linalg_ext
    q, r = ext.qr(a, complete)
    return ext.fix_qr_gauge(q, r, positive)


def _qr_tangents_tall(b, q, r, da):
    """A = QR, m >= n, R square. C = Q^H dA R^-1 = Q^H dQ + dR R^-1; the first term is
    anti-Hermitian, the second upper triangular with a real diagonal, so
    T := dR R^-1 = triu(C + C^H, 1) + Re diag C, dR = T R, dQ = dA R^-1 - Q T."""
    dt = q.dtype
    y = _trisolve(b, r, da, left_side=False, lower=False)
    c = _adjmul(b, q, y)
    t = b.add(b.triu(b.add(c, b.mH(c)), 1), b.diag_embed(_c(b, b.real(b.diagonal(c)), dt)))
    return b.sub(y, b.matmul(q, t)), b.matmul(t, r), y, c, t


@qr_p.def_jvp
def _qr_jvp(b, primals, tangents, *, complete, positive):
    (a,), (da,) = primals, tangents
    q, r = b.bind(qr_p, a, complete=complete, positive=positive)
    m, n = a.shape[-2:]
    if type(da) is Zero or min(m, n) == 0:
        return (q, r), (_zero(q), _zero(r))
    if m >= n:
        q_t = _slice_last2(b, q, cols=(0, n)) if q.shape[-1] != n else q
        r_t = _slice_last2(b, r, rows=(0, n)) if r.shape[-2] != n else r
        dq, dr, y, _, _ = _qr_tangents_tall(b, q_t, r_t, da)
        if q.shape[-1] != n:  # complete: dQ_perp = -Q (Q_perp^H dQ)^H = -Q Y^H Q_perp
            q_perp = _slice_last2(b, q, cols=(n, m))
            dq = b.concatenate([dq, b.neg(b.matmul(q_t, _adjmul(b, y, q_perp)))], q.ndim - 1)
            cfg = ((0, 0, 0),) * (r.ndim - 2) + ((0, m - n, 0), (0, 0, 0))
            dr = b.pad(dr, 0, cfg)
        return (q, r), (dq, dr)
    # wide: A = Q [R1 R2], the leading m x m block X = Q R1 fixes Q; R2 = Q^H Y, so
    # dR2 = Q^H dY + dQ^H Q R2 = Q^H dY - (Q^H dQ) R2, and Q^H dQ = C - T.
    r1 = _slice_last2(b, r, cols=(0, m))
    r2 = _slice_last2(b, r, cols=(m, n))
    dq, dr1, _, c, t = _qr_tangents_tall(b, q, r1, _slice_last2(b, da, cols=(0, m)))
    dr2 = b.sub(_adjmul(b, q, _slice_last2(b, da, cols=(m, n))), b.matmul(b.sub(c, t), r2))
    return (q, r), (dq, b.concatenate([dr1, dr2], r.ndim - 1))


# ========================================================================== Cholesky
cholesky_p = Primitive(
    "cholesky", decomposition=True, cost=_cubic_cost("cholesky"),
    convention="lower Cholesky factor of the Hermitian part (A + A^H)/2",
)
_batching.leading(cholesky_p)


@cholesky_p.def_abstract_eval
def _cholesky_aval(a):
    _require_matrix("cholesky", a, square=True)
    return a


cholesky_p.def_impl(lambda xp, a: _lapack(
    xp, "cholesky", lambda: xp.linalg_ext.cholesky(xp.linalg_ext.hermitian_part(a)), a,
    "the Hermitian part of the matrix is not positive definite",
    "Cholesky needs a Hermitian positive-definite matrix; check the input, or add a multiple "
    "of the identity (a small shift) if it is only semi-definite."))


@cholesky_p.def_jvp
def _cholesky_jvp(b, primals, tangents):
    """dA = dL L^H + L dL^H, so X := L^-1 dA L^-H = Phi + Phi^H with Phi = L^-1 dL lower
    triangular with a real diagonal: Phi = tril(X, -1) + diag(X)/2, dL = L Phi."""
    (a,), (da,) = primals, tangents
    lo = b.bind(cholesky_p, a)
    if type(da) is Zero or a.shape[-1] == 0:
        return lo, _zero(lo)
    dt = a.dtype
    dah = b.mul(b.add(da, b.mH(da)), 0.5)
    z = _trisolve(b, lo, dah, left_side=True, lower=True)
    x = _trisolve(b, lo, z, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    half_diag = b.diag_embed(_c(b, b.mul(b.real(b.diagonal(x)), 0.5), dt))
    return lo, b.matmul(lo, b.add(b.tril(x, -1), half_diag))


# ================================================================== triangular solve
triangular_solve_p = Primitive(
    "triangular_solve", cost=_lapack_cost(lambda m, n: m * m * n),
    params={"left_side": BOOL, "lower": BOOL, "transpose_a": BOOL, "conjugate_a": BOOL},
    convention="solves op(A) X = B (left_side) or X op(A) = B, op = transpose/conjugate as "
    "flagged; only the lower (upper) triangle of A is read, so only it gets a derivative",
)
_batching.leading(triangular_solve_p)


@triangular_solve_p.def_abstract_eval
def _trisolve_aval(a, rhs, *, left_side, lower, transpose_a, conjugate_a):
    _require_matrix("triangular_solve", a, square=True)
    _require_matrix("triangular_solve", rhs)
    _require_same_batch_and_dtype("triangular_solve", a, rhs)
    n = a.shape[-1]
    got = rhs.shape[-2] if left_side else rhs.shape[-1]
    if got != n:
        side = "rows" if left_side else "columns"
        raise ShapeError(
            f"triangular_solve: the right-hand side {fmt_aval(rhs)} needs {n} {side} to match "
            f"the triangular matrix {fmt_aval(a)}."
        )
    return rhs


triangular_solve_p.def_impl(
    lambda xp, a, rhs, *, left_side, lower, transpose_a, conjugate_a:
    xp.linalg_ext.solve_triangular(a, rhs, left_side, lower, transpose_a, conjugate_a)
)


@triangular_solve_p.def_jvp
def _trisolve_jvp(b, primals, tangents, **params):
    """X = T^-1 B (left) with T = op(tri(A)): dX = T^-1 (dB - dT X); right: (dB - X dT) T^-1."""
    (a, rhs), (da, drhs) = primals, tangents
    x = b.bind(triangular_solve_p, a, rhs, **params)
    t = drhs
    if type(da) is not Zero:
        dtri = b.tril(da) if params["lower"] else b.triu(da)
        if params["transpose_a"]:
            dtri = b.mT(dtri)
        if params["conjugate_a"]:
            dtri = b.conj(dtri)
        t = b.sub(t, b.matmul(dtri, x) if params["left_side"] else b.matmul(x, dtri))
    if type(t) is Zero:
        return x, _zero(x)
    return x, b.bind(triangular_solve_p, a, t, **params)


@triangular_solve_p.def_transpose
def _trisolve_transpose(b, ct, a, rhs, *, left_side, lower, transpose_a, conjugate_a):
    if is_undefined(a):
        _nonlinear("triangular_solve", "the triangular matrix depends on the input")
    if type(ct) is Zero:
        return None, Zero(rhs.aval)
    # the adjoint of op(A)^-1 is op(A)^-H: flip both the transpose and the conjugation
    return None, _trisolve(b, a, ct, left_side=left_side, lower=lower,
                           transpose_a=not transpose_a, conjugate_a=not conjugate_a)


# ============================================================================= solve
solve_p = Primitive(
    "solve", cost=_cubic_cost("solve"),
    convention="X = A^-1 B for square A, B of shape (..., n, k); a singular A raises, while "
    "inf/nan in B (or in a cotangent reaching the backward solve) propagate into X as in "
    "NumPy, PyTorch and JAX",
)
_batching.leading(solve_p)


@solve_p.def_abstract_eval
def _solve_aval(a, rhs):
    _require_matrix("solve", a, square=True)
    _require_matrix("solve", rhs)
    _require_same_batch_and_dtype("solve", a, rhs)
    if rhs.shape[-2] != a.shape[-1]:
        raise ShapeError(
            f"solve: the right-hand side {fmt_aval(rhs)} needs {a.shape[-1]} rows to match the "
            f"matrix {fmt_aval(a)}."
        )
    return rhs


solve_p.def_impl(lambda xp, a, rhs: _lapack(
    xp, "solve", lambda: xp.linalg_ext.solve(a, rhs), a, "the matrix is singular", _SINGULAR_FIX,
    rhs))


@solve_p.def_jvp
def _solve_jvp(b, primals, tangents):
    """X = A^-1 B: dX = A^-1 (dB - dA X)."""
    (a, rhs), (da, drhs) = primals, tangents
    x = b.bind(solve_p, a, rhs)
    t = b.sub(drhs, b.matmul(da, x))
    if type(t) is Zero:
        return x, _zero(x)
    return x, b.bind(solve_p, a, t)


@solve_p.def_transpose
def _solve_transpose(b, ct, a, rhs):
    if is_undefined(a):
        _nonlinear("solve", "the matrix depends on the input")
    if type(ct) is Zero:
        return None, Zero(rhs.aval)
    return None, b.bind(solve_p, b.mH(a), ct)


# ========================================================================= sylvester
sylvester_p = Primitive(
    "sylvester", cost=_lapack_cost(lambda m, n: 10 * m**3),
    convention="X solving A X + X B = Q (A: m x m, B: n x n, Q: m x n); linear in Q with "
    "adjoint Y solving A^H Y + Y B^H = G; dX solves A dX + dX B = dQ - dA X - X dB. Unique "
    "when no eigenvalue of A is minus one of B (otherwise SingularMatrixError)",
)
_batching.leading(sylvester_p)


@sylvester_p.def_abstract_eval
def _sylvester_aval(a, b_, q):
    _require_matrix("sylvester", a, square=True)
    _require_matrix("sylvester", b_, square=True)
    _require_matrix("sylvester", q)
    _require_same_batch_and_dtype("sylvester", a, q)
    _require_same_batch_and_dtype("sylvester", b_, q)
    if q.shape[-2] != a.shape[-1] or q.shape[-1] != b_.shape[-1]:
        raise ShapeError(
            f"sylvester: the right-hand side {fmt_aval(q)} must be (..., m, n) for A "
            f"{fmt_aval(a)} (m x m) and B {fmt_aval(b_)} (n x n)."
        )
    return q


sylvester_p.def_impl(lambda xp, a, b_, q: _lapack(
    xp, "sylvester", lambda: xp.linalg_ext.solve_sylvester(a, b_, q), a,
    "A and -B share an eigenvalue, so A X + X B = Q has no unique solution",
    "Shift A or B (the equation is singular when an eigenvalue of A is minus one of B).", b_,
    q))


@sylvester_p.def_jvp
def _sylvester_jvp(b, primals, tangents):
    """A X + X B = Q: A dX + dX B = dQ - dA X - X dB, another Sylvester solve."""
    (a, bm, q), (da, dbm, dq) = primals, tangents
    x = b.bind(sylvester_p, a, bm, q)
    t = dq
    if type(da) is not Zero:
        t = b.sub(t, b.matmul(da, x))
    if type(dbm) is not Zero:
        t = b.sub(t, b.matmul(x, dbm))
    if type(t) is Zero:
        return x, _zero(x)
    return x, b.bind(sylvester_p, a, bm, t)


@sylvester_p.def_transpose
def _sylvester_transpose(b, ct, a, bm, q):
    if is_undefined(a) or is_undefined(bm):
        _nonlinear("sylvester", "a coefficient matrix (A or B) depends on the input")
    if type(ct) is Zero:
        return None, None, Zero(q.aval)
    # <G, S(Q)> = <S^H(G), Q> with S^H the solve of A^H Y + Y B^H = G
    return None, None, b.bind(sylvester_p, b.mH(a), b.mH(bm), ct)


# ======================================================================= inv and det
inv_p = Primitive(
    "inv", decomposition=True, cost=_cubic_cost("solve"),
    convention="matrix inverse; dX = -X dA X",
)
_batching.leading(inv_p)


@inv_p.def_abstract_eval
def _inv_aval(a):
    _require_matrix("inv", a, square=True)
    return a


inv_p.def_impl(lambda xp, a: _lapack(
    xp, "inv", lambda: xp.linalg_ext.inv(a), a, "the matrix is singular, it has no inverse",
    _SINGULAR_FIX))


@inv_p.def_jvp
def _inv_jvp(b, primals, tangents):
    (a,), (da,) = primals, tangents
    x = b.bind(inv_p, a)
    if type(da) is Zero:
        return x, _zero(x)
    return x, b.neg(b.matmul(b.matmul(x, da), x))


def _trace_inv_times(b, a, da):
    """tr(A^-1 dA) = sum (A^-T o dA): elementwise in the tangent, A^-1 is a residual."""
    return b.reduce_sum(b.mul(b.mT(b.bind(inv_p, a)), da), (a.ndim - 2, a.ndim - 1))


adjugate_p = Primitive(
    "adjugate", decomposition=True, cost=_cubic_cost("adjugate"),
    convention="adj(A) = det(A) A^-1 extended continuously to every square matrix (the "
    "transposed cofactor matrix); its derivative (tr(adj dA) I - adj dA) A^-1 needs an "
    "invertible matrix",
)
_batching.leading(adjugate_p)


@adjugate_p.def_abstract_eval
def _adjugate_aval(a):
    _require_matrix("adjugate", a, square=True)
    return a


# cond_1(A) above this (relative to 1/machine epsilon) and det(A) A^-1 loses more than ~6
# digits: the adjugate is then computed from the SVD, which is exact at any rank.
_ADJ_COND = 1e-10


@adjugate_p.def_impl
def _adjugate_impl(xp, a):
    """det(A) A^-1 (LU) for well-conditioned matrices; otherwise from the SVD A = U S V^H:
    adj(A) = det(U) conj(det(V)) V diag(prod_{k != j} s_k) U^H, finite and exact at every
    rank (rank n - 1: det(U) conj(det(V)) s_1...s_{n-1} v_n u_n^H; rank <= n - 2: 0)."""
    ext = xp.linalg_ext
    n = a.shape[-1]
    if n == 0 or a.size == 0:
        return xp.zeros(a.shape, dtype=a.dtype)
    tiny = float(np.finfo(xp.np_dtype(a.dtype)).eps) / _ADJ_COND
    try:
        inv = ext.inv(a)
        norm_a = xp.max(xp.sum(xp.abs(a), axis=-2), axis=-1)
        norm_inv = xp.max(xp.sum(xp.abs(inv), axis=-2), axis=-1)
        good = xp.isfinite(norm_inv) & (norm_a * norm_inv * tiny < 1)
        if bool(xp.all(good)):
            return inv * xp.astype(ext.det(a), a.dtype)[..., None, None]
    except np.linalg.LinAlgError:
        pass
    u, s, vh = ext.svd(a, False)
    eye = xp.eye(n, dtype=xp.bool)
    others = xp.where(eye, xp.ones_like(s)[..., None, :], s[..., None, :])
    q = xp.prod(others, axis=-1)  # q_j = prod_{k != j} s_k
    phase = ext.det(u) * xp.conj(ext.det(xp.conj(xp.matrix_transpose(vh))))
    v_q = xp.conj(xp.matrix_transpose(vh)) * xp.astype(q, a.dtype)[..., None, :]
    return xp.matmul(v_q, xp.conj(xp.matrix_transpose(u))) * phase[..., None, None]


@adjugate_p.def_jvp
def _adjugate_jvp(b, primals, tangents):
    """adj(A) A = det(A) I gives d adj A = tr(adj dA) I - adj dA."""
    (a,), (da,) = primals, tangents
    adj = b.bind(adjugate_p, a)
    if type(da) is Zero:
        return adj, _zero(adj)
    nd = a.ndim
    tr = b.reduce_sum(b.mul(b.mT(adj), da), (nd - 2, nd - 1))
    eye = b.broadcast_in_dim(b.eye_like(a), a.shape, (nd - 2, nd - 1))
    rhs = b.sub(b.mul(eye, _per_matrix(b, tr, a.shape)), b.matmul(adj, da))
    return adj, b.matmul(rhs, b.bind(inv_p, a))


det_p = Primitive(
    "det", decomposition=True, cost=_cubic_cost("lu"),
    convention="d det = tr(adj(A) dA) with the adjugate adj(A) = det(A) A^-1 extended to "
    "singular matrices: finite and exact at every rank (0 at rank <= n - 2)",
)
_batching.leading(det_p)


@det_p.def_abstract_eval
def _det_aval(a):
    _require_matrix("det", a, square=True)
    return ShapedArray(a.shape[:-2], a.dtype)


det_p.def_impl(lambda xp, a: xp.linalg_ext.det(a))


@det_p.def_jvp
def _det_jvp(b, primals, tangents):
    (a,), (da,) = primals, tangents
    d = b.bind(det_p, a)
    if type(da) is Zero:
        return d, _zero(d)
    adj = b.bind(adjugate_p, a)
    return d, b.reduce_sum(b.mul(b.mT(adj), da), (a.ndim - 2, a.ndim - 1))


slogdet_p = Primitive(
    "slogdet", decomposition=True, cost=_cubic_cost("lu"),
    multiple_results=True,
    convention="(sign, log|det|); d log|det| = Re tr(A^-1 dA), d sign = i sign Im tr(A^-1 dA) "
    "(zero for real matrices); the derivative needs an invertible matrix",
)
_batching.leading(slogdet_p)


@slogdet_p.def_abstract_eval
def _slogdet_aval(a):
    _require_matrix("slogdet", a, square=True)
    return ShapedArray(a.shape[:-2], a.dtype), ShapedArray(a.shape[:-2], real_dtype(a.dtype))


slogdet_p.def_impl(lambda xp, a: xp.linalg_ext.slogdet(a))


@slogdet_p.def_jvp
def _slogdet_jvp(b, primals, tangents):
    (a,), (da,) = primals, tangents
    sign, logabs = b.bind(slogdet_p, a)
    if type(da) is Zero:
        return (sign, logabs), (_zero(sign), _zero(logabs))
    t = _trace_inv_times(b, a, da)
    dsign = _zero(sign)
    if is_complex(a.dtype):
        dsign = b.mul(sign, _i_times(b, b.imag(t), a.dtype))
    return (sign, logabs), (dsign, b.real(t))


# ========================================================================= expm
expm_p = Primitive(
    "expm", decomposition=True, cost=_cubic_cost("expm"),
    convention="matrix exponential; dexp(A)[E] = expm_frechet(A, E)",
)
_batching.leading(expm_p)


@expm_p.def_abstract_eval
def _expm_aval(a):
    _require_matrix("expm", a, square=True)
    return a


expm_p.def_impl(lambda xp, a: xp.linalg_ext.expm(a))


@expm_p.def_jvp
def _expm_jvp(b, primals, tangents):
    (a,), (da,) = primals, tangents
    y = b.bind(expm_p, a)
    if type(da) is Zero:
        return y, _zero(y)
    return y, b.bind(expm_frechet_p, a, da)


expm_frechet_p = Primitive(
    "expm_frechet", cost=_cubic_cost("expm_frechet"),
    convention="L(A, E) = int_0^1 exp(sA) E exp((1-s)A) ds, the Frechet derivative of expm; "
    "linear in E (adjoint L(A^H, .)); its derivative in A uses exp([[A, E], [0, A]])",
)
_batching.leading(expm_frechet_p)


@expm_frechet_p.def_abstract_eval
def _expm_frechet_aval(a, e):
    _require_matrix("expm_frechet", a, square=True)
    _require_matrix("expm_frechet", e, square=True)
    _require_same_batch_and_dtype("expm_frechet", a, e)
    if a.shape != e.shape:
        raise ShapeError(
            f"expm_frechet: the direction {fmt_aval(e)} must have the shape of the matrix "
            f"{fmt_aval(a)}."
        )
    return e


expm_frechet_p.def_impl(lambda xp, a, e: xp.linalg_ext.expm_frechet(a, e))


def _block_upper(b, x, y):
    """[[x, y], [0, x]] over the last two axes."""
    nd = x.ndim
    z = b.zeros_like(x) if type(x) is not Zero else x
    top = b.concatenate([x, y], nd - 1)
    bottom = b.concatenate([z, x], nd - 1)
    return b.concatenate([top, bottom], nd - 2)


@expm_frechet_p.def_jvp
def _expm_frechet_jvp(b, primals, tangents):
    """exp([[A, E], [0, A]]) = [[e^A, L(A, E)], [0, e^A]]; differentiating it in the direction
    [[dA, dE], [0, dA]] gives dL as the top-right block of L(M, dM)."""
    (a, e), (da, de) = primals, tangents
    y = b.bind(expm_frechet_p, a, e)
    if type(da) is Zero:
        if type(de) is Zero:
            return y, _zero(y)
        return y, b.bind(expm_frechet_p, a, de)
    n = a.shape[-1]
    big = b.bind(expm_frechet_p, _block_upper(b, a, e),
                 _block_upper(b, da, b.instantiate(de)))
    return y, _slice_last2(b, big, rows=(0, n), cols=(n, 2 * n))


@expm_frechet_p.def_transpose
def _expm_frechet_transpose(b, ct, a, e):
    if is_undefined(a):
        _nonlinear("expm_frechet", "the matrix (not only the direction) depends on the input")
    if type(ct) is Zero:
        return None, Zero(e.aval)
    return None, b.bind(expm_frechet_p, b.mH(a), ct)


# ================================================================= truncation rank
def truncation_rank(xp, s, max_rank=None, cutoff=None, relative_cutoff=None) -> int:
    """The rank a truncated SVD keeps: THE truncation rule (``tenferro.linalg.truncation_rank``
    and the ``truncation_indices`` primitive both call this).

    ``s``: concrete descending singular values (..., k) in the namespace ``xp``. Keeps at most
    ``max_rank`` values, drops values below ``cutoff`` and below ``relative_cutoff * s_max``,
    but keeps at least one (when k > 0). For a batch the rank is the largest over the batch,
    so no matrix loses a value its own criterion keeps.
    """
    k = s.shape[-1]
    if k == 0:
        return 0
    r = k
    if cutoff is not None or relative_cutoff is not None:
        keep = s >= 0  # all True for singular values
        if cutoff is not None:
            keep = xp.logical_and(keep, s >= cutoff)
        if relative_cutoff is not None:
            keep = xp.logical_and(keep, s >= relative_cutoff * s[..., :1])
        counts = xp.sum(xp.astype(keep, int64), axis=-1)
        r = max(int(xp.max(counts)) if counts.ndim else int(counts), 1)
    if max_rank is not None:
        r = min(r, int(max_rank))
    return r


def check_truncation(max_rank, cutoff, relative_cutoff, op: str = "svd") -> tuple:
    """The truncation options of a truncated SVD, checked and returned as int/float:
    ``max_rank`` a whole number >= 1 (not a bool), ``cutoff`` >= 0, ``relative_cutoff`` in
    [0, 1] (real numbers, not bools; NaN refused). The one check, applied by the eager ``svd``
    and by ``truncation_indices``'s shape rule (so graph files too)."""
    if max_rank is not None:
        if isinstance(max_rank, (bool, np.bool_)) or not isinstance(
                max_rank, (int, np.integer, float, np.floating)):
            raise DTypeError(f"{op}: max_rank must be an int, got {type(max_rank).__name__} "
                             f"{max_rank!r:.40}.")
        if max_rank != max_rank or max_rank in (np.inf, -np.inf) or max_rank != int(max_rank):
            raise ShapeError(f"{op}: max_rank must be a whole number, got {max_rank!r}.")
        max_rank = int(max_rank)
        if max_rank < 1:
            raise ShapeError(f"{op}: max_rank must be >= 1, got {max_rank} (None keeps every "
                             f"singular value).")

    def real(name, v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                                   np.floating)):
            raise DTypeError(f"{op}: {name} must be a real number, got {type(v).__name__} "
                             f"{v!r:.40}.")
        return float(v)

    if cutoff is not None:
        cutoff = real("cutoff", cutoff)
        if not cutoff >= 0:
            raise ShapeError(f"{op}: cutoff must be >= 0, got {cutoff!r}.")
    if relative_cutoff is not None:
        relative_cutoff = real("relative_cutoff", relative_cutoff)
        if not 0 <= relative_cutoff <= 1:
            raise ShapeError(f"{op}: relative_cutoff must lie in [0, 1], got "
                             f"{relative_cutoff!r}.")
    return max_rank, cutoff, relative_cutoff


truncation_indices_p = Primitive(
    "truncation_indices", differentiable=False,
    convention="integer output (the kept positions): no gradient",
    params={"max_rank": OPT_POS_INT, "cutoff": OPT_REAL, "relative_cutoff": OPT_REAL,
            "size": NEW_SIZE},
    produces_size="size",
)
truncation_indices_p.__doc__ = (
    "arange(r) for the rank r a truncated SVD keeps, decided from the singular values at run "
    "time (``truncation_rank``). Its output length is the symbolic size ``size``: the one "
    "data-dependent shape in traced graphs. It also reports a cut through a degenerate "
    "multiplet (``DegeneracyWarning``; ties within the dtype's default relative tolerance)."
)


@truncation_indices_p.def_abstract_eval
def _trunc_aval(s, *, max_rank, cutoff, relative_cutoff, size):
    check_truncation(max_rank, cutoff, relative_cutoff)
    require_real("truncation_indices", s)
    if s.ndim < 1:
        raise ShapeError(f"truncation_indices: expected singular values, got {s}.")
    return ShapedArray((size,), int64)


@truncation_indices_p.def_impl
def _trunc_impl(xp, s, *, max_rank, cutoff, relative_cutoff, size):
    r = truncation_rank(xp, s, max_rank, cutoff, relative_cutoff)
    # the tie tolerance is the dtype's default (not the svd's eps): graph files written before
    # the check existed hold no tolerance, and must keep loading
    if checks_on(on_host(s)):  # on an accelerator only on request (a device-to-host read)
        check_truncation_ties(xp.to_numpy(s), r, default_tie_eps(xp.np_dtype(s.dtype)))
    return xp.arange(r, dtype=int64)


@truncation_indices_p.def_batch
def _trunc_batch(b, args, dims, *, max_rank, cutoff, relative_cutoff, size):
    """Without a cutoff the kept rank is min(k, max_rank) for every member: one shared
    result. With a cutoff each member decides its own rank from its values."""
    if cutoff is not None or relative_cutoff is not None:
        raise _batching.data_dependent(
            "a cutoff-truncated SVD (truncation_indices)",
            "Give svd a static max_rank (and no cutoff) inside vmap, or loop over the batch.")
    s = _batching.move_axis(b, args[0], dims[0], 0)
    out = b.bind(truncation_indices_p, s, max_rank=max_rank, cutoff=cutoff,
                 relative_cutoff=relative_cutoff, size=size)
    return [out], [None]


__all__ = [
    "adjugate_p",
    "cut_inverse_p",
    "degeneracy_check_p",
    "degeneracy_guard_p",
    "truncation_indices_p",
    "broadened_inverse_p",
    "cholesky_p",
    "det_p",
    "eigh_p",
    "eigvalsh_p",
    "expm_frechet_p",
    "expm_p",
    "funm_p",
    "inv_p",
    "qr_p",
    "slogdet_p",
    "solve_p",
    "svd_p",
    "svdvals_p",
    "sylvester_p",
    "triangular_solve_p",
]
