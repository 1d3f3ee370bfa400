"""Matrix product operators for open spin chains with nearest-neighbour interactions.

Convention: an MPO is a list of ``L`` tensors ``W[i][left, right, phys_out, phys_in]`` with
boundary bonds of dimension 1, so ``H = W_1 W_2 ... W_L`` (a product of operator-valued
matrices) and ``<s'|H|s> = W_1[:, :, s'_1, s_1] @ ... @ W_L[:, :, s'_L, s_L]``.

For ``H = sum_i h_i + sum_i sum_k A^k_i B^k_{i+1}`` the bulk tensor is the standard
upper-triangular finite-state machine of bond dimension w = 2 + (number of bond terms):

    state 0:   nothing placed yet       W[0, 0] = 1,  W[0, 1+k] = A^k,  W[0, w-1] = h
    state 1+k: A^k placed on the site to the left     W[1+k, w-1] = B^k
    state w-1: the term is complete                    W[w-1, w-1] = 1

and the boundaries are row 0 (left end) and column w-1 (right end) of it.
"""

from tenferro._src.tn.mpo import *  # noqa: F403
from tenferro._src.tn.mpo import __all__  # noqa: F401
