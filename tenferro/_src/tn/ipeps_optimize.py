"""``tenferro.tn.ipeps.optimize``: L-BFGS for iPEPS energies, with state files and restarts.

The loop is written here (not ``tenferro.optim.LBFGS``, whose ``step`` re-evaluates the loss
at its start and keeps its history as tensors) so that its whole state is a handful of
float64 arrays saved at step boundaries: a run stopped after step k and resumed from its file
repeats the uninterrupted run's arithmetic exactly (bit for bit). The line search is
``tenferro.optim``'s strong-Wolfe search (PyTorch's constants, c1 = 1e-4, c2 = 0.9).

One *step* is one L-BFGS iteration: a search direction from the two-loop recursion over the
last ``history_size`` curvature pairs (initial scale y.s / y.y; a pair kept only when
y.s > 1e-10), a strong-Wolfe search along it, then the progress line, the callback and (every
``autosave_every`` steps) the state file. Every energy evaluation starts its CTMRG from
scratch (no warm start), so an energy is a function of the tensors alone.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import linalg, ops
from ..autodiff.reverse import value_and_grad
from ..errors import ShapeError
from ..optim.lbfgs import strong_wolfe
from ..progress import Progress
from .ctmrg import ctmrg
from .mpo import heisenberg_bond
from .peps import bond_energy, double_layer, symmetrize_c4v

__all__: list[str] = []  # tenferro.tn.ipeps exports IPEPSResult and optimize

#: the ``format`` entry of the state files; a file of another format is refused on resume
STATE_FORMAT = "tenferro.tn.ipeps.optimize/1"


@dataclass
class IPEPSResult:
    """What ``optimize`` returns. ``tensors``: the optimised site tensors (one C4v tensor, or
    the cell's distinct tensors), not normalised; ``energy``: the energy per site at the last
    chi of the schedule; ``grad``: the 2-norm of its gradient; ``steps``: L-BFGS steps run in
    total (those before a resume included); ``chi``: the chi of the last step;
    ``converged``: ``|grad| <= gtol`` at the end; ``restarts``: noise restarts used;
    ``message``: why the loop ended; ``history``: per step ``energy``, ``grad``,
    ``ctm_iters``, ``chi`` (NumPy arrays, step 0 the starting point)."""

    tensors: list
    energy: float
    grad: float
    steps: int
    chi: int
    converged: bool
    restarts: int
    message: str
    history: dict = field(repr=False, default_factory=dict)


# ------------------------------------------------------------------------ flat vectors
def _layout(arrays) -> list[tuple[tuple, bool]]:
    return [(a.shape, np.iscomplexobj(a)) for a in arrays]


def _to_flat(arrays) -> np.ndarray:
    """One float64 vector: real tensors as they are, complex ones as real then imaginary
    parts (the real view L-BFGS needs; tenferro's complex gradient dL/dRe + i dL/dIm flattens
    to the matching [dL/dRe, dL/dIm])."""
    parts = []
    for a in arrays:
        a = np.asarray(a)
        if np.iscomplexobj(a):
            parts += [a.real.ravel(), a.imag.ravel()]
        else:
            parts.append(a.ravel())
    return np.concatenate(parts).astype(np.float64)


def _from_flat(x: np.ndarray, layout) -> list[np.ndarray]:
    out, off = [], 0
    for shape, cplx in layout:
        n = int(np.prod(shape))
        if cplx:
            out.append((x[off:off + n] + 1j * x[off + n:off + 2 * n]).reshape(shape))
            off += 2 * n
        else:
            out.append(x[off:off + n].reshape(shape).copy())
            off += n
    return out


def _direction(g, S, Y, R) -> np.ndarray:
    """-H g by the two-loop recursion over the pairs (s, y, 1/y.s), oldest first."""
    q = -g
    alpha = [0.0] * len(S)
    for i in range(len(S) - 1, -1, -1):
        alpha[i] = float(S[i] @ q) * R[i]
        q = q - alpha[i] * Y[i]
    if S:
        q = q * (float(S[-1] @ Y[-1]) / float(Y[-1] @ Y[-1]))
    for i in range(len(S)):
        beta = float(Y[i] @ q) * R[i]
        q = q + (alpha[i] - beta) * S[i]
    return q


# ----------------------------------------------------------------------- energies
def _c4v_energy(h, opts):
    bond = heisenberg_bond() if h is None else h

    def energy(chi, A):
        A = symmetrize_c4v(A)
        A = A / linalg.norm(A)
        env = ctmrg(double_layer(A), chi, **opts)
        return 2 * bond_energy(A, env, bond), env

    return energy


def _env_info(env) -> tuple[int, float, float]:
    """(CTMRG iterations, last spectrum change, largest smallest-kept normalised corner
    value: how much of the corner spectrum chi cuts off)."""
    spectra = getattr(env, "spectra", None)
    if spectra is None and getattr(env, "spectrum", None) is not None:
        spectra = [env.spectrum]
    tail = float("nan")
    if spectra:
        tail = max(float(np.asarray(s)[-1]) for s in spectra if np.size(s))
    return int(env.iterations), float(env.delta), tail


# ----------------------------------------------------------------------- state files
def _save(path: str, st: dict) -> None:
    """Write the state atomically (a temporary file renamed over ``path``), so a run killed
    while saving leaves the previous file intact."""
    tmp = path + ".tmp.npz"
    S, Y = st["S"], st["Y"]
    n = st["x"].size
    np.savez(tmp, format=np.array(STATE_FORMAT), options=np.array(json.dumps(st["options"])),
             x=st["x"], f=np.float64(st["f"]), g=st["g"],
             lbfgs_s=np.array(S).reshape(len(S), n), lbfgs_y=np.array(Y).reshape(len(Y), n),
             lbfgs_rho=np.array(st["R"], dtype=np.float64), lbfgs_k=np.int64(st["k"]),
             step=np.int64(st["step"]), stage=np.int64(st["stage"]),
             stage_step=np.int64(st["stage_step"]), restarts=np.int64(st["restarts"]),
             stuck=np.int64(st["stuck"]), why=np.array(st["why"]),
             rng_state=np.array(json.dumps(st["rng"].bit_generator.state)),
             **{f"tensor_{i}": a for i, a in enumerate(_from_flat(st["x"], st["layout"]))},
             **{f"history_{k}": np.asarray(v) for k, v in st["history"].items()})
    os.replace(tmp, path)


def _open(path) -> np.lib.npyio.NpzFile:
    """The state file at ``path``, its format checked."""
    op, path = "tn.ipeps.optimize", os.fspath(path)
    try:
        z = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ShapeError(f"{op}: cannot read the state file {path!r} given as resume= "
                         f"({e}).") from None
    if not hasattr(z, "files") or "format" not in z.files or str(z["format"]) != STATE_FORMAT:
        raise ShapeError(f"{op}: {path!r} is not a state file of this optimiser (format "
                         f"{STATE_FORMAT!r}); give resume= the autosave= file of a run.")
    return z


def saved_tensors(path) -> list[np.ndarray]:
    """The site tensors stored in the state file ``path``."""
    with _open(path) as z:
        return [z[f"tensor_{i}"].copy() for i in range(
            sum(1 for k in z.files if k.startswith("tensor_")))]


def _load(path: str, options: dict) -> dict:
    op = "tn.ipeps.optimize"
    with _open(path) as z:
        saved = json.loads(str(z["options"]))
        differ = sorted(k for k in saved if k in _FIXED_OPTIONS and saved[k] != options.get(k))
        if differ:
            detail = ", ".join(f"{k}: file {saved[k]!r}, now {options.get(k)!r}" for k in differ)
            raise ShapeError(f"{op}: the run in {path!r} used other settings ({detail}); a "
                             "resumed run must use the same ones to continue bit for bit.")
        rng = np.random.default_rng()
        rng.bit_generator.state = json.loads(str(z["rng_state"]))
        return dict(
            x=z["x"].copy(), f=float(z["f"]), g=z["g"].copy(),
            S=list(z["lbfgs_s"].copy()), Y=list(z["lbfgs_y"].copy()),
            R=[float(r) for r in z["lbfgs_rho"]], k=int(z["lbfgs_k"]), step=int(z["step"]),
            stage=int(z["stage"]), stage_step=int(z["stage_step"]),
            restarts=int(z["restarts"]), stuck=int(z["stuck"]), why=str(z["why"]), rng=rng,
            history={k[len("history_"):]: list(z[k]) for k in z.files
                     if k.startswith("history_")})


#: options a resumed run must share with the saved one (others, e.g. ``steps``, may change)
_FIXED_OPTIONS = ("kind", "pattern", "chi", "chi_steps", "history_size", "gtol", "ftol",
                  "restarts", "restart_noise", "layout", "ctmrg_options")




# ---------------------------------------------------------------------------- the loop
def run_lbfgs(start: list, energy: Callable, *, kind: str, pattern, chis: list,
              stage_steps, ctmrg_options: dict, steps: int, gtol: float, ftol: float,
              history_size: int, restarts: int, restart_noise: float, seed, autosave,
              autosave_every: int, resume, callback, progress) -> IPEPSResult:
    """The loop of ``tenferro.tn.ipeps.optimize`` (its docstring) on checked arguments:
    ``start`` the NumPy tensors, ``energy(chi, *tensors) -> (E, env)``."""
    opts, pat = ctmrg_options, pattern
    layout = _layout(start)
    nt = len(start)
    dtypes = [a.dtype for a in start]
    options = dict(kind=kind, pattern=pat, chi=chis, chi_steps=stage_steps,
                   history_size=history_size, gtol=gtol, ftol=ftol, restarts=restarts,
                   restart_noise=restart_noise,
                   layout=[[list(s), c] for s, c in layout],
                   ctmrg_options={k: v for k, v in sorted(opts.items())
                                  if isinstance(v, (int, float, str, bool, type(None)))})
    vg = value_and_grad(lambda c, *ts: energy(c, *ts), argnums=tuple(range(1, nt + 1)),
                        has_aux=True)

    def evaluate(x, c):
        arrays = _from_flat(x, layout)
        ts = [ops.tensor(a, dtype=d) for a, d in zip(arrays, dtypes)]
        (e, env), grads = vg(c, *ts)
        gflat = _to_flat([np.asarray(gi) for gi in grads])
        return float(e.item()), gflat, _env_info(env)

    def symmetrize_noise(r):
        if kind != "c4v":
            return r
        return _to_flat([np.asarray(symmetrize_c4v(ops.tensor(a)))
                         for a in _from_flat(r, layout)])

    # ------------------------------------------------------------------ the state
    if resume is not None:
        st = _load(os.fspath(resume), options)
    else:
        x0 = _to_flat(start)
        f0, g0, info0 = evaluate(x0, chis[0])
        st = dict(x=x0, f=f0, g=g0, S=[], Y=[], R=[], k=0, step=0, stage=0, stage_step=0,
                  restarts=0, stuck=0, why="", rng=np.random.default_rng(seed),
                  history=dict(energy=[f0], grad=[float(np.linalg.norm(g0))],
                               ctm_iters=[info0[0]], chi=[chis[0]]))
    st["options"], st["layout"] = options, layout
    stop = False

    def stage_done() -> bool:
        return st["stage"] >= len(chis)

    def next_stage(why: str) -> None:
        st["why"] = why  # why the last stage ended (the run's message once all have)
        st["stage"] += 1
        st["stage_step"] = 0
        st.update(S=[], Y=[], R=[], k=0, stuck=0)
        if not stage_done():  # the energy at the new chi
            st["f"], st["g"], _ = evaluate(st["x"], chis[st["stage"]])

    with Progress("iPEPS L-BFGS", steps, progress, monitor="grad", tol=gtol,
                  unit="step") as prog:
        while st["step"] < steps and not stage_done():
            c = chis[st["stage"]]
            x, f, g = st["x"], st["f"], st["g"]
            if st["k"] == 0:
                d = -g
                t0 = min(1.0, 1.0 / max(float(np.sum(np.abs(g))), 1e-300))
            else:
                d = _direction(g, st["S"], st["Y"], st["R"])
                t0 = 1.0
            gtd = float(g @ d)
            cache = {}

            def phi(t, x=x, d=d, c=c, cache=cache):
                fe, ge, info = evaluate(x + t * d, c)
                cache[t] = info
                return fe, ops.tensor(ge)

            if gtd < 0:
                f_new, g_new, t, evals = strong_wolfe(phi, t0, ops.tensor(d), f,
                                                      ops.tensor(g), gtd)
                g_new = np.asarray(g_new, dtype=np.float64)
            else:  # not a descent direction (curvature pairs gone bad)
                f_new, t, evals = f, 0.0, 0
            st["step"] += 1
            st["stage_step"] += 1
            event = ""
            if t != 0.0 and f_new < f:
                x_new = x + t * d
                s, y = x_new - x, g_new - g
                ys = float(y @ s)
                if ys > 1e-10:
                    if len(st["S"]) == history_size:
                        del st["S"][0], st["Y"][0], st["R"][0]
                    st["S"].append(s)
                    st["Y"].append(y)
                    st["R"].append(1.0 / ys)
                st.update(x=x_new, f=f_new, g=g_new, k=st["k"] + 1, stuck=0)
                info = cache.get(t, (0, float("nan"), float("nan")))
            elif st["k"] > 0:  # drop the history, try steepest descent next
                st.update(S=[], Y=[], R=[], k=0)
                event = "history reset"
                info = (0, float("nan"), float("nan"))
            elif st["restarts"] < restarts:
                scale = float(np.sqrt(np.mean(x * x)))
                r = symmetrize_noise(st["rng"].standard_normal(x.size))
                x_new = x + restart_noise * scale * r
                f_r, g_r, info = evaluate(x_new, c)
                st.update(x=x_new, f=f_r, g=g_r, S=[], Y=[], R=[], k=0,
                          restarts=st["restarts"] + 1)
                event = "noise restart"
            else:
                st["stuck"] = 1
                event = "stuck"
                info = (0, float("nan"), float("nan"))
            gnorm = float(np.linalg.norm(st["g"]))
            hist = st["history"]
            dE = st["f"] - hist["energy"][-1]
            for key, v in (("energy", st["f"]), ("grad", gnorm), ("ctm_iters", info[0]),
                           ("chi", c)):
                hist[key].append(v)
            rec = dict(energy=st["f"], dE=dE, grad=gnorm, ctm_iters=info[0],
                       ctm_tail=info[2], evals=evals, chi=c)
            if event:
                rec["event"] = event
            record = prog.update(st["step"], **rec)
            # the end of this stage?
            why = None
            if gnorm <= gtol:
                why = "converged"
            elif st["stuck"]:
                why = "line search failed (no restarts left)"
            elif ftol > 0 and not event and abs(dE) < ftol * abs(st["f"]):
                why = "energy change below ftol"
            elif stage_steps is not None and st["stage_step"] >= stage_steps[st["stage"]]:
                why = "chi_steps reached"
            if why is not None:
                next_stage(why)
            stop = False
            if callback is not None:
                stop = bool(callback({**record, "tensors": _from_flat(st["x"], layout)}))
            if autosave is not None and (st["step"] % autosave_every == 0 or stop
                                         or stage_done() or st["step"] >= steps):
                _save(os.fspath(autosave), st)
            if stop:
                break
    if autosave is not None and st["step"] == 0:
        _save(os.fspath(autosave), st)
    message = ("stopped by the callback" if stop else st["why"] if stage_done()
               else "ran all steps")
    hist = {k: np.asarray(v) for k, v in st["history"].items()}
    out = [ops.tensor(a, dtype=d) for a, d in zip(_from_flat(st["x"], layout), dtypes)]
    last_chi = chis[min(st["stage"], len(chis) - 1)]
    gnorm = float(np.linalg.norm(st["g"]))
    return IPEPSResult(tensors=out, energy=st["f"], grad=gnorm, steps=st["step"],
                       chi=last_chi, converged=gnorm <= gtol, restarts=st["restarts"],
                       message=message, history=hist)
