"""Exact real-time dynamics of the open transverse-field Ising chain by free fermions, and of
any small chain by exact diagonalisation: the references TEBD and TDVP are checked against.

Free fermions. With the Majorana operators (Jordan-Wigner)
``a_{2j-1} = (prod_{k<j} X_k) Z_j``, ``a_{2j} = (prod_{k<j} X_k) Y_j`` (j = 1..L),
``X_j = i a_{2j-1} a_{2j}`` and ``Z_j Z_{j+1} = i a_{2j} a_{2j+1}``, so
``H = -J sum Z_j Z_{j+1} - g sum X_j = (i/4) sum_kl A_kl a_k a_l`` with A real antisymmetric
(``A_{2j-1,2j} = -2g``, ``A_{2j,2j+1} = -2J``). Heisenberg's equation gives
``a(t) = exp(A t) a(0)``, so the correlation matrix ``G_kl = <a_k a_l>`` evolves as
``G(t) = R G(0) R^T`` with ``R = exp(A t)`` orthogonal, for *any* initial state (not only
Gaussian ones): ``<X_j>(t) = i G_{2j-1,2j}`` and ``<Z_j Z_{j+1}>(t) = i G_{2j,2j+1}``.
Cost O(L^3) per time, exact to rounding.
"""

from tenferro._src.tn.exact_dynamics import *  # noqa: F403
from tenferro._src.tn.exact_dynamics import __all__  # noqa: F401
