"""Tensor contraction: N-ary ``einsum`` with cached, effort-scaled path planning and slicing,
``contract_path`` and ``ncon``.

Modules: ``parse`` (subscripts -> labels), ``problem`` (labels + shapes -> the reduced problem
a path is planned on), ``options`` (validating optimize / max_memory / max_time), ``search``
(the path search: exact, random-greedy, cotengra), ``slicing`` (choosing and running slices),
``costs`` (FLOPs and sizes of a path), ``memory`` (peak-memory model), ``plan``
(``ContractionPlan`` and the lowering to a static program of primitives), ``lower`` /
``layout`` / ``recorder`` (pairwise products as BLAS-friendly ``dot_general``), ``cache``
(in-memory LRU and on-disk plans), ``execute`` (promote and bind), ``api`` (``einsum``,
``contract_path``), ``ncon``. ``tenferro.tensordot`` lives with the other products in
``tenferro.ops.products``. Design notes: design/einsum.md.
"""

from .api import cache_clear, cache_info, contract_path, einsum
from .ncon import ncon
from .plan import ContractionPlan
from .search import PlanningWarning

__all__ = ["einsum", "contract_path", "ncon", "cache_info", "cache_clear", "ContractionPlan",
           "PlanningWarning"]
