"""Linear-algebra drivers for the backend namespaces (``xp.linalg_ext``).

The decomposition primitives (``chainrules.primitives.linalg``) call these and nothing else, so
the choice of LAPACK driver lives in one place per backend:

* ``ScipyLinalg`` (NumPy backend): SciPy's LAPACK wrappers, batched over leading axes.
  SVD uses ``gesdd`` (divide and conquer, the fastest) and falls back to ``gesvd`` when
  ``gesdd`` fails to converge (it occasionally does on matrices with clustered singular values);
  ``eigh`` uses ``syevd``/``heevd``; QR ``geqrf``; triangular solves ``trtrs``; ``expm`` and its
  Frechet derivative SciPy's scaling-and-squaring Pade code (Al-Mohy & Higham).
* ``ArrayAPILinalg`` (``array_api_strict``, CuPy): only ``xp.linalg`` of the array API standard,
  plus array-API implementations of what the standard lacks (triangular solve through ``solve``
  on the masked triangle, ``expm`` by scaling and squaring with a degree-13 Pade approximant,
  its Frechet derivative by the block-triangular identity).

Both apply the same *gauge conventions* to the outputs (see ``fix_column_phases``), so results
and derivatives agree across backends.
"""

from __future__ import annotations

import functools
import math

import numpy as np

# ----------------------------------------------------------------- gauge conventions


def column_phases(xp, v):
    """Phase of the largest-magnitude entry of each column of ``v`` (..., n, k).

    Returns ``(..., k)``: ``v[p_j, j] / |v[p_j, j]|`` with ``p_j = argmax_p |v[p, j]|`` (the
    first such ``p`` at ties); a sign for real ``v``. Multiplying column ``j`` by the conjugate
    phase makes that entry real and positive: the gauge convention of ``svd`` and ``eigh``.
    """
    if v.shape[-2] == 0 or v.shape[-1] == 0:
        return xp.ones(v.shape[:-2] + (v.shape[-1],), dtype=v.dtype)
    p = xp.argmax(xp.abs(v), axis=-2)
    vp = xp.take_along_axis(v, xp.expand_dims(p, axis=-2), axis=-2)[..., 0, :]
    mag = xp.abs(vp)
    ok = mag > 0
    safe = xp.where(ok, mag, xp.ones_like(mag))
    if xp.isdtype(v.dtype, "complex floating"):
        mag_c = xp.astype(safe, v.dtype)
        return xp.where(ok, vp / mag_c, xp.ones_like(vp))
    return xp.where(ok, vp / safe, xp.ones_like(vp))


# _real_signs: for real vectors the phase of the largest-magnitude entry is its sign,
# ``np.copysign(1.0, vp)`` in one call. It differs from ``where(vp < 0, -1, 1)`` only at
# vp = -0.0, i.e. on an all-zero vector, where it flips the signs of zeros (no value changes).


def _unit_phases(vp):
    """``vp / |vp|`` (1 where ``vp`` is 0): the phase that makes an entry real positive."""
    if vp.dtype.kind != "c":  # a sign
        return np.where(vp < 0, vp.dtype.type(-1), vp.dtype.type(1))
    mag = np.abs(vp)
    ok = mag > 0
    return np.where(ok, vp / np.where(ok, mag, 1), 1).astype(vp.dtype, copy=False)


def fix_svd_gauge(xp, u, s, vh):
    """Rotate each singular pair (u_j, v_j) by a common phase so that the largest-magnitude
    entry of v_j is real and positive. ``u_j v_j^H`` (hence the matrix) is unchanged."""
    k = s.shape[-1]
    v_thin = xp.conj(xp.matrix_transpose(vh[..., :k, :]))
    ph = column_phases(xp, v_thin)  # (..., k)
    c = xp.conj(ph)
    u_thin = u[..., :, :k] * xp.expand_dims(c, axis=-2)
    vh_thin = vh[..., :k, :] * xp.expand_dims(ph, axis=-1)
    if u.shape[-1] > k:
        u_thin = xp.concat([u_thin, u[..., :, k:]], axis=-1)
    if vh.shape[-2] > k:
        vh_thin = xp.concat([vh_thin, vh[..., k:, :]], axis=-2)
    return u_thin, s, vh_thin


