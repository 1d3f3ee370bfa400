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
from ..errors import DegeneracyWarning, DTypeError, ShapeError, TenferroError
from ..params import REAL, one_of, tuple_of
from . import _batching
from ._checks import require_inexact, require_real, same_shape_and_dtype

MODES = ("warn", "raise", "ignore")
ADVICE = {
    "eigh": "Functions of a Hermitian matrix (exp, log, sqrt, powers) are exact at "
    "degeneracies through tenferro.linalg.funm / expm(hermitian=True) / sqrtm / logm / powm; "
    "use those instead of composing eigh with an elementwise function.",
    "eig": "A general matrix's eigenvectors are determined inside a repeated eigenvalue only "
    "up to an invertible change of basis (and not at all where it is defective); use "
    "quantities of the whole eigenspace (sums of its eigenvalues, the spectral projector), or "
    "det/trace/expm of the matrix itself, which are differentiable everywhere.",
    "svd": "Symmetric functions of a whole multiplet (sum(S), sum(S**2), ...), projectors onto "
    "whole multiplets and U_k Vh_k are exact; a loss that uses individual singular values or "
    "vectors of a multiplet (e.g. rebuilding U diag(g(S)) Vh through the block) is not. Keep "
    "whole multiplets together, or compute the quantity without the factors.",
}


def default_tie_eps(dtype) -> float:
    """Default relative tie tolerance of the svd/eigh derivatives: 1e-4 in single precision,
    1e-10 in double (``tenferro.linalg.default_eps`` explains the choice)."""
    return 1e-4 if np.dtype(dtype) in (np.dtype("float32"), np.dtype("complex64")) else 1e-10


def tie_eps(eps) -> float:
    """A relative tie tolerance of the svd/eigh/eig derivatives: a finite number >= 0. The
    one check, applied by the eager functions and by these primitives' shape rules (so a
    traced graph or a graph file cannot hold a tolerance eager refuses)."""
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise DTypeError(f"eps must be a number (a relative tie tolerance), got "
                         f"{type(eps).__name__} {eps!r:.40}.")
    eps = float(eps)
    if not 0 <= eps < np.inf:
        raise ShapeError(f"eps must be a finite non-negative float (a relative tie tolerance), "
                         f"got {eps}.")
    return eps


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
    where = f"matrix {batch_index} of the batch, " if batch_index is not None else ""
    if op == "eig":  # block: the indices of the group (LAPACK's order, not contiguous)
        idx = [int(i) for i in block]
        mean = complex(np.mean(values[idx]))
        return f"a {len(idx)}-fold repeated eigenvalue {mean:.6g} ({where}w{idx})"
    i, j = block
    name = "singular value" if op == "svd" else "eigenvalue"
    letter = "S" if op == "svd" else "w"
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
PARTS = ("values", "signed_values", "rotation", "zero_rotation", "complement")


def _guard_aval(*ops, op, parts, eps):
    tie_eps(eps)
    if op not in ADVICE:
        raise ShapeError(f"degeneracy check: op must be one of {', '.join(ADVICE)}, got "
                         f"{op!r}.")
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
    if s.shape[-1] and checks_on(on_host(s)):
        _check(xp, dict(zip(parts, xs)), s, op=op, eps=eps)
    return tuple(xs)


def _check(xp, cts: dict, s, *, op, eps):
    """Look at the cotangents ``cts`` (by part name) of the spectrum ``s``: O(k) unless
    something is tied (one comparison of neighbouring values), then ``_inspect`` on the
    host."""
    k = s.shape[-1]
    if op == "eig":
        sn = xp.to_numpy(s)
        if _eig_suspects(sn, eps):
            _inspect_eig({p: xp.to_numpy(x) for p, x in cts.items()}, sn, eps=eps)
        return
    width = eps * xp.max(xp.abs(s), axis=-1, keepdims=True)
    flagged = k > 1 and xp.any(xp.abs(s[..., 1:] - s[..., :-1]) <= width)
    if op == "svd":  # exactly zero singular values (all of them, for the zero matrix)
        flagged = flagged or xp.any(xp.abs(s) <= width)
    if bool(flagged):  # the common case is not: nothing is degenerate
        _inspect({p: xp.to_numpy(x) for p, x in cts.items()}, xp.to_numpy(s), op=op, eps=eps)


