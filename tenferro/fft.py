"""``tenferro.fft``: discrete Fourier transforms with NumPy's names, signatures and defaults.

Every transform is linear, so its derivative is the transform itself and reverse mode applies
the adjoint (the primitives ``fft``, ``rfft`` and ``irfft`` of ``chainrules.primitives.fft``,
whose transposes carry the Hermitian weighting of the half spectrum). The complex convention is
tenferro's: the gradient of a real loss L with respect to complex input z is
dL/dRe z + i dL/dIm z. ``n``/``s`` crop or zero-pad the input before transforming, as NumPy;
``norm`` is "backward" (default, None), "ortho" or "forward".

Real input to ``fft``/``ifft`` is promoted to complex (float32 -> complex64, integers ->
complex128); ``rfft`` of complex input raises ``DTypeError`` (as NumPy's TypeError);
``irfft`` of real input treats it as a real spectrum. Not supported: ``out=``, repeated
axes in ``fftn``-style functions (``ShapeError``); the Hermitian ``hfft``/``ihfft``.
"""

from tenferro._src.fft import *  # noqa: F403
from tenferro._src.fft import __all__  # noqa: F401
