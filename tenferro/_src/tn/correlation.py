"""Correlation lengths from the transfer matrix of a converged CTMRG environment.

For a C4v network of site tensors ``a[u, l, d, r]`` with environment edge ``T[α, k, β]``
(``tenferro.tn.ctmrg``), one row of the lattice between the upper and lower half-planes -- each
replaced by its boundary MPS of T tensors -- is the *channel transfer matrix*

    E v [α', r, β'] = v[α, l, β] T[α, u, α'] a[u, l, d, r] T[β, d, β']

(applied in O(chi^3 d^2 + chi^2 d^4), never formed). Correlations along the row decay as
(lambda_2 / lambda_1)^x, so the correlation length is xi = -1 / ln|lambda_2 / lambda_1| (in
lattice spacings of ``a``). E is real symmetric for a C4v network, so ``tenferro.linalg.eigsh``
(largest magnitude) finds the eigenvalues; its implicit derivative, with the environment's own
(``ctmrg(..., implicit=True)``), makes xi differentiable with respect to anything ``a``
depends on, with no iteration unrolled.

At finite chi the boundary MPS has a finite correlation length of its own, so xi(chi)
approaches the true value slowly near a critical point. With several bond dimensions,
``correlation_length(a, chi=[chi_1, chi_2, ...])`` extrapolates as Rams, Czarnik and Cincio
(PRX 8, 041033 (2018)): with eps_i = -ln|lambda_i / lambda_1|, the inverse correlation length
eps_2 is linear in the "gap" delta = eps_3 - eps_2 for large chi, and delta -> 0 is the
infinite-chi limit; a least-squares line through the (delta, eps_2) points gives
xi = 1 / eps_2(delta = 0). The extrapolation is an ordinary differentiable function of the
eigenvalues, so its derivative comes with it.

Check (tests/krylov/test_correlation.py): the 2D Ising model above T_c (beta < beta_c), whose
exact correlation length along a lattice axis is

    1 / xi = 2 (K* - K) = -ln tanh K - 2K,     K = beta J,  tanh K* = exp(-2K)

(the gap of Onsager's row transfer matrix, L. Onsager, Phys. Rev. 65, 117 (1944); B. M. McCoy
and T. T. Wu, The Two-Dimensional Ising Model (Harvard, 1973), ch. XI). At beta = 0.42,
xi = 11.9056 (d xi / d beta = 2 xi^2 (1 + 1/sinh 2K) = 584.3). Below T_c the two leading
eigenvalues of a Z2-symmetric environment become degenerate (the two ordered states) and the
gap to the third, 1/xi = 4 (K - K*), is the physical one: this function then needs an
environment that breaks the symmetry.
"""

from __future__ import annotations

import numpy as np

from .. import linalg, ops
from ..errors import ShapeError
from . import arguments as arg
from .ctmrg import _SITE, CTMEnv, _check_site, c4v_part, ctmrg

__all__ = ["channel_transfer_operator", "correlation_length"]


@arg.checked(a=_SITE, T=arg.rule(arg.tensor, legs="T[x, u, y]"))
def channel_transfer_operator(a, T) -> linalg.LinearOperator:
    """The channel transfer matrix E of the module docstring as a ``LinearOperator`` on
    vectors of length chi * d * chi (closing over ``a`` and ``T``, so gradients reach
    both)."""
    chi, d = T.shape[0], T.shape[1]
    if a.ndim != 4 or a.shape[1] != d:
        raise ShapeError(f"correlation_length: the site tensor a[u, l, d, r] {tuple(a.shape)} "
                         f"does not match the environment edge T {tuple(T.shape)}.")
    n = chi * d * chi

    def mv(x):
        v = ops.reshape(x, (chi, d, chi))  # [α, l, β]
        t = ops.tensordot(v, T, ([0], [0]))  # [l, β, u, α']
        t = ops.tensordot(t, a, ([2, 0], [0, 1]))  # [β, α', d, r]
        t = ops.tensordot(t, T, ([0, 2], [0, 1]))  # [α', r, β']
        return ops.reshape(t, (n,))

    return linalg.LinearOperator(mv, (n, n), a.dtype)


