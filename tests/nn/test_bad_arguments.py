"""Values the nn layer used to accept silently or answer with a raw Python error: NaN through
relu (gave 0), probabilities outside [0, 1] in binary_cross_entropy and negative delta/beta
(negative losses), window sizes or strides of 0 (ZeroDivisionError), optimizer
hyperparameters of the wrong type (raw comparison TypeErrors)."""

import numpy as np
import pytest

import tenferro as tf
import tenferro.nn.functional as F
from tenferro.errors import DTypeError, ShapeError


@pytest.mark.parametrize("relu", [tf.relu, F.relu, tf.nn.ReLU()], ids=["tf", "F", "module"])
def test_relu_keeps_nan(relu):
    x = tf.tensor([np.nan, -1.0, 0.0, 2.0])
    np.testing.assert_array_equal(relu(x).numpy(), [np.nan, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(tf.jit(lambda v: relu(v))(x).numpy(), [np.nan, 0.0, 0.0, 2.0])
    g = tf.grad(lambda v: tf.sum(relu(v) * tf.tensor([0.0, 1.0, 1.0, 1.0])))(x)
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 0.0, 1.0])  # 0 at 0, as PyTorch


def test_relu_in_place_keeps_nan():
    x = tf.tensor([np.nan, -1.0])
    F.relu(x, inplace=True)
    np.testing.assert_array_equal(x.numpy(), [np.nan, 0.0])


@pytest.mark.parametrize("f", [F.leaky_relu, F.elu, F.gelu, F.silu, F.softplus, F.sigmoid,
                               F.tanh, F.logsigmoid])
def test_every_activation_keeps_nan(f):
    assert np.isnan(f(tf.tensor([np.nan])).numpy()[0])


@pytest.mark.parametrize("call", [
    lambda x: F.max_pool2d(x, 0), lambda x: F.max_pool2d(x, 2, stride=0),
    lambda x: F.avg_pool2d(x, 0), lambda x: F.avg_pool2d(x, (2, 0)),
    lambda x: F.max_pool1d(x[0], 2, stride=0), lambda x: F.avg_pool1d(x[0], 2, stride=(0,)),
    lambda x: F.max_pool2d(x, 2, dilation=0), lambda x: F.max_pool2d(x, 2, padding=-1),
    lambda x: F.conv2d(x, tf.ones((1, 1, 2, 2)), stride=0),
    lambda x: F.conv2d(x, tf.ones((1, 1, 2, 2)), dilation=(1, 0)),
    lambda x: tf.nn.MaxPool2d(0)(x), lambda x: tf.nn.AvgPool2d(2, stride=0)(x),
])
def test_zero_windows_and_strides_are_named_errors(call):
    x = tf.ones((1, 1, 4, 4))
    with pytest.raises(ShapeError, match=r"(kernel_size|stride|dilation|padding) must be >= "):
        call(x)


def test_window_parameters_of_the_wrong_type_are_named_errors():
    x = tf.ones((1, 1, 4, 4))
    with pytest.raises(DTypeError, match="kernel_size must be an int"):
        F.max_pool2d(x, "a")
    with pytest.raises(DTypeError, match="stride must be an int"):
        F.avg_pool2d(x, 2, stride=1.5)


def test_binary_cross_entropy_refuses_values_outside_0_1():
    t = tf.tensor([1.0, 0.0])
    for bad in ([1.5, 0.2], [0.5, -0.2], [np.nan, 0.5]):
        with pytest.raises(ShapeError, match=r"binary_cross_entropy: .*\[0, 1\]"):
            F.binary_cross_entropy(tf.tensor(bad), t)
        with pytest.raises(ShapeError):  # under grad the values are known too
            tf.grad(lambda x: F.binary_cross_entropy(x, t))(tf.tensor(bad))
        # under jit the values are not known when tracing: NaN, never a finite number
        assert np.isnan(tf.jit(F.binary_cross_entropy)(tf.tensor(bad), t).item())
    ok = F.binary_cross_entropy(tf.tensor([0.25, 0.5]), t).item()
    np.testing.assert_allclose(ok, -(np.log(0.25) + np.log(0.5)) / 2)
    np.testing.assert_allclose(tf.jit(F.binary_cross_entropy)(tf.tensor([0.25, 0.5]), t).item(),
                               ok)
    np.testing.assert_allclose(F.binary_cross_entropy(tf.tensor([1.0, 0.0]), t).item(), 0.0)


