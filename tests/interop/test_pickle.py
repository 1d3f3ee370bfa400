"""Pickling and copying (design/interop.md): tensors follow PyTorch's rules (values, dtype,
device, ``requires_grad`` and leaf flag kept; a non-leaf pickles as a leaf; only leaves
deep-copy), and so do modules, state dicts, optimizers (a pickled state continues
bit-for-bit), contraction plans, symmetric tensors, graphs and jitted functions (graphs through
the graph file format, never pickled code)."""

import copy
import pickle

import numpy as np
import pytest

import tenferro as tf
from tenferro import nn, optim
from tenferro import symmetric as sym
from tenferro.errors import GradientError, GraphError

from ..helpers import rand


def roundtrip(x):
    return pickle.loads(pickle.dumps(x))


# ------------------------------------------------------------------------------ tensors
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128", "int64", "bool"])
def test_tensor_pickle_keeps_values_dtype_device(rng, dtype):
    a = rand(rng, (2, 3), dtype) if dtype != "bool" else rng.standard_normal((2, 3)) > 0
    for t in (tf.asarray(a), tf.asarray(a, device="strict:1")):
        for back in (roundtrip(t), copy.deepcopy(t), copy.copy(t)):
            assert type(back) is type(t) and back is not t
            assert back.dtype == t.dtype and back.device == t.device and back.shape == (2, 3)
            np.testing.assert_array_equal(back.numpy(), a)
            assert not back.requires_grad and back.is_leaf


def test_leaf_requiring_grad_pickles_and_copies_as_a_new_leaf(rng):
    w = tf.tensor(rng.standard_normal(3), requires_grad=True)
    (w * w).sum().backward()
    for back in (roundtrip(w), copy.deepcopy(w), copy.copy(w)):
        assert back.requires_grad and back.is_leaf and back.grad_fn is None
        np.testing.assert_array_equal(back.detach().numpy(), w.detach().numpy())
    assert roundtrip(w).grad is None  # PyTorch does not pickle .grad ...
    np.testing.assert_array_equal(copy.deepcopy(w).grad.numpy(), w.grad.numpy())  # deepcopy does


def test_copies_have_their_own_autograd_identity(rng):
    """``copy.copy`` used to copy the slots, sharing the tape node: the copy's gradient went to
    the original."""
    w = tf.tensor(rng.standard_normal(3), requires_grad=True)
    for c in (copy.copy(w), copy.deepcopy(w)):
        (2 * c).sum().backward()
        np.testing.assert_array_equal(c.grad.numpy(), 2 * np.ones(3))
    assert w.grad is None


def test_non_leaf_pickles_as_a_leaf_and_refuses_deepcopy(rng):
    w = tf.tensor(rng.standard_normal(3), requires_grad=True)
    y = w * 2
    back = roundtrip(y)  # PyTorch's rule: the history is not pickled
    assert back.requires_grad and back.is_leaf
    np.testing.assert_array_equal(back.detach().numpy(), y.detach().numpy())
    with pytest.raises(GradientError, match="only leaf tensors .* can be deep-copied"):
        copy.deepcopy(y)
    np.testing.assert_array_equal(copy.deepcopy(y.detach()).numpy(), y.detach().numpy())


@pytest.mark.numpy_only
def test_deepcopy_owns_its_buffer_and_shared_tensors_stay_shared(rng):
    t = tf.asarray(rng.standard_normal(4))
    assert not np.shares_memory(copy.deepcopy(t).numpy(), t.numpy())
    a, b = roundtrip([t, t])
    assert a is b
    a, b = copy.deepcopy([t, t])
    assert a is b and a is not t


def test_traced_values_refuse_pickling_and_copy_as_new_values_of_the_trace():
    x = tf.tensor([1.0, 2.0])
    with pytest.raises(GraphError, match="pickle: a TracedTensor"):
        tf.jit(lambda v: pickle.dumps(v))(x)

    def f(v):  # a copy is tenferro.copy(v): a new value, differentiated through
        c, d = copy.copy(v), copy.deepcopy(v)
        c += 1  # in place on the copy only
        return (v * 10 + c + d * d).sum()

    want = (x.numpy() * 11 + 1 + x.numpy() ** 2).sum()
    assert float(tf.jit(f)(x)) == want
    np.testing.assert_array_equal(tf.grad(f)(x).numpy(), 11 + 2 * x.numpy())
    np.testing.assert_array_equal(tf.jit(tf.grad(f))(x).numpy(), 11 + 2 * x.numpy())


