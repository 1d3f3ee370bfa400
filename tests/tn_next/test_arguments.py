"""Bad arguments to the tensor-network algorithms raise named errors (``tenferro.errors``)
that say which function, which argument and what it must be; loops that stop at their
budget say so (``ConvergenceWarning``); ``tol=0`` runs the whole budget."""

import math
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro import tn
from tenferro.errors import ConvergenceWarning, DTypeError, ShapeError

# the checks and warnings are the same code on every backend
pytestmark = pytest.mark.numpy_only


@pytest.fixture
def chain():
    return tn.mpo.heisenberg_mpo(6), tn.mps.random_mps(6, 2, seed=0)


# ------------------------------------------------------------------ coarse graining
@pytest.mark.parametrize("rg", [tn.trg, tn.hotrg])
@pytest.mark.parametrize("chi", [0, -1, 2.5])
def test_rg_bond_dimension_must_be_a_positive_integer(rg, chi):
    T = tn.ising_tensor(0.4)
    with pytest.raises(ShapeError, match=rf"{rg.__name__}: chi must be a positive integer"):
        rg(T, chi, 4)


@pytest.mark.parametrize("rg", [tn.trg, tn.hotrg, tn.trg_step, tn.hotrg_step])
def test_rg_site_tensor_must_have_four_matching_legs(rg):
    args = (2, 3) if rg in (tn.trg, tn.hotrg) else (2,)
    with pytest.raises(ShapeError, match=r"T\[l, u, r, d\] \(4 legs\), got shape \(2, 2, 2\)"):
        rg(tf.ones((2, 2, 2)), *args)
    with pytest.raises(ShapeError, match="dim l = dim r"):
        rg(tf.ones((2, 3, 3, 3)), *args)
    with pytest.raises(DTypeError, match="must be a tensor"):
        rg("T", *args)


def test_rg_steps_and_options():
    T = tn.ising_tensor(0.4)
    with pytest.raises(ShapeError, match="trg: steps must be an integer >= 0, got -1"):
        tn.trg(T, 4, -1)
    with pytest.raises(ShapeError, match="svd must be one of"):
        tn.hotrg(T, 4, 2, svd="lanczos")
    with pytest.raises(ShapeError, match="relative_cutoff must be a finite number >= 0"):
        tn.trg(T, 4, 2, relative_cutoff=-1.0)
    # steps=0 is the one-site torus, a value
    assert math.isfinite(tn.trg(T, 4, 0, progress=False).item())


# ---------------------------------------------------------------------------- DMRG
def test_dmrg_with_an_mps_in_max_ranks_place(chain):
    mpo, mps = chain
    with pytest.raises(DTypeError, match=r"dmrg: max_rank must be a positive integer, got a "
                                         r"list.*mps0="):
        tn.dmrg(mpo, mps)


@pytest.mark.parametrize("bad", [-1, 0, 1.5, None, "8"])
def test_dmrg_max_rank(chain, bad):
    with pytest.raises((ShapeError, DTypeError), match="dmrg: max_rank must be a positive"):
        tn.dmrg(chain[0], bad)


@pytest.mark.parametrize("kw, match", [
    (dict(tol=-1.0), "tol must be a finite number >= 0"),
    (dict(tol=math.nan), "tol must be a finite number >= 0"),
    (dict(max_sweeps=0), "max_sweeps must be a positive integer"),
    (dict(cutoff=-1e-3), "cutoff must be a finite number >= 0"),
    (dict(schedule=[8, 0]), r"schedule\[1\] must be a positive integer"),
    (dict(ncv=1), "ncv must be an integer >= 2"),
    (dict(dtype="int32"), "dtype must be a floating or complex dtype"),
    (dict(callback=3), "callback must be a function"),
])
def test_dmrg_options(chain, kw, match):
    with pytest.raises((ShapeError, DTypeError), match=f"dmrg: {match}"):
        tn.dmrg(chain[0], 4, **kw)


