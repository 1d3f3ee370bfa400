"""The default planner, the plan object, plan caches (memory and disk) and option errors."""

import json
import os
import time
import warnings

import numpy as np
import opt_einsum as oe
import pytest

import tenferro as tf
from tenferro._src.contract import ContractionPlan, PlanningWarning
from tenferro._src.contract import plan as plan_mod
from tenferro._src.contract import search as search_mod
from tenferro.errors import ShapeError
from tests.einsum.load import busy_loops
from tests.einsum.networks import (
    arrays_for,
    interleaved,
    ising_lattice,
    peps_norm,
    random_regular,
)

# planning looks at shapes only: one backend is enough here (test_slicing runs both)
pytestmark = pytest.mark.numpy_only


def _plan(shapes, labels, **kw):
    return tf.contract_path(*interleaved(shapes, labels), shapes=True, **kw)


@pytest.fixture
def count_searches(monkeypatch):
    calls = []
    real = plan_mod._search

    def counting(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(plan_mod, "_search", counting)
    return calls


# ------------------------------------------------------------------ default quality


def test_default_beats_greedy_on_a_medium_peps_and_stops_early():
    """4x4 PEPS norm, D=4 (32 tensors): opt_einsum's greedy is ~20x off; the default finds a
    far cheaper path, and since that path predicts a contraction of milliseconds the search
    spends about that much (CPU time of this process: a loaded machine stretches the wall
    clock, not the work the search does)."""
    shapes, labels = peps_norm(4, 4)
    tf.einsum.cache_clear()
    t0, c0 = time.perf_counter(), time.process_time()
    auto = _plan(shapes, labels)
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    greedy = _plan(shapes, labels, optimize="greedy")
    assert auto.flops * 4 <= greedy.flops, (auto.flops, greedy.flops)
    assert auto.largest_intermediate <= greedy.largest_intermediate
    assert cpu < 0.5, (cpu, took)
    assert auto.planning_time <= took


def test_without_cotengra_random_greedy_still_beats_greedy_and_says_so_once(monkeypatch):
    """A 5x5 PEPS norm, D=5: a contraction long enough for a better planner to matter. (A
    memory limit far above what any path needs: the paths random-greedy finds are wider than
    greedy's, which the default memory target admits only on machines with enough RAM.)"""
    from tenferro._src.contract import effort

    shapes, labels = peps_norm(5, 5)
    monkeypatch.setattr(search_mod, "_COTENGRA", [False])
    monkeypatch.setattr(search_mod, "_HINTED", [])
    # the default budget, in CPU seconds, shortened: the same search on a busy machine
    monkeypatch.setattr(effort, "DEFAULT_MAX_TIME", 0.5)
    tf.einsum.cache_clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = _plan(shapes, labels, max_memory="1 TB")
        _plan(shapes, labels, max_time=0.3)  # another plan: no second hint
    greedy = _plan(shapes, labels, optimize="greedy")
    assert auto.planner.startswith("random-greedy")
    assert auto.flops < greedy.flops
    hints = [w for w in caught if "install" in str(w.message)]
    assert len(hints) == 1 and issubclass(hints[0].category, PlanningWarning)
    assert "pip install 'tenferro[cotengra]'" in str(hints[0].message)


@pytest.mark.parametrize(
    "n_ops,planner", [(2, "trivial"), (4, "optimal"), (10, "dp")]
)
def test_small_networks_are_planned_exactly(n_ops, planner):
    """A ring of matrices: small networks get the exact planners."""
    labels = [[k, (k + 1) % n_ops] for k in range(n_ops)]
    shapes = [(3 if k % 2 == 0 else 4, 4 if k % 2 == 0 else 3) for k in range(n_ops)]
    p = _plan(shapes, labels)
    assert p.planner == planner
    assert p.flops == oe.contract_path(
        *[x for s, lab in zip(shapes, labels) for x in (np.empty(s), lab)], [],
        optimize=[tuple(s) for s in p.path])[1].opt_cost


def _no_worse_than_greedy(plan, greedy) -> bool:
    """At most greedy's FLOPs, and a largest intermediate no larger than greedy's or within
    the default memory target (a quarter of a quarter of the RAM: search.py's contract)."""
    ram = plan_mod.physical_memory()
    target = 0 if ram is None else int(plan_mod.SOFT_FRACTION * ram) // 8 // 4
    return plan.flops <= greedy.flops and plan.largest_intermediate <= max(
        greedy.largest_intermediate, target)


def _timed_plan(shapes, labels, **kw):
    tf.einsum.cache_clear()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlanningWarning)
        p = _plan(shapes, labels, **kw)
    return p, time.perf_counter() - t0


