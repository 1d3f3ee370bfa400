"""Entry point for ``tenferro.einsum``, ``tenferro.contract_path`` and ``tenferro.ncon``.

The implementation lives in the ``tenferro.contract`` package (parsing, planning with a plan
cache, lowering to primitives); import helpers such as ``cache_info`` or ``PathInfo`` from
there, because ``tenferro.einsum`` names the function, not this module.
"""

from .contract import contract_path, einsum, ncon

__all__ = ["einsum", "contract_path", "ncon"]