def fix_eigh_gauge(xp, w, v):
    """Make the largest-magnitude entry of every eigenvector real and positive."""
    ph = column_phases(xp, v)
    return w, v * xp.expand_dims(xp.conj(ph), axis=-2)


def fix_qr_gauge(xp, q, r, positive):
    """Make diag(R) real (always) and non-negative (``positive=True``).

    LAPACK's Householder QR already returns a real diagonal; this guards other backends and
    implements the positive gauge. Rows of R and columns of Q rotate by a common phase.
    """
    k = min(r.shape[-2], r.shape[-1])
    d = xp.linalg.diagonal(r[..., :k, :k]) if k else r[..., :0, 0]
    cplx = xp.isdtype(r.dtype, "complex floating")
    if not positive and not cplx:
        return q, r
    mag = xp.abs(d)
    ok = mag > 0
    safe = xp.where(ok, mag, xp.ones_like(mag))
    if cplx:
        ph = xp.where(ok, d / xp.astype(safe, d.dtype), xp.ones_like(d))
        if not positive:  # keep LAPACK's sign of the real part, drop only the imaginary phase
            sgn = xp.where(xp.real(d) < 0, -xp.ones_like(mag), xp.ones_like(mag))
            ph = ph * xp.astype(sgn, d.dtype)
    else:
        ph = xp.where(d < 0, -xp.ones_like(d), xp.ones_like(d))
    q_cols = q[..., :, :k] * xp.expand_dims(ph, axis=-2)
    r_rows = r[..., :k, :] * xp.expand_dims(xp.conj(ph), axis=-1)
    if q.shape[-1] > k:
        q_cols = xp.concat([q_cols, q[..., :, k:]], axis=-1)
    if r.shape[-2] > k:
        r_rows = xp.concat([r_rows, r[..., k:, :]], axis=-2)
    return q_cols, r_rows


def hermitian_part(xp, a):
    """(a + a^H) / 2: eigh and cholesky are defined on the Hermitian part of their input."""
    return (a + xp.conj(xp.matrix_transpose(a))) * 0.5


def broadened_inverse(xp, d, w):
    """d / (d^2 + w^2), and 0 where d = w = 0 (array API version)."""
    den = d * d + w * w
    zero = den == 0
    return xp.where(zero, xp.zeros_like(d), d / xp.where(zero, xp.ones_like(den), den))


# ------------------------------------------------------------------ SciPy / NumPy
_LAPACK_DTYPES = frozenset(np.dtype(d) for d in ("float32", "float64", "complex64",
                                                  "complex128"))


def _direct(a) -> bool:
    """A single non-empty matrix of a LAPACK dtype: call the driver directly (SciPy's
    wrappers re-query the workspace and check arguments on every call, which costs more than
    the factorisation of a small matrix); batches go through SciPy."""
    return a.ndim == 2 and a.size > 0 and a.dtype in _LAPACK_DTYPES


@functools.lru_cache(maxsize=256)
def _arange(k: int) -> np.ndarray:
    """``np.arange(k)`` made once per size (read-only): the gauge fixes index with it."""
    r = np.arange(k)
    r.flags.writeable = False
    return r


@functools.lru_cache(maxsize=256)
def _triu_mask(k: int, n: int) -> np.ndarray:
    """The (k, n) upper-triangle mask (read-only), so R = triu(qr) is one ``np.where``."""
    r = np.triu(np.ones((k, n), dtype=bool))
    r.flags.writeable = False
    return r


def _lwork(w) -> int:
    w = float(np.real(w))
    return max(1, int(w * (1 + 1e-6)) + 1)  # a float32 workspace size may round down


