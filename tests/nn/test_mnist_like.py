"""examples/mnist_like.py: a fast variant trains to a stated accuracy in a couple of seconds."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.numpy_only

PATH = Path(__file__).resolve().parents[2] / "examples" / "mnist_like.py"


def _example():
    spec = importlib.util.spec_from_file_location("mnist_like", PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fast_variant_learns(tmp_path, capsys):
    png = tmp_path / "curves.png"
    res = _example().main(["--train", "800", "--test", "300", "--epochs", "5", "--batch", "20",
                           "--target", "0.75", "--quiet", "--plot", str(png)])
    assert png.stat().st_size > 10_000
    out = capsys.readouterr().out
    losses = [loss for loss, _ in res["history"]]
    assert res["reached"] and res["accuracy"] >= 0.75  # chance is 0.1
    assert losses[-1] < 0.5 * losses[0]
    assert sum(line.startswith("epoch ") for line in out.splitlines()) == 5 and "reached" in out


def test_data_set_is_deterministic_and_balanced():
    ex = _example()
    x1, y1 = ex.make_digits(500, 0.3, seed=4)
    x2, y2 = ex.make_digits(500, 0.3, seed=4)
    np.testing.assert_array_equal(x1, x2)
    assert x1.shape == (500, 1, 14, 14) and set(np.unique(y1)) == set(range(10))


def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        _example().main(["--help"])
    assert e.value.code == 0
    assert "--epochs" in capsys.readouterr().out


def test_zero_epochs_reports_the_untrained_model(tmp_path, capsys):
    """``--epochs 0`` evaluates the untrained model (about chance) instead of failing."""
    png = tmp_path / "none.png"
    res = _example().main(["--train", "100", "--test", "200", "--epochs", "0", "--quiet",
                           "--plot", str(png)])
    assert res["history"] == [] and 0.0 <= res["accuracy"] < 0.5 and not res["reached"]
    assert "NOT reached" in capsys.readouterr().out and not png.exists()


@pytest.mark.parametrize("argv", [["--epochs", "-1"], ["--batch", "0"],
                                  ["--train", "10", "--batch", "20"]])
def test_bad_sizes_are_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as e:
        _example().main(argv)
    assert e.value.code == 2 and "--" in capsys.readouterr().err
