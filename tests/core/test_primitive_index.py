"""design/primitive-tests.md (which test files check each primitive's rules) stays true, and
every primitive's rules are checked somewhere. Regenerate it with
``python -m tests.primitive_index``."""

import os
import subprocess
import sys

import pytest

import chainrules
import tenferro  # noqa: F401  (registers tenferro's own primitives: the custom-rule calls)
from tests.primitive_index import PAGE, ROOT, parse, render, rule_check_files

STALE = "design/primitive-tests.md is stale: run python -m tests.primitive_index"


def _page():
    return parse(PAGE.read_text())


def test_the_index_lists_every_primitive_and_every_rule_check_file():
    index, files = _page()
    assert set(index) == set(chainrules.PRIMITIVES), STALE
    assert files == rule_check_files(), STALE
    named = {f for paths in index.values() for f in paths}
    assert named <= set(files), STALE


def test_every_primitive_has_a_rule_check():
    """Each primitive runs inside some finite-difference / dot-product check."""
    index, _ = _page()
    unchecked = sorted(name for name, paths in index.items() if not paths)
    assert not unchecked, f"primitives no rule check runs: {unchecked}"


def test_the_page_reads_back_what_it_was_rendered_from():
    index = {"add": ["tests/a/test_x.py", "tests/b/test_y.py"], "svd": []}
    files = ["tests/a/test_x.py", "tests/b/test_y.py"]
    assert parse(render(index, files)) == (index, files)


def test_the_recorder_finds_the_helpers_users():
    """A test file that checks rules through a helper of the tests (tests/nn/_util.py) counts;
    a file that imports no check does not."""
    files = rule_check_files()
    assert "tests/nn/test_functional.py" in files  # via tests/nn/_util.py
    assert "tests/core/test_primitive_rules.py" in files
    assert "tests/core/test_docs.py" not in files


@pytest.mark.slow
def test_the_index_is_what_a_recording_run_finds(tmp_path):
    """Re-record (minutes: it runs every rule-check file) and compare with the page."""
    code = ("import sys; from tests.primitive_index import record, render; "
            "sys.stdout.write(render(*record()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=3600)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout[out.stdout.index("# Primitives and the tests"):]
    assert text == PAGE.read_text(), STALE
