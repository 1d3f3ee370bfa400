"""``tenferro.interop``: explicit hooks into consumer libraries whose extension points need a
call (everything else crosses with no call at all: the array API namespace serves
array_api_compat, SciPy, scikit-learn and einops, autoray serves quimb and cotengra, einops'
backend is registered at import; design/interop.md).

* ``tenferro.interop.quimb.register()``: ``TNOptimizer(..., autodiff_backend="tenferro")``.
"""

from tenferro.interop import quimb

__all__ = ["quimb"]
