"""``tenferro.integrate``: ``odeint`` (JAX's signature ``odeint(func, y0, t, *args, rtol,
atol, mxstep, hmax)``), adaptive Dormand-Prince RK45 whose gradients with respect to ``y0``,
``t`` and ``args`` come from the adjoint method: memory does not grow with the number of
steps."""

from tenferro._src.integrate import *  # noqa: F403
from tenferro._src.integrate import __all__  # noqa: F401
