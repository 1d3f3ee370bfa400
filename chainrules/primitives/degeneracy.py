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

from ..core import Primitive, ShapedArray, Zero, is_undefined, no_flops
from ..errors import DegeneracyWarning, ShapeError, TenferroError
from ..params import REAL, one_of, tuple_of
from . import _batching
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


def default_tie_eps(dtype) -> float:
    """Default relative tie tolerance of the svd/eigh derivatives: 1e-4 in single precision,
    1e-10 in double (``tenferro.linalg.default_eps`` explains the choice)."""
    return 1e-4 if np.dtype(dtype) in (np.dtype("float32"), np.dtype("complex64")) else 1e-10


def degeneracy_mode() -> str:
    """What a degeneracy finding does: ``TENFERRO_DEGENERACY`` (default ``warn``)."""
    mode = os.environ.get("TENFERRO_DEGENERACY", "warn").strip().lower() or "warn"
    if mode not in MODES:
        raise TenferroError(
            f"TENFERRO_DEGENERACY must be one of {', '.join(MODES)}, got {mode!r}."
        )
    return mode


def checks_on(host: bool) -> bool:
    """Whether to look for degeneracies in values that live on the host (``host=True``) or on
    an accelerator. Looking costs a device-to-host read (a synchronisation) on an accelerator,
    and transfers are explicit in tenferro: there the checks run only when
    ``TENFERRO_DEGENERACY`` is set explicitly to ``warn`` or ``raise``. On the host they run
    unless it is ``ignore``."""
    mode = degeneracy_mode()
    if mode == "ignore":
        return False
    return host or bool(os.environ.get("TENFERRO_DEGENERACY", "").strip())


def on_host(a) -> bool:
    """Whether the backend array ``a`` lives in host memory (NumPy, or a CPU device of
    another namespace), so that reading it costs no transfer."""
    if isinstance(a, np.ndarray):
        return True
    return "cpu" in str(getattr(a, "device", "cpu")).lower()


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
    close = np.concatenate([[False], np.abs(np.diff(np.asarray(values))) <= width, [False]])
    edges = np.flatnonzero(close[1:] != close[:-1])  # starts and ends of runs of ties
    return [(int(i), int(j) + 1) for i, j in zip(edges[::2], edges[1::2])]


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
_batching.leading(cut_inverse_p)  # elementwise


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


def _guard_aval(*ops, op, parts, eps):
    if op not in ADVICE:
        raise ShapeError(f"degeneracy check: op must be 'svd' or 'eigh', got {op!r}.")
    parts = tuple(parts)
    if not parts or len(set(parts)) != len(parts) or any(p not in PARTS for p in parts):
        raise ShapeError(f"degeneracy check: parts must be distinct names from {PARTS}, got "
                         f"{parts!r}.")
    if len(ops) != len(parts) + 1:
        raise ShapeError(f"degeneracy check: expected {len(parts)} quantities and the "
                         f"spectrum, got {len(ops)} operands.")
    require_real("degeneracy check (spectrum)", ops[-1])
    return tuple(ops[:-1])


_GUARD_PARAMS = {"op": one_of(ADVICE), "parts": tuple_of(one_of(PARTS)), "eps": REAL}

degeneracy_guard_p = Primitive(
    "degeneracy_guard", multiple_results=True, cost=no_flops, params=_GUARD_PARAMS,
    convention="identity in the quantities (the last operand, the spectrum s, only says where "
    "the ties are); its transpose is degeneracy_check, which inspects the cotangents",
)
degeneracy_check_p = Primitive(
    "degeneracy_check", multiple_results=True, params=_GUARD_PARAMS,
    convention="identity in the quantities; the impl reports (DegeneracyWarning) when these "
    "cotangents of the values / rotations of the spectrum s are gauge-dependent inside a tie",
)
for _p in (degeneracy_guard_p, degeneracy_check_p):
    _p.def_abstract_eval(_guard_aval)
    _batching.leading(_p)  # the quantities and the spectrum share their leading axes
degeneracy_guard_p.def_impl(lambda xp, *ops, **params: tuple(ops[:-1]))


def _bind_present(b, prim, xs, s, parts, op, eps):
    """``prim`` on the non-zero members of ``xs`` (named by ``parts``); zeros pass through."""
    keep = [i for i, x in enumerate(xs) if type(x) is not Zero]
    out = list(xs)
    if keep:
        res = b.bind(prim, *[xs[i] for i in keep], s, op=op,
                     parts=tuple(parts[i] for i in keep), eps=eps)
        for i, r in zip(keep, res):
            out[i] = r
    return out


