"""``tenferro.signal``: ``convolve`` and ``correlate`` with ``scipy.signal``'s semantics for
N-d arrays (modes "full", "same", "valid"; methods "direct", "fft", "auto"), differentiable in
both inputs, real and complex."""

from tenferro._src.signal import *  # noqa: F403
from tenferro._src.signal import __all__  # noqa: F401
