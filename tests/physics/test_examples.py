"""The README's examples run to completion (at reduced size) and write their plots."""

import re
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


def test_trg_ising_example_runs_on_another_device(capsys):
    """``--device`` places every tensor of the run there (strict:1 stands in for cuda) and
    gives the same numbers as the CPU."""
    ex = load("trg_ising")
    args = ["--chi", "4", "--steps", "4", "--betas", "0.40", "--no-plot", "--algorithms", "trg"]
    assert ex.main(args) == 0
    cpu = capsys.readouterr().out
    assert ex.main(args + ["--device", "strict:1"]) == 0
    dev = capsys.readouterr().out
    table = [line.split() for line in cpu.splitlines() if line.startswith(" 0.40000")]
    other = [line.split() for line in dev.splitlines() if line.startswith(" 0.40000")]
    # every printed value agrees; the last column, |c_fwd - c_rev|, is rounding (1e-16), and
    # the basis svd returns inside exact ties differs on an accelerator (no host read there)
    assert table and [r[:-1] for r in table] == [r[:-1] for r in other]
    assert all(float(r[-1]) < 1e-12 for r in table + other)


def test_quickstart_example(capsys):
    assert load("quickstart").main([]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ":" in ln]
    got = lines[0].split(":")[1].strip()
    exact = lines[1].split(":")[1].strip()
    assert got == exact  # the gradient printed equals the analytic one to 12 digits


ALL_EXAMPLES = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.stem.startswith("_"))


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_every_example_answers_help_without_running(name, capsys):
    """``--help`` prints the usage and the description and exits 0 before any computation;
    every option has a help text, and every option whose default is a value states it."""
    ex = load(name)
    with pytest.raises(SystemExit) as e:
        ex.main(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr()
    assert out.out.startswith("usage:") and out.err == ""
    first_line = ex.__doc__.strip().splitlines()[0]
    assert " ".join(first_line.split()[:4]) in " ".join(out.out.split())
    p = ex.parser()
    for action in p._actions:
        if "--help" in action.option_strings:
            continue
        text = p._get_formatter()._get_help_string(action)  # as --help shows it
        assert text, f"{name}: {action.option_strings} has no help text"
        if action.nargs != 0 and action.default is not None:
            assert "default" in text, f"{name}: {action.option_strings} hides its default"


@pytest.mark.parametrize("name", ALL_EXAMPLES)
def test_every_example_but_quickstart_writes_a_plot(name):
    """``--plot FILE`` names the PNG (each example's fast run elsewhere checks it is written)
    and ``--no-plot`` skips it; quickstart only prints (the README says so)."""
    options = {o for a in load(name).parser()._actions for o in a.option_strings}
    assert ({"--plot", "--no-plot"} <= options) == (name != "quickstart")


@pytest.mark.parametrize("name", ["trg_ising", "ipeps_heisenberg"])
def test_unavailable_device_stops_at_once_in_one_line(name, capsys):
    """``--device cuda`` without CuPy (or an unknown device) stops before any output, with
    one line naming tenferro's DeviceError and the fix."""
    try:
        import cupy  # noqa: F401

        devices = ["nowhere"]
    except ImportError:
        devices = ["cuda", "nowhere"]
    for device in devices:
        with pytest.raises(SystemExit) as e:
            load(name).main(["--device", device])
        out = capsys.readouterr()
        assert e.value.code == 2 and out.out == ""
        assert len(out.err.strip().splitlines()) == 1
        assert ": tenferro.errors.DeviceError: " in out.err
        assert ("CuPy" if device == "cuda" else "unknown device") in out.err


@pytest.mark.slow
def test_ipeps_unitcell_docstring_states_what_the_default_run_prints(capsys):
    """The energy quoted in the Run: line of ipeps_unitcell.py is the default run's."""
    ex = load("ipeps_unitcell")
    quoted = re.search(r"prints E = (-0\.\d+) at chi=12", ex.__doc__).group(1)
    assert ex.main(["--no-plot"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("this run"))
    assert f"{float(line.split()[-1]):.7f}" == quoted


def test_readme_lists_every_example():
    readme = (EXAMPLES.parent / "README.md").read_text()
    rows = {ln.split("`")[1] for ln in readme.splitlines() if ln.startswith("| `examples/")}
    assert rows == {f"examples/{name}.py" for name in ALL_EXAMPLES}
