"""Exact energies of a single-site iPEPS on infinite cylinders, in plain NumPy (no CTMRG, no
truncation): an independent check of the CTMRG energies (design/ipeps-general.md, "The
-0.664724 question").

The cylinder has circumference L (periodic in x) and is infinite in y. Its row transfer
matrix E acts on the L vertical double-layer legs (dimension D^4... (D^2)^L); the rows above a
cut contract to its leading right eigenvector ``top``, the rows below to the leading left
eigenvector ``bottom``. A horizontal bond is one row with the two sites' operators inserted,
a vertical bond two rows: exact expectation values of the PEPS on that cylinder, converging
to the 2D value exponentially in L at the rate of the PEPS's correlation length. The ratio
|lambda_2 / lambda_1| of E says how close the cylinder's transfer matrix is to a degenerate
(two-fold) leading eigenvalue.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigs


def double_layer(A: np.ndarray, op: np.ndarray | None = None) -> np.ndarray:
    """a[(u u'), (l l'), (d d'), (r r')] = sum A[s'] op[s, s'] conj(A[s]) (op = 1: the norm)."""
    op = np.eye(A.shape[0]) if op is None else op
    a = np.einsum("ts,sulde,tULDE->uUlLdDeE", op, A, A.conj())
    D = A.shape[1:]
    return a.reshape(D[0] ** 2, D[1] ** 2, D[2] ** 2, D[3] ** 2)


def apply_row(v: np.ndarray, sites: list) -> np.ndarray:
    """The row of site tensors a[u, l, d, r] (periodic: the last r joins the first l) applied
    to v[u_1 ... u_L] (flat), giving w[d_1 ... d_L] (flat)."""
    L = len(sites)
    d = sites[0].shape[0]
    t = v.reshape(d, -1)
    X = np.tensordot(sites[0], t, ([0], [0]))  # [l0, d0, r0, R]
    X = X.reshape(X.shape[0], X.shape[1], X.shape[2], -1)
    for x in range(1, L):
        l0, dd, r, R = X.shape
        X = X.reshape(l0, dd, r, d, R // d)
        X = np.tensordot(X, sites[x], ([2, 3], [1, 0]))  # [l0, dd, R', d_x, r_x]
        X = X.transpose(0, 1, 3, 4, 2)
        X = X.reshape(l0, dd * X.shape[2], X.shape[3], X.shape[4])
    return np.einsum("adab->d", X)


def cylinder_energy(A: np.ndarray, L: int, h: np.ndarray, h_vertical: np.ndarray | None = None,
                    k: int = 3) -> dict:
    """Energy per site of the single-site iPEPS A[s, u, l, d, r] on the infinite cylinder of
    circumference L: ``{"E", "E_h", "E_v", "ratio"}`` with ratio = |lambda_2/lambda_1| of
    the row transfer matrix (k eigenvalues computed). ``h[s1, s2, s1', s2']`` on horizontal
    bonds (s1 left), ``h_vertical`` (default h) on vertical ones (s1 upper)."""
    hv = h if h_vertical is None else h_vertical
    a = double_layer(A)
    n = a.shape[0] ** L
    Et = LinearOperator((n, n), matvec=lambda v: apply_row(v, [a] * L), dtype=a.dtype)
    # the transpose (rows applied from below): the row turned upside down
    at = a.transpose(2, 1, 0, 3)
    Eb = LinearOperator((n, n), matvec=lambda v: apply_row(v, [at] * L), dtype=a.dtype)
    kk = min(k, n - 2)
    wt, vt = eigs(Et, k=kk, which="LM", tol=1e-13)
    order = np.argsort(-np.abs(wt))
    wt, vt = wt[order], vt[:, order]
    wb, vb = eigs(Eb, k=1, which="LM", tol=1e-13)
    top, bottom, lam = vt[:, 0], vb[:, 0], wt[0]
    norm = bottom @ apply_row(top, [a] * L)

    def pieces(hh):
        M = hh.transpose(0, 2, 1, 3).reshape(hh.shape[0] ** 2, -1)  # [(s1 s1'), (s2 s2')]
        U, S, Vh = np.linalg.svd(M)
        p = hh.shape[0]
        return [(U[:, i].reshape(p, p) * S[i], Vh[i].reshape(p, p)) for i in range(len(S))
                if S[i] > 1e-14 * S[0]]

    def op(o):  # <s|o|s'> with h's convention h[s1, s2, s1', s2'] = <s1 s2|h|s1' s2'>
        return o

    e_h = 0.0
    for o1, o2 in pieces(h):
        row = [double_layer(A, op(o1)), double_layer(A, op(o2))] + [a] * (L - 2)
        e_h += bottom @ apply_row(top, row) / norm
    e_v = 0.0
    for o1, o2 in pieces(hv):
        mid = apply_row(top, [double_layer(A, op(o1))] + [a] * (L - 1))
        e_v += bottom @ apply_row(mid, [double_layer(A, op(o2))] + [a] * (L - 1)) / (norm * lam)
    ratio = abs(wt[1] / wt[0]) if len(wt) > 1 else 0.0
    return dict(E=float(np.real(e_h + e_v)), E_h=complex(e_h), E_v=complex(e_v),
                ratio=float(ratio), eigenvalues=wt / wt[0])
