"""Why a test skips, in one sentence naming what to install: the terminal summary groups the
skipped tests by these reasons (``pytest_terminal_summary`` in tests/conftest.py)."""

import pytest

TORCH = "torch-parity test: needs PyTorch (the `bench` extra: pip install -e '.[bench]')"
JAX = "JAX interop test: needs JAX (the `bench` extra: pip install -e '.[bench]')"
MATPLOTLIB = "plotting test: needs matplotlib (the `test` extra: pip install -e '.[test]')"
DASK = "Dask cluster test: needs dask.distributed (the `test` extra: pip install -e '.[test]')"
CUPY_PRESENT = ("CPU-only check of a missing CuPy: CuPy is installed here (run the suite with "
                "TENFERRO_DEVICE=cuda on a GPU to cover CUDA devices)")


def torch(module: str = "torch"):
    """``module`` (``torch`` or one of its submodules), or skip with the reason above."""
    return pytest.importorskip(module, reason=TORCH)
EINOPS = "einops interop test: needs einops (the `test` extra: pip install -e '.[test]')"
COMPAT = ("array_api_compat interop test: needs array-api-compat (the `test` extra: "
          "pip install -e '.[test]')")
SKLEARN = ("scikit-learn interop test: needs scikit-learn (the `test` extra: "
           "pip install -e '.[test]')")
SPHINX = "docs build test: needs Sphinx (the `docs` or `test` extra: pip install -e '.[docs]')"
