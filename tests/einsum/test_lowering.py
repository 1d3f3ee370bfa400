"""What einsum lowers to: BLAS-shaped dot_generals, hyper-edges kept as batch dimensions,
reductions before contractions, no needless copies."""

import numpy as np
import pytest

import tenferro as tf
from tenferro._src.backends import get_backend
from tenferro._src.contract.api import get_plan
from tests.einsum.problems import random_arrays


def _instrs(eq, *shapes, optimize="auto"):
    plan, _, _ = get_plan("einsum", (eq, *shapes), optimize, mode="shapes")
    return [(p.name, params) for p, _, params, _, _ in plan.lowered(False).instrs]


def _dots(instrs):
    return [params["dimension_numbers"] for name, params in instrs if name == "dot_general"]


def test_matrix_chain_is_plain_dot_generals():
    instrs = _instrs("ij,jk,kl->il", (3, 4), (4, 5), (5, 6))
    assert [n for n, _ in instrs] == ["dot_general", "dot_general"]
    for (c, b) in _dots(instrs):
        assert b == ((), ()) and len(c[0]) == 1


def test_hyper_edge_surviving_a_step_is_a_batch_dimension():
    """b is shared by three operands: the first product keeps it as a batch axis (it is
    still needed by the third operand) instead of contracting it early."""
    instrs = _instrs("bij,bjk,bkl->il", (5, 2, 3), (5, 3, 4), (5, 4, 2), optimize=False)
    first, second = _dots(instrs)
    assert len(first[1][0]) == 1  # one batch axis (b) ...
    assert len(first[0][0]) == 1  # ... and j contracted
    assert second[1] == ((), ())  # finally b is contracted together with k
    assert len(second[0][0]) == 2
    instrs = _instrs("bij,bjk,bkl->bil", (5, 2, 3), (5, 3, 4), (5, 4, 2))
    assert all(len(b[0]) == 1 for _, b in _dots(instrs))  # b is an output label: batch


def test_hyper_edge_without_contraction_is_an_elementwise_product():
    instrs = _instrs("ij,ij->ij", (30, 40), (30, 40))
    assert [n for n, _ in instrs] == ["mul"]
    instrs = _instrs("bi,bj->bij", (3, 4), (3, 5))
    assert "dot_general" not in [n for n, _ in instrs]


def test_single_operand_labels_are_summed_before_contracting():
    instrs = _instrs("ij,jk->i", (3, 4), (4, 5))
    assert [n for n, _ in instrs] == ["reduce_sum", "dot_general"]


def test_size_one_axes_are_squeezed():
    instrs = _instrs("aib,bj->ij", (1, 3, 4), (4, 5))
    assert [n for n, _ in instrs] == ["reshape", "dot_general"]
    # and re-inserted in the output
    assert _instrs("ai,ij->aj", (1, 3), (3, 4))[-1][0] == "reshape"


def test_diagonal_primitive_for_repeated_indices():
    names = [n for n, _ in _instrs("iij->j", (3, 3, 4))]
    assert names == ["transpose", "diagonal", "reduce_sum"]


def test_output_order_chosen_to_avoid_a_final_transpose():
    names = [n for n, _ in _instrs("ij,jk->ki", (3, 4), (4, 5))]
    assert names == ["dot_general"]


@pytest.mark.numpy_only  # inspects NumPy memory sharing
def test_pairwise_steps_reach_blas_without_copying_inputs(monkeypatch):
    """dot_general's impl permutes (a view), reshapes each operand to (batch, rows, cols) and
    calls matmul; the reshape copies whenever an axis group is not one contiguous run in the
    requested order, and matmul copies a matrix without a unit stride. The planner orders
    axes so that C-contiguous inputs are copied by neither in these common contractions."""
    xp = get_backend("cpu").xp
    copied = []
    real_reshape, real_matmul = xp.reshape, xp.matmul

    def reshape(x, shape):
        out = real_reshape(x, shape)
        if x.size > 1 and not np.shares_memory(out, x):
            copied.append(("reshape", x.shape, x.strides, shape))
        return out

    def matmul(a, b):
        for m in (a, b):
            s = m.strides[-2:]
            if m.size > 1 and m.itemsize not in s and 1 not in m.shape[-2:]:
                copied.append(("matmul", m.shape, m.strides))
        return real_matmul(a, b)

    monkeypatch.setattr(xp, "reshape", reshape)
    monkeypatch.setattr(xp, "matmul", matmul)
    cases = [
        ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
        ("abc,bcd->ad", [(2, 3, 4), (3, 4, 5)]),
        ("abc,dbc->ad", [(2, 3, 4), (5, 3, 4)]),
        ("abc,cde,efg->abdfg", [(2, 3, 4), (4, 5, 6), (6, 2, 3)]),
        ("ij,kj->ik", [(3, 4), (5, 4)]),
    ]
    for eq, shapes in cases:
        arrays = random_arrays(shapes, np.float64, 0)
        tf.einsum.cache_clear()
        got = tf.einsum(eq, *[tf.tensor(a) for a in arrays])
        np.testing.assert_allclose(got.numpy(), np.einsum(eq, *arrays), rtol=1e-12)
        assert not copied, (eq, copied)
    # the spy sees the copies it is meant to catch
    a = tf.tensor(np.ones((3, 4, 5)))
    tf.einsum("abc,bd->acd", a, tf.tensor(np.ones((4, 6))), optimize=[(0, 1)])
    assert copied, "a contraction over a middle axis must copy (the spy is blind otherwise)"


def test_plan_is_shape_only_and_lowered_per_gradient_need():
    """One cached plan (path) per subscripts and shapes; the reverse-pass-aware lowering
    (operands requiring grad) is a second program inside it; both give the same values."""
    arrays = random_arrays([(4, 5), (5, 6), (6, 4)], np.float64, 1)
    tf.einsum.cache_clear()
    plain = tf.einsum("ij,jk,ki->", *[tf.tensor(a) for a in arrays])
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
    rec = tf.einsum("ij,jk,ki->", *leaves)
    assert tf.einsum.cache_info().misses == 1
    plan = tf.contract_path("ij,jk,ki->", *arrays)
    assert set(plan._lowered) == {False, True}
    with tf.no_grad():
        tf.einsum("ij,jk,ki->", *leaves)
    assert tf.einsum.cache_info().misses == 1  # no_grad: the plain program again
    np.testing.assert_allclose(plain.numpy(), rec.detach().numpy(), rtol=1e-14)