def test_plans_never_lose_to_greedy_under_load():
    """12x12 open Ising lattice (bond 2, 144 tensors) under two busy-loop processes: five
    plans with max_time=0.3 in a row (the budget in which a loaded machine fits only a trial
    or two); none has more FLOPs or a larger intermediate than opt_einsum's greedy path."""
    shapes, labels = ising_lattice(12)
    greedy = _plan(shapes, labels, optimize="greedy")
    runs = []
    with busy_loops(2):
        for _ in range(5):
            p, took = _timed_plan(shapes, labels, max_time=0.3)
            runs.append((_no_worse_than_greedy(p, greedy), took, p.flops,
                         p.largest_intermediate, p.planner))
    assert all(run[0] for run in runs), (greedy.flops, greedy.largest_intermediate, runs)


def test_default_planning_is_proportionate():
    """The default plan of the same lattice (its contraction takes milliseconds) costs a
    fraction of a second of CPU time, not the 10 s budget."""
    shapes, labels = ising_lattice(12)
    greedy = _plan(shapes, labels, optimize="greedy")
    c0 = time.process_time()
    p, took = _timed_plan(shapes, labels)
    cpu = time.process_time() - c0
    assert cpu <= 1.0, (cpu, took, p.planner)
    assert _no_worse_than_greedy(p, greedy)


def test_max_time_bounds_planning():
    """max_time=t: planning ends within 1.2 t + 0.2 s, on the Ising lattice (random-greedy and
    reconfiguration) and on the 6x6 PEPS norm, D=4 (72 tensors; greedy's path needs ~1e15
    FLOPs, so the search wants all the time it gets: cotengra's trials, the reconfiguration
    of its best trees and the slicing to a memory limit all have to stop in time)."""
    shapes, labels = ising_lattice(12)
    for max_time in (0.5, 1.0):
        p, took = _timed_plan(shapes, labels, max_time=max_time)
        assert took <= 1.2 * max_time + 0.2, (max_time, took, p.planner)
    if search_mod.have_cotengra():
        import cotengra  # noqa: F401 - imported once before timing, as in a long session
    shapes, labels = peps_norm(6, 4)
    greedy = _plan(shapes, labels, optimize="greedy", max_memory=2**62)
    for max_time, max_memory in ((1.0, 2**62), (2.0, 2**62), (1.0, "100MB")):
        p, took = _timed_plan(shapes, labels, max_time=max_time, max_memory=max_memory)
        assert took <= 1.2 * max_time + 0.2, (max_time, max_memory, took, p.planner)
        if max_memory == 2**62:  # unsliced: comparable with greedy's path
            assert p.flops <= greedy.flops, (p.flops, greedy.flops)
        else:
            # any order of the 6x6 grid keeps an intermediate with a cut of >= 6 bonds of
            # dimension 16 (16^6 entries, 134 MB), so under 100 MB the plan must slice (a 2 GB
            # limit sometimes admitted a lucky unsliced tree)
            assert p.peak_memory * 8 <= 1e8 and p.n_slices > 1


def test_a_path_worse_than_greedys_is_never_kept():
    """A candidate replaces greedy's path only with at most its FLOPs and a largest
    intermediate no larger than greedy's or within the memory target, or, when greedy's is
    wider than the target, by fitting the target."""
    from tenferro._src.contract.candidates import Candidates, admissible
    from tenferro._src.contract.problem import Problem

    g = 1e9  # greedy's FLOPs; its largest intermediate is 2^20
    assert admissible(g / 2, 20, g, 20, None) and admissible(g, 19, g, 20, None)
    assert not admissible(g / 100, 21, g, 20, None)  # cheaper but wider
    assert not admissible(1.01 * g, 10, g, 20, None)  # narrower but more FLOPs
    assert admissible(g / 100, 21, g, 20, 25)  # wider, but within the memory target
    assert not admissible(g / 100, 26, g, 20, 25) and not admissible(2 * g, 19, g, 20, 25)
    assert admissible(4 * g, 25, g, 30, 25) and not admissible(4 * g, 26, g, 30, 25)

    shapes, labels = peps_norm(3, 3)
    prob = Problem("einsum", [tuple(lab) for lab in labels], (), shapes, "peps")
    ins = [set(t) for t in prob.terms]
    greedy = oe.paths.greedy(ins, set(), prob.size_dict)
    pick = Candidates(prob, None, greedy)
    rng = np.random.default_rng(0)
    bad = [tuple(sorted(rng.choice(m, 2, replace=False).tolist())) for m in range(prob.n, 1, -1)]
    assert pick._costs(bad).flops > pick.greedy.flops
    assert not pick.offer(bad, "random order")
    assert pick.path == greedy and pick.label == "opt_einsum greedy"
    pick.offer(oe.RandomGreedy(max_repeats=32)(ins, set(), prob.size_dict), "random-greedy")
    assert pick.costs.flops <= pick.greedy.flops
    assert pick.costs.largest <= pick.greedy.largest


