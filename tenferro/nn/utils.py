"""``tenferro.nn.utils``: PyTorch's ``torch.nn.utils`` helpers (``clip_grad_norm_``,
``clip_grad_value_``, ``parameters_to_vector``, ``vector_to_parameters``) with PyTorch's
arguments, defaults and values, on eager tensors and their ``.grad``."""

from tenferro._src.nn.utils import *  # noqa: F403
from tenferro._src.nn.utils import __all__  # noqa: F401