def test_dmrg_rejects_an_mps0_of_another_chain(chain):
    mpo, _ = chain
    with pytest.raises(ShapeError, match=r"dmrg: mps0\[0\] has local dimension 3"):
        tn.dmrg(mpo, 4, mps0=tn.mps.random_mps(6, 2, d=3, seed=0))
    with pytest.raises(ShapeError, match=r"dmrg: an MPO of 6 sites for an MPS \(mps0\) of 5"):
        tn.dmrg(mpo, 4, mps0=tn.mps.random_mps(5, 2, seed=0))
    with pytest.raises(ShapeError, match=r"dmrg: mps0\[2\] has shape \(2, 2\)"):
        tn.dmrg(mpo, 4, mps0=[tf.ones((1, 2, 2)), tf.ones((2, 2, 2)), tf.ones((2, 2))])


def test_dmrg_mpo_shapes(chain):
    mpo, _ = chain
    with pytest.raises(ShapeError, match=r"dmrg: mpo\[1\] must be W\[left, right, phys_out, "
                                         r"phys_in\]"):
        tn.dmrg([mpo[0], tf.ones((5, 5, 2, 3)), mpo[-1]], 4)
    with pytest.raises(ShapeError, match="dmrg: mpo bond 1 does not match"):
        tn.dmrg([mpo[0], mpo[0], mpo[-1]], 4)
    with pytest.raises(ShapeError, match="at least 2"):
        tn.dmrg(mpo[:1], 4)
    with pytest.raises(DTypeError, match="dmrg: mpo must be an MPO"):
        tn.dmrg(tf.ones((1, 1, 2, 2)), 4)


def test_mps_functions_name_their_arguments(chain):
    mpo, mps = chain
    with pytest.raises(ShapeError, match=r"mpo_expectation: mps\[0\] has local dimension 3"):
        tn.mps.mpo_expectation(tn.mps.random_mps(6, 2, d=3, seed=0), mpo)
    with pytest.raises(ShapeError, match="random_mps: D must be a positive integer, got 0"):
        tn.mps.random_mps(4, 0)
    with pytest.raises(ShapeError, match="canonical must be one of"):
        tn.mps.random_mps(4, 2, canonical="middle")
    with pytest.raises(DTypeError, match="mps_norm: mps must be an MPS"):
        tn.mps.mps_norm(tf.ones((1, 2, 1)))
    with pytest.raises(ShapeError, match="two_site_update: max_rank must be a positive"):
        tn.mps.two_site_update(mps[0], mps[1], max_rank=0)
    with pytest.raises(ShapeError, match="tdvp: sites must be one of"):
        tn.tdvp(mps, mpo, 0.1, 1, sites=3)
    with pytest.raises(ShapeError, match=r"tdvp: mps\[0\] has local dimension 3"):
        tn.tdvp(tn.mps.random_mps(6, 2, d=3, seed=0), mpo, 0.1, 1)
    with pytest.raises(ShapeError, match="tebd: order must be one of"):
        tn.tebd(mps, tn.tfim_bond_terms(6), 0.1, 1, order=3)
    with pytest.raises(ShapeError, match="vumps: D must be a positive integer"):
        tn.vumps(tn.heisenberg_bond(), 0)
    with pytest.raises(ShapeError, match="vumps: tol must be a finite number >= 0"):
        tn.vumps(tn.heisenberg_bond(), 2, tol=-1.0)
    with pytest.raises(ShapeError, match="variational_ground_state: D must be a positive"):
        tn.variational_ground_state(mpo, -2)


def test_ctmrg_arguments():
    a = tn.ising_tensor(0.4)
    with pytest.raises(ShapeError, match="ctmrg: chi must be a positive integer, got 0"):
        tn.ctmrg(a, 0)
    with pytest.raises(ShapeError, match="ctmrg: tol must be a finite number >= 0"):
        tn.ctmrg(a, 4, tol=-1e-3)
    with pytest.raises(DTypeError, match="ctmrg: env must be a CTMEnv or a pair"):
        tn.ctmrg(a, 4, env="start")
    with pytest.raises(ShapeError, match="ctmrg: the site tensor must be a"):
        tn.ctmrg(tf.ones((2, 2, 2)), 4)
    with pytest.raises(ShapeError, match="not C4v symmetric"):
        tn.ctmrg(tf.tensor(np.random.default_rng(0).standard_normal((2, 2, 2, 2))), 4)
    with pytest.raises(ShapeError, match="ctmrg_directional: the unit-cell pattern"):
        tn.ctmrg_directional([a], [[0, -1]], 4)
    with pytest.raises(ShapeError, match="ctmrg_directional: max_iter must be a positive"):
        tn.ctmrg_directional([a], [[0]], 4, max_iter=0)


