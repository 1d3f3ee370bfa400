"""Entry point for ``tenferro.einsum``, ``tenferro.contract_path`` and ``tenferro.ncon``.

The implementation lives in the ``tenferro.contract`` package (parsing, path search with a
time budget, slicing, plan caches, lowering to primitives); import helpers such as
``cache_info``, ``ContractionPlan`` or ``PlanningWarning`` from there, because
``tenferro.einsum`` names the function, not this module.
"""

from .contract import contract_path, einsum, ncon

__all__ = ["einsum", "contract_path", "ncon"]
