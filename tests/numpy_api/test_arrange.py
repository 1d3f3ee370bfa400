"""Stacking, splitting, tiling, rolling, padding and finite differences: NumPy's values
(eager and jit) and derivatives against finite differences, real and complex."""

import warnings

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ConcretizationError, ShapeError
from tenferro.testing import check_grads
from tests.numpy_api._util import assert_matches_numpy, sample

A, B = (3, 4), (3, 4)


def _quiet(f, *args):
    """NumPy 2 deprecates 2-vectors in cross (tenferro keeps NumPy's result, silently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return f(*args)


# name: (tenferro, NumPy, input shapes); every function here is linear in its inputs
CASES = {
    "vstack": (lambda x, y: tf.vstack([x, y]), lambda x, y: np.vstack([x, y]), [A, B]),
    "vstack_1d": (lambda x, y: tf.vstack([x, y]), lambda x, y: np.vstack([x, y]), [(4,), (4,)]),
    "hstack": (lambda x, y: tf.hstack([x, y]), lambda x, y: np.hstack([x, y]), [A, (3, 2)]),
    "hstack_1d": (lambda x, y: tf.hstack((x, y)), lambda x, y: np.hstack((x, y)), [(2,), (3,)]),
    "dstack": (lambda x, y: tf.dstack([x, y]), lambda x, y: np.dstack([x, y]), [A, B]),
    "dstack_1d": (lambda x, y: tf.dstack([x, y]), lambda x, y: np.dstack([x, y]), [(4,), (4,)]),
    "column_stack": (lambda x, y: tf.column_stack([x, y]), lambda x, y: np.column_stack([x, y]),
                     [(3,), (3, 2)]),
    "array_split_int": (lambda x: tf.array_split(x, 3, axis=1),
                        lambda x: np.array_split(x, 3, axis=1), [A]),
    "array_split_points": (lambda x: tf.array_split(x, [1, -1, 9]),
                           lambda x: np.array_split(x, [1, -1, 9]), [(5, 2)]),
    "vsplit": (lambda x: tf.vsplit(x, 2), lambda x: np.vsplit(x, 2), [(4, 3)]),
    "hsplit": (lambda x: tf.hsplit(x, [1, 3]), lambda x: np.hsplit(x, [1, 3]), [A]),
    "hsplit_1d": (lambda x: tf.hsplit(x, 3), lambda x: np.hsplit(x, 3), [(6,)]),
    "dsplit": (lambda x: tf.dsplit(x, 2), lambda x: np.dsplit(x, 2), [(2, 3, 4)]),
    "repeat_flat": (lambda x: tf.repeat(x, 2), lambda x: np.repeat(x, 2), [A]),
    "repeat_axis": (lambda x: tf.repeat(x, 3, axis=0), lambda x: np.repeat(x, 3, axis=0), [A]),
    "repeat_counts": (lambda x: tf.repeat(x, [0, 2, 1, 3], axis=-1),
                      lambda x: np.repeat(x, [0, 2, 1, 3], axis=-1), [A]),
    "tile": (lambda x: tf.tile(x, 2), lambda x: np.tile(x, 2), [A]),
    "tile_more_reps": (lambda x: tf.tile(x, (2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)), [A]),
    "tile_more_axes": (lambda x: tf.tile(x, (2,)), lambda x: np.tile(x, (2,)), [(2, 3, 2)]),
    "roll_flat": (lambda x: tf.roll(x, 5), lambda x: np.roll(x, 5), [A]),
    "roll_axis": (lambda x: tf.roll(x, -1, axis=0), lambda x: np.roll(x, -1, axis=0), [A]),
    "roll_axes": (lambda x: tf.roll(x, (1, 7), axis=(0, 1)),
                  lambda x: np.roll(x, (1, 7), axis=(0, 1)), [A]),
    "append_flat": (lambda x, y: tf.append(x, y), lambda x, y: np.append(x, y), [A, (2,)]),
    "append_axis": (lambda x, y: tf.append(x, y, axis=0), lambda x, y: np.append(x, y, axis=0),
                    [A, (1, 4)]),
    "flipud": (tf.flipud, np.flipud, [A]),
    "fliplr": (tf.fliplr, np.fliplr, [A]),
    "rot90": (tf.rot90, np.rot90, [A]),
    "rot90_k": (lambda x: tf.rot90(x, -3, axes=(2, 0)), lambda x: np.rot90(x, -3, axes=(2, 0)),
                [(2, 3, 4)]),
    "rot90_2": (lambda x: tf.rot90(x, 2), lambda x: np.rot90(x, 2), [A]),
    "rot90_3": (lambda x: tf.rot90(x, 3), lambda x: np.rot90(x, 3), [A]),
    "atleast_2d": (lambda x, y: tf.atleast_2d(x, y), lambda x, y: np.atleast_2d(x, y),
                   [(), (3,)]),
    "atleast_3d": (lambda x, y, z: tf.atleast_3d(x, y, z),
                   lambda x, y, z: np.atleast_3d(x, y, z), [(), (3,), A]),
    "diff": (tf.diff, np.diff, [A]),
    "diff_n_axis": (lambda x: tf.diff(x, 2, axis=0), lambda x: np.diff(x, 2, axis=0), [(4, 3)]),
    "diff_prepend_append": (lambda x, y: tf.diff(x, prepend=0.5, append=y),
                            lambda x, y: np.diff(x, prepend=0.5, append=y), [A, (3, 1)]),
    "gradient": (tf.gradient, np.gradient, [A]),
    "gradient_spacing": (lambda x: tf.gradient(x, 0.5, axis=1, edge_order=2),
                         lambda x: np.gradient(x, 0.5, axis=1, edge_order=2), [A]),
    "gradient_coords": (lambda x: tf.gradient(x, [0.0, 0.5, 2.0], [0.0, 1.0, 1.5, 4.0]),
                        lambda x: np.gradient(x, [0.0, 0.5, 2.0], [0.0, 1.0, 1.5, 4.0]), [A]),
    "gradient_coords_2": (lambda x: tf.gradient(x, [0.0, 0.5, 2.0, 2.1, 3.0], edge_order=2),
                          lambda x: np.gradient(x, [0.0, 0.5, 2.0, 2.1, 3.0], edge_order=2),
                          [(5,)]),
    "cross": (tf.cross, np.cross, [A[:1] + (3,), (2, 1, 3)]),
    "cross_axes": (lambda x, y: tf.cross(x, y, axisa=0, axisb=1, axisc=0),
                   lambda x, y: np.cross(x, y, axisa=0, axisb=1, axisc=0), [(3, 4), (4, 3)]),
    "cross_2_and_3": (tf.cross, lambda x, y: _quiet(np.cross, x, y), [(4, 2), (4, 3)]),
    "pad_constant": (lambda x: tf.pad(x, ((1, 2), (0, 1))),
                     lambda x: np.pad(x, ((1, 2), (0, 1))), [A]),
    "pad_constant_per_axis": (
        lambda x: tf.pad(x, 2, constant_values=((1.0, 2.0), (3.0, 4.0))),
        lambda x: np.pad(x, 2, constant_values=((1.0, 2.0), (3.0, 4.0))), [A]),
}
for _mode in ("edge", "reflect", "symmetric", "wrap"):
    for _w in (((1, 2), (3, 0)), ((7, 4), (9, 10))):  # widths beyond the axis lengths too
        CASES[f"pad_{_mode}_{_w[0][0]}"] = (
            lambda x, m=_mode, w=_w: tf.pad(x, w, m), lambda x, m=_mode, w=_w: np.pad(x, w, m),
            [A])


def _cases(dtypes):
    for name, (f, g, shapes) in CASES.items():
        for dt in dtypes:
            yield pytest.param(f, g, shapes, dt, id=f"{name}-{dt}")


@pytest.mark.parametrize("f,g,shapes,dtype", list(_cases(["float64", "complex128"])))
def test_values_match_numpy(f, g, shapes, dtype, rng):
    assert_matches_numpy(f, g, *[sample(rng, s, dtype) for s in shapes], rtol=1e-13,
                         atol=1e-13)


@pytest.mark.parametrize("f,g,shapes,dtype", list(_cases(["float64", "complex128"])))
def test_derivatives_match_finite_differences(f, g, shapes, dtype, rng):
    check_grads(f, tuple(tf.tensor(sample(rng, s, dtype)) for s in shapes))


def test_select_matches_numpy_and_routes_the_derivative(rng):
    x, y = sample(rng, (5,)), sample(rng, (5,))
    conds = [x > 0.5, y > 0]
    out = tf.select([tf.tensor(c) for c in conds], [tf.tensor(x), tf.tensor(y)], -1.0)
    np.testing.assert_array_equal(out.numpy(), np.select(conds, [x, y], -1.0))
    gx, gy = tf.grad(lambda a, b: tf.sum(tf.select([a > 0.5, b > 0], [a, 2 * b])),
                     argnums=(0, 1))(tf.tensor(x), tf.tensor(y))
    np.testing.assert_array_equal(gx.numpy(), (x > 0.5).astype(float))
    np.testing.assert_array_equal(gy.numpy(), 2.0 * ((x <= 0.5) & (y > 0)))
    j = tf.jit(lambda a, b: tf.select([a > 0.5, b > 0], [a, b], -1.0))
    np.testing.assert_array_equal(j(tf.tensor(x), tf.tensor(y)).numpy(), out.numpy())


def test_repeat_and_tile_sum_the_cotangents_of_copies():
    x = tf.tensor([1.0, 2.0])
    np.testing.assert_array_equal(tf.grad(lambda t: tf.sum(tf.repeat(t, [3, 1])))(x).numpy(),
                                  [3.0, 1.0])
    np.testing.assert_array_equal(tf.grad(lambda t: tf.sum(tf.tile(t, 4)))(x).numpy(),
                                  [4.0, 4.0])
    np.testing.assert_array_equal(
        tf.grad(lambda t: tf.sum(tf.pad(t, (3, 2), "reflect")))(x).numpy(),
        np.bincount(np.pad(np.arange(2), (3, 2), "reflect"), minlength=2).astype(float))


def test_static_arguments_must_be_concrete():
    x = tf.tensor([1.0, 2.0])
    with pytest.raises(ConcretizationError, match="repeats"):
        tf.jit(lambda t, r: tf.repeat(t, r))(x, tf.tensor([1, 2]))
    with pytest.raises(ConcretizationError, match="spacing"):
        tf.jit(lambda t, h: tf.gradient(t, h))(x, tf.tensor(0.5))


@pytest.mark.parametrize("call,match", [
    (lambda x: tf.vsplit(x, 2), "equal parts"),
    (lambda x: tf.split(x, 2, axis=1), "equal parts"),
    (lambda x: tf.array_split(x, 0), "> 0"),
    (lambda x: tf.pad(x, 1, "linear_ramp"), "not supported"),
    (lambda x: tf.pad(x, 1, "mean"), "not supported"),
    (lambda x: tf.pad(x, 1, "nonsense"), "unknown mode"),
    (lambda x: tf.pad(x, ((1, 2, 3),)), "pad_width"),
    (lambda x: tf.pad(x, 1, "reflect", reflect_type="odd"), "odd"),
    (lambda x: tf.repeat(x, [1, 2]), "repeats"),
    (lambda x: tf.gradient(x, edge_order=3), "edge_order"),
    (lambda x: tf.gradient(x[:1]), "points"),
    (lambda x: tf.cross(x, x), "length 2 or 3"),
    (lambda x: tf.fliplr(x[0]), "2 axes"),
    (lambda x: tf.diff(x, -1), "non-negative"),
    (lambda x: tf.select([x > 0], [x, x]), "choices"),
])
def test_bad_arguments_raise_clear_errors(call, match):
    with pytest.raises(ShapeError, match=match):
        call(tf.tensor(np.ones((3, 5))))
