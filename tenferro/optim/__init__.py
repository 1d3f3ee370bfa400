"""``tenferro.optim``: PyTorch's optimizers (``SGD``, ``Adam``, ``AdamW``, ``LBFGS``) for eager
tensors: ``opt.zero_grad(); loss.backward(); opt.step()`` (``step(closure)`` for L-BFGS).
Updates happen in place under ``no_grad``; complex parameters follow PyTorch's conventions (see
``Optimizer``). ``tenferro.optim.lr_scheduler`` holds PyTorch's learning-rate schedulers. See
design/nn.md."""

from tenferro._src.optim import *  # noqa: F403
from tenferro._src.optim import __all__  # noqa: F401

from . import lr_scheduler  # noqa: E402  (the public facade, not the implementation)
