"""``tenferro.optim``: PyTorch's optimizers (``SGD``, ``Adam``, ``AdamW``, ``LBFGS``) for eager
tensors: ``opt.zero_grad(); loss.backward(); opt.step()`` (``step(closure)`` for L-BFGS).
Updates happen in place under ``no_grad``; complex parameters follow PyTorch's conventions (see
``Optimizer``). See design/nn.md."""

from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["LBFGS", "SGD", "Adam", "AdamW", "Optimizer"]