def test_plans_made_under_one_max_time_serve_only_that_max_time(count_searches):
    shapes, labels = ising_lattice(5)
    tf.einsum.cache_clear()
    _plan(shapes, labels, max_time=0.3)
    _plan(shapes, labels, max_time=0.3)
    assert len(count_searches) == 1
    _plan(shapes, labels)
    _plan(shapes, labels, max_time=0.4)
    assert len(count_searches) == 3


# ------------------------------------------------------------------ the plan object


def test_plan_reports_and_prints():
    shapes, labels = peps_norm(2, 3)
    p = _plan(shapes, labels, max_memory=80)
    assert isinstance(p, ContractionPlan)
    assert p.n_slices > 1 and len(p.sliced) >= 1
    assert all(isinstance(lab, tuple) for lab in p.sliced)  # the caller's labels
    assert p.peak_memory <= 80 == p.max_memory
    assert p.flops > 0 and p.largest_intermediate > 0 and p.predicted_time > 0
    assert p.opt_cost == p.flops and p.speedup == p.naive_flops / p.flops
    assert "sliced by" in p.planner and p.planning_time >= 0
    text = str(p)
    for part in ("Optimized FLOP count", "Largest intermediate", "Peak memory", "Slices",
                 "Planner", "Predicted time", f"{p.n_slices} over", "(one slice)"):
        assert part in text, part
    assert "n_slices=" in repr(p) and "planner=" in repr(p)
    unsliced = _plan(shapes, labels)
    assert unsliced.n_slices == 1 and unsliced.sliced == ()
    assert unsliced.peak_memory > 80


def test_einsum_runs_a_given_plan_without_planning(count_searches):
    shapes, labels = peps_norm(2, 3)
    arrays = arrays_for(shapes, seed=1)
    ref = oe.contract(*interleaved(arrays, labels))
    p = _plan(shapes, labels, max_memory=80)
    n = len(count_searches)
    tf.einsum.cache_clear()
    got = tf.einsum(*interleaved([tf.tensor(a) for a in arrays], labels), plan=p)
    assert len(count_searches) == n
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)


def test_a_plan_for_other_operands_is_refused():
    p = tf.contract_path("ij,jk->ik", (2, 3), (3, 4), shapes=True)
    a, b = tf.tensor(np.ones((2, 3))), tf.tensor(np.ones((3, 5)))
    with pytest.raises(ShapeError, match=r"plan was made for 'ij,jk->ik' with shapes "
                                         r"\(2, 3\), \(3, 4\).*\(3, 5\)"):
        tf.einsum("ij,jk->ik", a, b, plan=p)
    with pytest.raises(ShapeError, match="other subscripts"):
        tf.einsum("ij,jk->ki", a, tf.tensor(np.ones((3, 4))), plan=p)
    with pytest.raises(ShapeError, match="either plan= or the planning options"):
        tf.einsum("ij,jk->ik", a, tf.tensor(np.ones((3, 4))), plan=p, optimize="greedy")
    with pytest.raises(ShapeError, match="ContractionPlan from tenferro.contract_path"):
        tf.einsum("ij,jk->ik", a, tf.tensor(np.ones((3, 4))), plan=[(0, 1)])


# ------------------------------------------------------------------ caching


def test_repeated_calls_never_replan(count_searches):
    shapes, labels = random_regular(24)
    arrays = [tf.tensor(a) for a in arrays_for(shapes, seed=2)]
    tf.einsum.cache_clear()
    first = tf.einsum(*interleaved(arrays, labels))
    for _ in range(3):
        again = tf.einsum(*interleaved(arrays, labels))
    assert len(count_searches) == 1
    assert first.item() == again.item()
    p = tf.contract_path(*interleaved(arrays, labels))  # the same cached plan object
    assert len(count_searches) == 1
    assert tf.contract_path(*interleaved(arrays, labels)) is p
    # another budget or memory limit is another plan
    tf.einsum(*interleaved(arrays, labels), max_time=0.5)
    assert len(count_searches) == 2


