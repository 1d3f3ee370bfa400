"""What einsum lowers to: BLAS-shaped dot_generals, hyper-edges kept as batch dimensions,
reductions before contractions, no needless copies."""

import numpy as np
import pytest

import tenferro as tf
from tenferro.backends import get_backend
from tenferro.contract.api import get_plan
from tests.einsum.problems import random_arrays


def _instrs(eq, *shapes, optimize="auto"):
    plan, _ = get_plan("einsum", (eq, *shapes), optimize, None, mode="shapes")
    return [(p.name, params) for p, _, params, _, _ in plan.instrs]


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
    """np.tensordot copies an operand whenever its contracted axes are not one contiguous block
    in the given order; the planner orders axes so that C-contiguous inputs are never copied
    in these common contractions."""
    xp = get_backend("cpu").xp
    copied = []
    real = xp.tensordot

    def spy(a, b, axes):
        la, lb = axes
        for x, ax, first in ((a, la, True), (b, lb, False)):
            rest = [i for i in range(x.ndim) if i not in ax]
            perm = rest + list(ax) if first else list(ax) + rest
            m = int(np.prod([x.shape[i] for i in perm[: len(rest) if first else len(ax)]]))
            if not np.shares_memory(x.transpose(perm).reshape(m, -1), x):
                copied.append((x.shape, ax))
        return real(a, b, axes)

    monkeypatch.setattr(xp, "tensordot", spy)
    cases = [
        ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
        ("abc,bcd->ad", [(2, 3, 4), (3, 4, 5)]),
        ("abc,dbc->ad", [(2, 3, 4), (5, 3, 4)]),
        ("abc,cde,efg->abdfg", [(2, 3, 4), (4, 5, 6), (6, 2, 3)]),
        ("ij,kj->ik", [(3, 4), (5, 4)]),
    ]
    for eq, shapes in cases:
        arrays = random_arrays(shapes, np.float64, 0)
        got = tf.einsum(eq, *[tf.tensor(a) for a in arrays])
        np.testing.assert_allclose(got.numpy(), np.einsum(eq, *arrays), rtol=1e-12)
        assert not copied, (eq, copied)


def test_plan_is_shape_only_and_cached_per_gradient_need():
    """The reverse-pass-aware plan (operands requiring grad) is a separate cache entry; both
    give the same values."""
    arrays = random_arrays([(4, 5), (5, 6), (6, 4)], np.float64, 1)
    tf.einsum.cache_clear()
    plain = tf.einsum("ij,jk,ki->", *[tf.tensor(a) for a in arrays])
    leaves = [tf.tensor(a, requires_grad=True) for a in arrays]
    rec = tf.einsum("ij,jk,ki->", *leaves)
    assert tf.einsum.cache_info().misses == 2
    with tf.no_grad():
        tf.einsum("ij,jk,ki->", *leaves)
    assert tf.einsum.cache_info().misses == 2  # no_grad: the plain plan again
    np.testing.assert_allclose(plain.numpy(), rec.detach().numpy(), rtol=1e-14)