@pytest.mark.parametrize("call,what", [
    (lambda a, b: F.huber_loss(a, b, delta=-1.0), "delta"),
    (lambda a, b: F.huber_loss(a, b, delta=0.0), "delta"),
    (lambda a, b: F.smooth_l1_loss(a, b, beta=-1.0), "beta"),
    (lambda a, b: tf.nn.HuberLoss(delta=-2.0)(a, b), "delta"),
    (lambda a, b: F.cross_entropy(a[None], tf.tensor([0]), label_smoothing=1.5),
     "label_smoothing"),
    (lambda a, b: F.dropout(a, p=-0.1), "p"),
])
def test_loss_parameters_out_of_range_raise(call, what):
    with pytest.raises(ShapeError, match=rf"{what} must lie in"):
        call(tf.tensor([1.0, 2.0]), tf.tensor([3.0, 2.0]))


def test_loss_parameters_of_the_wrong_type_raise():
    with pytest.raises(DTypeError, match="delta must be a real number"):
        F.huber_loss(tf.tensor([1.0]), tf.tensor([2.0]), delta="1")
    with pytest.raises(DTypeError, match="p must be a real number"):
        F.dropout(tf.tensor([1.0]), p=None)
    with pytest.raises(ShapeError, match="reduction must be"):
        F.mse_loss(tf.tensor([1.0]), tf.tensor([2.0]), reduction="avg")


def test_smooth_l1_with_beta_zero_is_still_l1():
    a, b = tf.tensor([1.0, -2.0]), tf.tensor([0.0, 0.0])
    np.testing.assert_allclose(F.smooth_l1_loss(a, b, beta=0.0).item(), 1.5)


# ------------------------------------------------------------------------ optimizers
def _p():
    return [tf.tensor([1.0, 2.0], requires_grad=True)]


@pytest.mark.parametrize("make", [
    lambda: tf.optim.SGD(_p(), lr="a"), lambda: tf.optim.SGD(_p(), lr=0.1, momentum="x"),
    lambda: tf.optim.SGD(_p(), lr=None), lambda: tf.optim.SGD(_p(), lr=0.1, nesterov="yes"),
    lambda: tf.optim.Adam(_p(), lr="a"), lambda: tf.optim.Adam(_p(), betas=0.9),
    lambda: tf.optim.Adam(_p(), betas=("a", 0.9)), lambda: tf.optim.AdamW(_p(), eps=[1e-8]),
    lambda: tf.optim.Adam(_p(), amsgrad=1), lambda: tf.optim.LBFGS(_p(), lr="a"),
    lambda: tf.optim.LBFGS(_p(), history_size=2.5), lambda: tf.optim.LBFGS(_p(), max_iter="3"),
    lambda: tf.optim.SGD([{"params": _p(), "lr": "a"}]), lambda: tf.optim.SGD(3),
    lambda: tf.optim.SGD(_p()[0]), lambda: tf.optim.SGD([{"lr": 0.1}]),
])
def test_optimizer_hyperparameters_of_the_wrong_type_are_dtype_errors(make):
    with pytest.raises(DTypeError, match=r"(SGD|Adam|AdamW|LBFGS): "):
        make()


@pytest.mark.parametrize("make", [
    lambda: tf.optim.SGD(_p(), lr=-1.0), lambda: tf.optim.SGD(_p(), lr=float("nan")),
    lambda: tf.optim.SGD(_p(), lr=0.1, weight_decay=-1), lambda: tf.optim.Adam(_p(), eps=-1.0),
    lambda: tf.optim.Adam(_p(), betas=(0.9, 1.0)), lambda: tf.optim.LBFGS(_p(), max_iter=0),
    lambda: tf.optim.LBFGS(_p(), tolerance_grad=-1.0),
])
def test_optimizer_hyperparameters_out_of_range_are_shape_errors(make):
    with pytest.raises(ShapeError, match=r"must (lie in|be >=)"):
        make()


def test_valid_hyperparameters_still_train():
    p = _p()
    opt = tf.optim.Adam([{"params": p, "lr": 1}], betas=[0.5, 0.75])
    (p[0] ** 2).sum().backward()
    opt.step()
    assert opt.param_groups[0]["betas"] == (0.5, 0.75) and opt.param_groups[0]["lr"] == 1.0
    assert np.all(np.abs(p[0].detach().numpy()) < [1.0, 2.0])
