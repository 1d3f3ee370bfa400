"""User mistakes raise the project's own exceptions, naming the op and the shapes/dtypes."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import DTypeError, GradientError, ShapeError, TenferroError


def test_mismatched_shapes_name_op_and_shapes():
    with pytest.raises(ShapeError) as e:
        tf.ones((2, 3)) + tf.ones((3, 2))
    msg = str(e.value)
    assert "add" in msg and "(2, 3)" in msg and "(3, 2)" in msg and "broadcast" in msg


def test_matmul_inner_dimension():
    with pytest.raises(ShapeError, match=r"matmul: inner dimensions differ.*\(2, 3\).*\(4, 5\)"):
        tf.ones((2, 3)) @ tf.ones((4, 5))


def test_reshape_error():
    with pytest.raises(ShapeError, match=r"reshape.*f64\[2,3\].*\(4,\)"):
        tf.ones((2, 3)).reshape(4)


def test_dtype_errors():
    with pytest.raises(DTypeError, match="complex"):
        tf.maximum(tf.ones(2, tf.complex128), 1.0)
    with pytest.raises(DTypeError, match="neg.*bool"):
        -tf.tensor([True])
    with pytest.raises(DTypeError, match="gather: indices must be integers"):
        from chainrules import primitives as P
        from tenferro._src.core.dispatch import bind

        bind(P.gather_p, tf.ones(3), tf.ones(2), axis=0)


def test_primitive_level_errors_are_validated():
    from chainrules import primitives as P
    from tenferro._src.core.dispatch import bind

    with pytest.raises(ShapeError, match=r"add: operand shapes differ \(f64\[2\], f64\[3\]\)"):
        bind(P.add_p, tf.ones(2), tf.ones(3))
    with pytest.raises(ShapeError, match="dot_general: contracting axis 1 of the lhs has size 3"):
        bind(P.dot_general_p, tf.ones((2, 3)), tf.ones((4, 5)),
             dimension_numbers=(((1,), (0,)), ((), ())))


def test_backward_errors():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(GradientError, match=r"one-element outputs; got f64\[2\]"):
        (x * 2).backward()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(GradientError, match="second time"):
        y.backward()


def test_mutation_of_saved_tensor():
    x = tf.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = tf.sin(h).sum()
    h[0] = 3.0
    with pytest.raises(GradientError, match=r"sin: a tensor needed for the gradient \(f64\[2\]\)"):
        y.backward()


def test_all_errors_share_the_hierarchy():
    for cls in (ShapeError, DTypeError, GradientError):
        assert issubclass(cls, TenferroError)
    assert issubclass(ShapeError, ValueError) and issubclass(DTypeError, TypeError)


def test_item_on_non_scalar():
    with pytest.raises(ShapeError, match="one-element"):
        tf.ones(3).item()
    assert tf.tensor([[2.5]]).item() == 2.5
    np.testing.assert_array_equal(np.asarray(tf.ones(2)), [1.0, 1.0])


@pytest.mark.parametrize("bad", [
    lambda x: tf.lax.transpose(x, permutation=(0, 0)),
    lambda x: tf.lax.reshape(x, new_sizes=(4,)),
    lambda x: tf.lax.reduce_sum(x, axes=(2,)),
    lambda x: tf.lax.reduce_prod(x, axes=(0, 0)),
    lambda x: tf.lax.basic_index(x, spec=(5, (0, 3, 1))),
    lambda x: tf.lax.mul(x, tf.ones((3, 2))),
], ids=["transpose", "reshape", "reduce_sum", "reduce_prod", "basic_index", "mul"])
def test_unvalidated_eager_primitives_still_name_the_problem(bad, monkeypatch):
    """Primitives with validate_eager=False skip abstract_eval in eager mode (their impl
    rejects bad input); the error the user sees is still abstract_eval's, not NumPy's."""
    from tenferro._src.core import eager

    monkeypatch.setattr(eager, "CHECK", False)
    with pytest.raises(tf.errors.ShapeError):
        bad(tf.tensor(np.ones((2, 3))))


def test_error_classes_are_reported_as_tenferro_errors():
    """Every public error and warning class says it is ``tenferro.errors.X`` (tracebacks,
    repr, help), also those defined in ``chainrules.errors``; ``except`` clauses naming
    either module catch the same class, and pickled errors load back as that class."""
    import pickle

    import chainrules.errors
    import tenferro.errors as E

    for name in E.__all__:
        cls = getattr(E, name)
        assert (cls.__module__, cls.__qualname__) == ("tenferro.errors", name)
        e = cls(2, "msg", "path") if name == "GraphFileError" else cls("msg")
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is cls and str(back) == "msg"
    assert chainrules.errors.DeviceError is E.DeviceError
    with pytest.raises(chainrules.errors.DeviceError) as info:
        tf.ones(2, device="nowhere")
    assert type(info.value).__module__ == "tenferro.errors"


def test_graph_file_errors_pickle_with_their_oserror_kind():
    import pickle

    from tenferro.errors import GraphFileError

    e = GraphFileError.like(PermissionError(13, "denied"), "cannot read g.tf", "g.tf")
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e) and isinstance(back, PermissionError)
    assert (back.errno, back.filename, str(back)) == (13, "g.tf", "cannot read g.tf")