def check_cotangents(cts: dict, s, *, op: str, eps: float) -> None:
    """The backward check on host (NumPy) cotangents, for derivative rules that run outside
    the primitives (the implicit pullbacks of the Krylov solvers): ``cts`` by part name
    ("values", "rotation", ...), ``s`` the spectrum (ascending eigenvalues for op "eigh")."""
    if np.shape(s)[-1] and checks_on(True):
        _check(_HostNumPy, {p: np.asarray(x) for p, x in cts.items() if x is not None},
               np.asarray(s), op=op, eps=eps)


class _HostNumPy:
    """The few namespace calls ``_check`` makes, for plain NumPy arrays."""

    abs, max, any = np.abs, np.max, np.any
    to_numpy = staticmethod(np.asarray)


def _values_part(cts: dict):
    """The cotangent of the values and whether it is ``signed_values`` (a real square svd,
    whose zero singular values have a signed branch: see ``_zero_values``)."""
    if "signed_values" in cts:
        return cts["signed_values"], True
    return cts.get("values"), False


def _inspect(cts: dict, s, *, op, eps):
    batch = s.shape[:-1]
    k = s.shape[-1]
    s2 = s.reshape(-1, k)
    flat = {p: x.reshape((-1,) + x.shape[len(batch):]) for p, x in cts.items()}
    tol = _tolerance(eps, next(iter(cts.values())).dtype)
    found: dict = {kind: [] for kind in _REPORTS}
    values, signed = _values_part(flat)
    for n in range(s2.shape[0]):
        vals = s2[n]
        s_max = float(np.max(np.abs(vals)))
        width = eps * s_max
        where = n if batch else None
        blocks = tie_blocks(vals, width)
        zeros = np.flatnonzero(np.abs(vals) <= width) if op == "svd" else np.zeros(0, int)
        # the zero block is not a multiplet of values: its own rules below
        blocks = [b for b in blocks if not (zeros.size and b[0] >= zeros[0])]
        rot = flat.get("rotation")
        rot_max = float(np.max(np.abs(rot[n]))) if rot is not None and blocks else 0.0
        if rot_max > 0:
            bad = _skew_blocks(rot[n], blocks, tol * rot_max)
            found["rotation"] += [(vals, blocks[b], where) for b in bad]
        rel = flat.get("zero_rotation")
        zblk = (int(zeros[0]), int(zeros[-1]) + 1) if zeros.size else None
        # exact zeros (rounding): the kink and the free vectors of the new checks below; the
        # tail up to the tie width (1e-11 of a TRG tensor with a symmetry-breaking field) is
        # resolved, tiny, and its effect on a gradient is of its size (see the note below)
        exact = zeros[np.abs(vals[zeros]) <= 64 * k * float(np.finfo(s.dtype).eps) * s_max]
        xblk = (int(exact[0]), int(exact[-1]) + 1) if exact.size else None
        if zblk and _zero_rotation(rot, rel, n, zblk, tol) or xblk and _zero_complement(
                flat.get("complement"), rot, rel, n, xblk, tol):
            found["zero_rotation"].append((None, zblk, where))
        if values is None or not np.any(values[n]):
            continue
        c = np.real(values[n])
        # reference: the size of the gradient the cotangents make (rotation cotangents
        # enter it divided by gaps <= 2 s_max), so rounding noise in c is not a finding
        ref = float(np.max(np.abs(c)))
        if s_max > 0:
            for other in ("rotation", "zero_rotation"):
                if other in flat:
                    big = rot_max if other == "rotation" and blocks else float(
                        np.max(np.abs(flat[other][n])))
                    ref = max(ref, big / (2 * s_max))
        if xblk and _zero_values(c, xblk, signed, tol * ref):
            found["zero_values"].append((None, xblk, where))
        live = blocks
        if op == "svd" and blocks:  # descending: a block's first value is its largest
            firsts = vals[np.array([i for i, _ in blocks])]
            live = [b for b, v in zip(blocks, firsts > tol * s_max) if v]
        if live:  # (below the floor: the noise tail of a rank-deficient matrix, see below)
            found["values"] += [(vals, live[i], where)
                                for i in _spread_blocks(c, live, k, tol * ref)]
    for kind, blocks in found.items():
        if blocks:
            _REPORTS[kind](op, _listing(op, blocks))