def _linear_identity(prim, other):
    def jvp(b, primals, tangents, *, op, parts, eps):
        xs, s = primals[:-1], primals[-1]
        out = b.bind(prim, *xs, s, op=op, parts=parts, eps=eps)
        return out, tuple(_bind_present(b, prim, tangents[:-1], s, parts, op, eps))

    def transpose(b, cts, *args, op, parts, eps):
        if is_undefined(args[-1]) or not all(is_undefined(x) for x in args[:-1]):
            raise TenferroError(f"{prim.name}: the spectrum must not depend on the input.")
        res = _bind_present(b, other, list(cts), args[-1], parts, op, eps)
        res = [Zero(x.aval) if type(r) is Zero else r for x, r in zip(args[:-1], res)]
        return (*res, None)

    prim.def_jvp(jvp)
    prim.def_transpose(transpose)


_linear_identity(degeneracy_guard_p, degeneracy_check_p)
_linear_identity(degeneracy_check_p, degeneracy_guard_p)


def guard(b, s, *, op: str, eps: float, **quantities):
    """Wrap the linear quantities of a JVP rule, by part name (see the module docstring);
    returns them in the order given."""
    names = tuple(quantities)
    out = _bind_present(b, degeneracy_guard_p, [quantities[n] for n in names], s, names, op,
                        float(eps))
    return out if len(out) > 1 else out[0]


def _tolerance(eps: float, dtype) -> float:
    """Relative size of a cotangent difference that counts as a dependence: well above what
    the tie tolerance and rounding leave in a gauge-invariant cotangent."""
    return max(float(np.sqrt(eps)), 1e3 * float(np.finfo(np.dtype(dtype)).eps))


@degeneracy_check_p.def_impl
def _check_impl(xp, *ops, op, parts, eps):
    xs, s = ops[:-1], ops[-1]
    k = s.shape[-1]
    if k == 0 or not checks_on(on_host(s)):
        return tuple(xs)
    width = eps * xp.max(xp.abs(s), axis=-1, keepdims=True)
    flagged = k > 1 and xp.any(xp.abs(s[..., 1:] - s[..., :-1]) <= width)
    if "zero_rotation" in parts:
        flagged = flagged or xp.any(xp.abs(s) <= width)
    if not bool(flagged):
        return tuple(xs)  # the common case: nothing is degenerate
    _inspect({p: xp.to_numpy(x) for p, x in zip(parts, xs)}, xp.to_numpy(s), op=op, eps=eps)
    return tuple(xs)


def _inspect(cts: dict, s, *, op, eps):
    batch = s.shape[:-1]
    k = s.shape[-1]
    s2 = s.reshape(-1, k)
    flat = {p: x.reshape((-1,) + x.shape[len(batch):]) for p, x in cts.items()}
    tol = _tolerance(eps, next(iter(cts.values())).dtype)
    found: dict = {"values": [], "rotation": [], "zero_rotation": []}
    for n in range(s2.shape[0]):
        vals = s2[n]
        s_max = float(np.max(np.abs(vals)))
        width = eps * s_max
        where = n if batch else None
        blocks = tie_blocks(vals, width)
        rot = flat.get("rotation")
        rot_max = float(np.max(np.abs(rot[n]))) if rot is not None and blocks else 0.0
        if rot_max > 0:
            bad = _skew_blocks(rot[n], blocks, tol * rot_max)
            found["rotation"] += [(vals, blocks[b], where) for b in bad]
        rel = flat.get("zero_rotation")
        zeros = np.flatnonzero(np.abs(vals) <= width)
        if rel is not None and zeros.size and np.any(rel[n]):
            blk = (int(zeros[0]), int(zeros[-1]) + 1)
            if _antihermitian_excess(rel[n], blk, tol * float(np.max(np.abs(rel[n]))),
                                     diagonal=True):
                found["zero_rotation"].append((None, blk, where))
        c = flat.get("values")
        if c is not None and np.any(c[n]):
            c = np.real(c[n])
            # reference: the size of the gradient the cotangents make (rotation cotangents
            # enter it divided by gaps <= 2 s_max), so rounding noise in c is not a finding
            ref = float(np.max(np.abs(c)))
            if s_max > 0:
                for other in ("rotation", "zero_rotation"):
                    if other in flat:
                        big = rot_max if other == "rotation" and blocks else float(
                            np.max(np.abs(flat[other][n])))
                        ref = max(ref, big / (2 * s_max))
            live = blocks
            if op == "svd" and blocks:  # descending: a block's first value is its largest
                firsts = vals[np.array([i for i, _ in blocks])]
                live = [b for b, v in zip(blocks, firsts > tol * s_max) if v]
            if live:  # (below the floor: the noise tail of a rank-deficient matrix, see below)
                # max - min over every block at once: segments [start, end) of reduceat at
                # even positions (blocks are sorted and disjoint; the last runs to the end)
                idx = np.ravel(np.array(live))
                idx = idx[:-1] if idx[-1] == k else idx
                spread = (np.maximum.reduceat(c, idx)[::2] - np.minimum.reduceat(c, idx)[::2])
                found["values"] += [(vals, live[i], where)
                                    for i in np.flatnonzero(spread > tol * ref)]
    for kind, blocks in found.items():
        if blocks:
            _REPORTS[kind](op, _listing(op, blocks))


