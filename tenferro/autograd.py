"""``tenferro.autograd``: PyTorch's ``torch.autograd`` names, for ported code.

``grad`` is ``tenferro.autograd_grad`` (gradients of outputs with respect to given tensors,
from the eager tape). ``Function`` is ``torch.autograd.Function`` written on
``tenferro.custom_vjp``: a subclass's static ``forward(ctx, *args)`` and
``backward(ctx, *grad_outputs)`` become the function and its reverse-mode rule, so it works
on the eager tape and also under ``grad``/``vjp``/``jit`` and (when ``backward`` is linear in
the cotangents, as a correct derivative is) in forward mode.
"""

from tenferro._src.autograd import *  # noqa: F403
from tenferro._src.autograd import __all__  # noqa: F401
