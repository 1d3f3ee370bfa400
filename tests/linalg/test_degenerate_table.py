"""The degenerate table: (matrix, loss) cases at exact and near degeneracies of svd, eigh and
eig. Every case must be either

* **exact**: the gradient matches central finite differences (Richardson-extrapolated, along
  random directions) and no ``DegeneracyWarning`` is raised, or
* **warned**: a ``DegeneracyWarning`` says the gradient is not a derivative (the loss is not
  differentiable there, or its derivative is one the factors cannot express).

A silent inexact gradient fails, and so does a warning on an exact one (a false alarm).

Cases expected as "probe" are the ones the backward check cannot see by construction
(design/linalg.md, "What one backward pass cannot see"): a loss that uses the factors *and*
the matrix itself (<U M V^H, A>), and a loss that depends on a discrete gauge choice (the sign
of a real null pair). For those the default run may be silent, and
``tenferro.linalg.check_gauge_invariance`` must report them.
"""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import tenferro as tf
from tenferro import linalg as la
from tenferro.errors import DegeneracyWarning
from tests.linalg._util import T, haar, hermitian, rand, with_singular_values

pytestmark = pytest.mark.default_device_cpu  # the checks' CPU default (see test_degenerate_exact)

DTYPES = ("float64", "complex128")


def _seed(*names) -> int:
    return zlib.crc32("/".join(names).encode())


def _pair(y, x):
    """Re sum(conj(y) * x) of two tensors."""
    return tf.real(tf.sum(tf.conj(y) * x))


def _inner(w, x):
    return tf.real(tf.sum(tf.conj(T(w)) * x))


# ----------------------------------------------------------------------------- svd
SVD_SPECTRA = {  # name: (shape, singular values)
    "generic": ((4, 4), None),
    "pair": ((4, 4), [3, 2, 2, 1]),
    "pair_tall": ((5, 4), [3, 2, 2, 1]),
    "pair_wide": ((4, 5), [3, 2, 2, 1]),
    "triple": ((4, 4), [2, 2, 2, 1]),
    "zeros": ((4, 4), [3, 2, 0, 0]),
    "zeros_tall": ((5, 4), [3, 2, 0, 0]),
    "one_zero": ((4, 4), [3, 2, 1, 0]),
    "one_zero_tall": ((5, 4), [3, 2, 1, 0]),
    "scalar": ((4, 4), "2I"),
    "identity": ((4, 4), "I"),
    "zero": ((4, 4), "0"),
    "split1e-9": ((4, 4), [3, 2 + 1e-9, 2, 1]),
    "split1e-12": ((4, 4), [3, 2 + 1e-12, 2, 1]),
}


def _svd_matrix(name, dtype):
    rng = np.random.default_rng(_seed(name, dtype))
    (m, n), s = SVD_SPECTRA[name]
    if s is None:
        return rand(rng, (m, n), dtype)
    if isinstance(s, str):
        return {"2I": 2.0, "I": 1.0, "0": 0.0}[s] * np.eye(m, dtype=dtype)
    return with_singular_values(rng, m, n, s, dtype)


def _svd_losses(m, n, dtype):
    rng = np.random.default_rng(1)
    k = min(m, n)
    c = rand(rng, (m, m), dtype)
    e = rand(rng, (m, n), dtype)
    w = rand(rng, (m, n), dtype)
    ms = rng.standard_normal((k, k))
    ms = ms + ms.T
    np.fill_diagonal(ms, 0)  # <U M V^H, A> = sum_i conj(M_ii) s_i = 0 for every A
    wsym = rng.standard_normal((m, m))
    wsym = (wsym + wsym.T).astype(dtype)

    def once(f):
        def loss(x):
            u, s, vh = la.svd(x)
            return f(u, s, vh, x)

        return loss

    def rebuild(u, s, vh):
        return (u * tf.astype(s, u.dtype)[None, :]) @ vh

    return {
        "sum_s": once(lambda u, s, vh, x: tf.sum(s)),
        "sum_s2": once(lambda u, s, vh, x: tf.sum(s ** 2)),
        "top1": once(lambda u, s, vh, x: s[0]),
        "top2": once(lambda u, s, vh, x: s[0] + s[1]),
        "top3": once(lambda u, s, vh, x: tf.sum(s[:3])),
        "s1": once(lambda u, s, vh, x: s[1]),
        "proj_u3": once(lambda u, s, vh, x: _inner(c, u[:, :3] @ tf.conj(u[:, :3].T))),
        "joint3": once(lambda u, s, vh, x: _inner(e, u[:, :3] @ vh[:3])),
        "polar": once(lambda u, s, vh, x: _inner(e, u @ vh)),
        "recon": once(lambda u, s, vh, x: _inner(w, rebuild(u, s, vh))),
        "recon_r3": lambda x: _inner(w, rebuild(*la.svd(x, max_rank=3))),
        "L1": once(lambda u, s, vh, x: _pair(u @ T(ms.astype(dtype)) @ vh, x) / 2.0),
        "basis_tr": once(lambda u, s, vh, x: tf.real(tf.sum(u[:k, :k] * T(np.eye(k))))),
        "basis_w": once(lambda u, s, vh, x: tf.real(tf.sum(u[:, :k] * T(wsym[:, :k])))),
        "basis_u0": once(lambda u, s, vh, x: tf.abs2(u[0, 0])),
    }