def _spectrum(a, env, tol, hermitian):
    """eps_2, eps_3 (= -ln|lambda_i / lambda_1|) of the channel transfer matrix, and the three
    leading eigenvalues (by magnitude)."""
    op = channel_transfer_operator(a, env.T)
    if hermitian:
        w, _ = linalg.eigsh(op, k=3, which="LM", tol=tol)
    else:
        w, _ = linalg.eigs(op, k=3, which="LM", tol=tol)
    mags = ops.abs(w)
    order = np.argsort(-np.asarray(ops.stop_gradient(mags)), kind="stable")
    lam = [mags[int(i)] for i in order]
    return -ops.log(lam[1] / lam[0]), -ops.log(lam[2] / lam[0]), [w[int(i)] for i in order]


def _bond_dimensions(op, name, value):
    """One bond dimension, or several (the extrapolation), or None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return arg.size_list(op, name, value)
    return [arg.size(op, name, value)]


_CONVERGED_ENV = arg.optional(arg.rule(arg.instance, kind=CTMEnv,
                                        what="a converged CTMEnv (tenferro.tn.ctmrg)"))


@arg.checked(env=_CONVERGED_ENV, chi=_bond_dimensions, hermitian=arg.FLAG,
             return_details=arg.FLAG, tol=arg.TOL)
def correlation_length(a, env: CTMEnv | None = None, *, chi=None, hermitian: bool = True,
                       return_details: bool = False, tol: float = 1e-12, **ctmrg_options):
    """The correlation length (lattice spacings of ``a``) of the C4v network of
    ``a[u, l, d, r]`` from the channel transfer matrix of a CTMRG environment (module
    docstring), differentiable (reverse mode) with respect to ``a``: the eigenvalues by the
    implicit derivative of ``eigsh`` (``eigs`` with ``hermitian=False``), the environment by
    that of ``ctmrg(..., implicit=True)``.

    ``env``: a converged environment (then xi = -1 / ln|lambda_2 / lambda_1| at its chi; it
    carries whatever derivative it was computed with). Otherwise ``chi``: an int (the same,
    with ``ctmrg(a, chi, implicit=True, **ctmrg_options)``), or a sequence of bond dimensions:
    then the Rams-Czarnik-Cincio extrapolation to infinite chi (least-squares line of eps_2
    against delta = eps_3 - eps_2, at delta = 0). ``tol``: the eigensolver's residual.
    ``return_details=True`` also returns a dict with the per-chi eps_2, delta and the three
    leading eigenvalues. Non-differentiable point: a degenerate lambda_1 = lambda_2 (xi
    infinite; the ordered phase of a symmetric environment). Like ``ctmrg``, a function of
    the C4v-symmetric part of ``a`` (``a`` itself within the symmetry check), so its gradient
    is the symmetric network's."""
    a = c4v_part(_check_site("correlation_length", a))
    if env is not None:
        if chi is not None:
            raise ShapeError("correlation_length: pass either a converged env or chi (to "
                             "compute the environment), not both.")
        chis, envs = [env.chi], [env]
    else:
        if chi is None:
            raise ShapeError("correlation_length: pass a converged env or the bond dimension "
                             "chi (an int, or several for the extrapolation) to compute one.")
        chis = chi
        if len(set(chis)) != len(chis):
            raise ShapeError(f"correlation_length: the extrapolation needs distinct bond "
                             f"dimensions, got chi={chis}.")
        ctmrg_options.setdefault("implicit", True)
        ctmrg_options.setdefault("progress", False)
        envs = [ctmrg(a, c, **ctmrg_options) for c in chis]
    eps2, delta, lams = [], [], []
    for e in envs:
        if e.T.shape[0] * e.T.shape[1] * e.T.shape[0] < 4:
            raise ShapeError(f"correlation_length: the transfer matrix of an environment with "
                             f"T of shape {tuple(e.T.shape)} has fewer than the 3 eigenvalues "
                             f"needed; raise chi.")
        e2, e3, lam = _spectrum(a, e, tol, hermitian)
        eps2.append(e2)
        delta.append(e3 - e2)
        lams.append(lam)
    if len(envs) == 1:
        inv = eps2[0]
    else:
        # least-squares line eps_2 = c0 + c1 * delta, evaluated at delta = 0
        x, y = ops.stack(delta), ops.stack(eps2)
        xm, ym = ops.mean(x), ops.mean(y)
        slope = ops.sum((x - xm) * (y - ym)) / ops.sum((x - xm) ** 2)
        inv = ym - slope * xm
    xi = 1.0 / inv
    if return_details:
        return xi, {"chi": chis, "eps2": eps2, "delta": delta, "eigenvalues": lams}
    return xi
