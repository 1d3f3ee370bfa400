"""``tenferro.optim.lr_scheduler`` against PyTorch's: the same schedule on the same optimizer
gives the same rates (and momenta) for 100 steps, exactly; state dicts pickle and resume."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError
from tenferro.optim import lr_scheduler as tls
from tests import skips

STEPS = 100


def _lambda_poly(e):
    return (1 - e / 120) ** 0.9


class _Warmup:
    """A callable object: its attributes are saved by LambdaLR.state_dict (functions are not)."""

    def __init__(self, n):
        self.n = n

    def __call__(self, e):
        return min(1.0, (e + 1) / self.n)


# name -> (optimizer name, optimizer kwargs, scheduler class name, scheduler kwargs)
CASES = {
    "step": ("SGD", {"lr": 0.1}, "StepLR", {"step_size": 7}),
    "step_gamma": ("Adam", {"lr": 0.03}, "StepLR", {"step_size": 3, "gamma": 0.7}),
    "multistep": ("SGD", {"lr": 0.2}, "MultiStepLR", {"milestones": [10, 30, 30, 75]}),
    "multistep_gamma": ("SGD", {"lr": 1.0}, "MultiStepLR",
                        {"milestones": [5, 50], "gamma": 0.5}),
    "exponential": ("SGD", {"lr": 0.1}, "ExponentialLR", {"gamma": 0.97}),
    "exponential_adam": ("Adam", {"lr": 1e-3}, "ExponentialLR", {"gamma": 0.9}),
    "cosine": ("SGD", {"lr": 0.1}, "CosineAnnealingLR", {"T_max": 100}),
    "cosine_periodic": ("SGD", {"lr": 0.1}, "CosineAnnealingLR", {"T_max": 17, "eta_min": 1e-3}),
    "lambda": ("SGD", {"lr": 0.5}, "LambdaLR", {"lr_lambda": _lambda_poly}),
    "lambda_object": ("Adam", {"lr": 0.01}, "LambdaLR", {"lr_lambda": _Warmup(10)}),
    "onecycle": ("SGD", {"lr": 0.1, "momentum": 0.9}, "OneCycleLR",
                 {"max_lr": 0.5, "total_steps": STEPS + 1}),
    "onecycle_linear_3phase": ("SGD", {"lr": 0.1, "momentum": 0.9}, "OneCycleLR",
                               {"max_lr": 1.0, "epochs": 10, "steps_per_epoch": 11,
                                "anneal_strategy": "linear", "three_phase": True,
                                "pct_start": 0.25}),
    "onecycle_adam": ("Adam", {"lr": 1e-3}, "OneCycleLR",
                      {"max_lr": 1e-2, "total_steps": 120, "div_factor": 10.0,
                       "final_div_factor": 100.0, "base_momentum": 0.8}),
    "onecycle_no_momentum": ("Adam", {"lr": 1e-3}, "OneCycleLR",
                             {"max_lr": 1e-2, "total_steps": 101, "cycle_momentum": False}),
    "plateau": ("SGD", {"lr": 0.1}, "ReduceLROnPlateau", {"patience": 3}),
    "plateau_max_abs": ("SGD", {"lr": 0.1}, "ReduceLROnPlateau",
                        {"mode": "max", "threshold_mode": "abs", "threshold": 0.05,
                         "factor": 0.5, "patience": 2, "cooldown": 4, "min_lr": 0.01}),
}


def _metric(i):
    """A noisy loss curve that plateaus: ReduceLROnPlateau's input."""
    return 1.0 / (1 + 0.1 * i) + 0.05 * math.sin(1.7 * i)


def _groups(lib, two):
    p = lib.tensor(np.ones(3), requires_grad=True)
    q = lib.tensor(np.ones(2), requires_grad=True)
    return [{"params": [p]}, {"params": [q], "lr": 0.02}] if two else [p]


def _run(lib, optim, sched_mod, case, two_groups):
    opt_name, opt_kw, sched_name, sched_kw = CASES[case]
    opt = getattr(optim, opt_name)(_groups(lib, two_groups), **opt_kw)
    sched = getattr(sched_mod, sched_name)(opt, **sched_kw)
    rates, momenta = [sched.get_last_lr()], []
    for i in range(STEPS):
        opt.step()
        if sched_name == "ReduceLROnPlateau":
            sched.step(_metric(i))
        else:
            sched.step()
        rates.append(list(sched.get_last_lr()))
        assert rates[-1] == [g["lr"] for g in opt.param_groups]
        momenta.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return rates, momenta


@pytest.mark.numpy_only
@pytest.mark.parametrize("two_groups", [False, True])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rates_equal_torch(case, two_groups):
    torch = skips.torch()
    import torch.optim.lr_scheduler as torch_sched

    want = _run(torch, torch.optim, torch_sched, case, two_groups)
    got = _run(tf, tf.optim, tls, case, two_groups)
    assert got == want  # the same update rules: bit for bit


