"""``tenferro.fixed_point``: iterate a map to convergence and differentiate the fixed point
implicitly (no unrolling: memory independent of the number of iterations).

For x* = G(x*, params), with G(x, params) = gauge_fix(f(x, *params), x) (or f itself), the
implicit function theorem gives dx* = (1 - dG/dx)^{-1} dG/dparams dparams, so reverse mode
needs one adjoint solve

    (1 - dG/dx)^T lambda = x_bar,        params_bar = (dG/dparams)^T lambda,

done with GMRES (default) or by the Neumann iteration lambda <- x_bar + (dG/dx)^T lambda, on
the flattened pytree, with products (dG/dx)^T v from one ``vjp`` of G at the fixed point (one
step's residuals, kept once). This is the derivative of the converged result, whatever the
number of forward iterations (the method of PEPSKit, variPEPS and KrylovKit for CTMRG).

Gauges. Many iterations (CTMRG environments, eigenvectors by power iteration) converge only up
to a gauge: f(x*) equals x* after a gauge transformation (signs, phases, rotations within
degenerate multiplets). Pass ``gauge_fix(y, x) -> y`` transformed into the gauge of ``x``; then
G(x*) = x* holds elementwise, which both the convergence test and the adjoint equation need.
``gauge_fix`` is part of G and is differentiated as written: compute discrete choices (signs)
or the gauge matrix under ``tenferro.stop_gradient``, as the derivative of a gauge-invariant
loss does not depend on them.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .autodiff.reverse import vjp
from .errors import check_callable
from .linalg import _iterative as it
from .linalg.krylov import ConvergenceWarning, _carries, implicit
from .ops import abs as abs_
from .ops import concatenate, reshape, stop_gradient, tensor_of
from .ops import max as max_
from .ops._base import astype
from .pytree import tree_flatten, tree_unflatten

__all__ = ["FixedPointInfo", "fixed_point"]


class FixedPointInfo(NamedTuple):
    """Forward iterations run, whether ``tol`` was met, and the last relative change."""

    iterations: int
    converged: bool
    change: float


def _flat(leaves, dtype):
    return concatenate([reshape(astype(tensor_of(x), dtype), (-1,)) for x in leaves])


def _unflat(v, like):
    out, i = [], 0
    for x in like:
        n = int(np.prod(x.shape)) if x.ndim else 1
        out.append(astype(reshape(v[i:i + n], tuple(x.shape)), x.dtype))
        i += n
    return out


def _norm(v):
    """2-norm without overflow (scaled by the largest magnitude): a float, NaN for NaN/inf
    entries, ``None`` without values."""
    v = reshape(stop_gradient(v), (-1,))
    big = it.value(max_(abs_(v))) if v.shape[0] else 0.0
    if big is None:
        return None
    big = float(big)
    if not math.isfinite(big):
        return math.nan
    if big == 0:
        return 0.0
    return big * float(it.value(it.vnorm(v / big)))


def _change(y, x):
    """max over leaves of ||y - x|| / ||y|| (``None`` without values, NaN when an iterate
    is not finite: max() would drop a NaN, it compares False)."""
    worst = 0.0
    for a, b in zip(y, x):
        s, d = _norm(a), _norm(a - b)
        if d is None or s is None:
            return None
        c = d / max(s, 1e-300)
        if not math.isfinite(c):
            return math.nan
        worst = max(worst, c)
    return worst


def fixed_point(f, x0, *params, tol: float = 1e-10, maxiter: int = 1000, gauge_fix=None,
                solver: str = "gmres", adjoint_tol: float = 1e-10,
                adjoint_maxiter: int = 1000, converged=None, return_info: bool = False):
    """Iterate ``x <- f(x, *params)`` from ``x0`` (any pytree of tensors) until the relative
    change of every leaf is below ``tol`` (or ``maxiter`` iterations), and return the fixed
    point, differentiable in ``params`` by the implicit function theorem (module docstring).
    ``gauge_fix(y, x)``: bring the new iterate ``y`` into the gauge of ``x`` (see above).
    ``solver``: "gmres" or "iteration" for the adjoint equation (to ``adjoint_tol``).
    ``converged(y, x) -> bool`` (optional) is an extra stopping test on consecutive iterates
    (e.g. on a gauge-invariant spectrum, when the iterates themselves stall at the level of a
    degeneracy the gauge fix cannot resolve). The result
    does not depend on ``x0`` (it gets no gradient). In a traced graph (``jit``) the forward
    runs ``maxiter`` iterations and the adjoint ``adjoint_maxiter`` Neumann steps.
    Not converged after ``maxiter``: a ``ConvergenceWarning``, and another when that result is
    differentiated (the implicit gradient assumes x* = f(x*)). An iterate that goes NaN or
    inf stops the iteration at once with a ``ConvergenceWarning``; its gradient is NaN.
    Returns x* (and ``FixedPointInfo`` with ``return_info=True``)."""
    check_callable("fixed_point", f)
    if solver not in ("gmres", "iteration"):
        raise ValueError(f"fixed_point: solver must be 'gmres' or 'iteration', got {solver!r}.")
    x_leaves, x_tree = tree_flatten(x0)
    x_leaves = [stop_gradient(tensor_of(x)) for x in x_leaves]
    p_leaves, p_tree = tree_flatten(params)
    p_leaves = [tensor_of(p) for p in p_leaves]
    nx = len(x_leaves)
    infos = {}

    def G(xs, ps):
        x = tree_unflatten(x_tree, list(xs))
        y = f(x, *tree_unflatten(p_tree, list(ps)))
        if gauge_fix is not None:
            y = gauge_fix(y, x)
        ys, ytree = tree_flatten(y)
        if ytree != x_tree:
            raise ValueError(f"fixed_point: f returned the structure {ytree}, but x has "
                             f"{x_tree}; f must map x to the same structure.")
        return [tensor_of(v) for v in ys]

    def forward(*args):
        xs, ps = list(args[:nx]), list(args[nx:])
        change, k = math.nan, 0
        for k in range(1, maxiter + 1):
            ys = G(xs, ps)
            c = _change(ys, xs)
            if c is not None and not math.isfinite(c):
                # NaN/inf iterates (or an overflowing norm): stop, the rest is NaN too
                infos["fwd"] = FixedPointInfo(k, False, math.nan)
                warnings.warn(
                    f"fixed_point: the iteration diverged to NaN or inf at step {k}; the "
                    f"result is that iterate, not a fixed point. Check f, x0 and the "
                    f"parameters (f may not be a contraction here).",
                    ConvergenceWarning, stacklevel=4)
                return tuple(ys)
            done = converged is not None and c is not None and bool(
                converged(tree_unflatten(x_tree, ys), tree_unflatten(x_tree, xs)))
            xs = ys
            if c is not None:
                change = c
                if c <= tol or done:
                    infos["fwd"] = FixedPointInfo(k, True, c)
                    return tuple(xs)
        infos["fwd"] = FixedPointInfo(k, False, change)
        if not math.isnan(change):  # nan: a traced graph, where no change is known
            warnings.warn(f"fixed_point: not converged after {maxiter} iterations (relative "
                          f"change {change:.1e}); raise maxiter or loosen tol.",
                          ConvergenceWarning, stacklevel=4)
        return tuple(xs)

    def backward(args, xstar, xbar):
        ps = list(args[nx:])
        if all(c is None for c in xbar):
            return [None] * len(args)
        fwd = infos.get("fwd")
        if fwd is not None and not fwd.converged and not math.isnan(fwd.change):
            warnings.warn(
                f"fixed_point: differentiating a fixed point that was not reached (the forward "
                f"iteration stopped after {fwd.iterations} steps with relative change "
                f"{fwd.change:.1e} > tol): the implicit gradient assumes x* = f(x*), so it is "
                f"not the derivative of the returned value.", ConvergenceWarning, stacklevel=4)
        elif fwd is not None and not fwd.converged:
            # non-finite forward: the implicit gradient is not defined; NaN, loudly
            warnings.warn(
                f"fixed_point: differentiating an iteration that became non-finite (step "
                f"{fwd.iterations}): the gradient is NaN.", ConvergenceWarning, stacklevel=4)
            return [None] * nx + [p * math.nan for p in ps]
        xs = [stop_gradient(x) for x in xstar]
        xbar = [x * 0 if c is None else c for c, x in zip(xbar, xs)]
        _, pull = vjp(lambda *a: G(a[:nx], a[nx:]), *(xs + ps))
        dt = np.result_type(*[x.dtype for x in xs])
        b = _flat(xbar, dt)

        def jt(v):
            return pull(_unflat(v, xs))

        def mv(v):
            return v - _flat(jt(v)[:nx], dt)

        concrete = it.is_concrete(b)
        if solver == "gmres" and concrete:
            lam, info = it.gmres(mv, b, tol=adjoint_tol, restart=min(30, b.shape[0]),
                                 maxiter=max(1, adjoint_maxiter // 30))
        else:
            lam, info = _neumann(jt, b, nx, dt, adjoint_tol, adjoint_maxiter, concrete)
        if not info.converged and concrete:
            warnings.warn(f"fixed_point: the adjoint solve did not converge ({info.iterations} "
                          f"iterations, relative residual {info.residual:.1e}); the map may "
                          f"not be a contraction at the fixed point (is a gauge left unfixed? "
                          f"pass gauge_fix).", ConvergenceWarning, stacklevel=4)
        cts = jt(lam)
        return [None] * nx + list(cts[nx:])

    args = x_leaves + p_leaves
    if _carries(p_leaves):
        out = implicit("fixed_point", forward, backward, args)
    else:
        out = forward(*args)
    x = tree_unflatten(x_tree, list(out))
    return (x, infos.get("fwd")) if return_info else x


def _neumann(jt, b, nx, dt, tol, maxiter, concrete):
    lam = b
    bn = it.value(it.vnorm(b)) if concrete else None
    res = math.nan
    for k in range(1, maxiter + 1):
        new = b + _flat(jt(lam)[:nx], dt)
        if concrete:
            d = float(it.value(it.vnorm(new - lam)))
            res = d / max(float(bn), 1e-300)
            lam = new
            if res <= tol:
                return lam, it.SolveInfo(k, True, res)
        else:
            lam = new
    return lam, it.SolveInfo(maxiter, False, res)
