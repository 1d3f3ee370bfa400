"""``tenferro.special``: special functions with SciPy's names (``scipy.special``).

Primitives (``chainrules.primitives.special``), each with its derivative: ``erf``, ``erfc``,
``erfinv``, ``erfcinv``, ``gammaln``, ``gamma``, ``rgamma``, ``digamma``/``psi``/``polygamma``,
``xlogy``, ``beta``, ``betaln``, the regularized incomplete functions ``gammainc``,
``gammaincc``, ``betainc``, ``betaincc`` (derivative in x only: one in the shape parameters
raises ``GradientError`` naming the argument), and the Bessel functions ``jn``/``j0``/``j1``,
``yn``/``y0``/``y1`` (integer order), ``iv``/``ive``/``i0``/``i1`` (real order), whose order is
a static Python number. Compositions: ``expit``, ``logit``, ``logsumexp``, ``gammasgn``,
``multigammaln``, ``xlog1py``.

Backends: SciPy on the NumPy backend, ``cupyx.scipy.special`` on CuPy; ``array_api_strict``
has no special functions, so there they are computed on the host through SciPy and copied
back, explicitly; ``xlogy``, ``expit``, ``logit`` and ``logsumexp`` use array-API operations
only.

Domains follow SciPy (nan/inf outside, no exception). Complex input: ``erf``, ``erfc``,
``expit``, ``logit`` and ``xlogy`` accept it (holomorphic); the others are real functions and
raise ``DTypeError`` for complex input (SciPy's ``loggamma`` and complex ``psi`` are not
provided).
"""

from tenferro._src.special import *  # noqa: F403
from tenferro._src.special import __all__  # noqa: F401
