"""The documentation builds with Sphinx, warnings as errors (a broken reference, a docstring
that is not valid reStructuredText, a name autosummary cannot import all fail).

The test uses Sphinx's ``dummy`` builder: it reads, generates and resolves every page as the
HTML build does (so it emits the same warnings) but writes no HTML, which keeps it fast."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests import skips

pytestmark = pytest.mark.numpy_only

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_sphinx_build_has_no_warnings(tmp_path):
    pytest.importorskip("sphinx", reason=skips.SPHINX)
    cmd = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "dummy",
           "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "out")]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-6000:] + result.stdout[-2000:]