# ------------------------------------------------------------------ convergence warnings
def _one_warning(record):
    ws = [w for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(ws) == 1, [str(w.message) for w in record]
    assert ws[0].filename == __file__  # attributed to the caller, not to tenferro
    return str(ws[0].message)


def test_dmrg_that_runs_out_of_sweeps_warns(chain):
    with pytest.warns(ConvergenceWarning) as record:
        res = tn.dmrg(chain[0], 8, max_sweeps=2, tol=1e-14, progress=False)
    msg = _one_warning(record)
    assert not res.converged
    assert "dmrg: not converged after 2 sweeps" in msg and "tol=1e-14" in msg
    assert "relative" in msg  # names the change reached


def test_dmrg_schedule_not_finished_warns(chain):
    with pytest.warns(ConvergenceWarning, match="schedule had not reached its final"):
        tn.dmrg(chain[0], 32, schedule=[2, 4, 8, 16, 32], max_sweeps=2, progress=False)


def test_dmrg_tol_zero_runs_every_sweep_without_warning(chain):
    """tol=0 asks for exactly max_sweeps sweeps: no ZeroDivisionError from the estimate of
    the sweeps left (it is the remaining budget), no warning."""
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = tn.dmrg(chain[0], 8, tol=0.0, max_sweeps=6, progress=False,
                      callback=seen.append)
    assert res.sweeps == 6 and not res.converged
    assert [r["steps_left"] for r in seen] == [5, 4, 3, 2, 1, 0]


def test_dmrg_that_converges_does_not_warn(chain):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = tn.dmrg(chain[0], 16, progress=False)
    assert res.converged


def test_vumps_that_runs_out_of_iterations_warns():
    with pytest.warns(ConvergenceWarning) as record:
        res = tn.vumps(tn.heisenberg_bond(), 4, maxiter=2, progress=False)
    msg = _one_warning(record)
    assert not res.converged and "vumps: not converged after 2 iterations" in msg
    assert "gradient is" in msg and "tol=1e-10" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = tn.vumps(tn.heisenberg_bond(), 4, maxiter=3, tol=0.0, progress=False)
    assert res.iterations == 3


def test_ctmrg_that_runs_out_of_iterations_warns():
    a = tn.ising_tensor(0.4)
    with pytest.warns(ConvergenceWarning) as record:
        env = tn.ctmrg(a, 8, max_iter=2, progress=False)
    msg = _one_warning(record)
    assert not env.converged and "ctmrg: not converged after 2 iterations" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        tn.ctmrg(a, 8, max_iter=2, tol=None, progress=False)  # a fixed number, asked for
        tn.ctmrg(a, 8, max_iter=2, tol=0.0, progress=False)
    with pytest.warns(ConvergenceWarning, match="ctmrg_directional: not converged after 2"):
        tn.ctmrg_directional([a], [[0]], 8, max_iter=2, progress=False)


def test_variational_that_runs_out_of_iterations_warns(chain):
    with pytest.warns(ConvergenceWarning, match="variational_ground_state: not converged "
                                                "after 5 iterations"):
        res = tn.variational_ground_state(chain[0], 4, max_iterations=5, jit=False,
                                          variance=False, progress=False)
    assert not res.converged
    seen = []
    with warnings.catch_warnings():  # tol=0: no test, no division by it in the estimate
        warnings.simplefilter("error", ConvergenceWarning)
        tn.variational_ground_state(chain[0], 4, max_iterations=5, tol=0.0, jit=False,
                                    variance=False, progress=False, callback=seen.append)
    assert len(seen) == 5


# ----------------------------------------------------------------------- progress lines
def test_dmrg_progress_to_a_log_shows_every_sweep(chain, capsys):
    """stderr captured (not a terminal): a line per sweep, each saying 'sweep'."""
    tn.dmrg(chain[0], 8, tol=0.0, max_sweeps=6, progress=True)
    lines = [l for l in capsys.readouterr().err.splitlines() if l.startswith("[DMRG]")]
    assert [l.split()[1:3] for l in lines] == [["sweep", str(k)] for k in range(1, 7)]
    assert all("s/sweep" in l for l in lines)