@functools.lru_cache(maxsize=512)
def _gesdd(dtype, m, n, compute_uv, full_matrices):
    from scipy.linalg import lapack

    f, query = lapack.get_lapack_funcs(("gesdd", "gesdd_lwork"), dtype=dtype)
    work, _ = query(m, n, compute_uv=compute_uv, full_matrices=full_matrices)
    return f, _lwork(work)


@functools.lru_cache(maxsize=512)
def _evd(dtype, n, compute_v):
    from scipy.linalg import lapack

    cplx = dtype.kind == "c"
    names = ("heevd", "heevd_lwork") if cplx else ("syevd", "syevd_lwork")
    f, query = lapack.get_lapack_funcs(names, dtype=dtype)
    sizes = query(n, compute_v=compute_v, lower=1)
    kw = {"lwork": _lwork(sizes[0]), "liwork": int(sizes[1])}
    if cplx:
        kw["lrwork"] = _lwork(sizes[2])
    return f, kw


@functools.lru_cache(maxsize=512)
def _geqrf(dtype, m, n):
    from scipy.linalg import lapack

    geqrf, orgqr = lapack.get_lapack_funcs(
        ("geqrf", "ungqr" if dtype.kind == "c" else "orgqr"), dtype=dtype)
    k = min(m, n)
    probe = np.zeros((m, n), dtype)
    lw1 = _lwork(geqrf(probe, lwork=-1)[2][0])
    lw2 = _lwork(orgqr(np.zeros((m, k), dtype), np.zeros(k, dtype), lwork=-1)[1][0])
    return geqrf, orgqr, lw1, lw2


class _Gauges:
    """The gauge fixing and Hermitian part, written once against the array namespace."""

    def fix_svd_gauge(self, u, s, vh):
        return fix_svd_gauge(self.xp, u, s, vh)

    def fix_eigh_gauge(self, w, v):
        return fix_eigh_gauge(self.xp, w, v)

    def fix_qr_gauge(self, q, r, positive):
        return fix_qr_gauge(self.xp, q, r, positive)

    def hermitian_part(self, a):
        return hermitian_part(self.xp, a)


