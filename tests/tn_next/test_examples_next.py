"""The tn-next examples run to completion at reduced size and print what they promise."""

import pytest

from tests.physics.test_examples import load

pytestmark = pytest.mark.numpy_only

def test_vumps_example(tmp_path, capsys):
    png = tmp_path / "vumps.png"
    assert load("vumps_chain").main(["--D", "4", "--models", "tfim", "--tol", "1e-6",
                                     "--plot", str(png)]) == 0
    assert png.stat().st_size > 10_000
    out = capsys.readouterr().out
    assert "-4/pi" in out and "not converged" not in out
    row = [ln for ln in out.splitlines() if ln.strip().startswith("4 ")][0].split()
    assert 0 < float(row[2]) < 5.6e-5  # E - E_exact at D=4


def test_tfim_quench_example(tmp_path, capsys):
    png = tmp_path / "quench.png"
    assert load("tfim_quench").main(["--L", "6", "--D", "8", "--tmax", "0.5",
                                     "--dt-tdvp", "0.25", "--plot", str(png)]) == 0
    assert png.stat().st_size > 10_000
    out = capsys.readouterr().out
    errs = [float(ln.split()[1]) for ln in out.splitlines()
            if ln.strip() and ln.split()[0].replace(".", "").isdigit()]
    assert len(errs) == 4 and max(errs) < 1e-6
