"""Issue 21, leaks and denial of service: caches keyed by structure (not by data) and bounded,
thread-safe graph saving and loading, one trace for concurrent first calls of a jitted
function."""

import threading

import numpy as np
import pytest

import tenferro as tf
from tenferro import caches


def _entries():
    return {name: n for name, (n, _) in caches.sizes().items()}


@pytest.mark.parametrize("step", [
    lambda y, i: y ** (1.5 + i * 1e-3),  # a data exponent
    lambda y, i: y ** (100 + i),  # a large integer exponent
    lambda y, i: y * (1.5 + i * 1e-3) + (2.5 + i),  # scalar operands
], ids=["float-power", "int-power", "scalar-operands"])
def test_python_scalars_that_are_data_do_not_grow_derivative_caches(step):
    y = tf.tensor([1.0, 2.0], requires_grad=True)
    step(y, -1).sum().backward()  # warm: the structural entries exist
    before = _entries()
    for i in range(200):
        step(y, i).sum().backward()
    after = _entries()
    for name in ("derivative templates", "eager tape templates", "eager validated signatures"):
        assert after.get(name, 0) == before.get(name, 0), name


def test_float_power_values_and_gradients_are_unchanged():
    a = np.array([0.5, 2.0, 3.0])
    v, g = tf.value_and_grad(lambda x: (x ** 1.37).sum())(tf.tensor(a))
    np.testing.assert_allclose(v.item(), np.sum(a ** 1.37), rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), 1.37 * a ** 0.37, rtol=1e-14)
    np.testing.assert_array_equal((tf.tensor([-2.0, 3.0]) ** 3).numpy(), [-8.0, 27.0])
    np.testing.assert_array_equal((tf.tensor([-2.0]) ** 40).numpy(), [2.0 ** 40])


def test_every_cache_is_bounded_and_its_size_is_exposed():
    sizes = caches.sizes()
    assert {"derivative templates", "eager tape templates", "eager validated signatures",
            "scalar operand constants"} <= set(sizes)
    for name, (n, maxsize) in sizes.items():
        assert 0 <= n <= maxsize, name
    c = caches.BoundedCache("robustness test cache", 3)
    for i in range(10):
        c.put(i, i)
    assert list(c) == [7, 8, 9] and caches.sizes()["robustness test cache"] == (3, 3)


def test_jit_cache_is_bounded():
    f = tf.jit(lambda x: x * 2, cache_size=4)
    for n in range(1, 9):
        f(tf.tensor(np.ones(n)))
    assert len(f.cache) == 4 and f.traces == 8


def test_concurrent_first_calls_of_a_jitted_function_trace_once():
    calls = []

    def body(x):
        calls.append(1)
        return tf.sin(x) * 2

    f = tf.jit(body)
    x = tf.tensor(np.linspace(0, 1, 5))
    barrier = threading.Barrier(8)
    out, errors = [None] * 8, []

    def run(k):
        try:
            barrier.wait()
            out[k] = f(x).numpy()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and f.traces == 1 and len(calls) == 1
    for o in out:
        np.testing.assert_array_equal(o, 2 * np.sin(np.linspace(0, 1, 5)))


def _json_of(path) -> bytes:
    import zipfile

    with zipfile.ZipFile(path) as z:
        return z.read("graph.json.npy")


def _graph(k):
    """Graph k: a different shape, constant and run-time size bound per thread."""
    c = np.full(k + 2, float(k))

    def f(a):
        s = tf.linalg.svd(a, cutoff=0.5)[1]
        return s.sum() + (tf.tensor(c) * k).sum()

    a = np.diag(np.arange(1.0, k + 3.0))
    want = float(np.sum(np.arange(1.0, k + 3.0)) + k * k * (k + 2))
    return tf.make_graph(f, tf.tensor(a)), a, want


def test_eight_threads_saving_and_loading_graphs_concurrently(tmp_path):
    """Graph.save shared a dict of run-time size bounds between threads: files held other
    graphs' bounds. Every file must load and give its own graph's result."""
    graphs = [_graph(k) for k in range(8)]
    reference = []
    for k, (g, _, _) in enumerate(graphs):
        g.save(tmp_path / f"ref{k}.tfg")
        reference.append(_json_of(tmp_path / f"ref{k}.tfg"))
    assert len(set(reference)) == 8
    barrier = threading.Barrier(8)
    errors, results = [], {}

    def run(k):
        g, a, expected = graphs[k]
        try:
            barrier.wait()
            for r in range(10):
                path = tmp_path / f"g{k}_{r}.tfg"
                g.save(path)
                h = tf.load(path)
                results[(k, r)] = (h(tf.tensor(a)).item(), expected,
                                   _json_of(path) == reference[k])
        except Exception as e:  # pragma: no cover - reported below
            errors.append((k, e))

    threads = [threading.Thread(target=run, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(results) == 80
    for (k, r), (got, expected, same_listing) in results.items():
        assert got == pytest.approx(expected, rel=1e-12), (k, r)
        assert same_listing, (k, r)  # the file holds exactly its own graph


def test_bounded_caches_evict_safely_from_many_threads():
    """Threads (the parallel contraction executor, user threads) fill one cache at once: no
    KeyError from two evictions of the same oldest key, and the bound holds."""
    import threading

    from tenferro.caches import BoundedCache, sizes

    cache = BoundedCache("test: concurrent puts", 8)
    errors = []

    def fill(t):
        try:
            for i in range(20000):
                cache.put((t, i), i)
                cache.get((t, i - 1))
        except Exception as e:  # noqa: BLE001 - any failure is the test's failure
            errors.append(e)

    threads = [threading.Thread(target=fill, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(cache) <= 8
    assert sizes()["test: concurrent puts"] == (len(cache), 8)
