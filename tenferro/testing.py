"""Numerical checks of derivatives, for tests and for users writing their own functions.

All checks compare scalar projections in float64/complex128 arithmetic:

* ``check_jvp``: forward mode vs central finite differences along random tangents;
* ``check_vjp``: reverse mode vs forward mode (the dot-product identity
  <ct, J t> = <J^T ct, t> under <a, b> = Re sum conj(a) b) and vs finite differences;
* ``check_transpose``: a linear function vs its ``linear_transpose``;
* ``check_grads``: the above, to a given order (derivatives of derivatives).
"""

from tenferro._src.testing import *  # noqa: F403
from tenferro._src.testing import __all__  # noqa: F401