def _listing(op, found: list) -> str:
    """At most three blocks by name, then a count (one report per check, not per block)."""
    names = []
    for vals, (i, j), where in found[:3]:
        if vals is None:  # zero singular values
            batch = "" if where is None else f"matrix {where} of the batch, "
            names.append(f"{j - i} zero singular value(s) ({batch}S[{i}:{j}])")
        else:
            names.append(describe_block(op, vals, (i, j), where))
    head = ", ".join(names)
    return head if len(found) <= 3 else f"{head} and {len(found) - 3} more multiplets"


# Why singular values below ``tol * max`` are not checked for value dependence (eigenvalues
# near zero are ordinary eigenvalues and are checked): they are rounding noise of a
# numerically rank-deficient matrix (the tails of TRG/HOTRG tensors, blocks
# of exact zeros), second-order passes route small cotangents through them (the kept/discarded
# coupling 1/(s_k - s_i) depends on each discarded s_i), and checking them would flag every
# such Hessian although its effect is at rounding level (the TRG specific heat agrees with
# finite differences to 1e-12). Rotations inside them are still checked.


def _antihermitian_excess(ct, blk, limit, *, diagonal) -> bool:
    i, j = blk
    c = ct[i:j, i:j]
    skew = c - np.conj(c.T)
    if not diagonal:
        skew = skew - np.diag(np.diag(skew))
    return bool(np.max(np.abs(skew), initial=0.0) > limit)


def _skew_blocks(ct, blocks, limit) -> list[int]:
    """Indices of the ``blocks`` where ct - ct^H has an off-diagonal entry above ``limit``.
    Blocks of equal size are gathered together, so the work is O(sum of block sizes^2)."""
    bad = []
    sizes = np.array([j - i for i, j in blocks])
    starts = np.array([i for i, _ in blocks])
    for size in np.unique(sizes):
        which = np.flatnonzero(sizes == size)
        idx = starts[which][:, None] + np.arange(size)  # (blocks, size)
        sub = ct[idx[:, :, None], idx[:, None, :]]  # (blocks, size, size)
        skew = np.abs(sub - np.conj(np.swapaxes(sub, -1, -2)))
        skew[:, np.arange(size), np.arange(size)] = 0
        bad += [int(b) for b in which[np.max(skew, axis=(1, 2)) > limit]]
    return sorted(bad)


_SYMMETRIC = ("Derivatives along directions that keep the multiplet degenerate (e.g. in a "
              "parameter of a model whose symmetry causes it) are still exact.")


def _report_values(op, blocks):
    what = "singular values" if op == "svd" else "eigenvalues"
    report(
        f"{op}: the loss depends on individual {what} of {blocks}; how a multiplet splits is "
        f"not determined by the matrix, so the gradient returned (which ignores the mixing "
        f"inside the multiplet) is not its derivative. {_SYMMETRIC} {ADVICE[op]}"
    )


def _report_rotation(op, blocks):
    vecs = "singular vectors" if op == "svd" else "eigenvectors"
    report(
        f"{op}: the loss depends on the choice of {vecs} inside the degenerate subspace of "
        f"{blocks}; any rotation of that basis is an equally valid decomposition, so the "
        f"gradient returned leaves that rotation out. {_SYMMETRIC} {ADVICE[op]}"
    )


def _report_zero(op, blocks):
    report(
        f"svd: the loss depends on how the singular vectors of {blocks} are paired (their "
        f"relative rotation or phase), which the matrix does not determine; the gradient "
        f"returned leaves it out. {ADVICE['svd']}"
    )


_REPORTS = {"values": _report_values, "rotation": _report_rotation,
            "zero_rotation": _report_zero}


# ======================================================= truncation through a multiplet
def check_truncation_ties(s, rank: int, eps: float) -> None:
    """Report a truncation to ``rank`` of the host (NumPy) singular values ``s`` (..., k) that
    keeps part of a degenerate multiplet.

    Convention: exactly ``rank`` values are kept even then (the rank is never moved
    silently); which vectors of the multiplet survive is LAPACK's arbitrary choice, so the
    truncated factors, and every derivative through them, depend on the gauge. Blocks of
    (numerically) zero singular values, below ``sqrt(eps) * max``, are exempt: U_k S_k Vh_k
    does not depend on which of them are kept.
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
        s_max = float(np.max(np.abs(vals)))
        w = eps * s_max
        negligible = _tolerance(eps, s.dtype) * s_max
        for blk in tie_blocks(vals, w):
            # a cut through (numerically) zero singular values is harmless: their part of
            # U S Vh is negligible whichever vectors are kept; the backward check still sees
            # losses that use those vectors
            if blk[0] < rank < blk[1] and float(vals[blk[0]]) > negligible:
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
