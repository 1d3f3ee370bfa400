"""``tenferro.optim.lr_scheduler``: PyTorch's learning-rate schedulers (``StepLR``,
``MultiStepLR``, ``ExponentialLR``, ``CosineAnnealingLR``, ``LambdaLR``, ``OneCycleLR``,
``ReduceLROnPlateau``, base ``LRScheduler``) with PyTorch's arguments and defaults, driving
``group["lr"]`` of tenferro's optimizers: ``opt.step(); sched.step()``. Rates equal PyTorch's
(the same chainable update rules); ``state_dict()`` is plain Python values."""

from tenferro._src.optim.lr_scheduler import *  # noqa: F403
from tenferro._src.optim.lr_scheduler import __all__  # noqa: F401