def _zero_rotation(rot, rel, n, zblk, tol) -> bool:
    """Whether the loss depends on the rotation of the singular vectors among zero singular
    values: the relative rotation (and phase) of U and V there, or, in a block of several,
    their joint rotation. Relative to the largest rotation cotangent of the matrix (rounding
    noise in an otherwise zero cotangent is not a finding)."""
    scale = max((float(np.max(np.abs(x[n]))) for x in (rot, rel) if x is not None),
                default=0.0)
    if scale == 0:
        return False
    if rel is not None and _antihermitian_excess(rel[n], zblk, tol * scale, diagonal=True):
        return True
    return (rot is not None and zblk[1] - zblk[0] > 1
            and _antihermitian_excess(rot[n], zblk, tol * scale, diagonal=False))


def _zero_complement(comp, rot, rel, n, zblk, tol) -> bool:
    """Tall (wide) matrices: whether the loss moves a left (right) singular vector of a zero
    singular value out of the span of U, into the complement, which is gauge there too. The
    cotangent of the complement term is the cotangent Ubar of U; the part inside the span is
    U^H Ubar = (cotangent of the joint rotation + of the relative rotation) / 2, so the part
    outside has the squared norm |Ubar_j|^2 - |(U^H Ubar)_j|^2."""
    if comp is None or rot is None or rel is None:
        return False
    i, j = zblk
    ub = comp[n][:, i:j]
    inside = (rot[n] + rel[n])[:, i:j] / 2
    scale = max(float(np.max(np.abs(comp[n]))), float(np.max(np.abs(rot[n]))),
                float(np.max(np.abs(rel[n]))))
    excess = np.sum(np.abs(ub) ** 2, axis=0) - np.sum(np.abs(inside) ** 2, axis=0)
    return scale > 0 and float(np.max(excess)) > (tol * scale) ** 2


def _spread_blocks(c, blocks, k, limit) -> np.ndarray:
    """Indices of the ``blocks`` on which ``c`` varies by more than ``limit``: max - min over
    every block at once, by segments [start, end) of reduceat at even positions (blocks are
    sorted and disjoint; the last runs to the end)."""
    idx = np.ravel(np.array(blocks))
    idx = idx[:-1] if idx[-1] == k else idx
    spread = np.maximum.reduceat(c, idx)[::2] - np.minimum.reduceat(c, idx)[::2]
    return np.flatnonzero(spread > limit)


def _zero_values(c, zblk, signed: bool, limit) -> bool:
    """Whether the loss depends on exactly zero singular values (beyond ``limit``).

    s = |sigma| has a kink at 0 and the vectors of a zero singular value are free (their
    pairing, for a tall or wide matrix their mixing with the complement, among several zeros
    any rotation), so a loss with a cotangent there has no derivative the factors can express:
    sum(S) at a rank-deficient matrix is not differentiable, and U diag(S) Vh is, but needs the
    directions dA takes out of the zero block, which a rule multiplying them by s = 0 loses.
    One exception keeps an honest derivative: a single zero singular value of a real square
    matrix (``signed``) has a signed branch sigma (u and v determined up to a common sign),
    and the rule differentiates it; losses of sigma u v^T are then exact (the reconstruction),
    and sum(S) gets the derivative of that branch (documented convention)."""
    i, j = zblk
    if signed and j - i == 1:
        return False
    return float(np.max(np.abs(c[i:j]))) > limit


