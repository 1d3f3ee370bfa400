"""Implementation of ``tenferro.tn.mpo`` (its docstring is the user documentation)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import DTypeError, ShapeError
from . import arguments as arg

__all__ = [
    "heisenberg_bond",
    "heisenberg_mpo",
    "mpo_from_terms",
    "mpo_to_dense",
    "spin_operators",
    "tfim_bond",
    "tfim_mpo",
]


@arg.checked(kind=arg.rule(arg.choice, options=("pauli", "spin")))
def spin_operators(kind: str = "pauli") -> dict:
    """Local operators of a spin 1/2 as NumPy arrays: "pauli" gives I, X, Y, Z;
    "spin" gives I, Sx, Sy, Sz, Sp (S+), Sm (S-) with S = sigma / 2. Basis (up, down)."""
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    Y = np.array([[0.0, -1.0j], [1.0j, 0.0]])
    Z = np.array([[1.0, 0.0], [0.0, -1.0]])
    if kind == "pauli":
        return {"I": np.eye(2), "X": X, "Y": Y, "Z": Z}
    return {"I": np.eye(2), "Sx": X / 2, "Sy": Y / 2, "Sz": Z / 2,
            "Sp": np.array([[0.0, 1.0], [0.0, 0.0]]), "Sm": np.array([[0.0, 0.0], [1.0, 0.0]])}


# ------------------------------------------------------------- two-site bond operators
@arg.checked(J=arg.NUMBER, rotate=arg.FLAG, dtype=arg.DTYPE)
def heisenberg_bond(J: float = 1.0, *, rotate: bool = True, dtype=None, device=None):
    """The Heisenberg bond ``J S_1 . S_2`` (S = sigma/2) as h[s1', s2', s1, s2].

    ``rotate=True`` (default) rotates every second spin by pi about the y axis, giving
    ``J (-Sx Sx + Sy Sy - Sz Sz)`` (real): the same spectrum, and the antiferromagnetic ground
    state (two-site periodic in the original frame) becomes translation invariant, as a
    single-site uniform MPS (or a single-site iPEPS) needs to represent it well. Real and
    symmetric, so the order of bra and ket indices does not matter."""
    s = spin_operators("spin")
    sign = -1.0 if rotate else 1.0
    h = J * (sign * np.kron(s["Sx"], s["Sx"]) + np.kron(s["Sy"], s["Sy"])
             + sign * np.kron(s["Sz"], s["Sz"]))
    return _bond(h, dtype, device)


@arg.checked(g=arg.NUMBER, J=arg.NUMBER, dtype=arg.DTYPE)
def tfim_bond(g: float = 1.0, J: float = 1.0, *, dtype=None, device=None):
    """The transverse-field Ising bond ``-J Z_1 Z_2 - g (X_1 + X_2) / 2`` (Pauli matrices; the
    field is split between the two sites of each bond), critical at g = J."""
    p = spin_operators("pauli")
    h = -J * np.kron(p["Z"], p["Z"]) - g / 2 * (np.kron(p["X"], p["I"])
                                                + np.kron(p["I"], p["X"]))
    return _bond(h, dtype, device)


def _bond(h, dtype, device):
    if np.abs(np.imag(h)).max() == 0:
        h = np.real(h)
    dt = np.dtype(dtype) if dtype is not None else h.dtype
    return ops.asarray(h.astype(dt).reshape(2, 2, 2, 2), device=device)


@arg.checked(L=arg.SIZE, dtype=arg.DTYPE)
def mpo_from_terms(L: int, onsite=None, bonds: Sequence = (), *, dtype=None,
                   device=None) -> list:
    """The MPO of ``H = sum_i onsite_i + sum_{i=1}^{L-1} sum_k A^k_i B^k_{i+1}``.

    ``onsite``: a (d, d) matrix (or None); ``bonds``: a sequence of pairs ``(A^k, B^k)`` of
    (d, d) matrices (put the coupling constant into A). ``dtype``: default float64, or
    complex128 if any operator is complex. Bond dimension w = 2 + len(bonds). ``device``:
    where the tensors live (default: the default device)."""
    if isinstance(bonds, (str, bytes)) or not isinstance(bonds, Sequence) or not all(
            isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2
            for pair in bonds):
        raise ShapeError(f"mpo_from_terms: bonds must be a sequence of pairs (A, B) for "
                         f"A_i B_(i+1), got {arg.describe(bonds)}.")
    onsite = None if onsite is None else _operator(onsite)
    bonds = [(_operator(a), _operator(b)) for a, b in bonds]
    terms = ([] if onsite is None else [onsite]) + [m for pair in bonds for m in pair]
    if not terms:
        raise ShapeError("mpo_from_terms: no terms given (an onsite operator or bond pairs).")
    d = terms[0].shape[0]
    for o in terms:
        if o.shape != (d, d):
            raise ShapeError(f"mpo_from_terms: every operator must be a ({d}, {d}) matrix, "
                             f"got shape {o.shape}.")
    dt = np.dtype(dtype) if dtype is not None else np.result_type(np.float64, *terms)
    w = 2 + len(bonds)
    W = np.zeros((w, w, d, d), dtype=dt)
    W[0, 0] = W[w - 1, w - 1] = np.eye(d)
    if onsite is not None:
        W[0, w - 1] = onsite
    for k, (A, B) in enumerate(bonds):
        W[0, 1 + k] = A
        W[1 + k, w - 1] = B
    def put(x):
        return ops.asarray(np.ascontiguousarray(x), device=device)

    if L == 1:
        return [put(W[:1, w - 1:])]
    return [put(W[:1])] + [put(W) for _ in range(L - 2)] + [put(W[:, w - 1:])]


def _operator(o) -> np.ndarray:
    """A local operator of ``mpo_from_terms`` as a NumPy matrix of numbers."""
    try:
        x = np.asarray(ops.stop_gradient(o) if isinstance(o, Tensor) else o)
    except (TypeError, ValueError):  # ragged nested lists
        x = None
    if x is None or x.dtype.kind not in "biufc":
        raise DTypeError(f"mpo_from_terms: operators must be matrices of numbers, got "
                         f"{arg.describe(o)}.")
    if x.ndim != 2:
        raise ShapeError(f"mpo_from_terms: every operator must be a (d, d) matrix, got shape "
                         f"{x.shape}.")
    return x


@arg.checked(L=arg.SIZE, J=arg.NUMBER, h=arg.NUMBER, delta=arg.NUMBER, dtype=arg.DTYPE)
def heisenberg_mpo(L: int, J: float = 1.0, h: float = 0.0, delta: float = 1.0, *,
                   dtype=None, device=None) -> list:
    """Open spin-1/2 XXZ chain ``H = J sum_i (Sx Sx + Sy Sy + delta Sz Sz)_{i,i+1} - h sum_i Sz_i``
    (S = sigma/2; delta = 1 is the Heisenberg chain), bond dimension 5 (real: the XY part is
    written as (S+ S- + S- S+)/2)."""
    s = spin_operators("spin")
    bonds = [(J / 2 * s["Sp"], s["Sm"]), (J / 2 * s["Sm"], s["Sp"]),
             (J * delta * s["Sz"], s["Sz"])]
    onsite = -h * s["Sz"] if h else None
    return mpo_from_terms(L, onsite, bonds, dtype=dtype, device=device)


@arg.checked(L=arg.SIZE, g=arg.NUMBER, J=arg.NUMBER, dtype=arg.DTYPE)
def tfim_mpo(L: int, g: float = 1.0, J: float = 1.0, *, dtype=None, device=None) -> list:
    """Open transverse-field Ising chain ``H = -J sum_i Z_i Z_{i+1} - g sum_i X_i`` (Pauli
    matrices; critical at g = J), bond dimension 3."""
    p = spin_operators("pauli")
    return mpo_from_terms(L, -g * p["X"], [(-J * p["Z"], p["Z"])], dtype=dtype,
                          device=device)


@arg.checked(mpo=arg.MPO)
def mpo_to_dense(mpo: Sequence):
    """The (d^L, d^L) matrix of an MPO (site 1 slowest). Exponential in L: for tests."""
    m = mpo[0]  # [l, r, out, in] with l = 1
    m = ops.reshape(m, m.shape[1:])  # [r, O, I]
    for w in mpo[1:]:
        m = einsum("rab,rqcd->qacbd", m, w)  # combine out and in indices, site 1 slowest
        q, a, c, b, e = m.shape
        m = ops.reshape(m, (q, a * c, b * e))
    return ops.reshape(m, m.shape[1:])
