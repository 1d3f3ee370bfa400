"""Every tn algorithm reports the physicist's progress record (issue 23): a ``callback=``
gets each step's record whether or not a line is printed; energies are the floats the
algorithm returns (all digits); the denominator is an estimate of the steps left (the real
length of a fixed loop), never the iteration budget; ``progress=False`` and
``TENFERRO_PROGRESS=0`` silence the line but not the callback."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import tenferro as tf
import tenferro.tn  # noqa: F401
from tenferro.tn import peps
from tenferro.tn.mpo import heisenberg_mpo

TIMING = {"time", "step_time"}


def _same_records(a, b):
    """Records equal except for their timings (NaN == NaN)."""
    assert len(a) == len(b)
    for ra, rb in zip(a, b):
        assert ra.keys() == rb.keys()
        for k in ra.keys() - TIMING:
            x, y = ra[k], rb[k]
            if isinstance(x, float) and math.isnan(x):
                assert isinstance(y, float) and math.isnan(y)
            else:
                assert x == y, k


# ------------------------------------------------------------------------------ DMRG
def test_dmrg_records_full_precision_energy_and_truncation(capsys):
    recs = []
    res = tf.tn.dmrg(heisenberg_mpo(10), 16, tol=1e-10, progress=True, callback=recs.append)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert len(recs) == res.sweeps and res.converged
    assert {"energy", "dE", "D", "trunc_err", "products", "step_time",
            "steps_left"} <= recs[0].keys()
    assert "E" not in recs[0] and "discarded" not in recs[0]
    assert [r["energy"] for r in recs] == res.energies  # the floats returned, bit for bit
    assert recs[-1]["energy"] == res.energy
    assert math.isnan(recs[0]["dE"])
    for prev, r in zip(recs, recs[1:]):
        assert r["dE"] == r["energy"] - prev["energy"]
    assert recs[-1]["trunc_err"] == res.discarded
    assert recs[-1]["steps_left"] == 0  # converged: nothing left, whatever max_sweeps says
    # the printed line: every digit of the energy, and the budget only as "max"
    assert f"energy={res.energy!r}" in line and "max 40" in line and "/40" not in line


def test_dmrg_estimate_is_not_the_budget():
    """While the bond dimension schedule runs, at least its remaining sweeps are left; once
    |dE| falls geometrically the estimate is a few sweeps, not max_sweeps - step."""
    recs = []
    tf.tn.dmrg(heisenberg_mpo(12), 32, schedule=[8, 16, 32], max_sweeps=200, tol=1e-12,
               progress=False, callback=recs.append)
    known = [r for r in recs if r["steps_left"] is not None]
    assert known and all(r["steps_left"] < 50 for r in known)
    for r in known[:-1]:
        assert r["steps_left"] >= max(3 - r["step"], 0)


def test_dmrg_silent_run_gives_the_same_records(capsys):
    loud, quiet = [], []
    tf.tn.dmrg(heisenberg_mpo(8), 8, progress=True, callback=loud.append)
    assert "[DMRG]" in capsys.readouterr().err
    tf.tn.dmrg(heisenberg_mpo(8), 8, progress=False, callback=quiet.append)
    assert capsys.readouterr().err == ""
    _same_records(loud, quiet)


# ----------------------------------------------------------------------------- CTMRG
@pytest.fixture
def site():
    A = peps.random_c4v_peps(2, seed=0, noise=0.3)
    return peps.double_layer(A / tf.norm(A))


@pytest.mark.parametrize("implicit", [False, True])
def test_ctmrg_monitors_the_spectrum_change(site, implicit, capsys):
    recs = []
    env = tf.tn.ctmrg(site, 12, tol=1e-10, implicit=implicit, progress=True,
                      callback=recs.append)
    err = capsys.readouterr().err
    assert len(recs) == env.iterations and [r["step"] for r in recs] == list(
        range(1, env.iterations + 1))
    assert {"chi", "delta", "steps_left"} <= recs[0].keys()
    assert recs[-1]["delta"] == env.delta
    assert recs[-1]["steps_left"] == 0 and env.converged
    # linear convergence: the estimate a few steps before the end is a few steps
    assert all(r["steps_left"] is None or r["steps_left"] <= 10 for r in recs)
    assert "max 100" in err and "/100" not in err


def test_ctmrg_fixed_length_without_tol(site):
    recs = []
    tf.tn.ctmrg(site, 8, tol=None, max_iter=6, progress=False, callback=recs.append)
    assert [r["steps_left"] for r in recs] == [5, 4, 3, 2, 1, 0]
    assert "delta" not in recs[0]


def test_ctmrg_callback_passes_through_heisenberg_energy(capsys):
    recs = []
    A = peps.random_c4v_peps(2, seed=1, noise=0.3)
    _, env = peps.heisenberg_energy(A, 8, progress=False, callback=recs.append,
                                    return_env=True)
    assert capsys.readouterr().err == "" and len(recs) == env.iterations


@pytest.mark.numpy_only  # the symmetric DMRG's inner loop runs on the blocks' NumPy arrays
def test_symmetric_ctmrg_and_dmrg_report_the_same_records(capsys):
    """Symmetric site tensors / MPOs (dispatched by tn.ctmrg and tn.dmrg) give the dense
    algorithms' records to the callback."""
    import tenferro.symmetric as S
    from tenferro._src.symmetric import ctmrg as SC

    phys = S.Leg(S.Z2, ((0, 1), (1, 1)))
    virt = S.Leg(S.Z2, ((0, 1), (1, 1)))
    A = S.random([phys] + [virt] * 4, 0, seed=0)
    A = S.from_dense(peps.symmetrize_c4v(A.to_dense()), A.legs, 0)
    a = SC.double_layer(A / S.norm(A))
    recs = []
    env = tf.tn.ctmrg(a, 4, tol=1e-9, max_iter=40, progress=False, callback=recs.append)
    assert len(recs) == env.iterations and recs[-1]["delta"] == env.delta
    assert {"chi", "delta", "steps_left", "step_time"} <= set(recs[-1])

    mpo = S.mpo_from_dense(tf.tn.heisenberg_mpo(8), [1, -1])  # 2 S_z of up, down
    recs = []
    r = tf.tn.dmrg(mpo, 16, tol=1e-10, progress=False, callback=recs.append)
    assert recs[-1]["energy"] == r.energy and len(recs) == r.sweeps
    assert {"dE", "D", "trunc_err", "products"} <= set(recs[-1])
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------------- TRG, HOTRG
@pytest.mark.parametrize("method", ["trg", "hotrg"])
def test_coarse_graining_reports_lnz_and_truncation(method, capsys):
    recs = []
    run = getattr(tf.tn, method)
    lnz = run(tf.tn.ising_tensor(0.44), 6, 8, progress=True, callback=recs.append)
    err = capsys.readouterr().err
    assert [r["step"] for r in recs] == list(range(1, 9))
    assert [r["steps_left"] for r in recs] == list(range(7, -1, -1))  # the real length
    assert recs[-1]["lnZ"] == float(lnz)  # the value returned, all digits
    assert f"lnZ={float(lnz)!r}" in err and "8/8" in err
    te = [r["trunc_err"] for r in recs]
    assert all(0 <= e < 0.05 for e in te) and max(te) > 1e-6  # chi=6 truncates at T_c
    # lnZ per step converges towards the returned value
    assert abs(recs[-2]["lnZ"] - recs[-1]["lnZ"]) < abs(recs[1]["lnZ"] - recs[-1]["lnZ"])


