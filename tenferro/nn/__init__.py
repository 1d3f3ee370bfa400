"""``tenferro.nn``: PyTorch-style neural-network building blocks on tenferro tensors.

``tenferro.nn.functional`` holds the functions (``torch.nn.functional``'s names and
conventions); this namespace holds ``Parameter``, ``Module``, the layers, the loss modules and
``functional_call`` (run a module with given parameters: how ``grad``/``jit`` see a model).
See design/nn.md.
"""

from . import functional
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all

__all__ = sorted(["functional", *_modules_all])
del _modules_all
