"""The README's examples run to completion (at reduced size) and write their plots."""

import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name):
    sys.path.insert(0, str(EXAMPLES))
    try:
        return __import__(name)
    finally:
        sys.path.remove(str(EXAMPLES))


def test_trg_ising_example(tmp_path, capsys):
    ex = load("trg_ising")
    plot = tmp_path / "c.png"
    assert ex.main(["--chi", "6", "--steps", "8", "--betas", "0.40", "0.50",
                    "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "TRG" in out and "HOTRG" in out and "nan" not in out.split("HOTRG")[1]
    assert plot.stat().st_size > 10_000


def test_quickstart_example(capsys):
    load("quickstart").main()
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ":" in ln]
    got = lines[0].split(":")[1].strip()
    exact = lines[1].split(":")[1].strip()
    assert got == exact  # the gradient printed equals the analytic one to 12 digits
