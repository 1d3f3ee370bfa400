"""The PyTorch-style tape: backward(), .grad accumulation, graph release, no_grad, detach,
in-place detection, fan-out/DAGs, memory."""

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import GradientError, ShapeError


def leaf(a):
    return tf.tensor(np.asarray(a, dtype=float), requires_grad=True)


def test_fan_out_x_plus_x():
    x = leaf(1.5)
    (x + x).backward()
    assert x.grad.item() == 2.0


def test_x_times_x():
    x = leaf(3.0)
    (x * x).backward()
    assert x.grad.item() == 6.0


def test_diamond_graph():
    x = leaf([0.3, -1.2])
    a = tf.sin(x)
    b, c = a * 2, a * a
    (b * c).sum().backward()
    xv = x.detach().numpy()
    expected = 6 * np.sin(xv) ** 2 * np.cos(xv)  # d/dx 2 sin^3 x
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-13)


def test_tensor_used_by_100_ops():
    x = leaf([0.5, 2.0])
    total = 0
    for k in range(100):
        total = total + x * (k + 1)
    total.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5050.0, 5050.0])


def test_grad_accumulates_and_resets():
    x = leaf(2.0)
    (x * x).backward()
    (x * 3).backward()
    assert x.grad.item() == 7.0
    x.grad = None
    (x * 5).backward()
    assert x.grad.item() == 5.0


def test_only_leaves_get_grad_and_non_leaf_flags():
    x = leaf([1.0, 2.0])
    y = x * 2
    assert y.requires_grad and not y.is_leaf and x.is_leaf
    y.sum().backward()
    assert y.grad is None
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_constants_do_not_require_grad():
    x = tf.tensor([1.0])
    y = x * 2
    assert not y.requires_grad
    with pytest.raises(GradientError, match="does not require grad"):
        y.sum().backward()


def test_backward_twice_raises_then_retain_graph_works():
    x = leaf([1.0, 2.0])
    y = (tf.exp(x) * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (np.exp([1, 2]) * (1 + np.array([1, 2]))))
    with pytest.raises(GradientError, match="second time"):
        y.backward()


def test_non_scalar_backward_needs_gradient():
    x = leaf([1.0, 2.0])
    y = x * 3
    with pytest.raises(GradientError, match="one-element") as e:
        y.backward()
    assert "(2,)" in str(e.value) or "[2]" in str(e.value)
    y.backward(tf.tensor([1.0, -1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, -3.0])
    y2 = x * 3
    with pytest.raises(ShapeError, match="must match the output"):
        y2.backward(tf.tensor([1.0, 2.0, 3.0]))


def test_no_grad_records_nothing_and_detach():
    x = leaf([1.0])
    with tf.no_grad():
        y = x * 2
    assert not y.requires_grad
    z = (x * 2).detach()
    assert not z.requires_grad and z.is_leaf

    @tf.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    with tf.no_grad():
        with tf.enable_grad():
            assert (x * 2).requires_grad


def test_parameter_update_in_place_under_no_grad():
    w = leaf([1.0, 2.0])
    (w * w).sum().backward()
    with tf.no_grad():
        w -= 0.1 * w.grad
    assert w.requires_grad and w.is_leaf
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6])
    with pytest.raises(GradientError, match="leaf tensor that requires grad"):
        w.add_(1.0)


def test_in_place_mutation_of_saved_input_is_detected():
    x = leaf([1.0, 2.0])
    a = x * 1
    y = a * a  # saves a
    a.mul_(2)
    with pytest.raises(GradientError, match="modified in place") as e:
        y.sum().backward()
    assert "mul" in str(e.value) and "f64[2]" in str(e.value)


def test_in_place_mutation_of_saved_output_is_detected():
    x = leaf([1.0, 2.0])
    y = tf.exp(x)  # saves its output
    y[0] = 5.0
    with pytest.raises(GradientError, match="modified in place"):
        y.sum().backward()


def test_in_place_on_non_leaf_extends_history():
    x = leaf([1.0, 2.0])
    y = x * 2
    y += x  # y = 3x, differentiably
    y[1] = 0.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0])


def test_residuals_released_after_backward():
    x = leaf(np.ones(5))
    a = tf.exp(x)
    ref_out = weakref.ref(a)
    b = tf.sin(a)
    loss = b.sum()
    node = b._node
    del a, b
    gc.collect()
    assert ref_out() is not None  # saved by sin's node
    loss.backward()
    assert node.saved is None  # freed
    gc.collect()
    assert ref_out() is None


def test_graph_freed_when_output_dropped():
    x = leaf(np.ones(5))
    y = tf.exp(tf.sin(x))
    r = weakref.ref(y._node)
    del y
    gc.collect()
    assert r() is None


