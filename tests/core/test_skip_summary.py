"""The test run says why tests were skipped: one line per reason, with its count."""

import ast
from pathlib import Path

import pytest

from tests import conftest, skips

pytestmark = pytest.mark.numpy_only

TESTS = Path(__file__).resolve().parents[1]


class _Report:
    def __init__(self, reason):
        self.longrepr = ("tests/x.py", 3, f"Skipped: {reason}")


class _Reporter:
    def __init__(self, skipped):
        self.stats = {"skipped": skipped} if skipped else {}
        self.lines = []

    def section(self, title, sep="="):
        self.lines.append(title)

    def write_line(self, line):
        self.lines.append(line)


def test_summary_groups_skips_by_reason():
    rep = _Reporter([_Report(skips.TORCH)] * 3 + [_Report(skips.DASK)])
    conftest.pytest_terminal_summary(rep)
    assert rep.lines == ["4 skipped, by reason", f"     3  {skips.TORCH}",
                         f"     1  {skips.DASK}"]
    quiet = _Reporter([])
    conftest.pytest_terminal_summary(quiet)
    assert quiet.lines == []


def test_every_skip_in_the_suite_states_its_reason():
    """``pytest.importorskip`` without ``reason=`` says only "could not import": every skip
    names what is missing and which extra installs it (tests/skips.py)."""
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            name = node.func.attr
            if name == "importorskip" and not any(k.arg == "reason" for k in node.keywords):
                bare.append(f"{path.relative_to(TESTS)}:{node.lineno}")
            if name in ("skip", "skipif") and not (node.args or node.keywords):
                bare.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not bare, bare
