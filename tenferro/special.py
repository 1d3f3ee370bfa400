"""``tenferro.special``: special functions with SciPy's names (``scipy.special``).

``erf``, ``erfc``, ``erfinv``, ``gammaln``, ``digamma``/``polygamma`` and ``xlogy`` are
primitives (``chainrules.primitives.special``) with their derivatives; ``expit``, ``logit`` and
``logsumexp`` are compositions. Backends: SciPy on the NumPy backend, ``cupyx.scipy.special``
on CuPy; ``array_api_strict`` has no special functions, so there they are computed on the host
through SciPy and copied back, explicitly; ``xlogy``, ``expit``, ``logit`` and ``logsumexp``
use array-API operations only.

Domains follow SciPy (nan/inf outside, no exception). Complex input: ``erf``, ``erfc``,
``expit``, ``logit`` and ``xlogy`` accept it (holomorphic); ``erfinv``, ``gammaln``,
``digamma`` and ``polygamma`` are real functions and raise ``DTypeError`` for complex input
(SciPy's ``loggamma`` and complex ``psi`` are not provided).
"""

from tenferro._src.special import *  # noqa: F403
from tenferro._src.special import __all__  # noqa: F401