def test_disk_cache_round_trip(tmp_path, count_searches, monkeypatch):
    shapes, labels = peps_norm(3, 2)
    tf.einsum.cache_clear()
    p1 = _plan(shapes, labels, max_memory=2000, cache_dir=tmp_path)
    files = list(tmp_path.glob("tenferro-plan-*.json"))
    assert len(files) == 1 and len(count_searches) == 1
    rec = json.loads(files[0].read_text())
    assert rec["path"] == [list(s) for s in p1.path]

    # a new process (empty memory cache): the plan comes from disk, no search
    tf.einsum.cache_clear()
    p2 = _plan(shapes, labels, max_memory=2000, cache_dir=tmp_path)
    assert len(count_searches) == 1
    assert p2.path == p1.path and p2.sliced == p1.sliced and p2.flops == p1.flops
    assert "from the disk cache" in p2.planner
    # the same network with other label names shares the file
    tf.einsum.cache_clear()
    renamed = [[("x",) + tuple(lab) for lab in labs] for labs in labels]
    p3 = _plan(shapes, renamed, max_memory=2000, cache_dir=tmp_path)
    assert len(count_searches) == 1 and p3.path == p1.path
    # other options: another file
    tf.einsum.cache_clear()
    _plan(shapes, labels, cache_dir=tmp_path)
    assert len(count_searches) == 2 and len(list(tmp_path.glob("*.json"))) == 2

    # a damaged or foreign file is ignored and replaced
    files[0].write_text("{not json")
    tf.einsum.cache_clear()
    p4 = _plan(shapes, labels, max_memory=2000, cache_dir=tmp_path)
    assert len(count_searches) == 3 and "disk cache" not in p4.planner
    json.loads(files[0].read_text())
    rec = json.loads(files[0].read_text())
    rec["path"] = [[0, 99]]
    files[0].write_text(json.dumps(rec))
    tf.einsum.cache_clear()
    _plan(shapes, labels, max_memory=2000, cache_dir=tmp_path)
    assert len(count_searches) == 4
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_traced_graph_keeps_its_plan(tmp_path, monkeypatch):
    """Planning happens at trace time; the graph (and its saved form) holds the lowered
    contraction, so running it never plans."""
    shapes, labels = peps_norm(2, 2)
    arrays = [tf.tensor(a) for a in arrays_for(shapes, seed=3)]

    def f(*xs):
        return tf.einsum(*interleaved(xs, labels), max_memory=40)

    tf.einsum.cache_clear()
    graph = tf.make_graph(f, *arrays)
    eager = f(*arrays).item()

    def no_planning(*a, **k):
        raise AssertionError("planned again")

    monkeypatch.setattr(plan_mod, "make_plan", no_planning)
    tf.einsum.cache_clear()
    np.testing.assert_allclose(graph(*arrays).item(), eager, rtol=1e-12)
    graph.save(tmp_path / "g.tfg")
    loaded = tf.load(tmp_path / "g.tfg")
    np.testing.assert_allclose(loaded(*arrays).item(), eager, rtol=1e-12)
    jf = tf.jit(f)
    monkeypatch.undo()
    jf(*arrays)
    monkeypatch.setattr(plan_mod, "make_plan", no_planning)
    np.testing.assert_allclose(jf(*arrays).item(), eager, rtol=1e-12)


# ------------------------------------------------------------------ warnings and errors


def test_a_huge_predicted_cost_is_named_in_a_warning():
    shapes, labels = peps_norm(6, 4)
    tf.einsum.cache_clear()  # a cached plan warns no more
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p = _plan(shapes, labels, optimize="greedy")
    assert p.predicted_time > plan_mod.HUGE_SECONDS
    huge = [str(w.message) for w in caught if "FLOPs, predicted" in str(w.message)]
    assert len(huge) == 1 and all(w.category is PlanningWarning for w in caught)
    assert "largest intermediate" in huge[0] and "optimize='auto'" in huge[0]
    assert f"{p.flops:.3g}" in huge[0]


