"""L-BFGS with an optional strong-Wolfe line search (PyTorch's ``torch.optim.LBFGS``).

The same algorithm and constants as PyTorch, so iterates agree with it: two-loop recursion
over at most ``history_size`` curvature pairs (a pair is kept only when y.s > 1e-10), initial
Hessian scale y.s / y.y, first step min(1, 1/|g|_1) * lr; the line search brackets a step
satisfying the strong Wolfe conditions (c1 = 1e-4, c2 = 0.9) by safeguarded cubic
interpolation and zooms (Nocedal & Wright, Algorithms 3.5-3.6). Parameters are handled as one
flat real vector (complex entries as real and imaginary parts).
"""

from __future__ import annotations

from .. import ops
from ..core.eager import enable_grad, no_grad
from ..errors import ShapeError
from .optimizer import Optimizer, from_real_view, int_option, real_option, real_view


def _flat(ts):
    return ops.concatenate([ops.reshape(real_view(t), (-1,)) for t in ts])


def _dot(a, b) -> float:
    return float(ops.sum(a * b).item())


def _absmax(a) -> float:
    return float(ops.max(ops.abs(a)).item())


def cubic_minimizer(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """Minimiser of the cubic through (x1, f1, f'=g1) and (x2, f2, f'=g2), clipped to
    ``bounds`` (default: the interval between x1 and x2); the midpoint if it has none."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    disc = d1 * d1 - g1 * g2
    if disc < 0:
        return (lo + hi) / 2.0
    d2 = disc**0.5
    if x1 <= x2:
        t = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        t = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(t, lo), hi)


def strong_wolfe(phi, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along ``d`` from loss ``f``/gradient ``g`` (directional derivative
    ``gtd``); ``phi(t) -> (loss, flat gradient)`` at step ``t``. Returns
    ``(loss, gradient, t, evaluations)`` at the accepted step."""
    d_norm = _absmax(d)
    f_new, g_new = phi(t)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    it = 0
    bracket = None
    # phase 1: expand until a bracket (or an acceptable point) is found
    while it < max_ls:
        if f_new > f + c1 * t * gtd or (it > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new, gtd_new]]
            done = True
            break
        if gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new, gtd_new]]
            break
        lo_step, hi_step = t + 0.01 * (t - t_prev), t * 10
        t_next = cubic_minimizer(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                 bounds=(lo_step, hi_step))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
    if it == max_ls:
        bracket = [[0.0, f, g, None], [t, f_new, g_new, None]]
    # phase 2: zoom inside the bracket
    insufficient = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and it < max_ls:
        (a, fa, _, ga), (b, fb, _, gb) = bracket
        if abs(b - a) * d_norm < tolerance_change:
            break
        t = cubic_minimizer(a, fa, ga, b, fb, gb)
        top, bottom = max(a, b), min(a, b)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:  # too close to an end: move away from it
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        it += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new, gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new, gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    """PyTorch's L-BFGS: ``step(closure)`` runs up to ``max_iter`` iterations, calling
    ``closure()`` (which must zero the gradients, compute the loss, call ``backward()`` and
    return the loss) to evaluate. ``line_search_fn=None`` takes fixed steps ``lr``;
    ``"strong_wolfe"`` searches each step. Stops when the gradient's largest entry is below
    ``tolerance_grad``, or the step or the loss change is below ``tolerance_change``. One
    parameter group only; complex parameters are optimised as their real and imaginary parts.
    State (the curvature history) persists across ``step`` calls."""

    options = {**Optimizer.options, "lr": real_option(low=0.0), "max_iter": int_option(1),
               "max_eval": int_option(1, optional=True), "tolerance_grad": real_option(low=0.0),
               "tolerance_change": real_option(low=0.0), "history_size": int_option(1)}

    def __init__(self, params, lr: float = 1.0, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if max_eval is None:
            max_eval = int_option(1)("LBFGS", "max_iter", max_iter) * 5 // 4
        if not (line_search_fn is None or (isinstance(line_search_fn, str)
                                           and line_search_fn == "strong_wolfe")):
            raise ShapeError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r:.40}.")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ShapeError("LBFGS: only one parameter group is supported.")
        self._params = self.param_groups[0]["params"]

    # ------------------------------------------------------------ flat vectors
    def _flat_grad(self):
        return _flat([p.grad if p.grad is not None else ops.zeros_like(p)
                      for p in self._params])

    def _add(self, step: float, direction) -> None:
        with no_grad():
            off = 0
            for p in self._params:
                rv = real_view(p.detach())
                n = rv.size
                piece = ops.reshape(direction[off:off + n], rv.shape)
                p.copy_(from_real_view(rv + step * piece, p))
                off += n

    def _values(self):
        return [p.detach() for p in self._params]

    def _set(self, values) -> None:
        with no_grad():
            for p, v in zip(self._params, values):
                p.copy_(v)

    def _evaluate(self, closure):
        with enable_grad():
            loss = closure()
        return float(loss.item() if hasattr(loss, "item") else loss)

    # --------------------------------------------------------------------- step
    def step(self, closure):
        """Run the iterations; returns the loss of the first ``closure()`` evaluation."""
        if closure is None:
            raise ShapeError("LBFGS.step needs a closure that recomputes the loss.")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history = group["history_size"]
        st = self._state(self._params[0])
        st.setdefault("func_evals", 0)
        st.setdefault("n_iter", 0)

        with enable_grad():
            first = closure()
        loss = float(first.item() if hasattr(first, "item") else first)
        evals = 1
        st["func_evals"] += 1
        g = self._flat_grad()
        if _absmax(g) <= tol_grad:
            return first

        d, t = st.get("d"), st.get("t")
        dirs, steps, rho = st.get("old_dirs", []), st.get("old_stps", []), st.get("ro", [])
        h_diag = st.get("H_diag", 1.0)
        g_prev, loss_prev = st.get("prev_flat_grad"), st.get("prev_loss")

        n = 0
        while n < max_iter:
            n += 1
            st["n_iter"] += 1
            if st["n_iter"] == 1:
                d = -g
                dirs, steps, rho, h_diag = [], [], [], 1.0
            else:
                y = g - g_prev
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0)
                        steps.pop(0)
                        rho.pop(0)
                    dirs.append(y)
                    steps.append(s)
                    rho.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                # two-loop recursion: d = -H g
                alpha = [0.0] * len(dirs)
                q = -g
                for i in range(len(dirs) - 1, -1, -1):
                    alpha[i] = _dot(steps[i], q) * rho[i]
                    q = q - alpha[i] * dirs[i]
                r = q * h_diag
                for i in range(len(dirs)):
                    beta = _dot(dirs[i], r) * rho[i]
                    r = r + (alpha[i] - beta) * steps[i]
                d = r
            g_prev, loss_prev = g, loss
            t = min(1.0, 1.0 / float(ops.sum(ops.abs(g)).item())) * lr if st["n_iter"] == 1 \
                else lr
            gtd = _dot(g, d)
            if gtd > -tol_change:  # not a descent direction
                break
            ls_evals = 0
            if group["line_search_fn"] == "strong_wolfe":
                x0 = self._values()

                def phi(step, x0=x0, d=d):
                    self._add(step, d)
                    f_ = self._evaluate(closure)
                    g_ = self._flat_grad()
                    self._set(x0)
                    return f_, g_

                # (the search's own tolerance stays at its default, as in PyTorch)
                loss, g, t, ls_evals = strong_wolfe(phi, t, d, loss, g, gtd)
                self._add(t, d)
                converged = _absmax(g) <= tol_grad
            else:
                self._add(t, d)
                converged = False
                if n != max_iter:
                    loss = self._evaluate(closure)
                    g = self._flat_grad()
                    converged = _absmax(g) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            st["func_evals"] += ls_evals
            if n == max_iter or evals >= max_eval or converged:
                break
            if _absmax(d) * abs(t) <= tol_change or abs(loss - loss_prev) < tol_change:
                break

        st.update(d=d, t=t, old_dirs=dirs, old_stps=steps, ro=rho, H_diag=h_diag,
                  prev_flat_grad=g_prev, prev_loss=loss_prev)
        return first