def _training_memory_growth(warmup, steps):
    """Bytes gained between two points ``steps`` steps apart of a small training loop."""
    rng = np.random.default_rng(0)
    w = leaf(rng.standard_normal((4, 4)) * 0.1)
    xs = tf.tensor(rng.standard_normal((8, 4)))
    target = tf.tensor(rng.standard_normal((8, 4)))

    def step():
        loss = ((tf.tanh(xs @ w) - target) ** 2).mean()
        loss.backward()
        with tf.no_grad():
            w.sub_(0.01 * w.grad)
        w.grad = None

    for _ in range(warmup):
        step()
    gc.collect()
    tracemalloc.start()
    for _ in range(warmup):
        step()
    gc.collect()
    mid, _ = tracemalloc.get_traced_memory()
    for _ in range(steps):
        step()
    gc.collect()
    end, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return end - mid


@pytest.mark.numpy_only
def test_training_loop_does_not_grow_memory():
    # a leak of one small object per step (a node, a saved value: >= 100 bytes) shows up
    grown = _training_memory_growth(200, 1000)
    assert grown < 16 * 1024, f"memory grew by {grown} bytes over 1000 steps"


@pytest.mark.slow
def test_long_training_loop_does_not_grow_memory():
    grown = _training_memory_growth(2000, 8000)
    assert grown < 64 * 1024, f"memory grew by {grown} bytes over 8000 steps"


def test_autograd_grad_for_intermediates_and_create_graph():
    x = leaf([0.5, 1.5])
    h = tf.sin(x)
    y = (h * h).sum()
    gh, gx = tf.autograd_grad(y, [h, x], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), 2 * np.sin([0.5, 1.5]))
    np.testing.assert_allclose(gx.numpy(), np.sin(2 * np.array([0.5, 1.5])))
    assert x.grad is None
    (g,) = tf.autograd_grad(y, x, create_graph=True)  # always a tuple, as in PyTorch
    (g2,) = tf.autograd_grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), 2 * np.cos(2 * np.array([0.5, 1.5])))


def test_backward_inputs_restricts_accumulation():
    a, b = leaf(1.0), leaf(2.0)
    (a * b).backward(inputs=[a])
    assert a.grad.item() == 2.0 and b.grad is None


def test_create_graph_reverse_over_reverse():
    x = leaf(0.3)
    y = tf.exp(x) * tf.sin(x)
    y.backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.backward()
    xv = 0.3
    np.testing.assert_allclose(x.grad.item(), 2 * np.exp(xv) * np.cos(xv), rtol=1e-14)


def test_requires_grad_only_for_inexact():
    from tenferro.errors import DTypeError

    with pytest.raises(DTypeError, match="float and complex"):
        tf.tensor([1, 2], requires_grad=True)


def test_grad_mode_is_per_thread():
    import threading

    inside = threading.Event()
    release = threading.Event()
    seen = {}

    def worker():
        with tf.no_grad():
            seen["worker"] = tf.is_grad_enabled()
            inside.set()
            release.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = tf.is_grad_enabled()
    x = leaf(2.0)
    y = x * x  # recorded here even though the other thread is in no_grad
    release.set()
    t.join()
    y.backward()
    assert seen == {"worker": False, "main": True}
    assert x.grad.item() == 4.0


def test_register_hook_sees_and_can_replace_gradients():
    x = leaf([1.0, 2.0])
    seen = []
    h = tf.sin(x)
    h.register_hook(lambda g: seen.append(g.numpy().copy()))
    handle = x.register_hook(lambda g: g * 10)
    tf.sum(h * 3).backward()
    np.testing.assert_allclose(seen[0], [3.0, 3.0])
    np.testing.assert_allclose(x.grad.numpy(), 30 * np.cos([1.0, 2.0]))
    handle.remove()
    x.grad = None
    tf.sum(tf.sin(x) * 3).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.cos([1.0, 2.0]))
    with pytest.raises(tf.errors.GradientError, match="requires_grad"):
        tf.tensor([1.0]).register_hook(print)


def test_retain_grad_keeps_an_intermediate_gradient():
    x = leaf([1.0, 2.0])
    y = x * x
    y.retain_grad()
    tf.sum(y * 3).backward()
    np.testing.assert_array_equal(y.grad.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(x.grad.numpy(), [6.0, 12.0])


def test_grad_fn_names_the_operation():
    x = leaf([1.0])
    y = tf.sin(x) * 2
    assert repr(y.grad_fn) == "<mul backward>" and y.grad_fn.name == "mul"
    node, _ = y.grad_fn.next_functions[0]
    assert node.name == "sin"
    assert x.grad_fn is None and x.is_leaf