SVD_LOSSES = list(_svd_losses(4, 4, "float64"))


def _svd_expect(name, loss, dtype):
    """'diff' (differentiable: exact, or warned when the factors cannot express it), 'warn'
    (no derivative: must warn), 'convention' (a documented convention at a kink: silent),
    'probe' (invisible to one backward pass: check_gauge_invariance must see it), or None
    (not in the table: finite differences cannot resolve a 1e-9 split)."""
    (m, n), s = SVD_SPECTRA[name]
    if s is None:
        return "diff"
    s = {"2I": [2.0] * 4, "I": [1.0] * 4, "0": [0.0] * 4}.get(s, s) if isinstance(s, str) else s
    s = np.round(np.asarray(s, float), 6)  # near splits count as ties here
    k = s.size
    zeros = int(np.sum(s == 0))
    tied = len(set(s.tolist())) < k
    if name == "split1e-9":  # resolved, but FD (steps 1e-4) cannot follow one member
        return "diff" if loss not in ("top2", "s1", "basis_tr", "basis_w") else None

    def gap(r):
        return r >= k or s[r - 1] != s[r]

    if loss == "L1":
        return "probe" if tied or zeros > 1 else "diff"
    if loss in ("sum_s2", "recon"):
        return "diff"
    if loss == "sum_s":  # the nuclear norm: a kink at s = 0
        if zeros == 0:
            return "diff"
        real_square = m == n and dtype == "float64" and zeros == 1
        return "convention" if real_square else "warn"
    if loss in ("top1", "top2", "top3"):
        r = int(loss[3:])
        return "diff" if gap(r) and s[r - 1] > 0 else "warn"
    if loss == "s1":
        return "diff" if s[0] != s[1] != s[2] and s[1] > 0 else "warn"
    if loss == "proj_u3":
        return "diff" if gap(3) else "warn"
    if loss in ("joint3", "recon_r3"):
        return "diff" if gap(3) and s[2] > 0 else "warn"
    if loss == "basis_u0":
        return "diff" if s[0] != s[1] and s[0] > 0 else "warn"
    if loss == "polar" and zeros == 0:
        return "diff"
    if loss in ("polar", "basis_tr", "basis_w") and zeros == 1 and not tied:
        # the sign of a real null vector (a discrete gauge); complex: a phase, seen
        return "probe" if dtype == "float64" and m == n else "warn"
    return "diff" if not tied and zeros == 0 else "warn"


# ---------------------------------------------------------------------------- eigh
EIGH_SPECTRA = {
    "generic": None,
    "pair": [-1, 2, 2, 3],
    "triple": [1, 1, 1, 4],
    "zero_pair": [0, 0, 2, 3],
    "scalar": "2I",
    "identity": "I",
    "zero": "0",
    "diag_pair": "diag(1,1,2,3)",
    "split1e-9": [-1, 2 + 1e-9, 2, 3],
    "split1e-12": [-1, 2 + 1e-12, 2, 3],
}


def _eigh_matrix(name, dtype):
    rng = np.random.default_rng(_seed(name, dtype))
    w = EIGH_SPECTRA[name]
    if w is None:
        return hermitian(rng, 4, dtype)
    if isinstance(w, str):
        if w.startswith("diag"):
            return np.diag([1.0, 1.0, 2.0, 3.0]).astype(dtype)
        return {"2I": 2.0, "I": 1.0, "0": 0.0}[w] * np.eye(4, dtype=dtype)
    return hermitian(rng, 4, dtype, w)


