"""``tenferro.interop.quimb``: tenferro as the autodiff backend of quimb's ``TNOptimizer``.

After ``tenferro.interop.quimb.register()``, ``qtn.TNOptimizer(tn, loss_fn, ...,
autodiff_backend="tenferro")`` differentiates the loss with tenferro, compiled by ``jit``
(``jit_fn=False`` to run eagerly). quimb's tensor-network code itself needs no registration:
it runs on tenferro tensors through autoray.
"""

from tenferro._src.interop.quimb_backend import *  # noqa: F403
from tenferro._src.interop.quimb_backend import __all__  # noqa: F401