def test_trg_truncation_error_is_the_discarded_weight():
    """Step 1 splits the normalised Ising tensor (rank 2 in both orientations): its trunc_err
    is the larger discarded weight of the two SVDs (computed here with NumPy), 0 when chi
    keeps everything."""
    t = tf.tn.ising_tensor(0.3, h=0.2).numpy()
    t = t / np.linalg.norm(t)
    weights = []
    for m in (t.reshape(4, 4), t.transpose(1, 2, 3, 0).reshape(4, 4)):
        s = np.linalg.svd(m, compute_uv=False)
        weights.append(1 - s[0] ** 2 / np.sum(s**2))
    recs = []
    tf.tn.trg(tf.tn.ising_tensor(0.3, h=0.2), 1, 1, progress=False, callback=recs.append)
    assert recs[0]["trunc_err"] == pytest.approx(max(weights), rel=1e-10)
    assert max(weights) > 1e-3
    recs = []
    tf.tn.trg(tf.tn.ising_tensor(0.3, h=0.2), 2, 1, progress=False, callback=recs.append)
    assert recs[0]["trunc_err"] < 1e-14


def test_coarse_graining_records_do_not_touch_gradients_or_jit():
    recs = []

    def f(b):
        return tf.tn.trg(tf.tn.ising_tensor(b), 4, 3, checkpoint=True, progress=False,
                         callback=recs.append)

    g = tf.grad(f)(tf.tensor(0.4))
    g0 = tf.grad(lambda b: tf.tn.trg(tf.tn.ising_tensor(b), 4, 3, checkpoint=True,
                                     progress=False))(tf.tensor(0.4))
    assert float(g) == float(g0) and recs[-1]["lnZ"] is not None
    recs.clear()
    lnz = tf.jit(lambda b: tf.tn.hotrg(tf.tn.ising_tensor(b), 4, 3, progress=False,
                                       callback=recs.append))(tf.tensor(0.4))
    assert np.isfinite(float(lnz)) and len(recs) == 3
    assert recs[-1]["lnZ"] is None and recs[-1]["trunc_err"] is None  # no values in a trace