class ScipyLinalg(_Gauges):
    """LAPACK through SciPy (NumPy backend)."""

    def __init__(self, np_ns):
        self.xp = np_ns

    def fix_svd_gauge(self, u, s, vh):
        k = s.shape[-1]
        if vh.ndim != 2 or k == 0:
            return fix_svd_gauge(self.xp, u, s, vh)
        # one matrix: the same convention as fix_svd_gauge, by direct indexing
        rows = vh[:k]
        vp = rows[_arange(k), np.abs(rows).argmax(axis=1)]  # conj of entry p_j of v_j
        if vp.dtype.kind == "c":
            ph = _unit_phases(np.conj(vp))
            c = np.conj(ph)
        else:  # a sign per pair (see _real_signs)
            ph = c = np.copysign(1.0, vp)
        if u.shape[1] == k and vh.shape[0] == k:  # thin: every pair rotates
            return u * c, s, vh * ph[:, None]
        u, vh = u.copy(), vh.copy()
        u[:, :k] *= c
        vh[:k] *= ph[:, None]
        return u, s, vh

    def fix_eigh_gauge(self, w, v):
        if v.ndim != 2 or v.shape[-1] == 0:
            return fix_eigh_gauge(self.xp, w, v)
        vp = v[np.abs(v).argmax(axis=0), _arange(v.shape[1])]
        if vp.dtype.kind == "c":
            return w, v * np.conj(_unit_phases(vp))
        return w, v * np.copysign(1.0, vp)  # a sign per vector (see _real_signs)

    def fix_qr_gauge(self, q, r, positive):
        if not positive and r.dtype.kind != "c":
            return q, r  # LAPACK's real diagonal, signs kept: nothing to do
        return fix_qr_gauge(self.xp, q, r, positive)

    def hermitian_part(self, a):
        # (a + a^H) / 2 with two NumPy calls (the same arithmetic as hermitian_part)
        at = a.T if a.ndim == 2 else a.swapaxes(-1, -2)
        h = a + (at.conj() if a.dtype.kind == "c" else at)
        h *= 0.5
        return h

    @staticmethod
    def svd(a, full_matrices):
        import scipy.linalg as sl

        if _direct(a):
            m, n = a.shape
            f, lwork = _gesdd(a.dtype, m, n, 1, int(full_matrices))
            u, s, vt, info = f(a, compute_uv=1, full_matrices=int(full_matrices), lwork=lwork)
            if info == 0:
                return u, s, vt
            # gesdd did not converge (rare): the slower, robust gesvd
            return sl.svd(a, full_matrices=full_matrices, check_finite=False,
                          lapack_driver="gesvd")
        if a.size == 0:
            return np.linalg.svd(a, full_matrices=full_matrices)
        try:
            return sl.svd(a, full_matrices=full_matrices, check_finite=False,
                          lapack_driver="gesdd")
        except np.linalg.LinAlgError:
            # gesdd fails to converge on some (rare) inputs; gesvd is slower but robust.
            return sl.svd(a, full_matrices=full_matrices, check_finite=False,
                          lapack_driver="gesvd")

    @staticmethod
    def svdvals(a):
        import scipy.linalg as sl

        if _direct(a):
            f, lwork = _gesdd(a.dtype, *a.shape, 0, 0)
            _, s, _, info = f(a, compute_uv=0, full_matrices=0, lwork=lwork)
            if info == 0:
                return s
            return sl.svd(a, compute_uv=False, check_finite=False, lapack_driver="gesvd")
        if a.size == 0:
            return np.linalg.svd(a, compute_uv=False)
        try:
            return sl.svd(a, compute_uv=False, check_finite=False, lapack_driver="gesdd")
        except np.linalg.LinAlgError:
            return sl.svd(a, compute_uv=False, check_finite=False, lapack_driver="gesvd")

    @staticmethod
    def qr(a, complete):
        import scipy.linalg as sl

        if _direct(a) and not (complete and a.shape[0] > a.shape[1]):
            m, n = a.shape
            k = min(m, n)
            geqrf, orgqr, lw1, lw2 = _geqrf(a.dtype, m, n)
            qr_, tau, _, info1 = geqrf(a, lwork=lw1)
            q, _, info2 = orgqr(qr_[:, :k], tau, lwork=lw2)
            if info1 == 0 and info2 == 0:
                return q, np.where(_triu_mask(k, n), qr_[:k, :], qr_.dtype.type(0))
        if a.size == 0:
            return np.linalg.qr(a, mode="complete" if complete else "reduced")
        return sl.qr(a, mode="full" if complete else "economic", check_finite=False)

    @staticmethod
    def eigh(a):
        import scipy.linalg as sl

        if _direct(a):
            f, kw = _evd(a.dtype, a.shape[0], 1)
            w, v, info = f(a, compute_v=1, lower=1, **kw)
            if info == 0:
                return w, v
        if a.size == 0:
            return np.linalg.eigh(a)
        return sl.eigh(a, check_finite=False, driver="evd")

    @staticmethod
    def eigvalsh(a):
        import scipy.linalg as sl

        if _direct(a):
            f, kw = _evd(a.dtype, a.shape[0], 0)
            w, _, info = f(a, compute_v=0, lower=1, **kw)
            if info == 0:
                return w
        if a.size == 0:
            return np.linalg.eigvalsh(a)
        return sl.eigh(a, eigvals_only=True, check_finite=False, driver="evd")

    @staticmethod
    def cholesky(a):
        return np.linalg.cholesky(a)

    @staticmethod
    def solve(a, b):
        return np.linalg.solve(a, b)

    @staticmethod
    def inv(a):
        return np.linalg.inv(a)

    @staticmethod
    def det(a):
        return np.linalg.det(a)

    @staticmethod
    def slogdet(a):
        return tuple(np.linalg.slogdet(a))

    @staticmethod
    def solve_triangular(a, b, left_side, lower, transpose_a, conjugate_a):
        import scipy.linalg as sl

        if a.size == 0 or b.size == 0:
            return np.zeros(b.shape, dtype=b.dtype)
        if not left_side:  # x op(a) = b  <=>  op(a)^T x^T = b^T
            xt = ScipyLinalg.solve_triangular(
                a, np.swapaxes(b, -1, -2), True, lower, not transpose_a, conjugate_a)
            return np.swapaxes(xt, -1, -2)
        if conjugate_a and not transpose_a:  # conj(a) x = b  <=>  a conj(x) = conj(b)
            return np.conj(sl.solve_triangular(a, np.conj(b), lower=lower, check_finite=False))
        trans = 0 if not transpose_a else (2 if conjugate_a else 1)
        return sl.solve_triangular(a, b, trans=trans, lower=lower, check_finite=False)

    @staticmethod
    def solve_sylvester(a, b, q):
        """Bartels-Stewart (SciPy: Schur forms and LAPACK trsyl), one matrix at a time."""
        import scipy.linalg as sl

        if q.size == 0:
            return np.zeros(q.shape, dtype=q.dtype)
        out = np.empty(q.shape, dtype=q.dtype)
        for i in np.ndindex(q.shape[:-2]):
            # A = U R U^H, B^H = V S V^H (Schur); R Y + Y S^H = U^H Q V by trsyl
            r, u = sl.schur(a[i], output="real")
            s, v = sl.schur(b[i].conj().T, output="real")
            f = u.conj().T @ q[i] @ v
            trsyl, = sl.get_lapack_funcs(("trsyl",), (r, s, f))
            y, scale, info = trsyl(r, s, f, tranb="C")
            if info != 0:  # 1: A and -B have (nearly) common eigenvalues, the system is singular
                raise np.linalg.LinAlgError("solve_sylvester: singular")
            out[i] = scale * (u @ y @ v.conj().T)
        return out

    @staticmethod
    def expm(a):
        import scipy.linalg as sl

        if a.size == 0:
            return np.array(a, copy=True)
        return sl.expm(a).astype(a.dtype, copy=False)

    @staticmethod
    def expm_frechet(a, e):
        import scipy.linalg as sl

        if a.size == 0:
            return np.zeros(e.shape, dtype=e.dtype)
        # SciPy computes in double precision; keep the input dtype (float32 stays float32)
        out = sl.expm_frechet(a, e, compute_expm=False, check_finite=False)
        return out.astype(e.dtype, copy=False)

    @staticmethod
    def broadened_inverse(d, w):
        """d / (d^2 + w^2) in three passes and one temporary (it runs on k x k matrices in
        every SVD/eigh derivative)."""
        den = np.multiply(d, d)
        den += np.square(w)
        nonzero = den != 0
        if nonzero.all():
            return np.divide(d, den, out=den)
        out = np.zeros_like(den)
        return np.divide(d, den, out=out, where=nonzero)



