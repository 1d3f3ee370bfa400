"""tenferro ships type information (PEP 561 ``py.typed``) precise enough for mypy on a user
script: every public name resolves (including those re-exported by the facades, whose
``__all__`` lists are literal for that reason), a correct script passes, and wrong argument
types, wrong uses of a return value and misspelt keywords are reported where marked."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
REASON = "typing test: needs mypy (the `test` extra: pip install -e '.[test]')"


def _mypy(*files: Path) -> list[tuple[str, int, str]]:
    """(file name, line, error code) of each error mypy reports."""
    env = dict(os.environ, MYPYPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--ignore-missing-imports",
         "--no-error-summary", "--show-error-codes", "--cache-dir", str(ROOT / ".mypy_cache"),
         *map(str, files)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    errors = []
    for line in out.stdout.splitlines():
        hit = re.match(r"(.+?):(\d+): error: .*\[([\w-]+)\]$", line)
        if hit:
            errors.append((Path(hit[1]).name, int(hit[2]), hit[3]))
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return errors


@pytest.mark.numpy_only
def test_mypy_checks_user_code_against_tenferro():
    pytest.importorskip("mypy", reason=REASON)
    assert (ROOT / "tenferro" / "py.typed").exists()
    # every public name of every public module, as attribute access
    from tests.core.test_public_api import _public_modules

    lines = []
    for module in _public_modules():
        alias = module.__name__.replace(".", "_")
        lines.append(f"import {module.__name__} as {alias}")
        lines += [f"{alias}.{n}" for n in module.__all__]
    names = ROOT / ".mypy_cache" / "every_public_name.py"
    names.parent.mkdir(exist_ok=True)
    names.write_text("\n".join(lines) + "\n")

    errors = _mypy(names, HERE / "sample_ok.py", HERE / "sample_errors.py")
    unresolved = [lines[line - 1] for f, line, _ in errors if f == names.name]
    assert not unresolved, unresolved
    assert [e for e in errors if e[0] == "sample_ok.py"] == []
    text = (HERE / "sample_errors.py").read_text().splitlines()
    want = {(i + 1, m[1]) for i, line in enumerate(text) if (m := re.search(r"# E: ([\w-]+)$",
                                                                           line))}
    got = {(line, code) for f, line, code in errors if f == "sample_errors.py"}
    assert got == want, (sorted(got - want), sorted(want - got))
