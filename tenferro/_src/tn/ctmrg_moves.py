"""The moves of the directional CTMRG (``ctmrg_directional``): the environment of a unit
cell, the four directional moves with their projectors, one full step, and the corner spectra
that measure convergence. The algorithm and the leg conventions are described in
``ctmrg_directional``'s module docstring; the driver, its implicit derivative and the gauge fix
are in ``ctmrg_directional`` and ``ctmrg_gauge``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .. import linalg, ops
from ..core.tensor import Tensor
from ..errors import ConcretizationError, DTypeError, ShapeError
from . import arguments as arg

__all__ = [
    "DirectionalEnv",
    "ctm_directional_init",
    "ctm_directional_step",
    "rotate_cell",
]

#: singular values of the projector matrix below this fraction of the largest are dropped
PROJECTOR_CUTOFF = 1e-14
PROJECTORS = ("half", "full")
_MAX_TURNS = 2**62


# ------------------------------------------------------------------------ the cell
def _grid(pattern, op: str = "ctmrg_directional") -> tuple[tuple[int, ...], ...]:
    bad = ShapeError(f"{op}: the unit-cell pattern must be a non-empty rectangular grid of "
                     f"tensor indices >= 0 (rows = y), e.g. [[0, 1], [1, 0]]; got "
                     f"{arg.describe(pattern)}.")
    if isinstance(pattern, (str, bytes)) or not isinstance(pattern, Sequence) or not all(
            isinstance(r, Sequence) and not isinstance(r, (str, bytes)) for r in pattern):
        raise bad
    g = tuple(tuple(arg.whole_number(v) for v in row) for row in pattern)
    if not g or not g[0] or len({len(r) for r in g}) != 1 or any(
            v is None or v < 0 for r in g for v in r):
        raise bad
    return g


def _pattern_rule(op, name, value):
    _grid(value, op)
    return value


def _tensor_grid(op: str, name: str, value, legs: str):
    """A non-empty rectangular grid ``[y][x]`` of tensors of the form ``legs``."""
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)) or len(value) == 0 or any(
            not isinstance(r, Sequence) or isinstance(r, (str, bytes)) or len(r) == 0
            for r in value) or len({len(r) for r in value}) != 1:
        raise DTypeError(f"{op}: {name} must be a non-empty rectangular grid [y][x] of tensors "
                         f"{legs}, got {arg.describe(value)}.")
    return tuple(tuple(arg.tensor(op, f"{name}[{y}][{x}]", t, legs=legs)
                       for x, t in enumerate(r)) for y, r in enumerate(value))


def _sites_rule(op, name, value):
    return _tensor_grid(op, name, value, "a[u, l, d, r]")


def _environment_grids(op: str, name: str, value, legs: tuple[str, ...]):
    """Four grids (one per direction) of tensors of the forms ``legs``."""
    if not isinstance(value, Sequence) or len(value) != 4:
        raise DTypeError(f"{op}: {name} must be four grids [y][x] of tensors (one per "
                         f"direction), got {arg.describe(value)}.")
    return tuple(_tensor_grid(op, f"{name}[{i}]", g, lg) for i, (g, lg) in
                 enumerate(zip(value, legs)))


def _corners_rule(op, name, value):
    return _environment_grids(op, name, value, ("C1[s, e]", "C2[w, s]", "C3[n, w]",
                                                "C4[e, n]"))


def _edges_rule(op, name, value):
    return _environment_grids(op, name, value, ("T1[w, d, e]", "T2[n, l, s]", "T3[e, u, w]",
                                                "T4[s, r, n]"))


def _corners_and_edges_rule(op, name, value):
    if not isinstance(value, Sequence) or len(value) != 2:
        raise DTypeError(f"{op}: {name} must be a pair (C, T) of environment grids, got "
                         f"{arg.describe(value)}.")
    return _corners_rule(op, f"{name}[0]", value[0]), _edges_rule(op, f"{name}[1]", value[1])


_TENSORS = arg.rule(arg.tensor_list, legs="a[u, l, d, r]")


def _rot_grid(g):
    """The grid of the lattice turned by 90 degrees clockwise: (x, y) -> (-y, x), i.e.
    new[y'][x'] = old[-x' mod Ly][y'] (Ly' = Lx, Lx' = Ly)."""
    ly, lx = len(g), len(g[0])
    return tuple(tuple(g[(-xp) % ly][yp] for xp in range(ly)) for yp in range(lx))


def _rot_site(a):
    """a'[u, l, d, r] = a[r, u, l, d]: the old left leg points up after a clockwise turn."""
    return ops.transpose(a, (1, 2, 3, 0))


