"""Test configuration: validate every eager op, and run each test under every CPU backend
(NumPy, and array_api_strict as the stand-in for GPU arrays) unless marked ``numpy_only``."""

import collections
import os

os.environ.setdefault("TENFERRO_CHECK", "1")
# One BLAS thread per test process: the suite runs in parallel workers (pytest -n 2), and
# oversubscribed, spin-waiting BLAS threads make small decompositions 10-30x slower.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import tenferro as tf  # noqa: E402

# TENFERRO_DEVICE=cuda (or strict:1, the fake-device stand-in) runs the whole suite with that
# device as the default for every tensor made from host data; the CPU-backend sweep is then off.
DEVICE = os.environ.get("TENFERRO_DEVICE") or None
BACKENDS = os.environ.get("TENFERRO_TEST_BACKENDS",
                          "numpy" if DEVICE else "numpy,array_api_strict").split(",")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "numpy_only: runs on the NumPy backend only (SciPy-only code paths)"
    )
    config.addinivalue_line(
        "markers", "default_device_cpu: about the default device itself (TENFERRO_DEVICE "
        "does not apply)"
    )


def pytest_generate_tests(metafunc):
    if "_backend" in metafunc.fixturenames:
        only_np = metafunc.definition.get_closest_marker("numpy_only") is not None
        names = ["numpy"] if only_np else BACKENDS
        metafunc.parametrize("_backend", names, indirect=True)


@pytest.fixture(autouse=True)
def _backend(request):
    name = getattr(request, "param", "numpy")
    tf.set_cpu_backend(name)
    host_only = any(request.node.get_closest_marker(m) for m in ("default_device_cpu",
                                                                  "numpy_only"))
    if DEVICE is None or host_only:  # SciPy-only paths and default-device tests stay on cpu
        yield name
    else:
        with tf.default_device(DEVICE):
            yield name
    tf.set_cpu_backend("numpy")


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def skip_reason(report) -> str:
    """The reason a skipped test report carries (``pytest.skip``/``importorskip``/marks)."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter):
    """Say why tests were skipped, one line per reason with its count (tests/skips.py holds
    the reasons: optional packages and devices this machine lacks)."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped:
        return
    counts = collections.Counter(skip_reason(r) for r in skipped)
    terminalreporter.section(f"{len(skipped)} skipped, by reason", sep="-")
    for reason, n in counts.most_common():
        terminalreporter.write_line(f"{n:6d}  {reason}")
