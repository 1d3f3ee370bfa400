"""Property test: random programs that pass tensors through Python lists, custom rules, ``jit``
boundaries and checkpoints, nested at random, differentiate correctly in every mode (eager tape,
``grad``, ``grad(jit)``, ``jit(grad)``, forward mode), against central finite differences."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tenferro as tf

T = tf.tensor


@tf.custom_vjp
def _square(x):
    return tf.stop_gradient(x) ** 2  # only the rule has the right derivative


_square.defvjp(lambda x: (_square(x), (x,)), lambda res, ct: (2 * res[0] * ct,))


@tf.custom_jvp
def _tanh(x):
    return tf.tanh(tf.stop_gradient(x))


@_tanh.defjvp
def _tanh_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    y = _tanh(x)
    return y, (1 - y * y) * t


# Leaf stages map a length-3 vector to a length-3 vector.
LEAVES = {
    "sin": lambda x: tf.sin(x) + 0.1 * x,
    "mix": lambda x: x * tf.flip(x, 0) * 0.5 + x,
    "list": lambda x: tf.asarray([x[0] * x[1], x[2] + 1.0, tf.exp(0.3 * x[0])]),
    "list_of_slices": lambda x: tf.sum(tf.stack([x, 2 * x]), 0) / 2 + tf.asarray([x, x])[1],
    "custom_vjp": lambda x: _square(x) * 0.3 + x,
    "custom_jvp": lambda x: _tanh(x) + 0.5 * x,
}


def _leaf():
    return st.sampled_from(sorted(LEAVES)).map(lambda name: ("leaf", name))


programs = st.recursive(
    st.lists(_leaf(), min_size=1, max_size=3).map(lambda xs: ("seq", xs)),
    lambda inner: st.one_of(
        st.tuples(st.sampled_from(["jit", "checkpoint"]), inner),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: ("seq", xs)),
    ),
    max_leaves=6,
)


def build(node):
    kind = node[0]
    if kind == "leaf":
        fn = LEAVES[node[1]]
        # bounded outputs: deep random nestings must not grow values (up to 1e11 seen)
        # beyond what central finite differences resolve
        return lambda x: tf.tanh(fn(x))
    if kind == "seq":
        parts = [build(n) for n in node[1]]

        def seq(x):
            for p in parts:
                x = p(x)
            return x

        return seq
    inner = build(node[1])
    return tf.jit(inner) if kind == "jit" else tf.checkpoint(inner)


def _fd_grad(loss, x0, eps=1e-6):
    g = np.zeros_like(x0)
    for i in range(x0.size):
        e = np.zeros_like(x0)
        e[i] = eps
        g[i] = (loss(T(x0 + e)).item() - loss(T(x0 - e)).item()) / (2 * eps)
    return g


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, st.integers(0, 2**16))
def test_random_compositions_differentiate_correctly(program, seed):
    f = build(program)

    def loss(x):
        return tf.sum(f(x) * tf.asarray([0.7, -0.4, 1.1]))

    x0 = np.random.default_rng(seed).uniform(-0.8, 0.8, 3)
    want = _fd_grad(loss, x0)
    got = {
        "grad": tf.grad(loss)(T(x0)),
        "grad(jit)": tf.grad(tf.jit(loss))(T(x0)),
        "jit(grad)": tf.jit(tf.grad(loss))(T(x0)),
        "jacfwd": tf.jacfwd(loss)(T(x0)),
    }
    leaf = T(x0, requires_grad=True)
    loss(leaf).backward()
    got["tape"] = leaf.grad
    for name, g in got.items():
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} on {program}")
