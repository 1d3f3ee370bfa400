"""The vectors a Krylov eigensolver works on, in two kinds, behind one small interface.

``eigensolver.krylov_schur`` never touches a vector itself: it asks a *vector space* for the
few operations it needs -- a norm, a division by a scalar, and on a basis (the Krylov vectors
so far) appending a vector, orthogonalising against it (the inner products ``dot`` for all
basis vectors at once and the ``axpy`` that removes them, one matrix product each) and
combining it with small host coefficients. Everything else (the projected matrix, Ritz
values, convergence, restarts) is host-side NumPy in the solver.

* ``TensorVectors`` (``TENSORS``): tenferro tensors on any device, the default. The basis is
  an (n, j) tensor grown by concatenation; eigsh/eigs, the dense DMRG and VUMPS use it.
* ``ArrayVectors(backend)``: raw backend arrays (NumPy, CuPy, array API), forward only, for
  loops where the eager tape's per-operation cost would dominate the arithmetic (the
  block-sparse DMRG's products are a few dozen small matrix products). The basis is a
  preallocated (m + 1, n) array filled row by row; on NumPy the operations are ndarray's
  methods (no argument handling).

Both perform the same arithmetic in the same order; the solver's results differ only by
rounding between the kinds.
"""

from __future__ import annotations

import math

import numpy as np

from chainrules import primitives as P

from ..core.dispatch import bind
from ..ops import concatenate, conj, matmul, real, reshape
from ._iterative import (
    host,
    orthogonalize,
    random_vector,
    value,
    vnorm,
)

__all__ = ["ArrayVectors", "TENSORS", "TensorVectors"]


class TensorVectors:
    """Krylov vectors as tenferro tensors (columns of a basis tensor)."""

    def size(self, x) -> int:
        return int(x.shape[0])

    def dtype(self, x) -> np.dtype:
        return np.dtype(x.dtype)

    def normalize(self, x):
        return x / vnorm(x)

    def divide(self, x, a: float):
        return x / a

    def zeros_like(self, x):
        return x * 0

    def random(self, like, rng):
        return random_vector((like.shape[0],), np.dtype(like.dtype),
                            getattr(like, "device", None), rng)

    # ------------------------------------------------------------------ a basis
    def basis(self, q, m: int):
        """A basis holding ``q`` (room for ``m + 1`` vectors)."""
        return reshape(q, (q.shape[0], 1))

    def append(self, B, x):
        return concatenate([B, reshape(x, (x.shape[0], 1))], axis=1)

    def count(self, B) -> int:
        return int(B.shape[1])

    def orthogonalize(self, B, w):
        """(w', h, ||w'||) with w' = w - B h orthogonal to the orthonormal columns of B, h on
        the host: classical Gram-Schmidt, repeated only when it cancelled more than half of
        w's squared norm, ||h||^2 + ||w'||^2 (the DGKS criterion; one pass is then as good as
        two). One host read per pass: the coefficients and the norm."""
        cplx = w.dtype.kind == "c" or B.dtype.kind == "c"
        h = _coeffs(B, w, cplx)
        w = w - _dg(B, h, 1, 0)
        hv = value(h)
        n1 = float(value(_sqnorm(w, cplx)))
        if n1 < float(np.vdot(hv, hv).real):
            c = _coeffs(B, w, cplx)
            w = w - _dg(B, c, 1, 0)
            hv = hv + value(c)
            n1 = float(value(_sqnorm(w, cplx)))
        return w, hv, math.sqrt(max(n1, 0.0))

    def purge(self, B, w):
        """``w`` orthogonalised to ``B`` to working precision (a fresh random direction)."""
        w, _ = orthogonalize(B, w)
        w, _ = orthogonalize(B, w)
        return w

    def combine(self, B, mm: int, Y: np.ndarray):
        """The vectors ``B[:, :mm] @ Y`` (host coefficients ``Y``, mm x p) as a block."""
        ydt = np.complex128 if (np.iscomplexobj(Y) and B.dtype.kind != "c") else B.dtype
        return matmul(B[:, :mm], host(Y, ydt, B))

    def restart(self, B, block, last):
        """The basis [block, last] (a thick restart)."""
        return self.append(block, last)

    def normalize_block(self, X):
        return X / vnorm(X)

    def column(self, X, i: int):
        return X[:, i]


def _dg(a, b, ca: int, cb: int):
    """One ``dot_general`` contracting axis ``ca`` of a with axis ``cb`` of b (the Krylov
    loops' vector products: one primitive each, no broadcasting logic)."""
    return bind(P.dot_general_p, a, b, dimension_numbers=(((ca,), (cb,)), ((), ())))