def test_rates_move():
    """The schedules do something (a check that cannot pass by both sides being constant)."""
    rates, _ = _run(tf, tf.optim, tls, "cosine", False)
    assert rates[0] == [0.1] and rates[50][0] == pytest.approx(0.05) and rates[100][0] < 1e-12
    rates, momenta = _run(tf, tf.optim, tls, "onecycle", False)
    assert rates[0][0] == pytest.approx(0.02) and 0.499 < max(r[0] for r in rates) <= 0.5
    assert 0.85 <= min(m[0] for m in momenta) < 0.8501 and momenta[-1][0] == pytest.approx(0.95)
    rates, _ = _run(tf, tf.optim, tls, "plateau", False)
    assert rates[-1][0] < 0.1


@pytest.mark.parametrize("case", sorted(CASES))
def test_state_dict_pickles_and_resumes(case):
    """Stop after 40 steps, pickle the scheduler's state, build a fresh scheduler on a fresh
    optimizer (with the optimizer's state restored), load it: the next 60 rates are those of
    the uninterrupted run."""
    opt_name, opt_kw, sched_name, sched_kw = CASES[case]
    full, _ = _run(tf, tf.optim, tls, case, True)

    def make():
        opt = getattr(tf.optim, opt_name)(_groups(tf, True), **opt_kw)
        return opt, getattr(tls, sched_name)(opt, **sched_kw)

    def advance(opt, sched, i):
        opt.step()
        sched.step(_metric(i)) if sched_name == "ReduceLROnPlateau" else sched.step()

    opt, sched = make()
    for i in range(40):
        advance(opt, sched, i)
    blob = pickle.dumps(sched.state_dict())
    opt_state = opt.state_dict()
    opt2, sched2 = make()
    opt2.load_state_dict(opt_state)
    sched2.load_state_dict(pickle.loads(blob))
    assert sched2.get_last_lr() == full[40]
    for i in range(40, STEPS):
        advance(opt2, sched2, i)
        assert sched2.get_last_lr() == full[i + 1], i


def test_lambda_state_dict_saves_callable_objects_only():
    opt = tf.optim.SGD([tf.tensor(np.ones(2), requires_grad=True)], lr=1.0)
    w = _Warmup(5)
    sched = tls.LambdaLR(opt, [w])
    assert sched.state_dict()["lr_lambdas"] == [{"n": 5}]
    w.n = 99
    sched.load_state_dict({**sched.state_dict(), "lr_lambdas": [{"n": 5}]})
    assert w.n == 5
    sched2 = tls.LambdaLR(opt, _lambda_poly)
    assert sched2.state_dict()["lr_lambdas"] == [None]


def test_resume_with_last_epoch():
    """``last_epoch >= 0`` needs ``initial_lr`` in the groups (PyTorch's KeyError), and then
    keeps the current rate, then continues the chainable rule (PyTorch: [0.1], then
    0.0690983...)."""
    opt = tf.optim.SGD([tf.tensor(np.ones(2), requires_grad=True)], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        tls.StepLR(opt, 5, last_epoch=3)
    opt.param_groups[0]["initial_lr"] = 0.1
    sched = tls.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
    assert sched.get_last_lr() == [0.1]
    opt.step()
    sched.step()
    want = (1 + math.cos(math.pi * 6 / 10)) / (1 + math.cos(math.pi * 5 / 10)) * 0.1
    assert sched.get_last_lr()[0] == pytest.approx(want, rel=1e-15)


def test_epoch_argument_is_deprecated_and_uses_the_closed_form():
    opt = tf.optim.SGD([tf.tensor(np.ones(2), requires_grad=True)], lr=0.1)
    sched = tls.StepLR(opt, 3, gamma=0.5)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sched.step(7)
    assert any("deprecated" in str(x.message) for x in w)
    assert sched.get_last_lr() == [0.1 * 0.5 ** 2]


def test_bad_arguments():
    opt = tf.optim.SGD([tf.tensor(np.ones(2), requires_grad=True)], lr=0.1)
    with pytest.raises(ShapeError, match="step_size"):
        tls.StepLR(opt, 0)
    with pytest.raises(ShapeError, match="total_steps"):
        tls.OneCycleLR(opt, 0.1)
    with pytest.raises(ShapeError, match="factor"):
        tls.ReduceLROnPlateau(opt, factor=1.5)
    with pytest.raises(ShapeError, match="mode"):
        tls.ReduceLROnPlateau(opt, mode="up")
    with pytest.raises(ShapeError, match="lr_lambda"):
        tls.LambdaLR(opt, [_lambda_poly, _lambda_poly])
    with pytest.raises(tf.errors.DTypeError, match="optimizer"):
        tls.StepLR(object(), 3)
    nomom = tf.optim.LBFGS([tf.tensor(np.ones(2), requires_grad=True)])
    with pytest.raises(ShapeError, match="cycle_momentum"):
        tls.OneCycleLR(nomom, 0.1, total_steps=10)
    sched = tls.OneCycleLR(opt, 0.1, total_steps=3, cycle_momentum=False)
    for _ in range(3):
        sched.step()
    with pytest.raises(ShapeError, match="total_steps"):
        sched.step()
