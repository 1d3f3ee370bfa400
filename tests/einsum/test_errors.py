"""Every user mistake raises a tenferro error that names the problem."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.errors import ShapeError, TenferroError


def _t(*shape):
    return tf.tensor(np.ones(shape))


def test_wrong_number_of_operands():
    with pytest.raises(ShapeError, match="describe 2 operand.* but 3 were given"):
        tf.einsum("ij,jk->ik", _t(2, 3), _t(3, 4), _t(4, 5))
    with pytest.raises(ShapeError, match="describe 3 operand.* but 2 were given"):
        tf.einsum("ij,jk,kl->il", _t(2, 3), _t(3, 4))
    with pytest.raises(ShapeError, match="at least one operand"):
        tf.einsum("ij")
    with pytest.raises(ShapeError, match="needs subscripts"):
        tf.einsum()


def test_index_size_mismatch_names_index_sizes_and_operands():
    with pytest.raises(ShapeError) as e:
        tf.einsum("ij,jk->ik", _t(2, 3), _t(4, 5))
    msg = str(e.value)
    for part in ("index 'j'", "size 3 in operand 0 (axis 1)", "size 4 in operand 1 (axis 0)",
                 "(2, 3), (4, 5)"):
        assert part in msg, msg
    with pytest.raises(ShapeError, match="index 7 has size 3 in operand 0"):
        tf.einsum(_t(2, 3), [0, 7], _t(4, 5), [7, 1])
    with pytest.raises(ShapeError, match="broadcast dimension -1 of '...'"):
        tf.einsum("...i,...i->...", _t(2, 3), _t(4, 3))
    with pytest.raises(ShapeError, match="repeated in operand 0 .* sizes 2 .* and 3"):
        tf.einsum("ii->i", _t(2, 3))


@pytest.mark.parametrize(
    "eq,shapes,match",
    [
        ("ij->ii", [(2, 2)], "appears more than once"),
        ("ij->k", [(2, 2)], "does not appear in any input"),
        ("ij->i->j", [(2, 2)], "more than once"),
        ("i.j", [(2, 2)], "'.' is only allowed"),
        ("ij>i", [(2, 2)], "invalid character '>'"),
        ("i-j", [(2, 2)], "invalid character '-'"),
        ("......i", [(2, 2)], "more than one '...'"),
        ("ijk", [(2, 2)], "rank 2.* name 3 indices"),
        ("i", [(2, 2)], "rank 2.* name 1 indices"),
        ("...ijk", [(2, 2)], "name 3 indices besides '...'"),
        ("...i->i", [(2, 3)], "no '...'"),
    ],
)
def test_bad_subscripts(eq, shapes, match):
    with pytest.raises(ShapeError, match=match):
        tf.einsum(eq, *[_t(*s) for s in shapes])


def test_bad_interleaved_arguments():
    with pytest.raises(ShapeError, match="must be a list of labels"):
        tf.einsum(_t(2, 2), "ij")
    with pytest.raises(ShapeError, match="hashable"):
        tf.einsum(_t(2, 2), [[0], 1])
    with pytest.raises(ShapeError, match="operand, sublist pairs"):
        tf.einsum(_t(2, 2))


def test_unknown_optimize_option():
    with pytest.raises(ShapeError, match="unknown optimize option 'fastest'.*'greedy'"):
        tf.einsum("ij,jk->ik", _t(2, 3), _t(3, 4), optimize="fastest")
    with pytest.raises(ShapeError, match="unknown optimize option"):
        tf.einsum("ij,jk->ik", _t(2, 3), _t(3, 4), optimize=3.5)
    with pytest.raises(ShapeError, match="unknown optimize option"):
        tf.contract_path("ij,jk->ik", _t(2, 3), _t(3, 4), optimize="fastest")


def test_invalid_paths():
    args = ("ij,jk,kl->il", _t(2, 3), _t(3, 4), _t(4, 5))
    with pytest.raises(ShapeError, match="leaves 2 operands uncontracted"):
        tf.einsum(*args, optimize=[(0, 1)])
    with pytest.raises(ShapeError, match="distinct positions"):
        tf.einsum(*args, optimize=[(0, 3), (0, 1)])
    with pytest.raises(ShapeError, match="distinct positions"):
        tf.einsum(*args, optimize=[(0, 0), (0, 1)])
    with pytest.raises(ShapeError, match="tuple of operand positions"):
        tf.einsum(*args, optimize=[("a", "b")])


def test_errors_are_tenferro_errors_and_value_errors():
    with pytest.raises(TenferroError):
        tf.einsum("ij,jk->ik", _t(2, 3), _t(4, 5))
    with pytest.raises(ValueError):
        tf.einsum("ij,jk->ik", _t(2, 3), _t(4, 5))
