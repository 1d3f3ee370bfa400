"""Finding Dask: the optional dependency, and the client to use."""

from __future__ import annotations

import importlib

EXTRA_HINT = "pip install 'tenferro[distributed]'"


def require_distributed():
    """The ``distributed`` module, or an ``ImportError`` that names the extra to install."""
    try:
        return importlib.import_module("distributed")
    except ImportError as e:
        raise ImportError(
            f"tenferro.distributed needs Dask's distributed scheduler, which is not installed "
            f"({e}). Install the optional dependency with: {EXTRA_HINT}"
        ) from e


def resolve_client(client):
    """``client`` itself, or (``None``) the current Dask client (``distributed.get_client``)."""
    if client is not None:
        return client
    distributed = require_distributed()
    try:
        return distributed.get_client()
    except ValueError as e:
        raise ValueError(
            "tenferro.distributed.value_and_grad: no client= given and no Dask client is "
            "running; start one, e.g. client = dask.distributed.Client('tcp://scheduler:8786') "
            "(or Client(LocalCluster()) on one machine), and pass client=client."
        ) from e