# ---------------------------------------------------------------------- modules, optim
class Tied(nn.Module):
    """Two layers sharing one weight (weight tying), at module level so it pickles."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(tf.tanh(self.a(x)))


def test_module_deepcopy_and_pickle(rng):
    model = Tied()
    x = tf.tensor(rng.standard_normal((4, 3)))
    want = model(x).detach().numpy()
    for other in (copy.deepcopy(model), roundtrip(model)):
        np.testing.assert_array_equal(other(x).detach().numpy(), want)
        assert other.b.weight is other.a.weight  # sharing inside the copy is kept
        assert other.a.weight is not model.a.weight
        params = list(other.parameters())
        assert len(params) == 3 and all(isinstance(p, nn.Parameter) for p in params)
        assert all(p.requires_grad and p.is_leaf for p in params)
        with tf.no_grad():  # the copy trains on its own
            other.a.weight.add_(1.0)
        np.testing.assert_array_equal(model(x).detach().numpy(), want)


def test_state_dict_pickles_and_loads_back(rng):
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    x = tf.tensor(rng.standard_normal((4, 3)))
    sd = roundtrip(model.state_dict())
    fresh = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2))
    fresh.load_state_dict(sd)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())


def _train(model, opt, x, y, steps):
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            return loss

        opt.step(closure)


@pytest.mark.parametrize("make_opt", [
    lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True),
    lambda ps: optim.Adam(ps, lr=0.01, amsgrad=True),
    lambda ps: optim.LBFGS(ps, lr=0.5, history_size=4),
], ids=["sgd", "adam", "lbfgs"])
def test_optimizer_state_pickles_and_training_continues_bit_for_bit(rng, make_opt):
    x = tf.tensor(rng.standard_normal((8, 3)))
    y = tf.tensor(rng.standard_normal((8, 1)))

    def make():
        tf.manual_seed(0)
        m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        return m, make_opt(m.parameters())

    model, opt = make()
    _train(model, opt, x, y, 3)
    saved = pickle.dumps({"model": model.state_dict(), "opt": opt.state_dict()})
    together = pickle.dumps((model, opt))
    _train(model, opt, x, y, 3)
    want = [p.detach().numpy().copy() for p in model.parameters()]

    model2, opt2 = make()  # fresh objects, state loaded from the pickle
    state = pickle.loads(saved)
    model2.load_state_dict(state["model"])
    opt2.load_state_dict(state["opt"])
    _train(model2, opt2, x, y, 3)
    model3, opt3 = pickle.loads(together)  # the optimizer pickled with its model
    assert opt3.param_groups[0]["params"][0] is next(model3.parameters())
    _train(model3, opt3, x, y, 3)
    for m in (model2, model3):
        for p, w in zip(m.parameters(), want):
            np.testing.assert_array_equal(p.detach().numpy(), w)


# ------------------------------------------------------- plans, symmetric tensors, graphs
def test_contraction_plan_pickles_and_deep_copies(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    plan = tf.contract_path("ij,jk->ik", a, b)
    for back in (roundtrip(plan), copy.deepcopy(plan)):
        assert back.path == plan.path
        x = tf.tensor(a)
        got = tf.grad(lambda v: tf.einsum("ij,jk->ik", v, b, plan=back).sum())(x)
        np.testing.assert_allclose(got.numpy(), np.broadcast_to(b.sum(1), (3, 4)), atol=1e-12)


def test_symmetric_tensor_pickles_and_deep_copies():
    leg = sym.Leg(sym.product(sym.U1, sym.Z2), (((0, 0), 2), ((1, 1), 3)))
    t = sym.random([leg, sym.Leg(leg.symmetry, leg.sectors, dual=True)], seed=3)
    for back in (roundtrip(t), copy.deepcopy(t)):
        assert type(back) is type(t) and back.legs == t.legs and back.charge == t.charge
        assert back.symmetry == t.symmetry
        assert set(back.blocks) == set(t.blocks)
        for k in t.blocks:
            np.testing.assert_array_equal(back.blocks[k].numpy(), t.blocks[k].numpy())
        assert float(sym.norm(back)) == float(sym.norm(t))


def f_graph(x, y):
    return (tf.sin(x) @ y).sum()


def test_graph_pickles_through_the_graph_file_format(rng):
    x, y = tf.tensor(rng.standard_normal((3, 3))), tf.tensor(rng.standard_normal((3, 2)))
    g = tf.make_graph(f_graph, x, y)
    assert g.__reduce__()[1][0] == g.to_bytes()  # the bytes of graph.save, no code
    for back in (roundtrip(g), copy.deepcopy(g)):
        assert str(back) == str(g)
        assert float(back(x, y)) == float(g(x, y))
        np.testing.assert_allclose(tf.grad(back)(x, y).numpy(), tf.grad(f_graph)(x, y).numpy(),
                                   rtol=1e-13)


jitted = tf.jit(f_graph)


def test_jitted_function_pickles_with_its_compiled_graphs(rng):
    x, y = tf.tensor(rng.standard_normal((3, 3))), tf.tensor(rng.standard_normal((3, 2)))
    want = float(jitted(x, y))
    back = roundtrip(jitted)
    assert back.f is f_graph and back.traces == 0 and len(back.cache) == len(jitted.cache)
    assert float(back(x, y)) == want and back.traces == 0  # ran the pickled graph
    assert float(copy.deepcopy(jitted)(x, y)) == want


@tf.jit
def decorated(x):
    return tf.exp(x).sum()


def test_module_level_jit_decorated_function_pickles_by_name():
    x = tf.tensor([0.0, 1.0])
    want = float(decorated(x))
    back = roundtrip(decorated)
    assert back is decorated and float(back(x)) == want


def test_jitted_lambda_says_why_it_cannot_be_pickled():
    j = tf.jit(lambda v: v * 2)
    with pytest.raises(GraphError, match=r"its Python function .*lambda.* cannot be.*top level"):
        pickle.dumps(j)
    assert float(copy.deepcopy(j)(tf.tensor(1.5))) == 3.0  # copies need no pickling
