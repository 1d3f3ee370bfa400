"""Higher-order TRG (Xie et al., PRB 86, 045139 (2012)) for a translation-invariant square lattice.

A step contracts two neighbouring tensors along one axis, ``M = T[l1,u,r1,k] T[l2,k,r2,d]``, and
compresses the doubled bond (l1 l2) -> x with an isometry U from the leading eigenvectors of
M M^dagger (computed without forming M). The same U must act on the left and the right legs, so
the side (left or right) whose discarded weight is smaller provides it. Alternating the axis
(by rotating the tensor) coarse-grains both directions. Each step halves the number of sites.

``svd="partial"`` takes the chi leading eigenvectors of the (positive semi-definite) M M^dagger
from ``tenferro.linalg.svds`` (block Krylov, exact truncated pullback) instead of a full
``eigh``: the decomposition drops from O(chi^6) to O(chi^5) (forming M M^dagger stays O(chi^6)).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .. import linalg, ops
from ..autodiff.checkpoint import checkpoint as remat
from ..contract.api import einsum
from ..progress import scalar
from . import arguments as arg
from .ising import normalize
from .progress import Progress
from .trg import RG_ARGUMENTS, torus_lnz

__all__ = ["hotrg", "hotrg_step"]


def _isometry(t, chi, side, svd="full"):
    """Leading eigenvectors of M M^dagger for the ``side`` ("left"/"right") doubled leg."""
    tc = ops.conj(t)
    if side == "left":
        a = einsum("lurk,purq->lpkq", t, tc)  # sum over u, r1
        b = einsum("mkrd,nqrd->mnkq", t, tc)  # sum over r2, d
    else:
        a = einsum("lurk,luqp->rqkp", t, tc)  # sum over l1, u  (indices r1, r1')
        b = einsum("mkrd,mpsd->rskp", t, tc)  # sum over l2, d  (r2, r2')
    mm = einsum("abkq,cdkq->acbd", a, b)  # [(x1 x2), (x1' x2')]
    D = t.shape[0]
    mm = ops.reshape(mm, (D * D, D * D))
    mm = (mm + ops.conj(mm.T)) / 2
    k = min(chi, D * D)
    if svd == "partial" and k < D * D:
        # PSD: singular vectors are eigenvectors, singular values eigenvalues
        u, s, _ = linalg.svds(mm, k)
        discarded = ops.real(ops.sum(ops.diagonal(mm))) - ops.sum(s)
        return ops.reshape(u, (D, D, k)), discarded, mm
    w, v = linalg.eigh(mm)  # ascending
    discarded = ops.sum(w[: D * D - k])
    u = ops.flip(v[:, D * D - k :], 1)  # leading first
    return ops.reshape(u, (D, D, k)), discarded, mm


@arg.checked(**{k: RG_ARGUMENTS[k] for k in ("t", "chi", "svd")})
def hotrg_step(t, chi: int, svd: str = "full"):
    """Contract two tensors vertically and compress the doubled horizontal bond:
    ``T'[x, u, y, d] = U*[l1 l2, x] T[l1, u, r1, k] T[l2, k, r2, d] U[r1 r2, y]``."""
    return _hotrg_step(t, chi, svd)[0]


def _hotrg_step(t, chi, svd="full"):
    """``(T', trunc_err)``: the step and the relative discarded weight of the isometry used
    (discarded eigenvalues of M M^dagger over its trace, a constant for the report)."""
    ul, el, mm = _isometry(t, chi, "left", svd)
    ur, er, _ = _isometry(t, chi, "right", svd)
    u = ops.where(el <= er, ul, ur)  # no Python branch on data: works traced too
    total = ops.stop_gradient(ops.real(ops.sum(ops.diagonal(mm))))  # ||M||^2, the same both sides
    err = ops.maximum(ops.stop_gradient(ops.minimum(el, er)) / ops.where(total > 0, total, 1.0),
                     0.0)
    return einsum("abx,aurk,bkqd,rqy->xuyd", ops.conj(u), t, t, u), err


@arg.checked(**RG_ARGUMENTS)
def hotrg(t, chi: int, steps: int, *, checkpoint: bool = False, svd: str = "full",
          progress=None, callback: Callable[[dict], object] | None = None):
    """ln Z per site of the square-lattice network of ``t`` (``T[l, u, r, d]``) after
    ``steps`` HOTRG steps (alternating axes; a torus of 2^steps sites), bond dimension ``chi``.
    ``svd="partial"``: isometries from ``tenferro.linalg.svds`` (eager only).
    ``progress``: a line per step (None: global setting); ``callback(record)`` receives every
    step's record, printed or not: ``chi``, ``lnZ`` (ln Z per site of the 2^k-site torus
    reached at step k; the last one is the value returned) and ``trunc_err`` (the relative
    discarded weight of the step's isometry); both None where values are unknown (``jit``)."""
    t, lnz = normalize(t)
    step_fn = functools.partial(_hotrg_step, svd=svd)
    step_fn = remat(step_fn) if checkpoint else step_fn
    with Progress("HOTRG", steps, progress, fixed=True, callback=callback) as p:
        for k in range(1, steps + 1):
            t, err = step_fn(t, chi)
            t = ops.transpose(t, (1, 2, 3, 0))  # rotate: next step coarse-grains the other axis
            t, ln_n = normalize(t)
            lnz = lnz + ln_n / 2**k
            lnz_k = torus_lnz(ops.stop_gradient(lnz), ops.stop_gradient(t), k)  # a report only
            p.update(k, chi=t.shape[0], lnZ=scalar(lnz_k), trunc_err=scalar(err))
    return torus_lnz(lnz, t, steps)

