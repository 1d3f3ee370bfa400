"""Plans as plain data, ``einsum(..., executor=)`` on a ``concurrent.futures`` pool, and
``tenferro._src.distributed.value_and_grad`` with a pool as its client (no Dask needed here;
tests/distributed/test_dask.py runs the same on a LocalCluster)."""

import pickle
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tenferro as tf
import tenferro.distributed as td
from tenferro._src.contract import ContractionPlan
from tenferro.errors import ConcretizationError, ShapeError, TenferroError

EQ = "abc,cbd,de->ae"  # a tensor-valued contraction
EQ0 = "abc,cbd,da->"  # a scalar one


def operands(rng, dtype=np.float64, eq=EQ):
    shapes = {EQ: [(3, 4, 5), (5, 4, 6), (6, 2)], EQ0: [(3, 4, 5), (5, 4, 6), (6, 3)]}[eq]
    out = []
    for s in shapes:
        x = rng.standard_normal(s)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal(s)
        out.append(x)
    return out


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(2) as ex:
        yield ex


def sliced_plan(eq, ops, sliced=("b", "c")):
    """A plan slicing ``sliced`` (chosen here: planned slices vary between searches)."""
    d = tf.contract_path(eq, *ops, optimize="optimal").to_dict()
    return ContractionPlan.from_dict({**d, "sliced": list(sliced)})


# ------------------------------------------------------------------ plans as data


def test_plan_round_trips_through_dict_and_pickle(rng):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    d = plan.to_dict()
    assert d["sliced"] == list(plan.sliced) and d["subscripts"] == EQ
    for back in (ContractionPlan.from_dict(d), pickle.loads(pickle.dumps(plan))):
        assert back.path == plan.path and back.sliced == plan.sliced
        assert back.n_slices == plan.n_slices and back.flops == plan.flops
        got = tf.einsum(EQ, *ops, plan=back).numpy()
        np.testing.assert_allclose(got, np.einsum(EQ, *ops), rtol=1e-12, atol=1e-12)


def test_interleaved_plan_round_trips(rng):
    a, b, c = operands(rng)
    args = (a, ["i", 1, 2], b, [2, 1, "j"], c, ["j", "k"], ["i", "k"])
    d = tf.contract_path(*args).to_dict()
    assert d["sublists"] == [["i", 1, 2], [2, 1, "j"], ["j", "k"]]
    plan = ContractionPlan.from_dict({**d, "sliced": [1, "j"]})
    back = pickle.loads(pickle.dumps(plan))
    assert back.sliced == plan.sliced == (1, "j") and back.n_slices == plan.n_slices == 24
    np.testing.assert_allclose(tf.einsum(*args, plan=back).numpy(), np.einsum(EQ, a, b, c),
                               rtol=1e-12, atol=1e-12)


def test_bad_plans_raise_named_errors(rng):
    d = sliced_plan(EQ, operands(rng)).to_dict()
    with pytest.raises(ShapeError, match=r"slices index 'z', which is not an index of "
                                         r"'abc,cbd,de->ae'.*can be sliced: 'b', 'c', 'd'"):
        ContractionPlan.from_dict({**d, "sliced": ["z"]})
    with pytest.raises(ShapeError, match=r"index 'a' .* is an output index"):
        ContractionPlan.from_dict({**d, "sliced": ["a"]})
    with pytest.raises(ShapeError, match=r"slices index 'b' twice"):
        ContractionPlan.from_dict({**d, "sliced": ["b", "b"]})
    with pytest.raises(ShapeError, match=r"invalid contraction path"):
        ContractionPlan.from_dict({**d, "path": [[0, 7]]})
    with pytest.raises(ShapeError, match=r"format"):
        ContractionPlan.from_dict({**d, "format": "something else"})
    with pytest.raises(ShapeError, match=r"incomplete"):
        ContractionPlan.from_dict({k: v for k, v in d.items() if k != "path"})


# ------------------------------------------------------------------ einsum(executor=)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("per_task", [None, 1, 3, 1000])
def test_executor_equals_unsliced(rng, pool, dtype, per_task):
    ops = operands(rng, dtype)
    plan = sliced_plan(EQ, ops)
    got = tf.einsum(EQ, *ops, plan=plan, executor=pool, slices_per_task=per_task)
    assert got.dtype == np.dtype(dtype) and got.shape == (3, 2)
    np.testing.assert_allclose(got.numpy(), np.einsum(EQ, *ops), rtol=1e-12, atol=1e-12)


def test_executor_reports_progress(rng, pool, capsys):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    tf.einsum(EQ, *ops, plan=plan, executor=pool, slices_per_task=2, progress=True)
    assert f"[einsum slices] {plan.n_slices}/{plan.n_slices}" in capsys.readouterr().err
    tf.einsum(EQ, *ops, plan=plan, executor=pool)  # quiet by default
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_executor_gradients_equal_unsliced(rng, pool, dtype):
    ops = operands(rng, dtype)
    plan = sliced_plan(EQ, ops)
    w = rng.standard_normal((3, 2))

    def loss(*xs, **kw):
        z = tf.einsum(EQ, *xs, **kw)
        return tf.sum(tf.abs(z) ** 2 * w)

    ref = tf.grad(loss, argnums=(0, 1, 2))(*ops)
    got = tf.grad(lambda *xs: loss(*xs, plan=plan, executor=pool), argnums=(0, 1, 2))(*ops)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
    # the eager tape (backward) too, with one operand that needs no gradient
    xs = [tf.tensor(o, requires_grad=k != 1) for k, o in enumerate(ops)]
    loss(*xs, plan=plan, executor=pool, slices_per_task=4).backward()
    assert xs[1].grad is None
    for k in (0, 2):
        np.testing.assert_allclose(xs[k].grad.numpy(), ref[k].numpy(), rtol=1e-12, atol=1e-12)