# ------------------------------------------------------------------------ array API
# Degree-13 Pade coefficients and the scaling threshold of Higham (2005), "The scaling and
# squaring method for the matrix exponential revisited", Table 2.3 / eq. (2.24).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


class ArrayAPILinalg(_Gauges):
    """Only ``xp.linalg`` of the array API standard (``array_api_strict``, CuPy)."""

    def __init__(self, xp):
        self.xp = xp

    def svd(self, a, full_matrices):
        return tuple(self.xp.linalg.svd(a, full_matrices=full_matrices))

    def svdvals(self, a):
        return self.xp.linalg.svdvals(a)

    def qr(self, a, complete):
        return tuple(self.xp.linalg.qr(a, mode="complete" if complete else "reduced"))

    def eigh(self, a):
        return tuple(self.xp.linalg.eigh(a))

    def eigvalsh(self, a):
        return self.xp.linalg.eigvalsh(a)

    def cholesky(self, a):
        return self.xp.linalg.cholesky(a)

    def solve(self, a, b):
        return self.xp.linalg.solve(a, b)

    def inv(self, a):
        return self.xp.linalg.inv(a)

    def det(self, a):
        return self.xp.linalg.det(a)

    def slogdet(self, a):
        return tuple(self.xp.linalg.slogdet(a))

    def solve_triangular(self, a, b, left_side, lower, transpose_a, conjugate_a):
        """General solve on the masked triangle: O(n^3) instead of O(n^2), but standard-only."""
        xp = self.xp
        t = xp.tril(a) if lower else xp.triu(a)
        if transpose_a:
            t = xp.matrix_transpose(t)
        if conjugate_a:
            t = xp.conj(t)
        if left_side:
            return xp.linalg.solve(t, b)
        xt = xp.linalg.solve(xp.matrix_transpose(t), xp.matrix_transpose(b))
        return xp.matrix_transpose(xt)

    def solve_sylvester(self, a, b, q):
        """A X + X B = Q as one (mn x mn) linear system (kron(A, I) + kron(I, B^T)) vec(X) =
        vec(Q): O((mn)^3), standard-only (no Schur decomposition in the array API)."""
        xp = self.xp
        m, n = q.shape[-2], q.shape[-1]
        batch = tuple(q.shape[:-2])
        if m * n == 0:
            return xp.zeros(q.shape, dtype=q.dtype)
        eye_m = xp.eye(m, dtype=q.dtype)
        eye_n = xp.eye(n, dtype=q.dtype)
        big = (a[..., :, None, :, None] * eye_n[:, None, :]
               + eye_m[:, None, :, None] * xp.matrix_transpose(b)[..., None, :, None, :])
        big = xp.reshape(big, batch + (m * n, m * n))
        x = xp.linalg.solve(big, xp.reshape(q, batch + (m * n, 1)))
        return xp.reshape(x, q.shape)

    def expm(self, a):
        """Scaling and squaring with a degree-13 Pade approximant (Higham 2005).

        One scaling power for the whole batch (the largest needed): squaring a matrix more
        often than necessary costs a little accuracy, never correctness.
        """
        xp = self.xp
        n = a.shape[-1]
        if a.size == 0:
            return xp.asarray(a, copy=True)
        norm1 = float(xp.max(xp.sum(xp.abs(a), axis=-2)))
        s = 0 if norm1 <= _THETA13 else int(math.ceil(math.log2(norm1 / _THETA13)))
        x = a * (2.0 ** -s) if s else a
        eye = xp.broadcast_to(xp.eye(n, dtype=a.dtype), a.shape)
        c = _PADE13
        x2 = xp.matmul(x, x)
        x4 = xp.matmul(x2, x2)
        x6 = xp.matmul(x4, x2)
        u_in = xp.matmul(x6, c[13] * x6 + c[11] * x4 + c[9] * x2)
        u_in = u_in + c[7] * x6 + c[5] * x4 + c[3] * x2 + c[1] * eye
        u = xp.matmul(x, u_in)
        v = xp.matmul(x6, c[12] * x6 + c[10] * x4 + c[8] * x2)
        v = v + c[6] * x6 + c[4] * x4 + c[2] * x2 + c[0] * eye
        r = xp.linalg.solve(v - u, v + u)
        for _ in range(s):
            r = xp.matmul(r, r)
        return r

    def expm_frechet(self, a, e):
        """L(A, E) = the top-right block of expm([[A, E], [0, A]])."""
        xp = self.xp
        n = a.shape[-1]
        if a.size == 0:
            return xp.zeros(e.shape, dtype=e.dtype)
        z = xp.zeros(a.shape, dtype=a.dtype)
        top = xp.concat([a, e], axis=-1)
        bottom = xp.concat([z, a], axis=-1)
        big = self.expm(xp.concat([top, bottom], axis=-2))
        return big[..., :n, n:]

    def broadened_inverse(self, d, w):
        return broadened_inverse(self.xp, d, w)

