"""Exact reference results the tensor-network algorithms are checked against.

* Onsager's solution of the 2D Ising model (J = 1, h = 0): ln Z per site, energy and
  specific heat per site, from the standard elliptic-integral forms (and a quadrature form of
  ln Z as a cross-check).
* The open transverse-field Ising chain H = -J sum Z_i Z_{i+1} - g sum X_i via free fermions.
* Exact diagonalisation of small spin chains with scipy.sparse.
"""

from tenferro._src.tn.exact import *  # noqa: F403
from tenferro._src.tn.exact import __all__  # noqa: F401
