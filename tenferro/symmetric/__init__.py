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
* ``dmrg``: two-site DMRG with the symmetry (``mpo_from_dense`` turns a dense MPO and the
  charges of the local states into a symmetric MPO).
* C4v CTMRG with symmetric corners and edges (self-dual charges such as Z2):
  ``tenferro.tn.ctmrg`` runs it when given a symmetric site tensor.

Every block is an ordinary tenferro tensor, so every derivative is the dense rule applied
block by block (design/symmetric.md).
"""

from tenferro._src.symmetric import *  # noqa: F403
from tenferro._src.symmetric import __all__  # noqa: F401
