"""``tenferro.symmetric``: abelian symmetric (block-sparse) tensors with automatic
differentiation, eager and traced.

* groups: ``U1``, ``Zn`` (``Z2``), ``product(...)`` (U(1) x U(1), U(1) x Z2, ...);
* ``Leg`` (charge sectors, dimensions, direction), ``leg_from_charges``;
* ``SymmetricTensor``: a dict of dense blocks keyed by charge tuples (a pytree: ``grad``,
  ``jit``, ``custom_vjp`` take and return it); ``from_dense``/``to_dense``, ``random``,
  ``zeros``, ``conj``, ``transpose``, scalar ops, ``+``/``-``, ``norm``, ``inner``;
* contractions: ``tensordot``, ``einsum``, ``ncon`` (matching sectors; plans cached);
* ``fuse_legs``/``split_legs``; block-wise ``svd`` (truncation on the merged spectrum),
  ``qr``, ``eigh``;
* ``dmrg``: two-site DMRG with the symmetry (``symmetric_mpo`` from a dense MPO).
* ``tenferro.symmetric.ctmrg``: C4v CTMRG with symmetric corners and edges (self-dual
  charges such as Z2); ``tenferro.tn.ctmrg`` dispatches to it on a symmetric site tensor.

Every block is an ordinary tenferro tensor, so every derivative is the dense rule applied
block by block (design/symmetric.md).
"""

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
from .dmrg import dmrg, mpo_from_dense  # noqa: E402  (after the names it uses)
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