def test_executor_needs_concrete_values(rng, pool):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    f = tf.jit(lambda *xs: tf.einsum(EQ, *xs, plan=plan, executor=pool))
    with pytest.raises(ConcretizationError, match=r"executor=.*concrete \(eager\) tensors"):
        f(*ops)
    with pytest.raises(ConcretizationError, match=r"forward mode"):
        tf.jvp(lambda x: tf.sum(tf.einsum(EQ, x, ops[1], ops[2], plan=plan, executor=pool)),
               (ops[0],), (ops[0],))


def test_bad_executor_arguments(rng, pool):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    with pytest.raises(ShapeError, match=r"concurrent.futures-style submit.*got object"):
        tf.einsum(EQ, *ops, plan=plan, executor=object())
    with pytest.raises(ShapeError, match=r"slices_per_task must be a positive int"):
        tf.einsum(EQ, *ops, plan=plan, executor=pool, slices_per_task=0)


# ------------------------------------------------------------------ distributed.value_and_grad


def _network_loss(eq, plan):
    """A loss that builds the network from the parameters and transforms the contraction:
    only its einsum is sliced and farmed out."""

    def f(params):
        x, y, c = params
        z = tf.einsum(eq, tf.tanh(x), y * 2.0, c, plan=plan)
        return tf.log(tf.sum(tf.abs(z) ** 2))

    return f


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("eq", [EQ0, EQ])
def test_value_and_grad_equals_local(rng, pool, dtype, eq):
    ops = operands(rng, dtype, eq)
    plan = sliced_plan(eq, ops)
    val, grads = td.value_and_grad(_network_loss(eq, plan), tuple(ops), plan, client=pool,
                                   slices_per_task=3, progress=False)
    ref_val, ref = tf.value_and_grad(_network_loss(eq, None))(tuple(ops))
    np.testing.assert_allclose(val.item(), ref_val.item(), rtol=1e-12)
    for g, r in zip(grads, ref):
        assert g.dtype == np.dtype(dtype)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def test_value_and_grad_refuses_an_unused_plan(rng, pool):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    other = sliced_plan(EQ, ops, ("d",))
    with pytest.raises(TenferroError, match=r"never called tenferro.einsum\(\.\.\., plan=plan\)"):
        td.value_and_grad(_network_loss(EQ, other), tuple(ops), plan, client=pool)
    with pytest.raises(ShapeError, match=r"plan must be a ContractionPlan"):
        td.value_and_grad(_network_loss(EQ, plan), tuple(ops), plan.to_dict(), client=pool)


def test_missing_dask_names_the_extra(rng, monkeypatch):
    ops = operands(rng)
    plan = sliced_plan(EQ, ops)
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'tenferro\[distributed\]'"):
        td.value_and_grad(_network_loss(EQ, plan), tuple(ops), plan)


def test_a_task_contracts_exactly_its_slices(rng):
    """Slice number k of a plan slicing (b, c) is b = k // 5, c = k % 5 (row-major), so
    groups of slice numbers partition the sum."""
    from tenferro._src.contract.parallel import contract_group, slice_groups, vjp_group

    a, b, c = operands(rng)
    plan = sliced_plan(EQ, [a, b, c])  # b has size 4, c size 5
    assert plan.n_slices == 20
    for k in (0, 3, 7, 19):
        i, j = divmod(k, 5)
        want = np.einsum("ax,xd,de->ae", a[:, i, j:j + 1], b[j:j + 1, i, :], c)
        np.testing.assert_allclose(contract_group(plan, (k,), a, b, c), want, rtol=1e-12)
    groups = slice_groups(20, 6, None)
    assert groups == [tuple(range(0, 6)), tuple(range(6, 12)), tuple(range(12, 18)), (18, 19)]
    total = sum(contract_group(plan, g, a, b, c) for g in groups)
    np.testing.assert_allclose(total, np.einsum(EQ, a, b, c), rtol=1e-12, atol=1e-12)
    # a group's VJP is the VJP of its slices only
    ct = rng.standard_normal((3, 2))
    _, (ga,) = vjp_group(plan, (7,), (0,), ct, a, b, c)
    want = np.zeros_like(a)
    want[:, 1, 2] = np.einsum("xd,de,ae->a", b[2:3, 1, :], c, ct)
    np.testing.assert_allclose(ga, want, rtol=1e-12, atol=1e-14)
    assert slice_groups(20, None, 2) == [tuple(range(s, min(s + 3, 20)))
                                         for s in range(0, 20, 3)]
