"""Progress output: records, callback, silencing, full-precision energies, and a denominator
that estimates the steps left from the convergence rate (not the iteration budget)."""

import io
import math
import os
import subprocess
import sys

import pytest

from tenferro._src.tn.progress import Progress


def test_fixed_length_loop_prints_step_over_total_and_eta():
    out = io.StringIO()
    with Progress("TRG", 3, True, every=0.0, stream=out, fixed=True) as p:
        for k in range(1, 4):
            p.update(k, lnZ=1.0 / 3.0)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3 and lines[0].startswith("[TRG] 1/3")
    assert "lnZ=0.3333333333333333" in lines[0]  # all the digits
    assert "ETA" in lines[0] and "ETA" not in lines[-1]


def test_converging_loop_estimates_steps_left_from_the_rate():
    """A gradient shrinking 10x per step from 1 towards tol=1e-8: after a few steps the
    estimate is the true number of steps left (8 - k), far from the budget of 1000."""
    seen = []
    out = io.StringIO()
    with Progress("VUMPS", 1000, True, every=0.0, stream=out, monitor="grad", tol=1e-8,
                  callback=seen.append) as p:
        for k in range(1, 10):
            p.update(k, energy=-0.4431 - 1e-9 * k, grad=10.0 ** (-k + 1))
    assert seen[0]["steps_left"] is None  # one point: no rate yet
    for rec in seen[2:8]:
        assert rec["steps_left"] == 9 - rec["step"]
    assert seen[-1]["steps_left"] == 0
    text = out.getvalue()
    assert "(~3 left, max 1000)" in text and "/1000" not in text
    assert "energy=-0.443100006" in text  # full precision (repr)


def test_legacy_call_prints_no_eta():
    """A caller that declares neither a fixed length nor a monitored quantity (the budget of a
    converging loop) gets ``step/total`` without a made-up ETA."""
    out = io.StringIO()
    with Progress("DMRG", 40, True, every=0.0, stream=out) as p:
        p.update(1, E=-1.5)
    assert out.getvalue().startswith("[DMRG] 1/40") and "ETA" not in out.getvalue()


def test_no_estimate_while_not_converging():
    p = Progress("X", 50, False, monitor="grad", tol=1e-10)
    for k, g in enumerate([1.0, 2.0, 3.0], 1):
        rec = p.update(k, grad=g)
    assert rec["steps_left"] is None
    assert "? left" in p.format(rec)


def test_disabled_still_calls_back_and_prints_nothing():
    out = io.StringIO()
    seen = []
    with Progress("T", 2, False, stream=out, callback=seen.append) as p:
        p.update(1, dE=math.nan)
        p.update(2, dE=1e-3)
    assert out.getvalue() == "" and [r["step"] for r in seen] == [1, 2]
    assert all("step_time" in r and "time" in r for r in seen)


@pytest.mark.numpy_only
def test_environment_variable_silences():
    code = ("import io; from tenferro._src.tn.progress import Progress; s = io.StringIO(); "
            "p = Progress('T', 1, stream=s); p.__enter__(); p.update(1, e=1.0); "
            "print(repr(s.getvalue()))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, TENFERRO_PROGRESS="0", PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "''"
    env["TENFERRO_PROGRESS"] = "1"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert "[T] 1/1" in out


class _Terminal:
    """A stream that says it is a terminal."""

    def __init__(self):
        self.text = []

    def isatty(self):
        return True

    def write(self, s):
        self.text.append(s)

    def flush(self):
        pass


def test_a_log_gets_every_line_and_a_terminal_one_a_second():
    """Fast steps: a file or pipe (a log to read later) gets every step's line, a terminal
    only about one per ``every`` seconds; both get the last line."""
    out, term = io.StringIO(), _Terminal()
    for stream in (out, term):
        with Progress("DMRG", 6, True, stream=stream, monitor="dE", tol=1e-10,
                      unit="sweep") as p:
            for k in range(1, 7):
                p.update(k, energy=-1.0, dE=10.0 ** -k)
    lines = out.getvalue().splitlines()
    assert [line.split()[1:3] for line in lines] == [["sweep", str(k)] for k in range(1, 7)]
    shown = "".join(term.text).splitlines()
    assert len(shown) < 6 and shown[-1].startswith("[DMRG] sweep 6")


def test_a_log_of_a_long_fast_loop_is_throttled_but_keeps_the_last_line():
    from tenferro._src.progress import LOG_BURST

    out = io.StringIO()
    n = 3 * LOG_BURST
    with Progress("CTMRG", n, True, stream=out, monitor="delta", tol=1e-12,
                  unit="iteration") as p:
        for k in range(1, n + 1):
            p.update(k, delta=1.0)
    lines = out.getvalue().splitlines()
    assert LOG_BURST <= len(lines) < n  # every line of the burst, then throttled by time
    assert lines[0].startswith("[CTMRG] iteration 1 ") and lines[-1].startswith(
        f"[CTMRG] iteration {n} ")


def test_tol_zero_estimates_the_whole_budget():
    """No convergence test: the steps left are the budget's (no division by tol)."""
    p = Progress("DMRG", 4, False, monitor="dE", tol=0.0)
    lefts = [p.update(k, dE=10.0 ** -k)["steps_left"] for k in range(1, 5)]
    assert lefts == [3, 2, 1, 0]
