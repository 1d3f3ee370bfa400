"""Implementation of ``tenferro.tn.ipeps`` (its docstring is the user documentation)."""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from chainrules.dtypes import float64

from .. import linalg, ops
from ..contract.api import einsum
from ..core.tensor import Tensor
from ..errors import ShapeError
from . import arguments as arg
from .ctmrg_directional import ctmrg_directional
from .ctmrg_moves import DirectionalEnv, _env_rule, _grid, _pattern_rule
from .ipeps_optimize import IPEPSResult, _c4v_energy, run_lbfgs, saved_tensors
from .mpo import heisenberg_bond

__all__ = [
    "IPEPSResult",
    "bond_rdms",
    "optimize",
    "random_unitcell_peps",
    "tile_unitcell",
    "unitcell_double_layers",
    "unitcell_energy",
]


def _check_tensors(op: str, tensors) -> list[Tensor]:
    out = arg.tensor_list(op, "tensors", tensors, legs="A[s, u, l, d, r]")
    return [A if A.dtype.kind in "fc" else A.astype(float64) for A in out]


_PATTERN = _pattern_rule


def _double_layer(A) -> Tensor:
    """``a[(u u'), (l l'), (d d'), (r r')]`` for legs of any (unequal) dimensions."""
    a = ops.tensordot(A, ops.conj(A), ([0], [0]))  # [u, l, d, r, u', l', d', r']
    a = ops.transpose(a, (0, 4, 1, 5, 2, 6, 3, 7))
    return ops.reshape(a, tuple(int(n) ** 2 for n in A.shape[1:]))


def unitcell_double_layers(tensors) -> list[Tensor]:
    """The double-layer tensors ``a[(u u'), (l l'), (d d'), (r r')] = sum_s A conj(A)`` (ket
    index first, as ``tenferro.tn.double_layer``) of the distinct tensors, in order; the
    four legs may have different dimensions (bond dimensions that vary across the cell)."""
    return [_double_layer(A) for A in _check_tensors("unitcell_double_layers", tensors)]


def _rot_ket(A, turns: int):
    """A[s, u, l, d, r] turned by ``turns`` x 90 degrees clockwise (the site-leg transpose
    of ``rotate_cell``)."""
    for _ in range(turns % 4):
        A = ops.transpose(A, (0, 2, 3, 4, 1))
    return A


def _site_env(env: DirectionalEnv, x: int, y: int, turns: int) -> dict:
    """The environment of site (x, y) of the original lattice, labelled as in the lattice
    turned by ``turns`` x 90 degrees clockwise (C_i -> C_{i+turns})."""
    e = env.site(x, y)
    return {f"{k}{(i + turns) % 4 + 1}": e[f"{k}{i + 1}"] for k in "CT" for i in range(4)}


def _left_half(e: dict, A):
    """H[et, eb, s, r, s', r']: C1 T1 / T4 A / C4 T3 with the site's physical and right legs
    open (et, eb: the boundary legs of T1 and T3 to the right)."""
    C1, T1, T4, C4, T3 = e["C1"], e["T1"], e["T4"], e["C4"], e["T3"]
    D = A.shape[1:]
    col = ops.tensordot(C1, T4, ([0], [2]))  # C1[p, e] T4[s, r, p] -> [e, s, r]
    col = ops.tensordot(col, C4, ([1], [1]))  # C4[f, s] -> [e, r, f]
    x = ops.tensordot(col, T1, ([0], [0]))  # T1[e, u, et] -> [r, f, u, et]
    x = ops.tensordot(x, T3, ([1], [2]))  # T3[eb, dd, f] -> [r, u, et, eb, dd]
    r, u, et, eb, dd = x.shape
    x = ops.reshape(x, (D[1], D[1], D[0], D[0], et, eb, D[2], D[2]))  # [l l' u u' et eb d d']
    x = ops.tensordot(x, A, ([0, 2, 6], [2, 1, 3]))  # [l', u', et, eb, d', s, r]
    x = ops.tensordot(x, ops.conj(A), ([0, 1, 4], [2, 1, 3]))  # [et, eb, s, r, s', r']
    return x


def _pair_rdm(e_left: dict, A, e_right: dict, B):
    """rho[s1, s2, s1', s2'] of horizontally adjacent sites (left A, right B), trace 1."""
    hl = _left_half(e_left, A)
    hr = _left_half({k[0] + str((int(k[1]) + 1) % 4 + 1): v for k, v in e_right.items()},
                    _rot_ket(B, 2))  # the right half: the left half turned by 180 degrees
    rho = einsum("tbarcs,btdres->adce", hl, hr)
    return rho / einsum("abab->", rho)