# ----------------------------------------------------------------------- variational
@pytest.mark.numpy_only
def test_variational_monitors_the_gradient(capsys):
    recs = []
    res = tf.tn.variational_ground_state(heisenberg_mpo(8), 8, progress=True,
                                         callback=recs.append)
    err = capsys.readouterr().err
    assert [r["energy"] for r in recs] == list(res.history)
    assert {"energy", "dE", "grad", "D", "steps_left"} <= recs[0].keys()
    grads = [r["grad"] for r in recs if r["grad"] is not None]
    assert len(grads) > 0.9 * len(recs) and min(grads) < 1e-4 < max(grads)
    assert "max 20000" in err and "/20000" not in err
    # once the last stage converges, the estimate is of the order of the iterations that
    # remain (a plateau gives large estimates, honestly; the budget is never the estimate)
    n = len(recs)
    final = [r for r in recs if r["D"] == 8 and r["grad"] is not None and r["grad"] < 1e-2]
    assert len(final) > 5
    for r in final:
        assert r["steps_left"] is not None and r["steps_left"] <= 4 * (n - r["step"]) + 5
    assert recs[-1]["steps_left"] == 0


@pytest.mark.numpy_only
def test_variational_gtol_stops_each_stage():
    recs = []
    full = tf.tn.variational_ground_state(heisenberg_mpo(8), 8, progress=False)
    res = tf.tn.variational_ground_state(heisenberg_mpo(8), 8, gtol=1e-3, progress=False,
                                         callback=recs.append)
    assert res.stages[-1]["converged"] and res.n_iterations < full.n_iterations
    assert recs[-1]["grad"] <= 1e-3
    assert all(r["grad"] is None or r["grad"] > 1e-3 for r in recs[-5:-1]
               if r["D"] == recs[-1]["D"])
    assert abs(res.energy - full.energy) < 1e-3


# ------------------------------------------------------------------ environment switch
@pytest.mark.numpy_only
def test_environment_variable_silences_algorithms_not_callbacks():
    code = ("import tenferro as tf, tenferro.tn; from tenferro.tn.mpo import heisenberg_mpo; "
            "r = []; tf.tn.trg(tf.tn.ising_tensor(0.4), 4, 3, callback=r.append); "
            "tf.tn.dmrg(heisenberg_mpo(6), 4, callback=r.append); print(len(r))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TENFERRO_PROGRESS="0", PYTHONPATH=root)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert run.stderr == "" and int(run.stdout) > 3
    env["TENFERRO_PROGRESS"] = "1"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert "[TRG] 3/3" in run.stderr and "[DMRG]" in run.stderr


def test_non_finite_values_are_printed_not_fatal(capsys):
    """The first sweep's dE is NaN (or inf): the printed line says so instead of raising from
    int(nan) (dense DMRG with progress=True crashed on its first printed line)."""
    from tenferro._src.progress import Progress

    with Progress("test", 3, True, every=0.0) as p:
        p.update(1, energy=-1.0, dE=math.nan, grad=math.inf)
        p.update(2, energy=-1.5, dE=-0.5, grad=1e-3)
    err = capsys.readouterr().err
    assert "dE=nan" in err and "grad=inf" in err and "energy=-1.5" in err
