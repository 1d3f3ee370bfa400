"""``tenferro.nn.functional``: PyTorch's ``torch.nn.functional`` names and conventions.

Every function is a composition of tenferro operations, so it runs in eager mode (on the
tape), under ``grad``/``vjp``/``jvp``/``hvp`` and under ``jit``, and its derivatives of every
order come from the primitives' rules. Layouts are PyTorch's: channels first (``NCHW``),
class scores on axis 1, weights ``(out_features, in_features)`` and ``(out, in/groups, *kernel)``.

Differences from PyTorch are stated in each docstring; the ones that matter:

* convention at non-differentiable points follow PyTorch (``relu'(0) = 0``, ``l1_loss``'s
  ``sign(0) = 0``...), except ``max_pool`` ties, which share the gradient equally (PyTorch
  gives all of it to the first maximal entry);
* ``dropout`` draws its mask from tenferro's generator (``tenferro.manual_seed``), eagerly: under
  ``jit`` pass ``training=False`` or apply a mask you draw outside;
* the default floating dtype of tenferro is float64.

Convolutions and pooling are ``im2col`` (a linear primitive whose transpose is ``col2im``)
followed by one ``dot_general`` or a reduction: see ``design/nn.md``.
"""

from tenferro._src.nn.functional import *  # noqa: F403
from tenferro._src.nn.functional import __all__  # noqa: F401
