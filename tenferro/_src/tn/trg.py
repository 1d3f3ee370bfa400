"""Levin-Nave tensor renormalization group (TRG) for a translation-invariant square lattice.

Each step splits every site tensor by a truncated SVD in the two checkerboard orientations,
``T[(l u), (r d)] -> S1[l u a] S3[a r d]`` and ``T[(u r), (d l)] -> S2[u r b] S4[b d l]``, and
contracts the four pieces around each plaquette into a new tensor on a lattice rotated by 45
degrees with half as many sites. The new tensor's legs (l, u, r, d) come from the pieces of the
top-left, top-right, bottom-right and bottom-left sites, so no explicit rotation is needed.

``svd="partial"`` splits with ``tenferro.linalg.svds`` instead of the full SVD: the chi
leading triplets of the chi^2 x chi^2 matrix by block Krylov iteration (O(chi^5) instead of
O(chi^6)), differentiated by the exact truncated pullback (same derivative as the full SVD
truncated to chi, kept/discarded coupling included).

ln Z per site is accumulated in log space: with T_k normalised by n_k at step k (on N / 2^k
sites), ln Z / N = sum_k ln(n_k) / 2^k + ln Z(T_K) / 2^K, the last term a 1x1 torus.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import linalg, ops
from ..autodiff.checkpoint import checkpoint as remat
from ..contract.api import einsum
from ..progress import scalar
from . import arguments as arg
from .ising import normalize, trace_torus
from .progress import Progress

__all__ = ["trg", "trg_step"]


def sqrt_singular_values(s):
    """sqrt(s) with derivative 0 (not infinity) at singular values that vanish to working
    precision. The Ising tensor has exactly zero singular values for every beta; their columns
    of U sqrt(S) are zero whatever U is, so the true directional derivative there is 0, while
    the plain sqrt rule would give inf * 0 = NaN (or, after round-off, huge noise)."""
    tiny = ops.stop_gradient(ops.max(s)) * 1e-14
    alive = s > tiny
    return ops.where(alive, ops.sqrt(ops.where(alive, s, 1.0)), 0.0)


SVD_METHODS = ("full", "partial")
#: the arguments of a coarse-graining step and loop (shared with hotrg)
RG_ARGUMENTS = dict(t=arg.square_lattice_site, chi=arg.SIZE, steps=arg.COUNT,
                    checkpoint=arg.FLAG, svd=arg.rule(arg.choice, options=SVD_METHODS),
                    progress=arg.FLAG, callback=arg.FUNCTION)


def _truncated_svd(m, chi, relative_cutoff=None, svd="full"):
    """The chi leading singular triplets (dropping those below relative_cutoff * s_max)."""
    if svd == "full" or chi >= min(m.shape):
        return linalg.svd(m, max_rank=chi, relative_cutoff=relative_cutoff)
    u, s, vh = linalg.svds(m, chi)
    if relative_cutoff is not None:
        sv = ops.stop_gradient(s).numpy()
        r = linalg.truncation_rank(sv, relative_cutoff=relative_cutoff)
        u, s, vh = u[:, :r], s[:r], vh[:r]
    return u, s, vh


def discarded_weight(m, s):
    """The relative weight 1 - sum(s_kept^2) / ||m||_F^2 that a truncated SVD of ``m`` with
    kept singular values ``s`` drops: a diagnostic, so a constant (no gradient), >= 0."""
    m, s = ops.stop_gradient(m), ops.stop_gradient(s)
    n2 = linalg.norm(m) ** 2
    return ops.maximum(1 - ops.sum(s * s) / ops.where(n2 > 0, n2, 1.0), 0.0)


def _split(m, chi, relative_cutoff=None, svd="full"):
    """Truncated SVD of a matrix, returned as the two halves U sqrt(S), sqrt(S) Vh, and the
    discarded weight."""
    u, s, vh = _truncated_svd(m, chi, relative_cutoff, svd)
    r = sqrt_singular_values(s)
    return u * r, r[:, None] * vh, discarded_weight(m, s)


@arg.checked(relative_cutoff=arg.OPTIONAL_TOL,
             **{k: RG_ARGUMENTS[k] for k in ("t", "chi", "svd")})
def trg_step(t, chi: int, relative_cutoff: float | None = None, svd: str = "full"):
    """One Levin-Nave step: ``T[l,u,r,d] -> T'[l,u,r,d]`` on the 45-degree-rotated lattice.
    With ``relative_cutoff`` the kept rank depends on the data (also in traced graphs).
    ``svd``: "full" (LAPACK, sliced) or "partial" (``svds``, eager only)."""
    return _trg_step(t, chi, relative_cutoff, svd)[0]


def _trg_step(t, chi, relative_cutoff=None, svd="full"):
    """``(T', trunc_err)``: the step and the larger discarded weight of its two SVDs."""
    L, U, R, D = t.shape
    a, b, err1 = _split(ops.reshape(t, (L * U, R * D)), chi, relative_cutoff, svd)  # (l u)(r d)
    k = a.shape[-1]
    s1 = ops.reshape(a, (L, U, k))  # S1[l, u, a]
    s3 = ops.reshape(b, (k, R, D))  # S3[a, r, d]
    t2 = ops.transpose(t, (1, 2, 3, 0))  # T[u, r, d, l]
    c, d, err2 = _split(ops.reshape(t2, (U * R, D * L)), chi, relative_cutoff, svd)  # (u r)(d l)
    k2 = c.shape[-1]
    s2 = ops.reshape(c, (U, R, k2))  # S2[u, r, b]
    s4 = ops.reshape(d, (k2, D, L))  # S4[b, d, l]
    # plaquette: TL uses S3[α, i, m], TR S4[β, j, i], BR S1[k, j, γ], BL S2[m, k, δ]
    return einsum("aim,bji,kjc,mkd->abcd", s3, s4, s1, s2), ops.maximum(err1, err2)


@arg.checked(relative_cutoff=arg.OPTIONAL_TOL, **RG_ARGUMENTS)
def trg(t, chi: int, steps: int, *, relative_cutoff: float | None = None,
        checkpoint: bool = False, svd: str = "full", progress=None,
        callback: Callable[[dict], object] | None = None):
    """ln Z per site of a square-lattice tensor network by TRG (Levin-Nave), differentiable.

    Each step splits every site tensor by a truncated SVD and recombines the pieces into a
    coarse-grained lattice with half the sites, tracking the normalisation. Because every
    operation is a tenferro operation, derivatives of any order with respect to the tensor's
    parameters (``beta``, fields) come from AD: ``grad`` of ln Z gives the energy, its second
    derivative the specific heat.

    Parameters
    ----------
    t : Tensor
        The site tensor ``T[l, u, r, d]`` (four legs; real or complex) of the network
        ``Z = sum prod T``, e.g. ``tenferro.tn.ising_tensor(beta)``.
    chi : int
        The largest bond dimension kept by each SVD.
    steps : int
        Number of TRG steps: the result is ln Z per site of a torus of ``2**steps`` sites.
    relative_cutoff : float, optional
        Also drop singular values below ``relative_cutoff * s_max``.
    checkpoint : bool, optional
        Recompute each step in the backward pass instead of storing its residuals (memory
        O(steps * chi^4) -> O(chi^4) plus one step's worth).
    svd : {"full", "partial"}, optional
        "partial" splits with ``tenferro.linalg.svds`` (O(chi^5) per split instead of
        O(chi^6); the same value and derivative to the solver's tolerance; not under ``jit``).
    progress : bool, optional
        Print a line per step (None: the global ``tenferro.tn.set_progress`` setting).
    callback : callable, optional
        ``callback(record)`` receives every step's record, printed or not: ``chi``, ``lnZ``
        (ln Z per site of the 2^k-site torus reached at step k; the last one is the value
        returned) and ``trunc_err`` (the larger relative discarded weight of the step's two
        SVDs); both are None where values are unknown (under ``jit``).

    Returns
    -------
    Tensor
        ln Z per site, a 0-d tensor (real for a real ``t``).

    Raises
    ------
    tenferro.errors.ShapeError
        ``t`` does not have four legs, or ``chi``/``steps`` is not a positive integer (the
        message names the argument).

    Notes
    -----
    Derivatives go through the truncated SVDs (``tenferro.linalg.svd``): exact for the
    truncated function, including the coupling to discarded values. Symmetric models have
    exactly degenerate singular values; the derivative of ln Z along the model's parameters
    is exact there, but reverse mode cannot see that direction and may report the ties
    (``DegeneracyWarning``, design/linalg.md). Works under ``jit`` (``svd="full"``).

    Examples
    --------
    The 2D Ising model at beta = 0.3 against Onsager's exact ln Z:

    >>> import tenferro as tf
    >>> from tenferro.tn import exact
    >>> lnz = tf.tn.trg(tf.tn.ising_tensor(0.3), chi=4, steps=6, progress=False)
    >>> abs(float(lnz) - exact.onsager_lnz(0.3)) < 1e-3
    True

    The internal energy per site is ``-d ln Z / d beta``:

    >>> f = lambda b: tf.tn.trg(tf.tn.ising_tensor(b), chi=4, steps=6, progress=False)
    >>> abs(-float(tf.grad(f)(0.3)) - exact.onsager_energy(0.3)) < 1e-2
    True
    """
    t, lnz = normalize(t)
    step = functools.partial(_trg_step, svd=svd)
    step = remat(step) if checkpoint else step
    with Progress("TRG", steps, progress, fixed=True, callback=callback) as p:
        for k in range(1, steps + 1):
            t, err = step(t, chi, relative_cutoff)
            t, ln_n = normalize(t)
            lnz = lnz + ln_n / 2**k
            lnz_k = torus_lnz(ops.stop_gradient(lnz), ops.stop_gradient(t), k)  # a report only
            p.update(k, chi=t.shape[0], lnZ=scalar(lnz_k), trunc_err=scalar(err))
    return torus_lnz(lnz, t, steps)


def torus_lnz(lnz, t, k):
    """ln Z per site of the 2^k-site torus: the scales collected so far plus the normalised
    tensor's own 1x1 torus."""
    return lnz + ops.log(trace_torus(t)) / 2**k
