"""Implementation of ``tenferro.optim`` (its docstring is the user documentation)."""

from . import lr_scheduler
from .adam import Adam, AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["LBFGS", "SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
