"""Implementation of ``tenferro.symmetric`` (its docstring is the user documentation)."""

from . import ctmrg, serialization  # noqa: F401  (tn.ctmrg dispatch; saved graphs)
from .contract import einsum, inner, ncon, tensordot
from .decompositions import (
    SymmetricEighResult,
    SymmetricQRResult,
    SymmetricSVDResult,
    diagonal,
    eigh,
    qr,
    svd,
)
from .dmrg import dmrg, mpo_from_dense
from .fusion import fuse_legs, split_legs
from .groups import U1, Z2, ProductSymmetry, Symmetry, Zn, product
from .legs import Leg, leg_from_charges
from .tensor import (
    SymmetricTensor,
    from_dense,
    from_vector,
    norm,
    random,
    to_dense,
    to_vector,
    zeros,
)

__all__ = [
    "Leg", "ProductSymmetry", "SymmetricEighResult", "SymmetricQRResult", "SymmetricSVDResult",
    "SymmetricTensor", "Symmetry", "U1", "Z2", "Zn", "diagonal", "dmrg", "eigh", "einsum",
    "from_dense", "from_vector", "fuse_legs", "inner", "leg_from_charges", "mpo_from_dense",
    "ncon", "norm", "product", "qr", "random", "split_legs", "svd", "tensordot", "to_dense",
    "to_vector", "zeros",
]
