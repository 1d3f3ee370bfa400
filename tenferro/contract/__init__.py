"""Tensor contraction: N-ary ``einsum`` with cached opt_einsum planning, ``contract_path``
and ``ncon``.

Modules: ``parse`` (subscripts -> labels), ``plan`` (labels + shapes -> a cached static program
of primitives, with the path from opt_einsum), ``execute`` (promote and bind), ``api``
(``einsum``, ``contract_path``), ``ncon``. ``tenferro.tensordot`` lives with the other products
in ``tenferro.ops.products``. Design notes: design/einsum.md.
"""

from .api import cache_clear, cache_info, contract_path, einsum
from .ncon import ncon
from .plan import PathInfo

__all__ = ["einsum", "contract_path", "ncon", "cache_info", "cache_clear", "PathInfo"]
