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


def _pieces(hh):
    """h[s1, s2, s1', s2'] as sum_k o1_k[s1, s1'] (x) o2_k[s2, s2'] (an SVD)."""
    p = hh.shape[0]
    U, S, Vh = np.linalg.svd(hh.transpose(0, 2, 1, 3).reshape(p * p, p * p))
    return [(U[:, i].reshape(p, p) * S[i], Vh[i].reshape(p, p)) for i in range(len(S))
            if S[i] > 1e-14 * S[0]]


def cylinder_energy(tensors, pattern, L: int, h: np.ndarray,
                    h_vertical: np.ndarray | None = None, k: int = 3) -> dict:
    """Energy per site of the unit-cell iPEPS (``tensors``, ``pattern[y][x]`` as
    ``tenferro.tn.ipeps``) on the infinite cylinder of circumference L (a multiple of the
    cell's width): ``{"E", "bonds", "ratio", "eigenvalues"}``, ratio = |lambda_2/lambda_1|
    of the transfer matrix of one cell's rows (k eigenvalues computed). ``h[s1, s2, s1',
    s2']`` on horizontal bonds (s1 left), ``h_vertical`` (default h) on vertical ones (s1
    upper). Exact for the cylinder; no truncation anywhere."""
    hv = h if h_vertical is None else h_vertical
    tensors = [np.asarray(t) for t in tensors]
    ly, lx = len(pattern), len(pattern[0])
    if L % lx:
        raise ValueError(f"cylinder_energy: L={L} is not a multiple of the cell width {lx}")
    plain = [double_layer(t) for t in tensors]

    def row(y, ops=()):
        sites = [plain[pattern[y % ly][x % lx]] for x in range(L)]
        for x, o in ops:
            sites[x] = double_layer(tensors[pattern[y % ly][x % lx]], o)
        return sites

    def apply_rows(v, rows):
        for r in rows:
            v = apply_row(v, r)
        return v

    def apply_rows_t(v, rows):  # the transpose: rows from below, each turned upside down
        for r in reversed(rows):
            v = apply_row(v, [a.transpose(2, 1, 0, 3) for a in r])
        return v

    cell = [row(y) for y in range(ly)]
    n = plain[0].shape[0] ** L
    Et = LinearOperator((n, n), matvec=lambda v: apply_rows(v, cell), dtype=plain[0].dtype)
    Eb = LinearOperator((n, n), matvec=lambda v: apply_rows_t(v, cell), dtype=plain[0].dtype)
    wt, vt = eigs(Et, k=min(k, n - 2), which="LM", tol=1e-13)
    order = np.argsort(-np.abs(wt))
    wt, vt = wt[order], vt[:, order]
    _, vb = eigs(Eb, k=1, which="LM", tol=1e-13)
    top, bottom = vt[:, 0], vb[:, 0]
    two = [row(y) for y in range(2 * ly)]  # two cells: room for every vertical bond
    norm = bottom @ apply_rows(top, two)
    bonds = {}
    for y in range(ly):
        for x in range(lx):
            eh = 0.0
            for o1, o2 in _pieces(h):
                rows = list(two)
                rows[y] = row(y, [(x, o1), ((x + 1) % L, o2)])
                eh += bottom @ apply_rows(top, rows) / norm
            ev = 0.0
            for o1, o2 in _pieces(hv):
                rows = list(two)
                rows[y] = row(y, [(x, o1)])
                rows[y + 1] = row(y + 1, [(x, o2)])
                ev += bottom @ apply_rows(top, rows) / norm
            bonds[("h", x, y)], bonds[("v", x, y)] = complex(eh), complex(ev)
    E = sum(bonds.values()) / (lx * ly)
    ratio = abs(wt[1] / wt[0]) if len(wt) > 1 else 0.0
    return dict(E=float(np.real(E)), bonds=bonds, ratio=float(ratio), eigenvalues=wt / wt[0])