# ------------------------------------------------------------------------------ eig
def eig_tie_groups(w, kappa, eps: float) -> list:
    """Groups (sorted index arrays, size >= 2) of tied eigenvalues: |w_i - w_j| <=
    eps * max|w| * min(kappa_i, kappa_j) (kappa >= 1), joined transitively. The condition
    numbers widen the tolerance for non-normal blocks: a defective (Jordan) eigenvalue comes
    out of LAPACK split by ~sqrt(rounding) * |A| with kappa ~ 1/sqrt(rounding) for each piece,
    and the pieces must form one group (min: a well-conditioned neighbour is not drawn in)."""
    k = w.shape[-1]
    if k < 2:
        return []
    scale = float(np.max(np.abs(w)))
    kap = np.maximum(np.nan_to_num(np.asarray(kappa, float), nan=np.inf), 1.0)
    reach = eps * scale * kap
    order = np.argsort(np.real(w), kind="stable")
    re = np.real(w)[order]
    window = float(np.max(reach))
    runs, start = [], 0
    for i in range(1, k + 1):  # candidate runs: real parts within the widest tolerance
        if i == k or not re[i] - re[i - 1] <= window:
            if i - start > 1:
                runs.append(order[start:i])
            start = i
    groups = []
    for run in runs:
        d = np.abs(w[run][:, None] - w[run][None, :])
        close = d <= np.minimum(reach[run][:, None], reach[run][None, :])
        label = np.arange(run.size)
        for _ in range(run.size):  # connected components (label propagation)
            new = np.min(np.where(close, label[None, :], run.size), axis=1)
            if np.array_equal(new, label):
                break
            label = new
        groups += [np.sort(run[label == lab]) for lab in np.unique(label)
                   if np.count_nonzero(label == lab) > 1]
    return groups


def defective_kappa(eps: float) -> float:
    """Condition number from which a tied group counts as defective (a Jordan block)."""
    return 1.0 / float(np.sqrt(eps))


def _eig_suspects(spec, eps) -> bool:
    spec2 = spec.reshape(-1, 3, spec.shape[-1])
    return any(eig_tie_groups(m[0] + 1j * m[1], m[2], eps) for m in spec2)


def _inspect_eig(cts: dict, spec, *, eps):
    """The eig check, on the groups of ``eig_tie_groups``.

    * A repeated eigenvalue with an eigenvector basis (derogatory): the basis is free up to
      an invertible change (GL, not U), so the loss must have a constant value cotangent on
      the group and no off-diagonal rotation cotangent inside it (Hermitian or not).
    * A defective group (Jordan block, kappa >= 1/sqrt(eps)) that rounding split into a
      resolved pair: the rule differentiates the rounded matrix, which is right for symmetric
      functions of the group's values (their cotangents differ by O(split), which the rule's
      1/split turns into the second-order term det needs) and for the other eigenpairs; the
      group's individual values and vectors have no derivative (they move as sqrt(dA)), and
      vector-based functions of the whole block (expm through V e^w V^-1) rest on
      cancellations at cond(V) ~ 1/rounding. Reported: a spread of the value cotangent, or
      any cotangent on the group's vectors.
    * A defective group tied outright (the cut applies, no split is left to carry that term:
      even det comes out wrong): every use is reported, the rows of V^-1 it poisons too."""
    batch = spec.shape[:-2]
    k = spec.shape[-1]
    spec2 = spec.reshape(-1, 3, k)
    flat = {p: x.reshape((-1,) + x.shape[len(batch):]) for p, x in cts.items()}
    tol = _tolerance(eps, next(iter(cts.values())).dtype)
    kdef = defective_kappa(eps)
    found: dict = {kind: [] for kind in _EIG_REPORTS}
    for n in range(spec2.shape[0]):
        w = spec2[n, 0] + 1j * spec2[n, 1]
        kappa = spec2[n, 2]
        groups = eig_tie_groups(w, kappa, eps)
        if not groups:
            continue
        where = n if batch else None
        c = flat["values"][n] if "values" in flat else np.zeros(k)
        rot = flat["rotation"][n] if "rotation" in flat else np.zeros((k, k))
        r_max = float(np.max(np.abs(rot)))
        scale = float(np.max(np.abs(w)))
        ref = max(float(np.max(np.abs(c))), r_max / (2 * scale) if scale > 0 else 0.0)
        for g in groups:
            spread = np.ptp(np.real(c[g])) + np.ptp(np.imag(c[g])) > tol * ref
            vectors = float(np.max(np.abs(rot[:, g]))) > tol * r_max  # the group's own vectors
            if float(np.max(kappa[g])) >= kdef:  # defective (Jordan): no eigenvector basis
                gap = np.where(np.eye(g.size, dtype=bool), np.inf,
                               np.abs(w[g][:, None] - w[g][None, :]))
                if float(np.min(gap)) <= eps * scale:  # tied outright: every use is wrong
                    vectors = vectors or float(np.max(np.abs(rot[g, :]))) > tol * r_max
                    spread = spread or float(np.max(np.abs(c[g]))) > tol * ref
                if spread or vectors:
                    found["defective"].append((w, g, where))
                continue
            if spread:
                found["values"].append((w, g, where))
            sub = np.abs(rot[np.ix_(g, g)])
            sub[np.arange(g.size), np.arange(g.size)] = 0
            if r_max > 0 and float(np.max(sub)) > tol * r_max:
                found["rotation"].append((w, g, where))
    for kind, blocks in found.items():
        if blocks:
            _EIG_REPORTS[kind](_listing("eig", blocks))


