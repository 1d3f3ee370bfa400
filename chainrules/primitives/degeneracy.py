"""Exact degeneracies in the derivatives of ``svd`` and ``eigh``.

Two values of a spectrum closer than ``eps * scale`` are a *tie* (``scale`` is the largest
singular value, or the largest eigenvalue magnitude). LAPACK splits exactly degenerate values by
rounding (~1e-16 relative), so ties are decided with this tolerance, not by equality.

* ``cut_inverse`` is the ``1/d`` of the JVP rules with ties cut: exact ``1/d`` where
  ``|d| > w``, 0 where ``|d| <= w``. Exact wherever the spectrum is resolved; at a tie the
  cut drops only the rotation *inside* the degenerate subspace, which a gauge-invariant loss
  does not feel.
* ``degeneracy_guard`` / ``degeneracy_check`` make the cases where the cut (or the
  factorization itself) gives a wrong derivative loud. A JVP rule wraps a linear quantity
  (the tangent of the values, or of the rotation inside the spectrum) in ``degeneracy_guard``:
  the identity, free in forward mode. Its transpose is ``degeneracy_check``: also the identity,
  but its impl looks at the cotangent flowing back and reports (``DegeneracyWarning``) when,
  inside a tie block, the loss

  - depends on individual values of the multiplet (the cotangent of the values is not constant
    on the block: ``part="values"``), or
  - depends on the basis chosen inside the degenerate subspace (the cotangent of the rotation
    has an anti-Hermitian part inside the block: ``part="rotation"``; ``part="zero_rotation"``
    for the relative rotation of U and V among zero singular values).

  The check costs O(k) when nothing is degenerate (one comparison of neighbouring values) and
  O(k^2) otherwise. The transpose of a check is a guard again, and the JVP of a check is a
  check on the tangent, so forward-over-reverse derivatives (Hessian-vector products) are
  checked too. What it detects is a sufficient sign, not a proof: see design/linalg.md.

``TENFERRO_DEGENERACY=warn|raise|ignore`` (read at every check) picks what a finding does.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from ..core import Primitive, ShapedArray, Zero, is_undefined
from ..errors import DegeneracyWarning, ShapeError, TenferroError
from ._checks import require_inexact, require_real, same_shape_and_dtype

MODES = ("warn", "raise", "ignore")
ADVICE = {
    "eigh": "Functions of a Hermitian matrix (exp, log, sqrt, powers) are exact at "
    "degeneracies through tenferro.linalg.funm / expm(hermitian=True) / sqrtm / logm / powm; "
    "use those instead of composing eigh with an elementwise function.",
    "svd": "Symmetric functions of a whole multiplet (sum(S), sum(S**2), ...), projectors onto "
    "whole multiplets and U_k Vh_k are exact; a loss that uses individual singular values or "
    "vectors of a multiplet (e.g. rebuilding U diag(g(S)) Vh through the block) is not. Keep "
    "whole multiplets together, or compute the quantity without the factors.",
}


def degeneracy_mode() -> str:
    """What a degeneracy finding does: ``TENFERRO_DEGENERACY`` (default ``warn``)."""
    mode = os.environ.get("TENFERRO_DEGENERACY", "warn").strip().lower() or "warn"
    if mode not in MODES:
        raise TenferroError(
            f"TENFERRO_DEGENERACY must be one of {', '.join(MODES)}, got {mode!r}."
        )
    return mode


def report(message: str) -> None:
    """Warn, raise or stay silent, as ``TENFERRO_DEGENERACY`` says."""
    mode = degeneracy_mode()
    if mode == "ignore":
        return
    message += " (TENFERRO_DEGENERACY=raise makes this an error, =ignore silences it.)"
    if mode == "raise":
        raise DegeneracyWarning(message)
    warnings.warn(message, DegeneracyWarning, stacklevel=3)


def tie_blocks(values, width: float) -> list[tuple[int, int]]:
    """Maximal runs ``[i, j)`` (length >= 2) of a sorted 1-D array whose neighbours differ by
    at most ``width``."""
    values = np.asarray(values)
    close = np.abs(np.diff(values)) <= width
    blocks, start = [], None
    for i, c in enumerate(close):
        if c and start is None:
            start = i
        elif not c and start is not None:
            blocks.append((start, i + 1))
            start = None
    if start is not None:
        blocks.append((start, len(values)))
    return blocks


def describe_block(op: str, values, block, batch_index=None) -> str:
    i, j = block
    name = "singular value" if op == "svd" else "eigenvalue"
    letter = "S" if op == "svd" else "w"
    where = f"matrix {batch_index} of the batch, " if batch_index is not None else ""
    return (f"a {j - i}-fold degenerate {name} {float(np.mean(values[i:j])):.6g} "
            f"({where}{letter}[{i}:{j}])")


# ============================================================== the inverse with ties cut
cut_inverse_p = Primitive(
    "cut_inverse",
    convention="F = 1/d where |d| > w, 0 where |d| <= w (w >= 0): the 1/(s_j - s_i) of the "
    "svd/eigh rules with ties cut; dF/dd = -F^2 (exact off the cut), dF/dw = 0",
)


@cut_inverse_p.def_abstract_eval
def _cut_inverse_aval(d, w):
    a = same_shape_and_dtype("cut_inverse", d, w)
    require_real("cut_inverse", a)
    require_inexact("cut_inverse", a)
    return a


@cut_inverse_p.def_impl
def _cut_inverse_impl(xp, d, w):
    if isinstance(d, np.ndarray):  # one temporary fewer: this runs on k x k matrices
        out = np.zeros(d.shape, d.dtype)
        return np.divide(1.0, d, out=out, where=np.abs(d) > w)
    keep = xp.abs(d) > w
    one = xp.ones_like(d)
    return xp.where(keep, one / xp.where(keep, d, one), xp.zeros_like(d))


@cut_inverse_p.def_jvp
def _cut_inverse_jvp(b, primals, tangents):
    (d, w), (td, _) = primals, tangents
    f = b.bind(cut_inverse_p, d, w)
    if type(td) is Zero:
        return f, Zero(ShapedArray(f.shape, f.dtype))
    return f, b.mul(td, b.neg(b.mul(f, f)))


# ================================================================= guard and check
PARTS = ("values", "rotation", "zero_rotation")


def _guard_aval(x, s, *, op, part, eps):
    if op not in ADVICE:
        raise ShapeError(f"degeneracy check: op must be 'svd' or 'eigh', got {op!r}.")
    if part not in PARTS:
        raise ShapeError(f"degeneracy check: part must be one of {PARTS}, got {part!r}.")
    require_real("degeneracy check (spectrum)", s)
    return x


degeneracy_guard_p = Primitive(
    "degeneracy_guard",
    convention="identity in x (s only says where the ties are); its transpose is "
    "degeneracy_check, which inspects the cotangent",
)
degeneracy_check_p = Primitive(
    "degeneracy_check",
    convention="identity in x; the impl reports (DegeneracyWarning) when x, a cotangent of the "
    "values or of the rotation of a spectrum s, is gauge-dependent inside a tie block of s",
)
for _p in (degeneracy_guard_p, degeneracy_check_p):
    _p.def_abstract_eval(_guard_aval)
degeneracy_guard_p.def_impl(lambda xp, x, s, **params: x)


def _linear_identity(prim, other):
    def jvp(b, primals, tangents, **params):
        (x, s), (tx, _) = primals, tangents
        out = b.bind(prim, x, s, **params)
        if type(tx) is Zero:
            return out, Zero(ShapedArray(out.shape, out.dtype))
        return out, b.bind(prim, tx, s, **params)

    def transpose(b, ct, x, s, **params):
        if is_undefined(s):
            raise TenferroError(f"{prim.name}: the spectrum must not depend on the input.")
        if type(ct) is Zero:
            return Zero(x.aval), None
        return b.bind(other, ct, s, **params), None

    prim.def_jvp(jvp)
    prim.def_transpose(transpose)


_linear_identity(degeneracy_guard_p, degeneracy_check_p)
_linear_identity(degeneracy_check_p, degeneracy_guard_p)


def guard(b, x, s, *, op: str, part: str, eps: float):
    """Wrap the linear quantity ``x`` of a JVP rule (see the module docstring)."""
    if type(x) is Zero:
        return x
    return b.bind(degeneracy_guard_p, x, s, op=op, part=part, eps=float(eps))


def _tolerance(eps: float, dtype) -> float:
    """Relative size of a cotangent difference that counts as a dependence: well above what
    the tie tolerance and rounding leave in a gauge-invariant cotangent."""
    return max(float(np.sqrt(eps)), 1e3 * float(np.finfo(np.dtype(dtype)).eps))


@degeneracy_check_p.def_impl
def _check_impl(xp, x, s, *, op, part, eps):
    k = s.shape[-1]
    if k == 0 or degeneracy_mode() == "ignore":
        return x
    width = eps * xp.max(xp.abs(s), axis=-1, keepdims=True)
    if part == "zero_rotation":
        flagged = xp.any(xp.abs(s) <= width)
    else:
        flagged = k > 1 and xp.any(xp.abs(s[..., 1:] - s[..., :-1]) <= width)
    if not bool(flagged):
        return x  # the common case: nothing is degenerate
    _inspect(xp.to_numpy(x), xp.to_numpy(s), op=op, part=part, eps=eps)
    return x


def _inspect(x, s, *, op, part, eps):
    batch = s.shape[:-1]
    k = s.shape[-1]
    s2 = s.reshape(-1, k)
    x2 = x.reshape((-1,) + x.shape[len(batch):])
    tol = _tolerance(eps, x.dtype)
    for n in range(s2.shape[0]):
        vals, ct = s2[n], x2[n]
        width = eps * float(np.max(np.abs(vals)))
        where = n if batch else None
        scale = float(np.max(np.abs(ct))) if ct.size else 0.0
        if scale == 0.0:
            continue
        if part == "values":
            for blk in tie_blocks(vals, width):
                c = np.real(ct[blk[0]:blk[1]])
                if np.max(c) - np.min(c) > tol * scale:
                    _report_values(op, vals, blk, where)
        elif part == "rotation":
            for blk in tie_blocks(vals, width):
                if _antihermitian_excess(ct, blk, tol * scale, diagonal=False):
                    _report_rotation(op, vals, blk, where)
        else:
            zeros = np.flatnonzero(np.abs(vals) <= width)
            if zeros.size and _antihermitian_excess(
                    ct, (zeros[0], zeros[-1] + 1), tol * scale, diagonal=True):
                _report_zero(vals, (int(zeros[0]), int(zeros[-1]) + 1), where)


def _antihermitian_excess(ct, blk, limit, *, diagonal) -> bool:
    i, j = blk
    c = ct[i:j, i:j]
    skew = c - np.conj(c.T)
    if not diagonal:
        skew = skew - np.diag(np.diag(skew))
    return bool(np.max(np.abs(skew), initial=0.0) > limit)


def _report_values(op, vals, blk, where):
    what = "singular values" if op == "svd" else "eigenvalues"
    report(
        f"{op}: the loss depends on individual {what} of {describe_block(op, vals, blk, where)}"
        f"; how a multiplet splits is not determined by the matrix, so the gradient returned "
        f"(which ignores the mixing inside the multiplet) is not its derivative. {ADVICE[op]}"
    )


def _report_rotation(op, vals, blk, where):
    vecs = "singular vectors" if op == "svd" else "eigenvectors"
    report(
        f"{op}: the loss depends on the choice of {vecs} inside the degenerate subspace of "
        f"{describe_block(op, vals, blk, where)}; any rotation of that basis is an equally "
        f"valid decomposition, so the loss has no derivative there and the gradient returned "
        f"leaves that rotation out. {ADVICE[op]}"
    )


def _report_zero(vals, blk, where):
    i, j = blk
    batch = f"matrix {where} of the batch, " if where is not None else ""
    report(
        f"svd: the loss depends on how the singular vectors of the {j - i} zero singular "
        f"value(s) ({batch}S[{i}:{j}]) are paired (their relative rotation or phase), which "
        f"the matrix does not determine; the gradient returned leaves it out. {ADVICE['svd']}"
    )


# ======================================================= truncation through a multiplet
def check_truncation_ties(s, rank: int, eps: float) -> None:
    """Report a truncation to ``rank`` of the host (NumPy) singular values ``s`` (..., k) that
    keeps part of a degenerate multiplet.

    Convention: exactly ``rank`` values are kept even then (the rank is never moved
    silently); which vectors of the multiplet survive is LAPACK's arbitrary choice, so the
    truncated factors, and every derivative through them, depend on the gauge.
    """
    k = s.shape[-1]
    if rank <= 0 or rank >= k or degeneracy_mode() == "ignore":
        return
    s = np.asarray(s)
    width = eps * np.max(np.abs(s), axis=-1)
    if not np.any(np.abs(s[..., rank - 1] - s[..., rank]) <= width):
        return
    s2 = s.reshape(-1, k)
    for n, vals in enumerate(s2):
        w = eps * float(np.max(np.abs(vals)))
        for blk in tie_blocks(vals, w):
            if blk[0] < rank < blk[1]:
                where = n if s2.shape[0] > 1 else None
                report(
                    f"svd: truncating to {rank} singular values cuts through "
                    f"{describe_block('svd', vals, blk, where)}: the kept vectors are an "
                    f"arbitrary part of the multiplet, so the truncated factors and their "
                    f"derivatives depend on the gauge. Exactly {rank} values are kept (the rank "
                    f"is never moved silently); keep {blk[0]} or {blk[1]} to make the result "
                    f"well defined."
                )


__all__ = ["cut_inverse_p", "degeneracy_check_p", "degeneracy_guard_p"]
