"""``tenferro.integrate``: ``odeint``, an adaptive Dormand-Prince (RK45) ODE solver with JAX's
signature (``jax.experimental.ode.odeint``) whose gradient comes from the adjoint method.

Forward: from ``y0`` at ``t[0]``, steps of the 5th-order Dormand-Prince pair (with its embedded
4th-order error estimate) are accepted when the RMS of ``err / (atol + rtol * max(|y|, |y_new|))``
is at most 1; the step size follows ``0.9 * ratio^(-1/5)`` (clipped to [0.2, 10]). Each output
time is hit exactly (the step is shortened to reach it). Nothing is recorded for
differentiation: the integration runs inside a ``custom_vjp``.

Reverse (the adjoint method; design/numpy-surface.md, "odeint's adjoint"): with
``a(t) = dL/dy(t)``, ``a' = -(df/dy)^T a`` and ``dL/dargs = int (df/dargs)^T a dt``. The
backward pass integrates the augmented state ``(y, a, args_bar)`` from each output time to the
previous one (the same adaptive solver, in reversed time), recomputing ``y`` instead of storing
the trajectory, adding ``dL/dy(t_i)`` at each output time. Memory is the outputs and one
augmented state: it does not grow with the number of steps. Times get
``dL/dt_i = <dL/dy(t_i), f(y(t_i), t_i)>`` (i >= 1) and ``dL/dt_0 = -<a(t_0), f(y0, t_0)>``.

Under ``jit`` no value is known while tracing, so each interval between output times unrolls
``mxstep`` step attempts (accepting or rejecting each with ``where``); ``mxstep`` is required
there, and an interval not finished within it gives NaN. Eagerly the loop stops as soon as the
interval is done, and running out of ``mxstep`` raises.
"""

from __future__ import annotations

import math

import numpy as np

from .autodiff.custom import custom_vjp
from .autodiff.reverse import vjp
from .core.tensor import Tensor
from .errors import DTypeError, GradientError, ShapeError, check_callable
from .linalg._iterative import value
from .ops import (
    abs,
    astype,
    concatenate,
    conj,
    maximum,
    mean,
    minimum,
    real,
    reshape,
    sqrt,
    stack,
    sum,
    tensor_of,
    where,
    zeros_like,
)
from .ops._base import to_inexact
from .pytree import tree_flatten, tree_unflatten

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stage coefficients, 5th-order weights, and the error weights
# (5th minus embedded 4th order); the 7th stage is f at the new point (first same as last)
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
)
_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip(_B + (0.0,), _B4))


# --------------------------------------------------------------------- the solver
def _combo(coefs, ks):
    out = None
    for c, k in zip(coefs, ks):
        if c:
            out = k * c if out is None else out + k * c
    return out


def _rk_step(fun, y, f0, t, h):
    """One Dormand-Prince step: the new point, f there, and the error estimate."""
    ks = [f0]
    for i in range(1, 6):
        ks.append(fun(y + h * _combo(_A[i], ks), t + _C[i] * h))
    y1 = y + h * _combo(_B, ks)
    f1 = fun(y1, t + h)
    err = h * _combo(_E, ks + [f1])
    return y1, f1, err


def _rms(x):
    return sqrt(mean(abs(x) ** 2))


def _initial_step(fun, y0, f0, t0, rtol, atol):
    """Hairer, Norsett & Wanner's starting step (from the sizes of y, f and f's change)."""
    scale = atol + abs(y0) * rtol
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    small = (d0 < 1e-5) | (d1 < 1e-5)
    h0 = where(small, 1e-6, 0.01 * d0 / where(small, 1.0, d1))
    f1 = fun(y0 + h0 * f0, t0 + h0)
    d2 = _rms((f1 - f0) / scale) / h0
    dmax = maximum(d1, d2)
    tiny = dmax <= 1e-15
    h1 = where(tiny, maximum(1e-6, h0 * 1e-3), (0.01 / where(tiny, 1.0, dmax)) ** 0.2)
    return minimum(100 * h0, h1)


