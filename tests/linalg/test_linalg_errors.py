"""Bad input gets a tenferro error naming the operation, the shapes/dtypes and the fix."""

import numpy as np
import pytest

from chainrules import primitives as P
from tenferro import linalg as la
from tenferro._src.core.dispatch import bind
from tenferro.errors import DTypeError, ShapeError
from tests.linalg._util import T, rand


@pytest.mark.parametrize("fn,name", [(la.eigh, "eigh"), (la.eigvalsh, "eigvalsh"),
                                     (la.cholesky, "cholesky"), (la.inv, "inv"),
                                     (la.det, "det"), (la.slogdet, "slogdet"),
                                     (la.expm, "expm")])
def test_non_square(fn, name, rng):
    with pytest.raises(ShapeError, match=rf"{name}: expected square matrices .*\(4, 3\)"):
        fn(T(rand(rng, (4, 3), "float64")))


@pytest.mark.parametrize("fn,name", [(la.svd, "svd"), (la.qr, "qr"), (la.eigh, "eigh"),
                                     (la.svdvals, "svdvals"), (la.lq, "lq")])
def test_not_a_matrix(fn, name, rng):
    with pytest.raises(ShapeError, match=f"{name}: expected a matrix"):
        fn(T(rand(rng, (4,), "float64")))


def test_solve_shape_errors(rng):
    a = T(rand(rng, (3, 3), "float64"))
    with pytest.raises(ShapeError, match="solve: expected square"):
        la.solve(T(rand(rng, (3, 2), "float64")), T(rand(rng, (3,), "float64")))
    with pytest.raises(ShapeError, match="solve: b of shape"):
        la.solve(a, T(rand(rng, (4, 2), "float64")))
    with pytest.raises(ShapeError, match="solve: b of shape"):
        la.solve(a, T(rand(rng, (4,), "float64")))
    with pytest.raises(ShapeError, match="solve: shapes .* cannot be broadcast"):
        la.solve(T(rand(rng, (2, 3, 3), "float64")), T(rand(rng, (5, 3, 1), "float64")))


@pytest.mark.numpy_only  # array_api_strict cannot even hold float16 arrays
def test_unsupported_dtypes(rng):
    with pytest.raises(DTypeError, match="svd: dtype float16 is not supported"):
        la.svd(T(rand(rng, (3, 3), "float64").astype(np.float16)))


def test_primitive_level_errors(rng):
    a = T(rand(rng, (3, 3), "float64"))
    with pytest.raises(DTypeError, match="svd: expected a float or complex matrix"):
        bind(P.svd_p, T(np.ones((3, 3), dtype=np.int64)), full_matrices=False, eps=0.0)
    with pytest.raises(DTypeError, match="solve: operand dtypes differ"):
        bind(P.solve_p, a, T(rand(rng, (3, 1), "complex128")))
    with pytest.raises(ShapeError, match="solve: batch shapes differ"):
        bind(P.solve_p, T(rand(rng, (2, 3, 3), "float64")), T(rand(rng, (3, 3, 1), "float64")))
    with pytest.raises(ShapeError, match="triangular_solve: the right-hand side"):
        bind(P.triangular_solve_p, a, T(rand(rng, (2, 2), "float64")), left_side=True,
             lower=True, transpose_a=False, conjugate_a=False)
    with pytest.raises(ShapeError, match="expm_frechet: .*batch shapes differ"):
        bind(P.expm_frechet_p, a, T(rand(rng, (1, 3, 3), "float64")))


def test_option_errors(rng):
    a = T(rand(rng, (3, 3), "float64"))
    with pytest.raises(ShapeError, match="qr: mode"):
        la.qr(a, mode="raw")
    with pytest.raises(ShapeError, match="lq: mode"):
        la.lq(a, mode="r")
    with pytest.raises(ShapeError, match="eps must be"):
        la.svd(a, eps=-1.0)
    with pytest.raises(ShapeError, match="norm: unsupported matrix norm"):
        la.norm(a, ord=3)
    with pytest.raises(ShapeError, match="norm: ord='nuc' is a matrix norm"):
        la.norm(a, ord="nuc", axis=0)
    with pytest.raises(ShapeError, match="norm: ord=2 needs a 1-D or 2-D input"):
        la.norm(T(rand(rng, (2, 2, 2), "float64")), ord=2)
    with pytest.raises(ShapeError, match="norm: invalid matrix axes"):
        la.norm(a, axis=(0, 0))
