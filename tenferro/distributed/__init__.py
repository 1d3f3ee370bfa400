"""Sliced contractions and their gradients on a Dask cluster (``pip install
'tenferro[distributed]'``).

``value_and_grad(f, params, plan, client=...)`` evaluates ``f(params)`` and its gradient with
every ``tenferro.einsum(..., plan=plan)`` inside ``f`` farmed out to the cluster: the operands
and the plan are scattered once, each task contracts a group of slices and computes their
gradient with a local tenferro VJP, and the partial values and gradients are summed on the
workers by a tree of tasks. The rest of ``f`` (building the network's tensors from the
parameters, a log, a normalisation) runs here, under tenferro's ordinary reverse mode, so the
result equals the unsliced local computation. Design notes: design/distributed.md.
"""

from tenferro._src.distributed import *  # noqa: F403
from tenferro._src.distributed import __all__  # noqa: F401
