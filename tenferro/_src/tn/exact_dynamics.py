"""Implementation of ``tenferro.tn.exact_dynamics`` (its docstring is the user documentation)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..errors import DTypeError, ShapeError
from . import arguments as arg

__all__ = ["tfim_majorana_matrix", "tfim_quench", "ed_quench"]


@arg.checked(L=arg.SIZE, g=arg.NUMBER, J=arg.NUMBER)
def tfim_majorana_matrix(L: int, g: float = 1.0, J: float = 1.0) -> np.ndarray:
    """The real antisymmetric 2L x 2L matrix A with H = (i/4) a^T A a (0-based: a[2j] is
    a_{2j+1} of the module docstring)."""
    A = np.zeros((2 * L, 2 * L))
    for j in range(L):
        A[2 * j, 2 * j + 1] = -2 * g
    for j in range(L - 1):
        A[2 * j + 1, 2 * j + 2] = -2 * J
    return A - A.T


def _initial_correlations(L: int, state: str) -> np.ndarray:
    """G(0) = <a_k a_l> for the product states "x+" (all X = +1) and "z+" (all Z = +1)."""
    G = np.eye(2 * L, dtype=complex)
    if state == "x+":  # <X_j> = i G_{2j-1,2j} = 1; other pairs vanish
        for j in range(L):
            G[2 * j, 2 * j + 1], G[2 * j + 1, 2 * j] = -1j, 1j
    elif state == "z+":  # <Z_j Z_{j+1}> = i G_{2j,2j+1} = 1; the edge Majoranas stay free
        for j in range(L - 1):
            G[2 * j + 1, 2 * j + 2], G[2 * j + 2, 2 * j + 1] = -1j, 1j
    else:
        raise ShapeError(f"tfim_quench: initial state must be 'x+' or 'z+', got {state!r}.")
    return G


@arg.checked(L=arg.SIZE, times=arg.real_values, g=arg.NUMBER, J=arg.NUMBER,
             initial=arg.rule(arg.choice, options=("z+", "x+")))
def tfim_quench(L: int, times, g: float = 1.0, J: float = 1.0, *, initial: str = "z+"):
    """Exact ``<X_j>(t)`` (shape (T, L)) and ``<Z_j Z_{j+1}>(t)`` (shape (T, L-1)) after a
    quench from the product state ``initial`` ("z+": all spins up along z, the g = 0 ground
    state; "x+": along x, the g = infinity one) to ``H = -J sum Z Z - g sum X``."""
    A = tfim_majorana_matrix(L, g, J)
    G0 = _initial_correlations(L, initial)
    X, ZZ = [], []
    for t in times:
        R = sla.expm(A * t)
        G = R @ G0 @ R.T
        X.append(np.real(1j * np.diagonal(G, 1)[0::2]))
        ZZ.append(np.real(1j * np.diagonal(G, 1)[1::2]))
    return np.array(X), np.array(ZZ)


def _matrix(op: str, name: str, value):
    """A square matrix of numbers: dense (array-like) or a SciPy sparse matrix."""
    from scipy import sparse

    if sparse.issparse(value):
        m = value
    else:
        try:
            m = np.asarray(value)
        except (TypeError, ValueError):
            m = None
        if m is None or m.dtype.kind not in "biufc":
            raise DTypeError(f"{op}: {name} must be a matrix of numbers (dense or sparse), got "
                             f"{arg.describe(value)}.")
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ShapeError(f"{op}: {name} must be a square matrix, got shape {m.shape}.")
    return m


@arg.checked(H=_matrix, times=arg.real_values)
def ed_quench(H, psi0, times, ops):
    """Exact-diagonalisation dynamics: ``<psi(t)|O|psi(t)>`` for each (dense or sparse)
    operator in ``ops`` at each time, psi(t) = exp(-i H t) psi0 (scipy's expm_multiply).
    Returns an array (T, len(ops)). For cross-checks on small chains."""
    from scipy.sparse.linalg import expm_multiply

    try:
        psi0 = np.asarray(psi0, dtype=complex)
    except (TypeError, ValueError):
        psi0 = None
    if psi0 is None or psi0.shape != (H.shape[0],):
        raise ShapeError(f"ed_quench: psi0 must be a vector of length {H.shape[0]} (H is "
                         f"{H.shape}).")
    if isinstance(ops, (str, bytes)) or not hasattr(ops, "__iter__"):
        raise DTypeError(f"ed_quench: ops must be a sequence of operators, got "
                         f"{arg.describe(ops)}.")
    ops = [_matrix("ed_quench", f"ops[{i}]", o) for i, o in enumerate(ops)]
    if any(o.shape != H.shape for o in ops):
        raise ShapeError(f"ed_quench: every operator must have H's shape {H.shape}, got "
                         f"{[o.shape for o in ops]}.")
    out = []
    for t in times:
        psi = expm_multiply(-1j * t * H, psi0) if t else psi0
        out.append([np.real(np.vdot(psi, o @ psi)) for o in ops])
    return np.array(out)