def _interval_eager(fun, y, f, t, h, t_end, rtol, atol, mxstep, hmax, op, tdt):
    """Integrate from ``t`` to ``t_end`` with concrete values: the step control in Python
    floats, the loop stopping when the interval is done."""
    k = 0
    while t < t_end:
        if mxstep is not None and k >= mxstep:
            raise RuntimeError(
                f"{op}: the interval up to t = {t_end:.6g} was not finished after mxstep = "
                f"{mxstep} step attempts (reached t = {t:.6g}, step {h:.3g}); raise mxstep or "
                f"loosen rtol/atol (the problem may be stiff).")
        k += 1
        last = h >= t_end - t
        h_try = t_end - t if last else h
        y1, f1, err = _rk_step(fun, y, f, tensor_of(t, dtype=tdt), h_try)
        ratio = float(value(_rms(err / (atol + rtol * maximum(abs(y), abs(y1))))))
        if not math.isfinite(ratio):
            raise RuntimeError(f"{op}: func returned non-finite values near t = {t:.6g} "
                               f"(step {h_try:.3g}).")
        factor = 10.0 if ratio == 0 else min(max(0.9 * ratio ** -0.2, 0.2), 10.0)
        if ratio <= 1.0:
            y, f = y1, f1
            t = t_end if last else t + h_try
            h = max(h_try * factor, h) if last else h_try * factor
        else:
            h = h_try * min(factor, 1.0)
        if hmax is not None:
            h = min(h, hmax)
        if not t + h > t:
            raise RuntimeError(f"{op}: the step size fell below the resolution of t at t = "
                               f"{t:.6g} (a singularity of the solution?).")
    return y, f, t, h


def _interval_traced(fun, y, f, t, h, t_end, rtol, atol, mxstep, hmax):
    """Integrate from ``t`` to ``t_end`` without values (under ``jit``): ``mxstep`` attempts,
    each accepted or rejected by ``where``; an unfinished interval gives NaN."""
    for _ in range(mxstep):
        remaining = t_end - t
        last = h >= remaining
        h_try = where(last, remaining, h)
        y1, f1, err = _rk_step(fun, y, f, t, h_try)
        ratio = _rms(err / (atol + rtol * maximum(abs(y), abs(y1))))
        accept = ratio <= 1.0
        zero = ratio == 0
        factor = 0.9 * where(zero, 1.0, ratio) ** -0.2
        factor = where(zero, 10.0, minimum(maximum(factor, 0.2), 10.0))
        factor = where(accept, factor, minimum(factor, 1.0))
        h_new = h_try * factor
        h_new = where(last & accept, maximum(h_new, h), h_new)  # h_try was only shortened
        if hmax is not None:
            h_new = minimum(h_new, hmax)
        done = remaining <= 0
        y = where(accept, y1, y)
        f = where(accept, f1, f)
        t = where(accept, where(last, t_end, t + h_try), t)
        h = where(done, h, h_new)
    return where(t >= t_end, y, float("nan")), f, t, h


def _solve(fun, y0, ts, rtol, atol, mxstep, hmax, op):
    """y at every time of ``ts`` (increasing), as a (len(ts), n) tensor."""
    tvals = value(ts)
    concrete = tvals is not None and value(y0) is not None
    if not concrete and mxstep is None:
        raise ValueError(
            f"{op}: under jit (or make_graph) the step attempts are unrolled into the graph, so "
            f"mxstep must be given: pass mxstep=N (N attempts per interval between output times; "
            f"an interval that needs more gives NaN).")
    t0 = ts[0]
    f = fun(y0, t0)
    h = _initial_step(fun, y0, f, t0, rtol, atol)
    if hmax is not None:
        h = minimum(h, hmax)
    y, out = y0, [y0]
    if concrete:
        t, h = float(tvals[0]), float(value(h))
        for i in range(1, ts.shape[0]):
            y, f, t, h = _interval_eager(fun, y, f, t, h, float(tvals[i]), rtol, atol, mxstep,
                                         hmax, op, ts.dtype)
            out.append(y)
    else:
        t = t0
        for i in range(1, ts.shape[0]):
            y, f, t, h = _interval_traced(fun, y, f, t, h, ts[i], rtol, atol, mxstep, hmax)
            out.append(y)
    return stack(out)