@arg.checked(pattern=_PATTERN, env=_env_rule)
def bond_rdms(tensors, pattern, env: DirectionalEnv) -> dict:
    """The normalised two-site reduced density matrices of every nearest-neighbour bond of
    the cell: ``{("h", x, y): rho of (x, y), (x+1, y); ("v", x, y): rho of (x, y), (x, y+1)}``,
    each ``rho[s1, s2, s1', s2']`` with s1 the left (upper) site."""
    tensors = _check_tensors("bond_rdms", tensors)
    g = _grid(pattern)
    ly, lx = len(g), len(g[0])
    if env is None or env.shape != (ly, lx):
        raise ShapeError(f"bond_rdms: the environment is for a {env.shape} cell, the pattern "
                         f"is {(ly, lx)}.")
    out = {}
    for y in range(ly):
        for x in range(lx):
            A = tensors[g[y][x]]
            B = tensors[g[y][(x + 1) % lx]]
            out[("h", x, y)] = _pair_rdm(_site_env(env, x, y, 0), A,
                                         _site_env(env, x + 1, y, 0), B)
            # vertical: turned by 90 degrees counterclockwise (= 3 clockwise) the upper
            # site is the left one
            B = tensors[g[(y + 1) % ly][x]]
            out[("v", x, y)] = _pair_rdm(_site_env(env, x, y, 3), _rot_ket(A, 3),
                                         _site_env(env, x, y + 1, 3), _rot_ket(B, 3))
    return out


def _bond_operator(h, like) -> Tensor:
    h = arg.tensor("unitcell_energy", "the bond operator h", h)
    if h.device != like.device:  # a constant made on the default device: follow the sites
        h = h.to(like.device)
    if tuple(h.shape) != tuple(like.shape):
        raise ShapeError(f"unitcell_energy: the bond operator must be h[s1, s2, s1', s2'] of "
                         f"shape {tuple(like.shape)}, got {tuple(h.shape)}.")
    return h.astype(like.dtype) if h.dtype != like.dtype else h


@arg.checked(pattern=_PATTERN, chi=arg.SIZE, h=arg.OPTIONAL_TENSOR,
             h_vertical=arg.OPTIONAL_TENSOR, return_env=arg.FLAG)