def _coeffs(Q, w, cplx):
    """Q^H w for a vector w."""
    if cplx:
        return conj(_dg(Q, conj(w), 0, 0))
    return _dg(Q, w, 0, 0)


def _sqnorm(w, cplx):
    return real(_dg(conj(w), w, 0, 0)) if cplx else _dg(w, w, 0, 0)


TENSORS = TensorVectors()


class _Basis:
    """A preallocated (m + 1, n) array whose first ``j`` rows are the basis."""

    __slots__ = ("V", "j", "cplx")

    def __init__(self, V, j, cplx):
        self.V, self.j, self.cplx = V, j, cplx


class ArrayVectors:
    """Krylov vectors as raw arrays of one backend (``None``: NumPy; else a tenferro
    ``Backend``, whose array-API namespace makes arrays on its device). Forward only."""

    def __init__(self, backend=None):
        self.numpy = backend is None
        if self.numpy:
            self.xp = np
            self.to_host = np.asarray
            self.np_dtype = np.dtype
        else:
            self.xp = backend.xp
            self.to_host = backend.to_numpy
            self.np_dtype = backend.canonical_dtype

    def size(self, x) -> int:
        return int(x.shape[0])

    def dtype(self, x) -> np.dtype:
        return self.np_dtype(x.dtype)

    def _sqnorm(self, x, cplx: bool) -> float:
        if self.numpy:
            return float(np.vdot(x, x).real) if cplx else float(x @ x)
        xp = self.xp
        return float(self.to_host(xp.real(xp.vecdot(x, x))))

    def _dots(self, V, w, cplx: bool):
        """V^H w for the rows of V (the inner products with every basis vector); complex:
        conj(V conj(w)), which conjugates two vectors instead of the basis."""
        if not cplx:
            return V @ w
        conj = np.conj if self.numpy else self.xp.conj
        return conj(V @ conj(w))

    def normalize(self, x):
        return x / math.sqrt(self._sqnorm(x, self.dtype(x).kind == "c"))

    def divide(self, x, a: float):
        return x / a

    def zeros_like(self, x):
        return self.xp.zeros_like(x)

    def random(self, like, rng):
        dt = self.dtype(like)
        a = rng.standard_normal(self.size(like))
        if dt.kind == "c":
            a = a + 1j * rng.standard_normal(self.size(like))
        return self.xp.asarray(a.astype(dt))

    # ------------------------------------------------------------------ a basis
    def basis(self, q, m: int) -> _Basis:
        V = self.xp.empty((m + 1, self.size(q)), dtype=q.dtype)  # (rows read once written)
        V[0, :] = q
        return _Basis(V, 1, self.dtype(q).kind == "c")

    def append(self, B: _Basis, x) -> _Basis:
        B.V[B.j, :] = x
        B.j += 1
        return B

    def count(self, B: _Basis) -> int:
        return B.j

    def orthogonalize(self, B: _Basis, w):
        """As ``TensorVectors.orthogonalize``, one matrix-vector product per pass."""
        V, cplx = B.V[: B.j, :], B.cplx
        h = self._dots(V, w, cplx)
        w = w - h @ V
        hv = self.to_host(h)
        n1 = self._sqnorm(w, cplx)
        if n1 < float(np.vdot(hv, hv).real):
            c = self._dots(V, w, cplx)
            w = w - c @ V
            hv = hv + self.to_host(c)
            n1 = self._sqnorm(w, cplx)
        return w, hv, math.sqrt(max(n1, 0.0))

    def purge(self, B: _Basis, w):
        V = B.V[: B.j, :]
        for _ in range(4):
            w = w - self._dots(V, w, B.cplx) @ V
        return w

    def combine(self, B: _Basis, mm: int, Y: np.ndarray):
        """The vectors ``Y^T B[:mm]`` (rows) for host coefficients ``Y`` (mm x p)."""
        dt = self.dtype(B.V)
        ydt = np.complex128 if (np.iscomplexobj(Y) and dt.kind != "c") else dt
        return self.xp.asarray(np.ascontiguousarray(Y.T).astype(ydt)) @ B.V[:mm, :]

    def restart(self, B: _Basis, block, last) -> _Basis:
        p = block.shape[0]
        B.V[:p, :] = block
        B.V[p, :] = last
        B.j = p + 1
        return B

    def normalize_block(self, X):
        if X.shape[0] == 1:
            return X / math.sqrt(self._sqnorm(X[0, :], self.dtype(X).kind == "c"))
        return self.xp.stack([self.normalize(X[i, :]) for i in range(X.shape[0])])

    def column(self, X, i: int):
        return X[i, :]