# ------------------------------------------------------------------ flattening
def _flatten(leaves, dtype) -> Tensor:
    if not leaves:
        return tensor_of(np.zeros(0, dtype=dtype))
    return concatenate([reshape(astype(x, dtype), (-1,)) for x in leaves])


def _unflatten(v, like, lead=()) -> list:
    """Split the last axis of ``v`` into tensors shaped (and typed) as ``like``."""
    out, i = [], 0
    for x in like:
        n = math.prod(x.shape)
        piece = reshape(v[..., i:i + n], tuple(lead) + tuple(x.shape))
        if x.dtype.kind != "c" and piece.dtype.kind == "c":
            piece = real(piece)
        out.append(astype(piece, x.dtype))
        i += n
    return out


def _real_dot(g, f):
    """Re <g, f>: the directional derivative along f of a real loss with gradient g."""
    return sum(real(conj(g) * f))


# ------------------------------------------------------------------------- odeint
def odeint(func, y0, t, *args, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: int | None = None, hmax: float | None = None):
    """Solve ``dy/dt = func(y, t, *args)`` from ``y(t[0]) = y0`` and return ``y`` at every time
    of ``t`` (JAX's ``odeint``): each output leaf has a leading axis of ``len(t)``.

    ``y0``: a tensor or a pytree of tensors (``func`` returns the same structure); ``t``: 1-D,
    strictly increasing; ``args``: tensors or pytrees passed on to ``func``, differentiable.
    Adaptive Dormand-Prince RK45 with tolerances ``rtol``/``atol`` and step size at most
    ``hmax``. Gradients with respect to ``y0``, ``t`` and ``args`` come from the adjoint method
    (module docstring): memory independent of the number of steps. ``func`` must take values
    it is differentiated with respect to through ``args``, not from its closure (closed-over
    tensors are constants). ``mxstep``: step attempts per interval between output times
    (unbounded eagerly when None; required under ``jit``, which unrolls them). Forward-mode
    derivatives (``jvp``) are not available (the adjoint is a reverse-mode rule)."""
    op = "odeint"
    check_callable(op, func)
    if mxstep is not None and (isinstance(mxstep, bool) or int(mxstep) != mxstep
                               or mxstep < 1):
        raise ValueError(f"{op}: mxstep must be a positive integer or None, got {mxstep!r}.")
    mxstep = None if mxstep is None else int(mxstep)
    for name, v in (("rtol", rtol), ("atol", atol)):
        if not float(v) >= 0:
            raise ValueError(f"{op}: {name} must be >= 0, got {v!r}.")
    ts = to_inexact(tensor_of(t))
    if ts.ndim != 1 or ts.shape[0] < 1:
        raise ShapeError(f"{op}: t must be a 1-D array of times, got shape {ts.shape}.")
    if ts.dtype.kind == "c":
        raise DTypeError(f"{op}: t must be real, got {ts.dtype}.")
    tv = value(ts)
    if tv is not None and ts.shape[0] > 1 and not np.all(np.diff(tv) > 0):
        raise ValueError(f"{op}: t must be strictly increasing, got {tv}; integrate "
                         f"backwards by substituting s = -t in func.")
    y_leaves, y_tree = tree_flatten(y0)
    if not y_leaves:
        raise ShapeError(f"{op}: y0 has no tensors.")
    y_leaves = [to_inexact(tensor_of(x)) for x in y_leaves]
    dt = np.result_type(*[x.dtype for x in y_leaves])
    a_leaves, a_tree = tree_flatten(args)
    a_leaves = [tensor_of(a) for a in a_leaves]
    n_args = len(a_leaves)
    rtol, atol = float(rtol), float(atol)
    hmax = None if hmax is None or hmax == math.inf else float(hmax)

    def f_flat(yv, tt, params):
        ys = tree_unflatten(y_tree, _unflatten(yv, y_leaves))
        out = func(ys, tt, *tree_unflatten(a_tree, list(params)))
        o_leaves, o_tree = tree_flatten(out)
        if o_tree != y_tree:
            raise ShapeError(f"{op}: func returned the structure {o_tree}, but y has "
                             f"{y_tree}; dy/dt must have y's structure.")
        for o, x in zip(o_leaves, y_leaves):
            if tuple(tensor_of(o).shape) != tuple(x.shape):
                raise ShapeError(f"{op}: func returned a leaf of shape {tensor_of(o).shape} "
                                 f"for a leaf of y of shape {x.shape}.")
        return _flatten([tensor_of(o) for o in o_leaves], dt)

    def forward(yv, tv_, *params):
        return _solve(lambda y, s: f_flat(y, s, params), yv, tv_, rtol, atol, mxstep, hmax, op)

    core = custom_vjp(forward)

    def fwd(yv, tv_, *params):
        ys = forward(yv, tv_, *params)
        return ys, (ys, tv_, list(params))

    def bwd(res, g):
        ys, tv_, params = res
        g = zeros_like(ys) if g is None else g
        if value(g) is None and value(ys) is not None:  # staged in the cotangent: forward mode
            raise GradientError(
                f"{op}: forward-mode derivatives (jvp, jacfwd, hvp) are not available: the "
                f"gradient is the adjoint method, a reverse-mode rule (its adaptive steps "
                f"depend on the cotangent). Use grad, vjp or jacrev.")
        diff = [i for i, p in enumerate(params) if p.dtype.kind in "fc"]
        dparams = [params[i] for i in diff]
        adt = np.result_type(dt, *[p.dtype for p in dparams]) if dparams else dt
        n = ys.shape[1]

        def aug(v, s):  # reversed time s = -t: (-f, (df/dy)^T a, (df/dargs)^T a)
            y, a = v[:n], v[n:2 * n]

            def f_of(yy, *pp):
                full = list(params)
                for i, p in zip(diff, pp):
                    full[i] = p
                return f_flat(yy, -s, full)

            ydot, pull = vjp(f_of, astype(y, dt), *dparams)
            cts = pull(astype(a, dt))
            parts = [astype(-ydot, adt), astype(cts[0], adt)]
            parts += [reshape(astype(c, adt), (-1,)) for c in cts[1:]]
            return concatenate(parts)

        nt = tv_.shape[0]
        a = g[nt - 1]
        pbar = _flatten([zeros_like(p) for p in dparams], adt)
        tbar = [None] * nt
        for i in range(nt - 1, 0, -1):
            yi = ys[i]
            tbar[i] = _real_dot(g[i], f_flat(yi, tv_[i], params))
            v0 = concatenate([astype(yi, adt), astype(a, adt), pbar])
            times = stack([-tv_[i], -tv_[i - 1]])
            v1 = _solve(aug, v0, times, rtol, atol, mxstep, hmax, op)[1]
            a = astype(v1[n:2 * n], dt) if dt.kind == "c" else astype(real(v1[n:2 * n]), dt)
            pbar = v1[2 * n:]
            if i > 1:
                a = a + g[i - 1]
        if nt > 1:
            tbar[0] = -_real_dot(a, f_flat(ys[0], tv_[0], params))
            y0bar = a + g[0]
        else:
            tbar[0] = tv_[0] * 0
            y0bar = g[0]
        t_grad = astype(stack(tbar), tv_.dtype)
        grads = [None] * n_args
        for i, p in zip(diff, _unflatten(pbar, dparams)):
            grads[i] = p
        return (y0bar, t_grad, *grads)

    core.defvjp(fwd, bwd)
    ys = core(_flatten(y_leaves, dt), ts, *a_leaves)
    return tree_unflatten(y_tree, _unflatten(ys, y_leaves, lead=(ts.shape[0],)))

