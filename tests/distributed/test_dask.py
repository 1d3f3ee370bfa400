"""Sliced contractions and gradients on a Dask ``LocalCluster`` of two worker processes,
started once for this module (ports chosen by the OS, no dashboard). Every blocking call runs
under a deadline so that a broken cluster fails the test instead of hanging the suite."""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import tenferro as tf
import tenferro.distributed as td
from tenferro._src.contract import ContractionPlan
from tenferro.errors import ShapeError
from tests import skips

from .test_executor import EQ, EQ0, operands

distributed = pytest.importorskip("distributed", reason=skips.DASK)

pytestmark = pytest.mark.numpy_only  # workers compute with NumPy whatever the local backend

DEADLINE = 120.0  # seconds for any one call (a cold worker imports tenferro first)
ROOT = str(Path(tf.__file__).resolve().parent.parent)


def within(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, failing the test if it takes longer than ``DEADLINE``."""
    ex = ThreadPoolExecutor(1)
    try:
        return ex.submit(fn, *args, **kwargs).result(timeout=DEADLINE)
    finally:
        ex.shutdown(wait=False)  # after a timeout, do not wait for the stuck call


@pytest.fixture(scope="module")
def client():
    old = os.environ.get("PYTHONPATH")
    # the workers must import this tenferro (a checkout may shadow an installed one)
    os.environ["PYTHONPATH"] = ROOT + ("" if old is None else os.pathsep + old)
    try:
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
            scheduler_port=0, silence_logs=50, death_timeout=DEADLINE,
        )
    finally:
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old
    c = distributed.Client(cluster, timeout=DEADLINE)
    try:
        c.wait_for_workers(2, timeout=DEADLINE)
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


def sliced_plan(eq, ops, sliced=("b", "c")):
    """A plan slicing ``sliced`` (chosen here: planned slices vary between searches)."""
    d = tf.contract_path(eq, *ops, optimize="optimal").to_dict()
    return ContractionPlan.from_dict({**d, "sliced": list(sliced)})


def _check_workers_run_this_tenferro(client):
    files = within(client.run, lambda: __import__("tenferro").__file__)
    assert len(files) == 2 and set(files.values()) == {tf.__file__}


def _check_sliced_equals_unsliced(rng, client, capsys):
    for dtype in (np.float64, np.complex128):
        ops = operands(rng, dtype, EQ)
        plan = sliced_plan(EQ, ops)
        capsys.readouterr()
        got = within(tf.einsum, EQ, *ops, plan=plan, executor=client, slices_per_task=3,
                     progress=True)
        np.testing.assert_allclose(got.numpy(), np.einsum(EQ, *ops), rtol=1e-12, atol=1e-12)
        assert "[einsum slices] 20/20" in capsys.readouterr().err  # progress over slices


def _loss(eq, plan):
    def f(params):
        x, y, c = params
        z = tf.einsum(eq, tf.tanh(x), y * 2.0, c, plan=plan)
        return tf.log(tf.sum(tf.abs(z) ** 2))

    return f


def _check_gradient(rng, client, eq, dtype, **kw):
    ops = operands(rng, dtype, eq)
    plan = sliced_plan(eq, ops)
    val, grads = within(td.value_and_grad, _loss(eq, plan), tuple(ops), plan, client=client,
                        progress=False, **kw)
    ref_val, ref = tf.value_and_grad(_loss(eq, None))(tuple(ops))
    np.testing.assert_allclose(val.item(), ref_val.item(), rtol=1e-12)
    for g, r in zip(grads, ref):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def _check_bad_plans(rng, client):
    ops = operands(rng, eq=EQ)
    d = sliced_plan(EQ, ops).to_dict()
    with pytest.raises(ShapeError, match=r"slices index 'q', which is not an index of "
                                         r"'abc,cbd,de->ae'"):
        ContractionPlan.from_dict({**d, "sliced": ["b", "q"]})
    other = tf.contract_path(EQ, *[np.ones((2,) * o.ndim) for o in ops])
    with pytest.raises(ShapeError, match=r"the plan was made for .* shapes"):
        tf.einsum(EQ, *ops, plan=other, executor=client)


class KillOnce(distributed.WorkerPlugin):
    """Kills the worker process that starts executing the first tenferro slice task (once:
    a marker file records it, so the restarted worker and the other one survive)."""

    def __init__(self, marker):
        self.marker = marker

    def transition(self, key, start, finish, *args, **kwargs):
        name = key if isinstance(key, str) else str(key)
        if finish == "executing" and "_group-" in name and not os.path.exists(self.marker):
            with open(self.marker, "w") as fh:
                fh.write(name)
            os._exit(1)


def _check_worker_killed_mid_run(rng, client, tmp_path):
    marker = str(tmp_path / "killed")
    within(client.register_plugin, KillOnce(marker), name="tenferro-kill-once")
    try:
        _check_gradient(rng, client, EQ0, np.complex128, slices_per_task=2)
    finally:
        within(client.unregister_worker_plugin, "tenferro-kill-once")
    assert os.path.exists(marker)  # a worker really died while running a slice task


def test_on_a_local_cluster(rng, client, tmp_path, capsys):
    """One test (so that pytest-xdist never starts a second cluster): the workers import this
    tenferro; sliced == unsliced; gradients == unsliced gradients (one round of tasks for a
    scalar contraction, two for a tensor-valued one), real and complex; bad plans raise named
    errors; and a worker killed while running a slice task still gives the right value and
    gradient (Dask reruns its tasks elsewhere; no slice is counted twice). Last, because the
    killed worker's nanny is still restarting it afterwards."""
    _check_workers_run_this_tenferro(client)
    _check_sliced_equals_unsliced(rng, client, capsys)
    _check_gradient(rng, client, EQ0, np.float64, slices_per_task=4)
    _check_gradient(rng, client, EQ0, np.complex128)
    _check_gradient(rng, client, EQ, np.complex128, slices_per_task=3)
    _check_bad_plans(rng, client)
    _check_worker_killed_mid_run(rng, client, tmp_path)