def unitcell_energy(tensors, pattern, chi: int, *, h=None, h_vertical=None,
                    return_env: bool = False, **ctmrg_options):
    """Energy per site ``(1 / (Lx Ly)) sum_bonds Tr(rho h)`` of the unit-cell iPEPS (every
    horizontal and vertical bond of the cell once). ``h`` (default: the plain Heisenberg bond
    S.S, J = 1) on horizontal bonds, ``h_vertical`` (default ``h``) on vertical ones.
    ``ctmrg_options`` go to ``ctmrg_directional`` (max_iter, tol, checkpoint, implicit,
    progress, env). Each tensor is normalised first (the state does not depend on the
    scale). Differentiable in the tensors, real or complex (the real part of the energy is
    returned; its imaginary part is the error of a Hermitian rho)."""
    tensors = _check_tensors("unitcell_energy", tensors)
    tensors = [A / linalg.norm(A) for A in tensors]
    h = heisenberg_bond(rotate=False) if h is None else h
    hv = h if h_vertical is None else h_vertical
    env = ctmrg_directional([_double_layer(A) for A in tensors], pattern, chi, **ctmrg_options)
    rhos = bond_rdms(tensors, pattern, env)
    e = 0
    for (kind, _, _), rho in rhos.items():
        op = _bond_operator(h if kind == "h" else hv, rho)
        e = e + einsum("abcd,cdab->", rho, op)
    e = ops.real(e) if np.dtype(e.dtype).kind == "c" else e
    e = e / (len(rhos) // 2)
    return (e, env) if return_env else e


@arg.checked(pattern=_PATTERN, sublattice_rotation=arg.FLAG)
def tile_unitcell(A, pattern, sublattice_rotation: bool = False) -> list[Tensor]:
    """The distinct tensors that tile the single-site tensor ``A`` over ``pattern``. With
    ``sublattice_rotation`` the tensors on the odd sublattice ((x + y) odd) get the spin
    rotation by pi about y (exp(-i pi S^y) = [[0, -1], [1, 0]] on the physical leg), which
    turns a C4v state written in the rotated frame (``tenferro.tn.peps``) back into the
    antiferromagnet of the plain Heisenberg bond. Each index of ``pattern`` must then sit on
    one sublattice only."""
    (A,) = _check_tensors("tile_unitcell", [A])
    g = _grid(pattern)
    n = max(max(r) for r in g) + 1
    parity = {}
    for y, row in enumerate(g):
        for x, v in enumerate(row):
            p = (x + y) % 2
            if parity.setdefault(v, p) != p and sublattice_rotation:
                raise ShapeError(f"tile_unitcell: tensor {v} of pattern {pattern!r} sits on "
                                 "both sublattices; with sublattice_rotation each must sit on "
                                 "one (e.g. [[0, 1], [1, 0]] or [[0, 1], [2, 3]]).")
    R = ops.asarray(np.array([[0.0, -1.0], [1.0, 0.0]]), dtype=A.dtype, device=A.device)
    out = []
    for v in range(n):
        if sublattice_rotation and parity.get(v, 0) == 1:
            out.append(ops.tensordot(R, A, ([1], [0])))
        else:
            out.append(A)
    return out


@arg.checked(D=arg.SIZE, n=arg.SIZE, phys=arg.SIZE, seed=arg.SEED, dtype=arg.DTYPE)
def random_unitcell_peps(D: int, n: int, *, phys: int = 2, seed: int | None = None,
                         dtype=float64) -> list[Tensor]:
    """``n`` random iPEPS tensors ``A[s, u, l, d, r]`` (normal entries; complex ones with
    independent real and imaginary parts for a complex ``dtype``)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shape = (phys,) + (D,) * 4
        r = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            r = r + 1j * rng.standard_normal(shape)
        out.append(ops.tensor(r, dtype=dtype))
    return out


# ---------------------------------------------------------------------------- optimize
def _cell_energy(pattern, h, hv, opts):
    def energy(chi, *tensors):
        return unitcell_energy(list(tensors), pattern, chi, h=h, h_vertical=hv,
                               return_env=True, **opts)

    return energy


@arg.checked(steps=arg.COUNT, gtol=arg.TOL, ftol=arg.TOL, history_size=arg.SIZE,
             restarts=arg.COUNT, restart_noise=arg.TOL, seed=arg.SEED,
             autosave_every=arg.SIZE, callback=arg.FUNCTION, h=arg.OPTIONAL_TENSOR,
             h_vertical=arg.OPTIONAL_TENSOR)
def optimize(tensors, chi, pattern=None, *, h=None, h_vertical=None, steps: int = 100,
             gtol: float = 1e-6, ftol: float = 0.0, history_size: int = 20,
             chi_steps=None, restarts: int = 0, restart_noise: float = 1e-2, seed=None,
             autosave: str | os.PathLike | None = None, autosave_every: int = 10,
             resume: str | os.PathLike | None = None,
             callback: Callable[[dict], object] | None = None, progress=None,
             **ctmrg_options) -> IPEPSResult:
    """Minimise the energy per site of an iPEPS by L-BFGS on AD gradients through CTMRG.

    ``pattern=None``: ``tensors`` is one C4v tensor ``A[s, u, l, d, r]`` (real; the energy is
    that of ``symmetrize_c4v(A)``, sublattice-rotated frame, ``h`` default the rotated
    Heisenberg bond, as ``tenferro.tn.heisenberg_energy``), contracted by ``tenferro.tn.ctmrg``.
    With a ``pattern``: ``tensors`` is the list of the cell's distinct tensors (real or
    complex), the energy ``tenferro.tn.unitcell_energy`` (``h``, ``h_vertical``: default the
    plain S.S) through the directional CTMRG. ``ctmrg_options`` go to the CTMRG (default
    ``checkpoint=True`` (unless ``implicit=True``), ``tol=1e-10, max_iter=100``, no
    progress lines of its own).

    ``chi``: an int, or a schedule of increasing chis: each stage runs until ``|grad| <=
    gtol``, until it stalls (see below), or for ``chi_steps[i]`` steps, then the next chi
    starts with a fresh L-BFGS history. The run ends after ``steps`` steps in total, or when
    the last stage ends. A line search that does not lower the energy first drops the
    curvature history; if steepest descent fails too, the stage is *stuck*: with
    ``restarts`` left, ``restart_noise`` x (the rms entry) x normal noise is added to the
    tensors (``seed``) and L-BFGS starts afresh, else the stage ends. ``ftol > 0`` also ends
    a stage when a step lowers the energy by less than ``ftol * |E|``.

    Each step prints a progress line (``progress``: None = ``tenferro.tn.set_progress``'s
    setting, True, False): energy (all digits), dE, |grad| (2-norm), ``ctm_iters`` (CTMRG
    iterations at the accepted point), ``ctm_tail`` (largest smallest-kept normalised corner
    singular value: what chi truncates), ``evals`` (energies of the line search), chi and
    the time per step. ``callback(record)`` gets the same record plus ``"tensors"`` (NumPy
    copies); a true return value stops the run after that step (as a kill would, the state
    file is written first when ``autosave`` is set).

    ``autosave=path`` writes the state every ``autosave_every`` steps and at the end, to
    ``path`` (a NumPy ``.npz``, written atomically; format in design/ipeps-general.md): the
    tensors, the point, energy and gradient, the L-BFGS pairs, the step counts, the
    schedule position, the restart count and the RNG state. ``resume=path`` continues from
    such a file (``tensors`` may then be None); with the same settings the resumed run
    repeats the uninterrupted run bit for bit (``steps`` may be raised to run on).
    """
    op = "tn.ipeps.optimize"
    chis = [arg.size(op, "chi", chi)] if not isinstance(chi, (list, tuple)) else \
        arg.size_list(op, "chi", chi)
    stage_steps = None if chi_steps is None else [
        arg.size(op, f"chi_steps[{i}]", c) for i, c in enumerate(
            chi_steps if isinstance(chi_steps, (list, tuple)) else [chi_steps] * len(chis))]
    if stage_steps is not None and len(stage_steps) != len(chis):
        raise ShapeError(f"{op}: chi_steps has {len(stage_steps)} entries for a chi schedule "
                         f"of {len(chis)}; give one per chi (or one int for all).")
    opts = dict(checkpoint=not ctmrg_options.get("implicit", False), tol=1e-10, max_iter=100)
    opts.update(ctmrg_options)
    opts.setdefault("progress", False)
    if resume is not None:
        if not os.path.exists(resume):
            raise ShapeError(f"{op}: resume={os.fspath(resume)!r} does not exist; give the "
                             "autosave= file of an earlier run (or resume=None).")
        init = saved_tensors(resume)
        if tensors is None:
            tensors = init[0] if pattern is None else init
    if tensors is None:
        raise ShapeError(f"{op}: tensors is None; give the starting tensor(s), or resume= a "
                         "state file.")
    if pattern is None:
        A = arg.tensor(op, "tensors", tensors[0] if isinstance(tensors, (list, tuple))
                       and len(tensors) == 1 else tensors, legs="A[s, u, l, d, r]")
        if np.dtype(A.dtype).kind == "c":
            raise ShapeError(f"{op}: the C4v path (pattern=None) is real (tenferro.tn.ctmrg "
                             f"needs a real site tensor); got {A.dtype}. Give a pattern "
                             "(e.g. [[0]]) for complex tensors.")
        start = [np.asarray(A, dtype=np.float64)]
        energy = _c4v_energy(h, opts)
        kind, pat = "c4v", None
    else:
        g_ = _grid(pattern)
        pat = [list(map(int, r)) for r in g_]
        ts = arg.tensor_list(op, "tensors", tensors, legs="A[s, u, l, d, r]")
        n = max(max(r) for r in pat) + 1
        if len(ts) != n:
            raise ShapeError(f"{op}: pattern {pat} uses {n} distinct tensors, got {len(ts)}.")
        start = [np.asarray(t) if np.dtype(t.dtype).kind in "fc" else
                 np.asarray(t, dtype=np.float64) for t in ts]
        energy = _cell_energy(pat, h, h_vertical, opts)
        kind = "cell"
    return run_lbfgs(start, energy, kind=kind, pattern=pat, chis=chis, stage_steps=stage_steps,
                     ctmrg_options=opts, steps=steps, gtol=gtol, ftol=ftol,
                     history_size=history_size, restarts=restarts,
                     restart_noise=restart_noise, seed=seed, autosave=autosave,
                     autosave_every=autosave_every, resume=resume, callback=callback,
                     progress=progress)