def _report_eig_values(blocks):
    report(
        f"eig: the loss depends on individual eigenvalues of {blocks}; how a repeated "
        f"eigenvalue splits is not determined by the matrix, so the gradient returned is not "
        f"its derivative. {ADVICE['eig']}"
    )


def _report_eig_rotation(blocks):
    report(
        f"eig: the loss depends on the choice of eigenvectors inside the eigenspace of "
        f"{blocks}; any invertible change of that basis is an equally valid decomposition, "
        f"so the gradient returned leaves it out. {ADVICE['eig']}"
    )


def _report_eig_defective(blocks):
    report(
        f"eig: {blocks} is defective (a Jordan block: its eigenvectors are parallel, "
        f"condition number >= 1/sqrt(eps)); eigenvalue derivatives there are infinite "
        f"(w ~ sqrt(dA)) and everything computed through V^-1 has lost its precision, so the "
        f"gradient returned is not a derivative (it may be huge). {ADVICE['eig']}"
    )


_EIG_REPORTS = {"values": _report_eig_values, "rotation": _report_eig_rotation,
                "defective": _report_eig_defective}


def _listing(op, found: list) -> str:
    """At most three blocks by name, then a count (one report per check, not per block)."""
    names = []
    for vals, blk, where in found[:3]:
        if vals is None:  # zero singular values
            i, j = blk
            batch = "" if where is None else f"matrix {where} of the batch, "
            names.append(f"{j - i} zero singular value(s) ({batch}S[{i}:{j}])")
        else:
            names.append(describe_block(op, vals, blk, where))
    head = ", ".join(names)
    return head if len(found) <= 3 else f"{head} and {len(found) - 3} more multiplets"


# Why multiplets below ``tol * max`` are not checked for value dependence (eigenvalues near
# zero are ordinary eigenvalues and are checked): they are the tail of a numerically
# rank-deficient matrix (TRG/HOTRG tensors), second-order passes route small cotangents
# through them (the kept/discarded coupling 1/(s_k - s_i) depends on each discarded s_i), and
# checking them would flag every such Hessian although its effect is at rounding level.
# Exactly zero singular values (rounding) are checked by ``_zero_values`` instead: a loss
# with a cotangent there has no derivative in general (the reconstruction at A = 0). In a
# TRG/HOTRG Hessian of the Ising model they are reported, although exact along beta: the Z_2
# symmetry keeps them zero for every beta, a direction the check cannot see (as for the
# symmetry-protected multiplets). Rotations inside them are checked.


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
        f"svd: the loss depends on how the singular vectors of {blocks} are paired or "
        f"rotated (their relative rotation or phase), which the matrix does not determine; "
        f"the gradient returned leaves it out. {ADVICE['svd']}"
    )


def _report_zero_values(op, blocks):
    report(
        f"svd: the loss depends on {blocks}: a singular value has a kink at 0 (s = |sigma|) "
        f"and the singular vectors of zero singular values are not determined, so the "
        f"gradient returned (which multiplies their motion by s = 0) is not the derivative. "
        f"Derivatives along directions that keep them exactly zero (e.g. in a parameter of a "
        f"model whose symmetry makes them zero) are still exact. Losses of A itself (e.g. "
        f"U diag(S) Vh) should use A directly; sum(S**2) is exact. {ADVICE['svd']}"
    )


_REPORTS = {"values": _report_values, "rotation": _report_rotation,
            "zero_rotation": _report_zero, "zero_values": _report_zero_values}



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
