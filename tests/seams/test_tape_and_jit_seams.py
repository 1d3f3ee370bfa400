"""Smaller seams of the tape and of ``jit`` that used to give wrong or unsafe behaviour."""

import threading
import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DeviceError, GraphError, RetraceWarning, ShapeError

T = tf.tensor


def test_autograd_grad_always_returns_a_tuple():
    x = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = tf.sum(x * x)
    g = tf.autograd_grad(y, x, retain_graph=True)
    assert isinstance(g, tuple) and len(g) == 1
    # the torch idiom autograd_grad(y, x)[0] is the whole gradient, not its first row
    np.testing.assert_array_equal(tf.autograd_grad(y, x)[0].numpy(), 2 * x.detach().numpy())


@pytest.mark.default_device_cpu  # device checks relative to the cpu default
def test_grad_assignment_is_validated():
    p = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(ShapeError, match="shape"):
        p.grad = T([1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="dtype"):
        p.grad = T([1.0, 2.0], dtype=tf.float32)
    with pytest.raises(DeviceError, match="strict:1"):
        p.grad = T([1.0, 2.0], device="strict:1")
    with pytest.raises(tf.errors.DTypeError):
        p.grad = np.array([1.0, 2.0])
    p.grad = T([0.5, 0.5])
    tf.sum(p * p).backward()
    np.testing.assert_array_equal(p.grad.numpy(), [2.5, 4.5])


def test_tensor_keyword_arguments_are_traced_not_keys():
    jf = tf.jit(lambda x, *, beta: tf.exp(-beta * x))
    for k in range(300):
        out = jf(T([1.0]), beta=T(0.01 * k))
    assert jf.traces == 1 and len(jf.cache) == 1
    np.testing.assert_allclose(out.item(), np.exp(-2.99))
    jf(T([1.0]), beta=0.5)  # a Python number is dynamic too (0-d float64, like the tensor)
    assert jf.traces == 1


def test_static_keyword_arguments():
    calls = []

    def f(x, *, mode):
        calls.append(mode)
        return x * (2.0 if mode == "double" else 3.0)

    jf = tf.jit(f, static_argnames="mode")
    assert jf(T(1.0), mode="double").item() == 2.0
    assert jf(T(1.0), mode="triple").item() == 3.0
    assert jf(T(2.0), mode="double").item() == 4.0
    assert calls == ["double", "triple"]


def test_the_cache_is_bounded_and_retracing_warns_once():
    jf = tf.jit(lambda x: x * 2, cache_size=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 60):
            jf(T(np.ones(n)))
    assert len(jf.cache) == 8
    assert sum(issubclass(w.category, RetraceWarning) for w in caught) == 1


def test_lower_returns_the_graph_for_its_own_arguments():
    jf = tf.jit(lambda x: tf.sum(x))
    jf(T(np.ones(2)))
    jf(T(np.ones(3)))
    assert jf.lower(T(np.ones(2))).in_avals[0].shape == (2,)
    assert jf.lower(T(np.ones(3))).in_avals[0].shape == (3,)
    assert jf.traces == 2


def test_static_arguments_are_checked():
    jf = tf.jit(lambda x, n: x * n, static_argnums=3)
    with pytest.raises(GraphError, match="out of range"):
        jf(T(1.0), 2)
    jf = tf.jit(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(GraphError, match="hashable"):
        jf(T(1.0), T(2.0))  # a tensor is data, not a static value (it could change in place)
    with pytest.raises(GraphError, match="hashable"):
        jf(T(1.0), np.array([2.0]))


def test_concurrent_first_calls_trace_once():
    jf = tf.jit(lambda x: tf.sin(x) * 2)
    barrier = threading.Barrier(8)
    out = [None] * 8

    def run(i):
        barrier.wait()
        out[i] = jf(T([0.5])).item()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert jf.traces == 1 and len(set(out)) == 1


def test_closing_over_a_tensor_that_requires_grad_is_refused():
    w = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(GraphError, match="argument"):
        tf.jit(lambda x: tf.sum(x * w))(T([1.0, 1.0]))
    # as an argument the gradient flows
    tf.jit(lambda x, w: tf.sum(x * w))(T([1.0, 1.0]), w).backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