def test_memory_warnings_name_the_path(monkeypatch):
    """A plan sliced to fit the machine's memory (or holding more than half of it) says which
    path: its planner, FLOPs, largest intermediate and steps, not only the memory."""
    shapes, labels = peps_norm(5, 4)
    for ram, what in ((2**28, "sliced into"), (2**29, "more than half")):
        monkeypatch.setattr(plan_mod, "physical_memory", lambda ram=ram: ram)
        tf.einsum.cache_clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = _plan(shapes, labels, optimize="greedy")
        msgs = [str(w.message) for w in caught if what in str(w.message)]
        assert len(msgs) == 1, [str(w.message) for w in caught]
        assert "the path found by opt_einsum 'greedy'" in msgs[0]
        assert "FLOPs, largest intermediate" in msgs[0]
        assert f"path {str(p.path)[:40]}" in msgs[0] or "path [(" in msgs[0]


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"max_memory": "lots"}, "cannot read max_memory='lots'"),
        ({"max_memory": "12 parsecs"}, "cannot read max_memory"),
        ({"max_memory": -5}, "positive whole number"),
        ({"max_memory": 0}, "positive whole number"),
        ({"max_memory": 2.5}, "positive whole number"),
        ({"max_memory": True}, "max_memory must be"),
        ({"max_memory": [1]}, "max_memory must be"),
        ({"max_memory": "0.1B"}, "at least 1 byte"),
        ({"max_memory": 10, "memory_limit": 20}, "disagree"),
        ({"max_time": -1}, "positive, finite"),
        ({"max_time": float("nan")}, "positive, finite"),
        ({"max_time": float("inf")}, "positive, finite"),
        ({"max_time": "fast"}, "number of seconds"),
        ({"optimize": "fastest"}, "unknown optimize option 'fastest'"),
        ({"cache_dir": 3}, "cache_dir must be a directory path"),
    ],
)
def test_bad_options_are_named(kw, match):
    with pytest.raises(ShapeError, match=match):
        tf.einsum("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 2)), **kw)


def test_limits_that_cannot_be_met_are_explained():
    a, b = np.ones((20, 30)), np.ones((30, 20))
    with pytest.raises(ShapeError, match=r"the result of 'ij,jk->ik' alone has 400 "
                                         r"elements.*output indices are not sliced"):
        tf.einsum("ij,jk->ik", a, b, max_memory=100)
    with pytest.raises(ShapeError, match="cannot fit the contraction"):
        tf.einsum("ij,jk->", a, b, max_memory=1)


def test_byte_limits_use_the_operand_dtype():
    shapes = [(10, 20), (20, 20), (20, 10), (10, 10)]
    eq = "ab,bc,cd,da->"
    f64 = tf.contract_path(eq, *shapes, shapes=True, max_memory="800B")
    c128 = tf.contract_path(eq, *shapes, shapes=True, max_memory="800B", dtype=np.complex128)
    assert f64.max_memory == 100 and c128.max_memory == 50
    assert f64.peak_memory <= 100 and c128.peak_memory <= 50
    arrays = arrays_for(shapes, seed=4, dtype=np.complex128)
    got = tf.einsum(eq, *[tf.tensor(a) for a in arrays], max_memory="0.8 kB")
    np.testing.assert_allclose(got.numpy(), np.einsum(eq, *arrays), rtol=1e-12)
    assert tf.contract_path(eq, *arrays, max_memory="800 B").max_memory == 50
    with pytest.raises(ShapeError, match="is not a dtype"):
        tf.contract_path(eq, *shapes, shapes=True, dtype="float99")


def test_subtree_reconfiguration_repairs_a_bad_path():
    """The fallback's reconfiguration (used without cotengra) turns the left-to-right order
    of a 4x4 PEPS norm into a far cheaper valid path, and never makes a path worse."""
    from tenferro._src.contract.costs import costs_of
    from tenferro._src.contract.problem import Problem
    from tenferro._src.contract.reconf import reconfigure
    from tenferro._src.contract.search import trivial_path

    shapes, labels = peps_norm(4, 2)
    prob = Problem("einsum", [tuple(lab) for lab in labels], (), shapes, "peps")

    def flops(path):
        return costs_of("einsum", prob.terms, prob.output, prob.size_dict, path).flops

    def within(seconds):
        deadline = time.perf_counter() + seconds
        return lambda: time.perf_counter() >= deadline

    bad = list(trivial_path(prob.n))
    fixed = reconfigure(prob, bad, within(5.0))
    assert flops(fixed) * 10 < flops(bad)
    assert flops(reconfigure(prob, fixed, within(5.0))) <= flops(fixed)
    arrays = arrays_for(shapes, seed=11)
    ref = oe.contract(*interleaved(arrays, labels))
    got = tf.einsum(*interleaved([tf.tensor(a) for a in arrays], labels), optimize=fixed)
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-11)
