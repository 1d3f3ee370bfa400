"""Issue 21, silent wrong results: each case gives NumPy's/PyTorch's value or a named
tenferro error (never a quietly different number)."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import (
    DTypeError,
    GraphError,
    NonLinearError,
    ShapeError,
    TenferroError,
)

RANKED = np.diag([3.0, 2.0, 0.1])  # an SVD with cutoff 0.5 keeps rank 2 (a run-time size)


def _rank_branch(op):
    def f(x):
        s = tf.linalg.svd(x, cutoff=0.5)[1]
        return s.sum() * 10 if op(s.shape[0], 2) else s.sum()
    return f


@pytest.mark.parametrize("op", [lambda a, b: a == b, lambda a, b: a != b], ids=["eq", "ne"])
def test_comparing_a_run_time_size_under_jit_raises_instead_of_guessing(op):
    f = _rank_branch(op)
    assert f(tf.tensor(RANKED)).item() == pytest.approx(50.0 if op(2, 2) else 5.0)
    with pytest.raises(ShapeError, match="run time.*max_rank"):
        tf.jit(f)(tf.tensor(RANKED))


def test_numpy_view_of_a_tensor_is_read_only():
    t = tf.tensor([1.0, 2.0])
    for arr in (np.asarray(t), np.asarray(t.detach()), t.numpy()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 5.0
    assert t[0].item() == 1.0
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    y = x * x  # saves x
    with pytest.raises(ValueError):
        np.asarray(x.detach())[0] = 100.0
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("idx", [-5, 3, (0, 7)])
def test_out_of_range_integer_index_raises_in_every_mode(mode, idx):
    x = tf.tensor(np.arange(6.0).reshape(3, 2) if isinstance(idx, tuple) else [1.0, 2.0, 3.0])
    f = (lambda x: x[idx]) if mode == "eager" else tf.jit(lambda x: x[idx])
    with pytest.raises(ShapeError, match="out of bounds.*size"):
        f(x)


@pytest.mark.parametrize("mode", ["eager", "jit"])
@pytest.mark.parametrize("idx", [True, False, (0, True), (Ellipsis, False), (slice(None), False, 1),
                                 np.True_, np.array(True)], ids=str)
def test_bool_scalar_index_is_a_new_axis_as_in_numpy(mode, idx):
    a = np.arange(6.0).reshape(2, 3)
    f = (lambda x: x[idx]) if mode == "eager" else tf.jit(lambda x: x[idx])
    got = f(tf.tensor(a))
    np.testing.assert_array_equal(got.numpy(), a[idx])
    assert got.shape == a[idx].shape


@pytest.mark.parametrize("idx", [np.array([True, False, True]), [True, False, True],
                                 (slice(None), np.array([True, False])),
                                 (Ellipsis, [True, False])], ids=str)
def test_boolean_mask_of_the_wrong_shape_raises(idx):
    x = tf.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ShapeError, match=r"boolean mask of shape .* does not match .*\(2, 3\)"):
        x[idx]
    with pytest.raises(IndexError):  # NumPy refuses too
        np.arange(6.0).reshape(2, 3)[idx]


def test_boolean_mask_of_the_right_shape_selects():
    a = np.arange(6.0).reshape(2, 3)
    m = np.array([True, False, True])
    np.testing.assert_array_equal(tf.tensor(a)[:, m].numpy(), a[:, m])
    np.testing.assert_array_equal(tf.tensor(a)[a > 2].numpy(), a[a > 2])


def test_index_array_out_of_range_raises_on_every_backend(_backend):
    x = tf.tensor([1.0, 2.0, 3.0])
    with pytest.raises(ShapeError, match="index 5 is out of bounds"):
        x[np.array([0, 5])]
    with pytest.raises(ShapeError, match="index 5 is out of bounds"):
        x.at[np.array([0, 5])].add(1.0)
    with pytest.raises(ShapeError, match="out of bounds"):
        tf.scatter_add(x, np.array([4]), tf.tensor([1.0]))


@pytest.mark.parametrize("arg", [tf.tensor([1, 2]), tf.tensor([True, False]), 3],
                         ids=["int64", "bool", "python-int"])
def test_grad_with_respect_to_an_integer_input_raises(arg):
    with pytest.raises(DTypeError, match=r"grad: argument 0 has dtype (int64|bool).*float"):
        tf.grad(lambda x: (x * 1.0).sum())(arg)
    with pytest.raises(DTypeError, match="argument 0"):
        tf.value_and_grad(lambda x: (x * 1.0).sum())(arg)
    for jac in (tf.jacfwd, tf.jacrev, tf.hessian):  # Jacobians would silently be zero too
        with pytest.raises(DTypeError, match=r"jac(fwd|rev): argument 0"):
            jac(lambda x: (x * 1.0).sum())(arg)


def test_static_tensor_arguments_to_jit_are_refused():
    f = tf.jit(lambda x, y: x + y, static_argnums=1)
    with pytest.raises(GraphError, match="static argument 1 is a tensor/array"):
        f(tf.tensor([1.0]), tf.tensor(1.0))
    with pytest.raises(GraphError, match="static argument 1 is a tensor/array"):
        f(tf.tensor([1.0]), np.ones(1))


def test_squeeze_of_a_run_time_size_never_disagrees_with_eager():
    def f(x):
        s = tf.linalg.svd(x, cutoff=0.5)[1]
        return s[None].squeeze()

    a = np.diag([3.0, 0.1, 0.01])  # rank 1: eager squeezes to ()
    assert f(tf.tensor(a)).shape == ()
    with pytest.raises(ShapeError, match="squeeze.*run time.*axis="):
        tf.jit(f)(tf.tensor(a))
    g = tf.jit(lambda x: tf.linalg.svd(x, cutoff=0.5)[1][None].squeeze(0))
    np.testing.assert_allclose(g(tf.tensor(a)).numpy(), [3.0])


@pytest.mark.parametrize("p", [0.5, 1.5, 3, 4.5])
def test_p_norm_gradient_at_zero_is_zero(p):
    g = tf.grad(lambda x: tf.norm(x, p))(tf.tensor([0.0, 0.0, 0.0]))
    np.testing.assert_array_equal(g.numpy(), 0.0)
    x = np.array([0.5, -2.0, 1.0])  # away from 0 the value and gradient are unchanged
    v, g = tf.value_and_grad(lambda x: tf.norm(x, p))(tf.tensor(x))
    nrm = np.sum(np.abs(x) ** p) ** (1 / p)
    np.testing.assert_allclose(v.item(), nrm, rtol=1e-14)
    np.testing.assert_allclose(g.numpy(), np.sign(x) * np.abs(x) ** (p - 1) * nrm ** (1 - p),
                               rtol=1e-13)


def test_p_norm_below_one_has_zero_gradient_at_zero_entries():
    g = tf.grad(lambda x: tf.norm(x, 0.5))(tf.tensor([0.0, 4.0]))
    assert np.isfinite(g.numpy()).all() and g.numpy()[0] == 0.0


def test_logsumexp_with_inf_is_inf():
    assert tf.logsumexp(tf.tensor([np.inf, 0.0])).item() == np.inf
    assert tf.logsumexp(tf.tensor([-np.inf, -np.inf])).item() == -np.inf


@pytest.mark.parametrize("ddof", [2, 3, 10])
def test_var_with_no_degrees_of_freedom_left_is_inf_as_numpy(ddof):
    a = np.array([1.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"), pytest.warns(RuntimeWarning):
        expected = np.var(a, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        got = tf.var(tf.tensor(a), ddof=ddof).item()
    assert got == expected == np.inf
    with pytest.raises(DTypeError, match="var: ddof must be a number"):
        tf.var(tf.tensor(a), ddof="1")


def test_angle_of_infinities():
    a = np.array([np.inf, -np.inf, 2.0, -3.0, 0.0])
    np.testing.assert_array_equal(tf.angle(tf.tensor(a)).numpy(), np.angle(a))
    assert np.isnan(tf.angle(tf.tensor([np.nan])).item())
    np.testing.assert_array_equal(tf.grad(lambda x: tf.angle(x).sum())(tf.tensor(a)).numpy(), 0)


@pytest.mark.parametrize("bad", [None, "1", b"x"])
def test_none_or_string_operand_is_a_dtype_error(bad):
    t = tf.tensor([1.0, 2.0])
    for f, op in [(lambda: t + bad, "add"), (lambda: bad * t, "multiply"),
                  (lambda: tf.maximum(t, bad), "maximum")]:
        with pytest.raises(DTypeError, match=rf"{op}: got the operand .*float64 tensor of shape"):
            f()


@pytest.mark.parametrize("bad", [None, "a", [1, 2]])
def test_full_with_a_non_number_fill_value_raises(bad):
    with pytest.raises(DTypeError, match="full: the fill value must be a number"):
        tf.full((2,), bad)


def test_assigning_complex_into_a_real_tensor_raises():
    t = tf.tensor([1.0, 2.0])
    with pytest.raises(DTypeError, match="setitem: cannot store a complex128.*float64"):
        t[0] = 1j
    with pytest.raises(DTypeError, match="complex128.*float64"):
        t.at[0].set(1 + 2j)
    with pytest.raises(DTypeError, match="index_add: cannot store a complex128"):
        t.at[0].add(1j)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    t[0] = 5  # an int into a float tensor is fine (NumPy casts)
    assert t[0].item() == 5.0


def test_static_argnums_out_of_range_raises():
    with pytest.raises(GraphError, match="static_argnums 3 is out of range"):
        tf.jit(lambda x: x, static_argnums=3)(tf.tensor(1.0))
    with pytest.raises(GraphError, match="static_argnums -2 is out of range"):
        tf.jit(lambda x: x, static_argnums=-2)(tf.tensor(1.0))


@pytest.mark.parametrize("axis", [0.5, "0", 1.0, (0, 0.5)], ids=str)
def test_non_integer_axes_are_refused(axis):
    x = tf.tensor(np.ones((2, 3)))
    for f in (tf.sum, tf.mean, tf.max):
        with pytest.raises(ShapeError, match=r"axis .* is not an integer"):
            f(x, axis=axis)


@pytest.mark.parametrize("data", [np.zeros(2, dtype=[("a", "f8")]), np.array(["a", "b"]),
                                  np.array([1, "a"], dtype=object), [[1.0], [1.0, 2.0]]],
                         ids=["structured", "str", "object", "ragged"])
def test_non_numeric_data_is_refused(data):
    with pytest.raises(DTypeError, match="tensor: .*numeric"):
        tf.tensor(data)


@pytest.mark.parametrize("dtype", [object, "U3", [("a", "f8")], "nonsense"], ids=str)
def test_non_numeric_dtypes_are_refused(dtype):
    with pytest.raises(DTypeError, match="dtype"):
        tf.zeros((2,), dtype=dtype)
    with pytest.raises(DTypeError, match="dtype"):
        tf.tensor([1.0], dtype=dtype)


def test_linear_transpose_of_an_affine_function_raises():
    with pytest.raises(NonLinearError, match="not zero at zero inputs"):
        tf.linear_transpose(lambda x: x + 1.0, tf.tensor([1.0]))
    ft = tf.linear_transpose(lambda x: 3.0 * x, tf.tensor([1.0]))
    np.testing.assert_array_equal(ft(tf.tensor([2.0]))[0].numpy(), [6.0])


def test_traced_boolean_mask_has_a_run_time_length():
    """A boolean mask under jit selects a run-time number of entries (design/array-api.md),
    the same as eager mode for every count; a traced 0-d boolean index still raises."""
    f = tf.jit(lambda x: x[x > 1])
    for v in ([1.0, 2.0], [0.0, 0.5], [3.0, 4.0]):
        assert f(tf.tensor(v)).tolist() == [e for e in v if e > 1]
    with pytest.raises(TenferroError):
        tf.jit(lambda x: x[(x > 1).sum() > 0])(tf.tensor([1.0, 2.0]))


@pytest.mark.parametrize("idx", [[4], [-4], [0, 3], [-7]], ids=str)
def test_traced_index_arrays_out_of_range_raise_on_every_backend(_backend, idx):
    """Under jit the indices are data: the executor raises a named error (-4 on a length-3
    axis used to wrap twice into -1, the last element; array_api_strict's scatter-add used to
    drop out-of-range updates)."""
    x = tf.tensor([1.0, 2.0, 3.0])
    i = tf.tensor(idx)
    with pytest.raises(ShapeError, match=r"indexing \(axis 0\): index -?\d+ is out of bounds.*"
                                         r"\[at "):
        tf.jit(lambda x, i: x[i])(x, i)
    with pytest.raises(ShapeError, match=r"scatter_add: index -?\d+ is out of bounds"):
        tf.jit(lambda x, i: tf.scatter_add(x, i, tf.ones(len(idx))))(x, i)


@pytest.mark.parametrize("idx", [[-1], [-3], [0, 2]], ids=str)
def test_traced_index_arrays_in_range_agree_with_eager(_backend, idx):
    x = tf.tensor([1.0, 2.0, 3.0])
    i = tf.tensor(idx)
    np.testing.assert_array_equal(tf.jit(lambda x, i: x[i])(x, i).numpy(), x[i].numpy())
    f = lambda x, i: tf.scatter_add(x, i, tf.ones(len(idx)))  # noqa: E731
    np.testing.assert_array_equal(tf.jit(f)(x, i).numpy(), f(x, i).numpy())


@pytest.mark.parametrize("eps", [float("inf"), float("nan"), -1.0, "1e-3", True])
def test_svd_tie_tolerance_must_be_a_finite_non_negative_number(eps):
    a = tf.tensor(np.eye(3))
    with pytest.raises((ShapeError, DTypeError), match="eps must be"):
        tf.linalg.svd(a, eps=eps)


@pytest.mark.parametrize("f, args", [
    (lambda a, b: tf.maximum(a, b), ([1 + 2j, 3 - 1j], [1.0 + 0j, 0j])),
    (lambda a, b: tf.less(a, b), ([1 + 2j], [2 + 0j])),
    (lambda a, b: tf.add(a, b), ([True, False], [True, True])),
    (lambda a: tf.relu(a), ([1 + 1j],)),
])
def test_dtype_errors_do_not_depend_on_tenferro_check(monkeypatch, f, args):
    """Primitives that skip per-signature validation in eager mode (TENFERRO_CHECK unset, the
    default outside the test suite) still refuse the dtypes abstract_eval refuses, each
    combination checked once, as jit does every time (NumPy would order complex numbers
    lexicographically and add booleans)."""
    from tenferro._src.core import eager
    from tenferro.errors import DTypeError

    monkeypatch.setattr(eager, "CHECK", False)
    xs = [tf.tensor(np.array(a)) for a in args]
    for _ in range(2):  # the second call takes the seen-dtypes path
        with pytest.raises(DTypeError):
            f(*xs)
    with pytest.raises(DTypeError):
        tf.jit(f)(*xs)


def test_lax_validates_every_eager_call(monkeypatch):
    from tenferro._src.core import eager
    from tenferro.errors import ShapeError

    monkeypatch.setattr(eager, "CHECK", False)
    x = tf.ones((2, 3))
    assert tf.lax.add(x, x).shape == (2, 3)
    with pytest.raises(ShapeError, match="add: operand shapes differ"):
        tf.lax.add(x, tf.ones(3))  # NumPy would broadcast