def _eigh_losses(n, dtype):
    rng = np.random.default_rng(2)
    c = rand(rng, (n, n), dtype)
    w = rand(rng, (n, n), dtype)
    wsym = rng.standard_normal((n, n))
    wsym = (wsym + wsym.T).astype(dtype)
    ms = rng.standard_normal((n, n))
    ms = ms + ms.T
    np.fill_diagonal(ms, 0)

    def once(f):
        def loss(x):
            ev, v = la.eigh(x)
            return f(ev, v, x)

        return loss

    return {
        "sum_w": once(lambda ev, v, x: tf.sum(ev)),
        "sum_w2": once(lambda ev, v, x: tf.sum(ev ** 2)),
        "low1": once(lambda ev, v, x: ev[0]),
        "low3": once(lambda ev, v, x: tf.sum(ev[:3])),
        "w1": once(lambda ev, v, x: ev[1]),
        "proj1": once(lambda ev, v, x: _inner(c, v[:, :1] @ tf.conj(v[:, :1].T))),
        "proj3": once(lambda ev, v, x: _inner(c, v[:, :3] @ tf.conj(v[:, :3].T))),
        "fexp": once(lambda ev, v, x: _inner(
            w, (v * tf.astype(tf.exp(ev), v.dtype)[None, :]) @ tf.conj(v.T))),
        "L1": once(lambda ev, v, x: _pair(v @ T(ms.astype(dtype)) @ tf.conj(v.T), x)),
        "basis_tr": once(lambda ev, v, x: tf.real(tf.sum(v * T(np.eye(n))))),
        "basis_w": once(lambda ev, v, x: tf.real(tf.sum(v * T(wsym)))),
        "basis_v0": once(lambda ev, v, x: tf.abs2(tf.sum(v[:, 0] * T(np.arange(1.0, n + 1))))),
    }


EIGH_LOSSES = list(_eigh_losses(4, "float64"))


def _eigh_expect(name, loss, dtype):
    w = EIGH_SPECTRA[name]
    if w is None:
        return "diff"
    w = {"2I": [2.0] * 4, "I": [1.0] * 4, "0": [0.0] * 4,
         "diag(1,1,2,3)": [1.0, 1, 2, 3]}.get(w, w) if isinstance(w, str) else w
    w = np.round(np.asarray(w, float), 6)
    tied = len(set(w.tolist())) < w.size
    if name == "split1e-9":
        return "diff" if loss not in ("w1", "basis_tr", "basis_w", "basis_v0") else None

    def gap(r):
        return r >= w.size or w[r - 1] != w[r]

    if loss == "L1":
        return "probe" if tied else "diff"
    if loss in ("sum_w", "sum_w2", "fexp"):
        return "diff"  # fexp is exp(A) (warned at ties: the factors cannot express it)
    if loss in ("low1", "proj1", "basis_v0"):
        return "diff" if gap(1) else "warn"
    if loss in ("low3", "proj3"):
        return "diff" if gap(3) else "warn"
    if loss == "w1":
        return "diff" if gap(1) and gap(2) else "warn"
    return "diff" if not tied else "warn"


# ----------------------------------------------------------------------------- eig
def _eig_matrix(name, dtype):
    rng = np.random.default_rng(_seed(name, dtype))
    p = rand(rng, (4, 4), dtype) + 2 * np.eye(4)
    q = haar(rng, 4, dtype)
    jordan = np.array([[1.0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 3, 0], [0, 0, 0, -2]])
    mats = {
        "generic": lambda: rand(rng, (4, 4), dtype),
        "derogatory": lambda: p @ np.diag([1.0, 1.0, 3.0, -2.0]) @ np.linalg.inv(p),
        "diag_pair": lambda: np.diag([1.0, 1.0, 3.0, -2.0]),
        "jordan": lambda: jordan,
        "jordan_rotated": lambda: q @ jordan @ q.conj().T,
        "nonnormal": lambda: np.array([[1.0, 1e2, 0, 0], [0, 2, 0, 0], [0, 0, 3, 1],
                                       [0, 0, 0, -2]]),
        "split1e-6": lambda: p @ np.diag([1.0, 1.0 + 1e-6, 3.0, -2.0]) @ np.linalg.inv(p),
    }
    return np.asarray(mats[name](), dtype=dtype)


EIG_MATRICES = ["generic", "derogatory", "diag_pair", "jordan", "jordan_rotated",
                "nonnormal", "split1e-6"]


def _eig_losses(n, dtype):
    rng = np.random.default_rng(3)
    w = rand(rng, (n, n), "complex128")

    def once(f):
        def loss(x):
            ev, v = la.eig(x)
            return f(ev, v, x)

        return loss

    def nearest(ev, target=1.2):  # the eigenvalue nearest 1.2 (an individual one)
        return int(np.argmin(np.abs(tf.stop_gradient(ev).numpy() - target)))

    def spectral_projector(ev, v):  # onto the eigenvalues within 0.5 of 1
        sel = np.flatnonzero(np.abs(tf.stop_gradient(ev).numpy() - 1.0) < 0.5).tolist()
        return v[:, sel] @ la.inv(v)[sel, :]

    return {
        "det": once(lambda ev, v, x: tf.real(tf.prod(ev))),
        "sum_w2": once(lambda ev, v, x: tf.real(tf.sum(ev * ev))),
        "fexp": once(lambda ev, v, x: tf.real(tf.sum(
            T(w) * ((v * tf.exp(ev)[None, :]) @ la.inv(v))))),
        "near": once(lambda ev, v, x: tf.real(ev[nearest(ev)])),
        "vec": once(lambda ev, v, x: tf.abs2(v[0, nearest(ev)])),
        "proj": once(lambda ev, v, x: tf.real(tf.sum(T(w) * spectral_projector(ev, v)))),
    }


