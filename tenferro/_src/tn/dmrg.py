"""Two-site DMRG for any MPO (``tenferro.tn.mpo`` conventions), on dense tensors.

The state is an MPS ``A[i][left, phys, right]``; the Hamiltonian an MPO
``W[i][left, right, phys_out, phys_in]``. A sweep visits the bonds left to right and back;
a *sweep* is one pass over the bonds, alternately left to right and right to left (no
backward re-canonicalisation pass is needed: each pass leaves the MPS canonical for the next).
At bond (i, i+1) the two-site tensor theta[a, s, t, c] is optimised as the lowest eigenvector
of the effective Hamiltonian

    H_eff theta [b, s', t', d] = L[b, w, a] W_i[w, v, s', s] W_{i+1}[v, u, t', t] R[d, u, c]
                                 theta[a, s, t, c]

applied, never formed, in three contractions: L theta (D^3 w d^2), the two MPO tensors merged
into one (D^2 w^2 d^4), R (D^3 w d^2). The eigensolver is tenferro's Krylov-Schur
(``linalg.eigensolver.lowest_eigenpair``) warm-started from the current theta, so late sweeps
need only a few products; its residual tolerance follows the convergence of the energy. theta
is split by a truncated SVD (``max_rank``, ``cutoff`` on singular values of the normalised
state), and the environment (L moving right, R moving left) is extended by the new isometry.
Bond dimensions may follow a ``schedule`` (one per sweep, then the last repeats), as quimb's.

The sweep itself (schedule, order, local solve, convergence, progress) is ``dmrg_sweep.run``,
shared with the block-sparse DMRG of ``tenferro.symmetric``; this module supplies the dense
tensors and their contractions (``_DenseChain``). Everything is tenferro operations on
tensors, so it runs on every backend (GPU included).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .. import ops
from ..linalg.vectors import TENSORS
from . import arguments as arg
from .dispatch import implementation
from .dmrg_sweep import DMRGResult, run, schedule_of
from .mps import right_canonicalize, split_two_site

__all__ = ["DMRGResult", "dmrg"]




# ------------------------------------------------------------------ environments
def _extend_left(L, A, W):
    """L'[b', w', k'] = L[b, w, k] conj(A)[b, s', b'] W[w, w', s', s] A[k, s, k']."""
    t = ops.tensordot(L, A, ([2], [0]))  # [b, w, s, k']
    t = ops.tensordot(t, W, ([1, 2], [0, 3]))  # [b, k', w', s']
    t = ops.tensordot(t, ops.conj(A), ([0, 3], [0, 1]))  # [k', w', b']
    return ops.transpose(t, (2, 1, 0))


def _extend_right(R, A, W):
    """R'[d', u', c'] = R[d, u, c] conj(A)[d', t', d] W[u', u, t', t] A[c', t, c]."""
    t = ops.tensordot(A, R, ([2], [2]))  # [c', t, d, u]
    t = ops.tensordot(t, W, ([1, 3], [3, 1]))  # [c', d, u', t']
    t = ops.tensordot(t, ops.conj(A), ([1, 3], [2, 1]))  # [c', u', d']
    return ops.transpose(t, (2, 1, 0))


def _two_site_mpo(W1, W2):
    """W12[w, u, s', t', s, t] = W1[w, v, s', s] W2[v, u, t', t]."""
    return ops.transpose(ops.tensordot(W1, W2, ([1], [0])), (0, 3, 1, 4, 2, 5))


def _heff_apply(L, W12, R, shape):
    """The matvec theta -> H_eff theta on flat vectors (three contractions)."""
    n = int(np.prod(shape))

    def mv(x):
        th = ops.reshape(x, shape)
        t = ops.tensordot(L, th, ([2], [0]))  # [b, w, s, t, c]
        t = ops.tensordot(t, W12, ([1, 2, 3], [0, 4, 5]))  # [b, c, u, s', t']
        t = ops.tensordot(t, R, ([1, 2], [2, 1]))  # [b, s', t', d]
        return ops.reshape(t, (n,))

    return mv


class _DenseChain:
    """The dense DMRG's state for ``dmrg_sweep.run``: the MPS, the MPO's two-site tensors and
    the left and right environments (``L[i]`` covers the sites < i, ``R[i]`` those > i)."""

    name = "DMRG"
    op = "dmrg"
    vectors = TENSORS

    def __init__(self, mpo: list, mps: list):
        self.mpo, self.mps, self.sites = mpo, mps, len(mpo)

    def prepare(self) -> None:
        mpo, mps, L = self.mpo, self.mps, self.sites
        one = ops.ones((1, 1, 1), dtype=mps[0].dtype, device=mpo[0].device)
        # right environments for the right-canonical start
        self.R = R = [None] * L
        R[L - 1] = one
        for i in range(L - 1, 0, -1):
            R[i - 1] = _extend_right(R[i], mps[i], mpo[i])
        self.L = [None] * L
        self.L[0] = one
        self.W12 = [_two_site_mpo(mpo[i], mpo[i + 1]) for i in range(L - 1)]

    def local(self, i: int) -> tuple:
        theta = ops.tensordot(self.mps[i], self.mps[i + 1], ([2], [0]))  # [Dl, s, t, Dr]
        shape = tuple(theta.shape)
        return (ops.reshape(theta, (-1,)), _heff_apply(self.L[i], self.W12[i], self.R[i + 1],
                                                       shape), shape)

    def split(self, i: int, v, shape, max_rank: int, cutoff: float, right: bool) -> float:
        a, b, disc = split_two_site(ops.reshape(v, shape), max_rank, cutoff, right,
                                    normalize=True)
        self.mps[i], self.mps[i + 1] = a, b
        if right:
            self.L[i + 1] = _extend_left(self.L[i], a, self.mpo[i])
        else:
            self.R[i] = _extend_right(self.R[i + 1], b, self.mpo[i + 1])
        return disc

    def max_bond(self) -> int:
        return max(int(a.shape[2]) for a in self.mps[:-1])

    def result(self) -> tuple:
        return self.mps, self.max_bond()


# ------------------------------------------------------------------------ DMRG
def _dense_or_other(dense_rule):
    """A rule for a chain argument: the dense rule, except for a list holding tensors of a
    type with its own DMRG (symmetric ones, checked by that implementation, where tn.dmrg
    dispatches them)."""

    def check(op, name, value):
        if isinstance(value, Sequence) and implementation("dmrg", *value) is not None:
            return list(value)
        return dense_rule(op, name, value)

    return check


@arg.checked(mpo=_dense_or_other(arg.rule(arg.mpo, min_sites=2)),
             max_rank=arg.rule(arg.size, hint=" (Pass a starting state by keyword: "
                                              "dmrg(mpo, mps0=mps).)"),
             mps0=_dense_or_other(arg.mps), schedule=arg.rule(arg.size_list, none=True),
             cutoff=arg.TOL, max_sweeps=arg.SIZE, tol=arg.TOL, ncv=arg.rule(arg.size, minimum=2),
             seed=arg.SEED, dtype=arg.DTYPE, progress=arg.FLAG, callback=arg.FUNCTION)
def dmrg(mpo, max_rank: int = 64, *, mps0=None, schedule=None, cutoff: float = 1e-10,
         max_sweeps: int = 40, tol: float = 1e-10, ncv: int = 12, seed: int = 0,
         dtype=None, progress=None,
         callback: Callable[[dict], object] | None = None) -> DMRGResult:
    """Two-site DMRG ground state of the MPO ``mpo`` (any local dimension, real or complex).

    The density-matrix renormalisation group (White, 1992) in its matrix-product form:
    sweeps that optimise two neighbouring sites at a time with a Krylov eigensolver and split
    them by a truncated SVD, growing the bond dimension along ``schedule``.

    Parameters
    ----------
    mpo : list of Tensor or symmetric MPO
        The Hamiltonian as an open-chain MPO, tensors ``W[left, right, phys_out, phys_in]``
        with boundary bonds of dimension 1 (``tenferro.tn.heisenberg_mpo``, ``tfim_mpo``,
        ``mpo_from_terms``). A symmetric MPO (``tenferro.symmetric.mpo_from_dense``) runs the
        block-sparse DMRG (``tenferro.symmetric.dmrg``: same parameters and result, ``mps0``
        symmetric, sector: the charge of ``mps0`` or the identity).
    max_rank : int, optional
        The largest bond dimension (default 64).
    mps0 : list of Tensor, optional
        Initial MPS on the MPO's chain (same sites and physical dimensions; default: random,
        bond dimension ``schedule[0]``, from ``seed``).
    schedule : list of int, optional
        Bond dimension per sweep (a sweep is one pass, alternately left to right and right to
        left; default 8, 16, ..., max_rank, see ``default_schedule``).
    cutoff : float, optional
        Drop singular values of the normalised two-site tensor below it (default 1e-10).
    max_sweeps : int, optional
        The most sweeps (default 40).
    tol : float, optional
        Stop when a sweep at the final bond dimension changes the energy by less than
        ``tol * |E|`` (the first sweeps' local solves are loose, 1e-4: an unchanged energy
        there, as from a converged ``mps0``, counts only once they have tightened).
        ``tol=0`` runs exactly ``max_sweeps`` sweeps, with no warning.
    ncv : int, optional
        Krylov dimension of the local eigensolver (default 12).
    seed : int, optional
        Seed of the random initial MPS.
    dtype : dtype, optional
        The MPS's dtype (default: the common dtype of the MPO and ``mps0``).
    progress : bool, optional
        Print a line per sweep (None: the global setting).
    callback : callable, optional
        ``callback(record)`` receives each sweep's record: ``energy`` (the float returned,
        all digits), ``dE`` (change since the previous sweep, NaN on the first), ``D``
        (largest bond), ``trunc_err`` (largest discarded weight of the sweep), ``products``
        (the local eigensolver's matrix-vector products), ``step_time`` and ``steps_left``
        (estimated from the rate at which ``|dE|`` falls towards ``tol * |E|``).

    Returns
    -------
    DMRGResult
        A named tuple: ``energy`` (float, of the last local solve), ``mps`` (mixed
        canonical, normalised), ``energies`` (after each sweep), ``max_bond``, ``discarded``
        (largest discarded weight of the last sweep), ``sweeps``, ``converged``, ``seconds``.

    Raises
    ------
    tenferro.errors.ShapeError
        ``mpo`` has fewer than two sites or malformed tensors; ``mps0`` does not match the
        chain; an argument is out of range (the message names it).

    Warns
    -----
    tenferro.errors.ConvergenceWarning
        ``max_sweeps`` reached with ``tol > 0`` unmet (naming the change reached).

    Notes
    -----
    DMRG is a variational search, not a differentiable function of the MPO: the energy is
    returned as a Python float. For derivatives of ground-state energies with respect to
    Hamiltonian parameters use the Hellmann-Feynman expression ``mpo_expectation`` on the
    returned state (differentiate it with respect to the MPO), or ``tenferro.linalg.eigsh``
    on a dense or operator Hamiltonian (implicit derivatives).

    Examples
    --------
    The Heisenberg chain of 8 sites, against exact diagonalisation:

    >>> import tenferro as tf
    >>> from tenferro.tn import exact
    >>> res = tf.tn.dmrg(tf.tn.heisenberg_mpo(8), max_rank=16, progress=False)
    >>> res.converged
    True
    >>> abs(res.energy - exact.heisenberg_ground_energy(8)) < 1e-8
    True
    """
    # other tensor types (symmetric MPOs: the block-sparse DMRG)
    impl = implementation("dmrg", *mpo) if isinstance(mpo, Sequence) else None
    if impl is not None:
        return impl(mpo, max_rank, mps0=mps0, schedule=schedule, cutoff=cutoff,
                    max_sweeps=max_sweeps, tol=tol, ncv=ncv, seed=seed, dtype=dtype,
                    progress=progress, callback=callback)
    d = [int(w.shape[2]) for w in mpo]
    if dtype is None:
        dtype = np.result_type(*[w.dtype for w in mpo])
        if mps0 is not None:
            dtype = np.result_type(dtype, *[a.dtype for a in mps0])
    sched = schedule_of(max_rank, schedule)
    if mps0 is None:
        mps = _random_mps(d, sched[0], dtype, seed, mpo[0].device)
    else:
        mps0 = arg.mps("dmrg", "mps0", mps0)  # a symmetric MPS needs a symmetric MPO
        arg.same_chain("dmrg", mpo, mps0, "mps0")
        mps = right_canonicalize([a.astype(dtype) for a in mps0], normalize=True)
    chain = _DenseChain([w.astype(dtype) for w in mpo], mps)
    return run(chain, sched, cutoff=cutoff, max_sweeps=max_sweeps, tol=tol, ncv=ncv,
               seed=seed, progress=progress, callback=callback)


def _random_mps(d, D, dtype, seed, device):
    """A random right-canonical MPS with bond dimension D (capped by the chain's ends)."""
    L = len(d)
    rng = np.random.default_rng(seed)
    dims = [1]
    for k in range(1, L):
        left = int(np.prod(d[:k], dtype=float)) if k < 40 else D
        right = int(np.prod(d[k:], dtype=float)) if L - k < 40 else D
        dims.append(int(min(D, left, right)))
    dims.append(1)
    mps = []
    for i in range(L):
        shape = (dims[i], d[i], dims[i + 1])
        x = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        mps.append(ops.asarray(x.astype(dtype), device=device))
    return right_canonicalize(mps, normalize=True)
