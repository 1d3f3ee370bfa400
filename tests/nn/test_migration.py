"""The ten migration programs (tests/nn/migration_programs.py): tenferro agrees with PyTorch
on every output (losses along training, parameters, gradients) at 1e-12 in float64, and the
gradients each program trained with agree with finite differences (always, torch or not)."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import tenferro as tf
import tenferro.nn.functional as F
from tenferro.testing import check_grads
from tests import skips
from tests.nn._util import as_numpy, assert_close
from tests.nn.migration_programs import PROGRAMS, make_data

NAMES = list(PROGRAMS)


def run_tenferro(name):
    body = PROGRAMS[name]
    return body(tf, tf.nn, F, tf.optim, tf.nn.functional_call, make_data(name))


@contextlib.contextmanager
def _torch_float64(torch):
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.numpy_only  # a comparison of numbers: the strict backend runs the FD test below
@pytest.mark.parametrize("name", NAMES)
def test_program_matches_torch(name):
    torch = skips.torch()
    functional_call = skips.torch("torch.func").functional_call
    with _torch_float64(torch):
        want, _, _ = PROGRAMS[name](torch, torch.nn, torch.nn.functional, torch.optim,
                                       functional_call, make_data(name))
    got, _, _ = run_tenferro(name)
    assert sorted(got) == sorted(want)
    for key in want:
        assert_close(got[key], want[key], f"{name}: {key}")


@pytest.mark.parametrize("name", NAMES)
def test_program_gradients_match_finite_differences(name):
    out, objective, params = run_tenferro(name)
    # forward mode, reverse mode and central differences agree on the objective ...
    check_grads(objective, [params])
    # ... and the gradient the program itself computed (on the tape) is that gradient
    rng = np.random.default_rng(0)
    t = {k: tf.tensor(rng.standard_normal(v.shape)) for k, v in params.items()}
    eps = 1e-6
    plus = objective({k: v + eps * t[k] for k, v in params.items()})
    minus = objective({k: v - eps * t[k] for k, v in params.items()})
    fd = (as_numpy(plus) - as_numpy(minus)) / (2 * eps)
    tape = sum(float(np.vdot(as_numpy(out[f"grad:{k}"]), as_numpy(t[k]))) for k in params)
    assert abs(fd - tape) <= 1e-6 * max(1.0, abs(tape)), (fd, tape)
