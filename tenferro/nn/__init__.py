"""``tenferro.nn``: PyTorch-style neural-network building blocks on tenferro tensors.

``tenferro.nn.functional`` holds the functions (``torch.nn.functional``'s names and
conventions); this namespace holds ``Parameter``, ``Module``, the layers, the loss modules and
``functional_call`` (run a module with given parameters: how ``grad``/``jit`` see a model);
``tenferro.nn.utils`` the gradient-clipping and parameter-vector helpers.
See design/nn.md.
"""

from tenferro._src.nn import *  # noqa: F403
from tenferro._src.nn import __all__  # noqa: F401

from . import functional, utils  # noqa: E402  (the public facades, not the implementations)
