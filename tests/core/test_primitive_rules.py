"""Every primitive's rules: JVP vs finite differences, reverse mode vs forward mode (the
dot-product identity) and vs finite differences, and transposition of the linearized map,
for float64 and complex128 on random inputs."""

import numpy as np
import pytest

import chainrules
import tenferro as tf
from tenferro.testing import check_jvp, check_transpose, check_vjp
from tests.programs import PROGRAMS

CASES = [(p, dt) for p in PROGRAMS for dt in p.dtypes]
IDS = [f"{p.name}-{dt}" for p, dt in CASES]


def _diff_args(p, args):
    n = len(p.shapes)
    return args[:n], args[n:]


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_jvp_matches_finite_differences(prog, dtype, rng):
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    check_jvp(lambda *xs: prog.fn(*xs, *extra), diff)


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_vjp_transposes_jvp_and_matches_finite_differences(prog, dtype, rng):
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    check_vjp(lambda *xs: prog.fn(*xs, *extra), diff)


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_linear_transpose_of_linearize(prog, dtype, rng):
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    _, f_lin = tf.linearize(lambda *xs: prog.fn(*xs, *extra), *diff)
    check_transpose(f_lin, diff)


@pytest.mark.parametrize(
    "prog,dtype", [(p, d) for p, d in CASES if p.linear], ids=[i for i, (p, _) in zip(IDS, CASES)
                                                              if p.linear]
)
def test_linear_programs_transpose_directly(prog, dtype, rng):
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    check_transpose(lambda *xs: prog.fn(*xs, *extra), diff)


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_tape_backward_equals_functional_grad(prog, dtype, rng):
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    out = prog.fn(*diff, *extra)
    ct = tf.tensor(rng.standard_normal(out.shape).astype(out.dtype))
    _, pull = tf.vjp(lambda *xs: prog.fn(*xs, *extra), *diff)
    expected = pull(ct)
    leaves = [x.detach().requires_grad_() for x in diff]
    prog.fn(*leaves, *extra).backward(ct)
    for leaf, e in zip(leaves, expected):
        got = leaf.grad if leaf.grad is not None else tf.zeros_like(leaf)
        np.testing.assert_allclose(got.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_every_primitive_is_covered(rng):
    """Each registered primitive appears in some program (linalg ones in the linalg suite)."""
    from tenferro._src.core.dispatch import new_trace
    from tenferro._src.traced.staging import StagingTrace

    seen = set()
    for prog, dtype in CASES:
        args = prog.args(dtype, rng)
        diff, extra = _diff_args(prog, args)
        with new_trace(StagingTrace) as st:
            ins = [st.new_arg(chainrules.aval_of(x)) for x in diff]
            prog.fn(*ins, *extra)
        seen.update(e.prim.name for e in st.eqns)
        # rules emit primitives too: record what the derivatives use
        _, f_lin = tf.linearize(lambda *xs: prog.fn(*xs, *extra), *diff)
        seen.update(e.prim.name for e in f_lin.program.eqns)
    seen.update({"full", "iota", "device_put"})  # constants; transfers: tests/core/test_devices
    exempt = set()
    try:  # decompositions have their own suite (tests/linalg)
        from chainrules.primitives import linalg as linalg_prims

        exempt = {p.name for p in vars(linalg_prims).values()
                  if isinstance(p, chainrules.Primitive)}
    except ImportError:
        pass
    missing = set(chainrules.PRIMITIVES) - seen - exempt
    assert not missing, f"primitives without a program: {sorted(missing)}"


@pytest.mark.parametrize("name", ["mul", "exp", "tanh", "dot_general_matmul", "reduce_prod",
                                  "div", "pow_scalar"])
def test_float32_smoke(name, rng):
    """float32 derivatives agree with float64 ones to float32 precision, and stay float32."""
    from tests.programs import by_name

    prog = by_name(name)
    args64 = prog.args("f64", rng)
    args32 = tuple(tf.tensor(a.numpy().astype(np.float32)) for a in args64)
    g64 = tf.grad(lambda *xs: tf.sum(prog.fn(*xs)), argnums=tuple(range(len(args64))))(*args64)
    g32 = tf.grad(lambda *xs: tf.sum(prog.fn(*xs)), argnums=tuple(range(len(args32))))(*args32)
    for a, b in zip(g32, g64):
        assert a.dtype == tf.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("prog,dtype", CASES, ids=IDS)
def test_second_order_matches_finite_differences(prog, dtype, rng):
    """Forward-over-forward, forward-over-reverse, reverse-over-forward and reverse-over-
    reverse: the derivative maps of every program are themselves differentiated correctly
    (the rules' rules), checked against finite differences and the dot-product identity."""
    from tenferro.testing import check_grads

    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    check_grads(lambda *xs: prog.fn(*xs, *extra), diff, order=2, rtol=1e-5, atol=1e-7)


MULTI = [(p, dt) for p, dt in CASES if len(p.shapes) >= 2]


@pytest.mark.parametrize("prog,dtype", MULTI, ids=[f"{p.name}-{dt}" for p, dt in MULTI])
def test_differentiating_only_some_inputs(prog, dtype, rng):
    """grad/vjp with respect to one input, and a tape where only one leaf requires grad, give
    that input's part of the full derivative (the others are constants, not dropped terms)."""
    args = prog.args(dtype, rng)
    diff, extra = _diff_args(prog, args)
    out = prog.fn(*diff, *extra)
    ct = tf.tensor(rng.standard_normal(out.shape).astype(out.dtype))
    full = tf.vjp(lambda *xs: prog.fn(*xs, *extra), *diff)[1](ct)
    for i in range(len(diff)):
        def only_i(xi, i=i):
            xs = list(diff)
            xs[i] = xi
            return prog.fn(*xs, *extra)

        if prog.in_place and i > 0:  # x is a constant eager tensor updated with traced v
            with pytest.raises(tf.errors.GradientError, match=r"\.at\["):
                tf.vjp(only_i, diff[i])
        else:
            (gi,) = tf.vjp(only_i, diff[i])[1](ct)
            np.testing.assert_allclose(gi.numpy(), full[i].numpy(), rtol=1e-12, atol=1e-12)
        leaves = [x.detach().requires_grad_(j == i) for j, x in enumerate(diff)]
        prog.fn(*leaves, *extra).backward(ct)
        assert all(leaves[j].grad is None for j in range(len(diff)) if j != i)
        np.testing.assert_allclose(leaves[i].grad.numpy(), full[i].numpy(), rtol=1e-12,
                                   atol=1e-12)
