"""Bad arguments to the symmetric-tensor functions raise named errors from
``tenferro.errors``: axes out of range are never wrapped, sector dimensions are never
rounded, per-sector ranks must name sectors, and non-symmetric operands are named."""

import pytest

import tenferro as tf
import tenferro.symmetric as S
from tenferro.errors import DTypeError, ShapeError

pytestmark = pytest.mark.numpy_only  # argument checks: the same code on every backend

LEG = S.Leg(S.U1, ((0, 2), (1, 1)))


@pytest.fixture
def a():
    return S.random([LEG, LEG.flip()], seed=0)


@pytest.mark.parametrize("axes, match", [(([5], [0]), "axis 5 of x's axes .* out of range"),
                                         (([0], [-3]), "axis -3 of y's axes .* out of range"),
                                         (([1, 1], [0, 0]), "names an axis twice"),
                                         (3, "axes=3 .* must lie in 0..2")])
def test_tensordot_axes_out_of_range_are_errors(a, axes, match):
    """a's legs are (LEG, LEG.flip()): axis 5 wrapped to 1 would contract (silently)."""
    assert S.tensordot(a, a, ([1], [0])).ndim == 2
    with pytest.raises(ShapeError, match=f"symmetric.tensordot: .*{match}"):
        S.tensordot(a, a, axes)


def test_axes_elsewhere_are_never_wrapped(a):
    with pytest.raises(ShapeError, match=r"fuse_legs: axis 5 of axes \(0, 5\) is out of range"):
        S.fuse_legs(a, [0, 5])
    with pytest.raises(DTypeError, match="fuse_legs: axis .* is not an integer axis"):
        S.fuse_legs(a, [[0, 5]])
    with pytest.raises(ShapeError, match="transpose: axis 5 .* out of range"):
        a.transpose(0, 5)
    with pytest.raises(ShapeError, match="split_legs: axis=5 is out of range"):
        S.split_legs(a, 5)
    with pytest.raises(ShapeError, match=r"symmetric.svd: axis 2 of row_axes \(2,\)"):
        S.svd(a, [2])
    with pytest.raises(ShapeError, match="symmetric.qr: row_axes=2"):
        S.qr(a, 2)
    # negative axes in range keep NumPy's meaning
    assert S.fuse_legs(a, [-2, -1]).ndim == 1


@pytest.mark.parametrize("dim, error", [(2.5, ShapeError), ("2", DTypeError), (-1.0, ShapeError),
                                        (True, DTypeError), (None, DTypeError)])
def test_sector_dimensions_are_positive_integers(dim, error):
    with pytest.raises(error, match="Leg: the dimension of sector 0 must be a positive integer"):
        S.Leg(S.U1, ((0, dim),))
    with pytest.raises(ShapeError, match="Leg: sector 0 has dimension 0"):
        S.Leg(S.U1, ((0, 0),))


def test_leg_structure():
    assert S.Leg(S.U1, ((0, 2.0),)).dim == 2  # a whole number is one
    with pytest.raises(DTypeError, match="Leg: sectors must be a sequence"):
        S.Leg(S.U1, 5)
    with pytest.raises(ShapeError, match=r"Leg: each sector must be a \(charge, dim\) pair"):
        S.Leg(S.U1, ((0,),))
    with pytest.raises(DTypeError, match="Leg: the symmetry must be a Symmetry"):
        S.Leg("U1", ((0, 1),))


@pytest.mark.parametrize("ranks, match", [
    ({0: -1, 1: 1}, r"sector_ranks\[0\] must be an integer >= 0"),
    ({7: 1}, r"sector_ranks names charges \[7\] that are not sectors of the bond"),
    ({0: 0}, r"sector_ranks \{0: 0\} keeps no singular value"),
    ({0: 1.5}, r"sector_ranks\[0\] must be an integer >= 0"),
    ([1, 1], "sector_ranks must be a dict"),
])
def test_sector_ranks_are_checked(a, ranks, match):
    with pytest.raises((ShapeError, DTypeError), match=f"symmetric.svd: {match}"):
        S.svd(a, 1, sector_ranks=ranks)


def test_sector_ranks_keep_what_they_name(a):
    U, s, Vh = S.svd(a, 1, sector_ranks={0: 1})
    assert U.legs[1].sectors == ((0, 1),)


@pytest.mark.parametrize("call, error, match", [
    (lambda a: S.random(None), DTypeError, "symmetric.random: legs must be a non-empty"),
    (lambda a: S.zeros([LEG, 3]), DTypeError, r"symmetric.zeros: legs\[1\] must be a Leg"),
    (lambda a: S.norm(tf.ones((2, 2))), DTypeError, "symmetric.norm: x must be a "
                                                    "SymmetricTensor.*from_dense"),
    (lambda a: S.to_vector("x"), DTypeError, "to_vector: x must be a SymmetricTensor"),
    (lambda a: S.to_dense(3), DTypeError, "to_dense: x must be a SymmetricTensor"),
    (lambda a: S.inner(a, tf.ones(3)), DTypeError, "symmetric.inner: y must be a"),
    (lambda a: S.from_vector(tf.ones(2), a), ShapeError, "from_vector: expected a vector"),
    (lambda a: S.einsum(3, a), DTypeError, "symmetric.einsum: subscripts must be a string"),
    (lambda a: S.einsum("ab->a->b", a), ShapeError, "one '->'"),
    (lambda a: S.ncon([a, a], [[1, 2], [2, "x"]]), ShapeError, "symmetric.ncon: connects"),
    (lambda a: S.svd(a, 1, max_rank=True), DTypeError, "symmetric.svd: max_rank must be"),
    (lambda a: S.svd(a, 1, max_rank=0), ShapeError, "symmetric.svd: max_rank must be"),
    (lambda a: S.random([LEG], seed="s"), DTypeError, "symmetric.random: seed"),
    (lambda a: S.leg_from_charges("U1", [0, 1]), DTypeError, "leg_from_charges: symmetry"),
    (lambda a: S.from_dense(tf.ones((3, 3)), [LEG, "x"]), DTypeError, r"legs\[1\] must be"),
    (lambda a: S.SymmetricTensor.build([1], [LEG]), DTypeError, "blocks must be a dict"),
    (lambda a: S.diagonal(a.conj()), ShapeError, None),
    (lambda a: S.dmrg("H"), ShapeError, "symmetric MPO tensors"),
    (lambda a: S.mpo_from_dense("H", [0, 1]), DTypeError, "mpo_from_dense: mpo must be"),
])
def test_helpers_name_wrong_arguments(a, call, error, match):
    if match is None:  # a valid call: S of a 2-leg matrix is its diagonal
        assert set(S.diagonal(S.svd(a, 1).S)) == {0, 1}
        return
    with pytest.raises(error, match=match):
        call(a)