@arg.checked(sites=_sites_rule, C=arg.optional(_corners_rule), T=arg.optional(_edges_rule),
             turns=arg.rule(arg.size, minimum=-_MAX_TURNS))
def rotate_cell(sites, C, T, turns: int = 1):
    """Turn the lattice by ``turns`` x 90 degrees clockwise: site grid ``sites[y][x]`` (tensors
    ``a[u, l, d, r]``), corners ``C = (C1, C2, C3, C4)`` and edges ``T = (T1..T4)`` (grids of
    tensors, or None). The environment is only relabelled (C1 -> C2 -> C3 -> C4 -> C1, same
    for T): its clockwise leg order makes that exact."""
    for _ in range(turns % 4):
        sites = _rot_grid(tuple(tuple(_rot_site(a) for a in row) for row in sites))
        if C is not None:
            C = tuple(_rot_grid(C[(i - 1) % 4]) for i in range(4))
            T = tuple(_rot_grid(T[(i - 1) % 4]) for i in range(4))
    return sites, C, T


@dataclass(frozen=True)
class DirectionalEnv:
    """A unit-cell CTMRG environment. ``C = (C1, C2, C3, C4)`` and ``T = (T1, T2, T3, T4)``,
    each a grid ``[y][x]`` of tensors (they carry gradients) for the sites of the cell; the
    rest is diagnostic: iterations run, whether the corner spectra converged to ``tol``, the
    last change ``delta`` and the normalised corner spectra (NumPy, one per corner and site)."""

    C: tuple
    T: tuple
    iterations: int = 0
    converged: bool = False
    delta: float = math.nan
    spectra: list | None = field(default=None, repr=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(Ly, Lx) of the unit cell."""
        return len(self.C[0]), len(self.C[0][0])

    def site(self, x: int, y: int) -> dict:
        """The eight environment tensors of site (x, y) (indices taken modulo the cell)."""
        ly, lx = self.shape
        x, y = x % lx, y % ly
        out = {f"C{i + 1}": self.C[i][y][x] for i in range(4)}
        out.update({f"T{i + 1}": self.T[i][y][x] for i in range(4)})
        return out


_env_rule = arg.optional(arg.rule(arg.instance, kind=DirectionalEnv,
                                   what="a DirectionalEnv (ctmrg_directional's result)"))


def _sites(tensors, pattern):
    """Grid of site tensors from the distinct tensors and the pattern; checks the legs."""
    g = _grid(pattern)
    tensors = [t if isinstance(t, Tensor) else ops.asarray(t) for t in tensors]
    n = len(tensors)
    for row in g:
        for v in row:
            if not 0 <= v < n:
                raise ShapeError(f"ctmrg_directional: the pattern refers to tensor {v}, but "
                                 f"{n} tensors were given.")
    for i, t in enumerate(tensors):
        if t.ndim != 4:
            raise ShapeError(f"ctmrg_directional: site tensor {i} must be a[u, l, d, r] "
                             f"(4 legs), got shape {tuple(t.shape)}.")
    ly, lx = len(g), len(g[0])
    for y in range(ly):
        for x in range(lx):
            a, right, below = tensors[g[y][x]], tensors[g[y][(x + 1) % lx]], \
                tensors[g[(y + 1) % ly][x]]
            if a.shape[3] != right.shape[1] or a.shape[2] != below.shape[0]:
                raise ShapeError(
                    f"ctmrg_directional: bond dimensions do not match at site (x={x}, y={y}): "
                    f"right leg {a.shape[3]} vs its right neighbour's left leg "
                    f"{right.shape[1]}, down leg {a.shape[2]} vs the up leg "
                    f"{below.shape[0]} below.")
    dt = np.result_type(*[np.dtype(t.dtype) for t in tensors])
    if dt.kind not in "fc":
        dt = np.dtype(np.float64)
    tensors = [t.astype(dt) if np.dtype(t.dtype) != dt else t for t in tensors]
    return tuple(tuple(tensors[v] for v in row) for row in g)


# --------------------------------------------------------------------------- start
def _normalise(t):
    return t / linalg.norm(t)


@arg.checked(tensors=_TENSORS, pattern=_pattern_rule)
def ctm_directional_init(tensors, pattern) -> DirectionalEnv:
    """The starting environment: each corner and edge is its neighbouring site tensor with the
    outward legs summed (the product boundary of all-ones vectors; for a double-layer tensor
    a positive boundary state), normalised. Bond dimension chi = the bond dimension of the
    site tensors; it grows to the requested chi in the first iterations."""
    s = _sites(tensors, pattern)
    ly, lx = len(s), len(s[0])

    def at(x, y):
        return s[y % ly][x % lx]

    def grid(f):
        return tuple(tuple(_normalise(f(x, y)) for x in range(lx)) for y in range(ly))

    C = (
        grid(lambda x, y: ops.sum(at(x - 1, y - 1), axis=(0, 1))),  # C1[s, e] = a[., ., d, r]
        grid(lambda x, y: ops.sum(at(x + 1, y - 1), axis=(0, 3))),  # C2[w, s] = a[., l, d, .]
        grid(lambda x, y: ops.sum(at(x + 1, y + 1), axis=(2, 3))),  # C3[n, w] = a[u, l, ., .]
        grid(lambda x, y: ops.transpose(ops.sum(at(x - 1, y + 1), axis=(1, 2)), (1, 0))),
    )
    T = (
        grid(lambda x, y: ops.sum(at(x, y - 1), axis=0)),  # T1[w, d, e] = a[., l, d, r]
        grid(lambda x, y: ops.sum(at(x + 1, y), axis=3)),  # T2[n, l, s] = a[u, l, d, .]
        grid(lambda x, y: ops.transpose(ops.sum(at(x, y + 1), axis=2), (2, 0, 1))),
        grid(lambda x, y: ops.transpose(ops.sum(at(x - 1, y), axis=1), (1, 2, 0))),
    )
    return DirectionalEnv(C, T)


# ------------------------------------------------------------------ enlarged corners
def _q1(C1, T1, T4, a):
    """Q1[(s, d), (e, r)]: C1[p, q] T1[q, u, e] T4[s, l, p] a[u, l, d, r]."""
    t = ops.tensordot(C1, T1, ([1], [0]))  # [p, u, e]
    t = ops.tensordot(T4, t, ([2], [0]))  # [s, l, u, e]
    t = ops.tensordot(t, a, ([1, 2], [1, 0]))  # [s, e, d, r]
    s, e, d, r = t.shape
    return ops.reshape(ops.transpose(t, (0, 2, 1, 3)), (s * d, e * r))


def _q2(C2, T1, T2, a):
    """Q2[(w, l), (s, d)]: T1[w, u, q] C2[q, p] T2[p, r, s] a[u, l, d, r]."""
    t = ops.tensordot(T1, C2, ([2], [0]))  # [w, u, p]
    t = ops.tensordot(t, T2, ([2], [0]))  # [w, u, r, s]
    t = ops.tensordot(t, a, ([1, 2], [0, 3]))  # [w, s, l, d]
    w, s, l, d = t.shape
    return ops.reshape(ops.transpose(t, (0, 2, 1, 3)), (w * l, s * d))


def _q3(C3, T2, T3, a):
    """Q3[(n, u), (w, l)]: T2[n, r, p] C3[p, q] T3[q, d, w] a[u, l, d, r]."""
    t = ops.tensordot(T2, C3, ([2], [0]))  # [n, r, q]
    t = ops.tensordot(t, T3, ([2], [0]))  # [n, r, d, w]
    t = ops.tensordot(t, a, ([1, 2], [3, 2]))  # [n, w, u, l]
    n, w, u, l = t.shape
    return ops.reshape(ops.transpose(t, (0, 2, 1, 3)), (n * u, w * l))


def _q4(C4, T3, T4, a):
    """Q4[(e, r), (n, u)]: T3[e, d, q] C4[q, p] T4[p, l, n] a[u, l, d, r]."""
    t = ops.tensordot(T3, C4, ([2], [0]))  # [e, d, p]
    t = ops.tensordot(t, T4, ([2], [0]))  # [e, d, l, n]
    t = ops.tensordot(t, a, ([1, 2], [2, 1]))  # [e, n, u, r]
    e, n, u, r = t.shape
    return ops.reshape(ops.transpose(t, (0, 3, 1, 2)), (e * r, n * u))


def _projectors(corners, chi: int, projector: str):
    """(P~, P, s) for the cut between Q4 and Q1 (module docstring); ``s`` the kept singular
    values normalised by the largest. ``corners()`` gives (Q1, Q2, Q3, Q4) ("half" needs Q1
    and Q4 only)."""
    if projector == "half":
        top, bottom = corners(half=True)  # [a, g], [e, a]
    else:
        q1, q2, q3, q4 = corners(half=False)
        top, bottom = q1 @ q2, q3 @ q4  # [a, b], [b, a]
    U, S, Vh = linalg.svd(bottom @ top, max_rank=chi)
    keep = S > S[0] * PROJECTOR_CUTOFF
    inv = ops.where(keep, ops.rsqrt(ops.where(keep, S, ops.ones_like(S))), ops.zeros_like(S))
    inv = inv.astype(U.dtype) if U.dtype != S.dtype else inv
    p_up = inv[:, None] * (ops.conj(U).T @ bottom)  # [k, a]  (upper side of the cut)
    p_down = (top @ ops.conj(Vh).T) * inv[None, :]  # [a, k]  (lower side of the cut)
    return p_up, p_down, S / S[0]


def _left_move(sites, C, T, chi: int, projector: str):
    """Absorb every column into the left boundary of the next one, column by column."""
    ly, lx = len(sites), len(sites[0])
    C = [[list(row) for row in g] for g in C]
    T = [[list(row) for row in g] for g in T]
    spectra = []
    for x in range(lx):
        x1 = (x + 1) % lx
        ups, downs = [], []
        for y in range(ly):
            y1 = (y + 1) % ly

            def corners(half, x=x, x1=x1, y=y, y1=y1):
                q1 = _q1(C[0][y][x], T[0][y][x], T[3][y][x], sites[y][x])
                q4 = _q4(C[3][y1][x], T[2][y1][x], T[3][y1][x], sites[y1][x])
                if half:
                    return q1, q4
                q2 = _q2(C[1][y][x1], T[0][y][x1], T[1][y][x1], sites[y][x1])
                q3 = _q3(C[2][y1][x1], T[1][y1][x1], T[2][y1][x1], sites[y1][x1])
                return q1, q2, q3, q4

            p_up, p_down, s = _projectors(corners, chi, projector)
            ups.append(p_up)  # cut (y | y+1)
            downs.append(p_down)
            spectra.append(s)
        new_c1, new_t4, new_c4 = [], [], []
        for y in range(ly):
            ym = (y - 1) % ly
            a = sites[y][x]
            c1, t1, t4, c4, t3 = C[0][y][x], T[0][y][x], T[3][y][x], C[3][y][x], T[2][y][x]
            # C1'[k, e] = P~(y-1|y)[k, (p, u)] C1[p, q] T1[q, u, e]
            ct = ops.tensordot(c1, t1, ([1], [0]))  # [p, u, e]
            pu = ops.reshape(ups[ym], (-1, c1.shape[0], t1.shape[1]))
            new_c1.append(_normalise(ops.tensordot(pu, ct, ([1, 2], [0, 1]))))
            # C4'[e, k] = C4[q, p] T3[e, u, q] P(y|y+1)[(p, u), k]
            tc = ops.tensordot(t3, c4, ([2], [0]))  # [e, u, p]
            pd = ops.reshape(downs[y], (c4.shape[1], t3.shape[1], -1))
            new_c4.append(_normalise(ops.tensordot(tc, pd, ([2, 1], [0, 1]))))
            # T4'[k, r, k'] = P~(y|y+1)[k, (s, d)] T4[s, l, n] a[u, l, d, r] P(y-1|y)[(n, u), k']
            pu = ops.reshape(ups[y], (-1, t4.shape[0], a.shape[2]))
            pd = ops.reshape(downs[ym], (t4.shape[2], a.shape[0], -1))
            t = ops.tensordot(pu, t4, ([1], [0]))  # [k, d, l, n]
            t = ops.tensordot(t, a, ([1, 2], [2, 1]))  # [k, n, u, r]
            t = ops.tensordot(t, pd, ([1, 2], [0, 1]))  # [k, r, k']
            new_t4.append(_normalise(t))
        for y in range(ly):
            C[0][y][x1], T[3][y][x1], C[3][y][x1] = new_c1[y], new_t4[y], new_c4[y]
    return (tuple(tuple(tuple(r) for r in g) for g in C),
            tuple(tuple(tuple(r) for r in g) for g in T), spectra)


@arg.checked(sites=_sites_rule, C=_corners_rule, T=_edges_rule, chi=arg.SIZE,
             projector=arg.rule(arg.choice, options=PROJECTORS))
def ctm_directional_step(sites, C, T, chi: int, projector: str = "half"):
    """One iteration (left, down, right, up moves) on the site grid ``sites[y][x]``; returns
    ``(C', T', spectra)`` with the normalised singular values of every projector matrix."""
    spectra = []
    for _ in range(4):
        C, T, s = _left_move(sites, C, T, chi, projector)
        spectra += s
        sites, C, T = arg.unchecked(rotate_cell)(sites, C, T, 1)
    return C, T, spectra


# --------------------------------------------------------------------- the loop
def _concrete(x, what: str) -> np.ndarray:
    try:
        return np.asarray(ops.stop_gradient(x))
    except ConcretizationError as e:
        raise ConcretizationError(
            f"ctmrg_directional: {what} needs values, which a traced graph does not have; "
            "under jit pass tol=None (a fixed number of iterations).") from e


def corner_spectra(C) -> list[np.ndarray]:
    """Singular values of every corner (NumPy), each normalised by its largest."""
    out = []
    for g in C:
        for row in g:
            for c in row:
                s = np.linalg.svd(_concrete(c, "the convergence test"), compute_uv=False)
                out.append(s / s[0])
    return out


def _distance(new: list, old: list | None) -> float:
    if old is None:
        return math.inf
    d = 0.0
    for s, p in zip(new, old):
        n = max(s.size, p.size)
        d = max(d, float(np.linalg.norm(np.pad(s, (0, n - s.size)) - np.pad(p, (0, n - p.size)))))
    return d


def _flat(C, T):
    return [t for g in C + T for row in g for t in row]


def _unflat(leaves, ly, lx):
    it = iter(leaves)
    gs = [tuple(tuple(next(it) for _ in range(lx)) for _ in range(ly)) for _ in range(8)]
    return tuple(gs[:4]), tuple(gs[4:])


