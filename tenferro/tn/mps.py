"""Matrix product states for open chains, written only with tenferro's public operations.

Conventions (see ``design/mps.md``):

* an MPS is a Python list of ``L`` rank-3 tensors ``A[i][left, phys, right]`` with boundary
  bonds of dimension 1, so ``psi[s_1 ... s_L] = A_1[:, s_1, :] @ ... @ A_L[:, s_L, :]``. A list
  is a pytree: ``grad``/``vjp``/``jit`` take and return MPSs without any wrapping;
* an MPO is a list of rank-4 tensors ``W[i][left, right, phys_out, phys_in]`` (boundary bonds of
  dimension 1), built by ``tenferro.tn.mpo``;
* the basis of the dense vector is the C (row-major) order of ``s_1 ... s_L``, site 1 slowest,
  as ``numpy.kron`` builds it.

Everything here is differentiable to any order, real or complex, eager or jitted: canonical
forms come from ``tenferro.linalg.qr(..., positive=True)`` (the unique QR of a full-rank
matrix, so a canonical form is a smooth function of the tensors), truncation from
``tenferro.linalg.svd(max_rank=, cutoff=)``. Only a truncation by ``cutoff`` looks at data and
cannot be traced with ``tenferro.jit`` (use ``max_rank`` alone there).

Contractions use explicit einsum paths that keep every step at O(D^3 d w): one evaluation of
``mpo_expectation`` costs O(L (2 D^3 d w + D^2 d^2 w^2)) with D the bond dimension, d the local
and w the MPO dimension.
"""

from tenferro._src.tn.mps import *  # noqa: F403
from tenferro._src.tn.mps import __all__  # noqa: F401