EIG_LOSSES = list(_eig_losses(4, "float64"))


def _eig_expect(name, loss, dtype):
    if name in ("generic", "nonnormal"):
        return "diff" if loss != "proj" else None  # no eigenvalue near 1 in general
    if name == "split1e-6":
        return "diff" if loss in ("det", "sum_w2", "fexp", "proj") else None
    if name in ("jordan", "jordan_rotated"):
        # det and sum(w**2) are smooth; at a resolved (rounded) Jordan pair the rule gets them
        # right; tied outright (the exact triangular J) they are wrong and warned. Everything
        # through the block's vectors (V^-1 with cond ~ 1/rounding) is warned.
        if loss in ("det", "sum_w2"):
            return "diff"
        return "warn"
    if loss in ("det", "sum_w2", "fexp", "proj"):
        return "diff"
    return "warn"


# ------------------------------------------------------------------------ the test
MATRICES = ([("svd", d, m) for d in DTYPES for m in SVD_SPECTRA]
            + [("eigh", d, m) for d in DTYPES for m in EIGH_SPECTRA]
            + [("eig", d, m) for d in DTYPES for m in EIG_MATRICES])


def _cases(op, dtype, name) -> list:
    """(loss name, matrix, loss, expectation) of one row of the table."""
    if op == "svd":
        a = _svd_matrix(name, dtype)
        losses, expect = _svd_losses(*a.shape, dtype), _svd_expect
    elif op == "eigh":
        a = _eigh_matrix(name, dtype)
        losses, expect = _eigh_losses(4, dtype), _eigh_expect
    else:
        a = _eig_matrix(name, dtype)
        losses, expect = _eig_losses(4, dtype), _eig_expect
    return [(ln, a, f, expect(name, ln, dtype)) for ln, f in losses.items()
            if expect(name, ln, dtype) is not None]


def _matches_fd(loss, a, g, tol) -> bool:
    """<g, d> against the extrapolated central difference along two random directions."""
    rng = np.random.default_rng(5)
    for _ in range(2):
        d = rand(rng, a.shape, a.dtype)

        def cd(h):
            return (float(loss(T(a + h * d))) - float(loss(T(a - h * d)))) / (2 * h)

        fd = (4 * cd(5e-5) - cd(1e-4)) / 3
        got = float(np.real(np.sum(np.conj(g) * d)))
        if not abs(got - fd) <= tol * max(1.0, abs(fd)):
            return False
    return True


def _verdict(name, a, f, expect) -> str | None:
    """None when the case behaves as the table says, else what went wrong."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        g = tf.grad(f)(T(a)).numpy()
    warned = [str(r.message) for r in rec if issubclass(r.category, DegeneracyWarning)]
    if expect == "warn":
        return None if warned else "silent, where no derivative exists"
    if expect == "convention":
        return None if not warned and np.all(np.isfinite(g)) else "warned at a convention"
    if expect == "probe":
        if warned:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegeneracyWarning)
            seen = la.check_gauge_invariance(f, T(a))
        return None if seen > 1e-6 else "silent, and check_gauge_invariance saw nothing"
    tol = 1e-4 if "1e-9" in name or "1e-6" in name else 1e-6
    exact = _matches_fd(f, a, g, tol)
    if exact and warned:
        return f"exact, but warned: {warned[0][:160]}"
    if not exact and not warned:
        return "inexact and silent"
    return None


@pytest.mark.numpy_only  # one code path; both backends run the other degeneracy tests
@pytest.mark.parametrize("op,dtype,name", MATRICES, ids=["-".join(m) for m in MATRICES])
def test_degenerate_table(op, dtype, name):
    bad = {loss: why for loss, a, f, expect in _cases(op, dtype, name)
           if (why := _verdict(name, a, f, expect)) is not None}
    assert not bad, bad


def test_table_is_not_vacuous():
    """Most of the table's cases are differentiable (exact, or warned where the factors
    cannot express the derivative), and the probe-only blind spots are few."""
    kinds = [c[3] for m in MATRICES for c in _cases(*m)]
    assert len(kinds) > 300
    assert kinds.count("diff") > 0.5 * len(kinds)
    assert 0 < kinds.count("probe") < 0.1 * len(kinds)
