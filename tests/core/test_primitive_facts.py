"""Per-primitive facts live on the ``Primitive``: every parameter a rule takes is declared with
its kind (``params=``), batch rules are attached to primitive objects, and nothing outside
``chainrules`` keeps a fact about a primitive keyed by its name."""

import ast
import inspect
from pathlib import Path
from types import SimpleNamespace

import pytest

import chainrules
import tenferro  # noqa: F401  (registers tenferro's own primitives: the custom-rule calls)
from chainrules import Primitive
from chainrules import primitives as P
from chainrules.params import INT, NEW_SIZE
from chainrules.primitives import _batching
from tenferro._src.traced import graph_params

ROOT = Path(__file__).resolve().parents[2]
RULES = ("abstract_eval", "impl", "jvp", "transpose", "batch", "cost")
"""The slots called with a primitive application's parameters as keywords."""


def param_problems(prim) -> list[str]:
    """Where ``prim``'s rules and its declared parameters disagree (empty: they agree)."""
    declared = set(prim.params)
    problems = []
    for slot in RULES:
        fn = getattr(prim, slot)
        if fn is None:
            continue
        ps = inspect.signature(fn).parameters.values()
        kw_only = {p.name for p in ps if p.kind is p.KEYWORD_ONLY}
        by_name = kw_only | {p.name for p in ps if p.kind is p.POSITIONAL_OR_KEYWORD}
        takes_any = any(p.kind is p.VAR_KEYWORD for p in ps)
        if slot == "abstract_eval" and takes_any:
            problems.append("abstract_eval takes **params: name each parameter")
        if kw_only - declared:
            problems.append(f"{slot} takes {sorted(kw_only - declared)}, not declared in params=")
        if not takes_any and declared - by_name:
            problems.append(f"{slot} does not take the declared {sorted(declared - by_name)}")
    if prim.produces_size is not None and prim.params[prim.produces_size] is not NEW_SIZE:
        problems.append(f"produces_size {prim.produces_size!r} is not of kind NEW_SIZE")
    return problems


def test_every_rule_takes_exactly_the_declared_parameters():
    bad = {name: probs for name, p in chainrules.PRIMITIVES.items() if (probs := param_problems(p))}
    assert not bad, bad


def _fake(params, **rules):
    slots = dict.fromkeys(RULES)
    slots.update(rules)
    return SimpleNamespace(params=params, produces_size=None, **slots)


def test_a_parameter_without_a_declared_kind_is_caught():
    def aval(x, *, axis, keepdims):
        return x

    assert param_problems(_fake({"axis": INT}, abstract_eval=aval)) == [
        "abstract_eval takes ['keepdims'], not declared in params="]
    assert param_problems(_fake({"axis": INT, "k": INT}, abstract_eval=lambda x, *, axis: x))
    assert param_problems(_fake({}, abstract_eval=lambda x, **params: x))
    assert param_problems(_fake({"axis": INT}, abstract_eval=lambda x, *, axis: x,
                                jvp=lambda b, p, t, *, axis, reverse: None))
    assert not param_problems(_fake({"axis": INT}, abstract_eval=lambda x, *, axis: x,
                                    jvp=lambda b, p, t, **params: None))


def test_declarations_are_checked_and_read_only():
    with pytest.raises(TypeError, match="kind of parameter 'axis'"):
        Primitive("_test_bad_kind", params={"axis": "int"})
    with pytest.raises(ValueError, match="produces_size names 'size'"):
        Primitive("_test_bad_size", params={"axis": INT}, produces_size="size")
    assert "_test_bad_kind" not in chainrules.PRIMITIVES
    with pytest.raises(TypeError):
        P.reduce_sum_p.params["axes"] = INT
    # the by-name views only read the primitives: nothing can be added to them
    assert not hasattr(graph_params.PARAM_KINDS, "setdefault")
    assert graph_params.PARAM_KINDS["svd"] is P.svd_p.params
    assert dict(graph_params.PRODUCES_SIZE) == {"truncation_indices": "size"}


def test_a_misspelt_axis_parameter_fails_when_the_rule_is_made():
    before = P.flip_p.batch
    with pytest.raises(ValueError, match=r"axis_shift\(flip\).*\['axis'\]"):
        _batching.axis_shift(P.flip_p, "axis")
    assert P.flip_p.batch is before


# ---------------------------------------------------------------- nothing keyed by name
def _sources(*dirs):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def _is_registry(node) -> bool:
    return (isinstance(node, ast.Name) and node.id == "PRIMITIVES") or (
        isinstance(node, ast.Attribute) and node.attr == "PRIMITIVES")


def test_code_refers_to_primitives_by_object_never_by_a_name_literal():
    """``PRIMITIVES["svd"]`` (or ``.get("svd")``) would fail only when reached, or be skipped
    by a guard; the primitive object fails at import if misspelt. Name lookups with a variable
    (a graph file's names, ``tenferro.lax``) are what the registry is for."""
    found = []
    for path in _sources("chainrules", "tenferro"):
        for node in ast.walk(ast.parse(path.read_text())):
            key = None
            if isinstance(node, ast.Subscript) and _is_registry(node.value):
                key = node.slice
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == "get" and _is_registry(node.func.value) and node.args):
                key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, found


NAME_CHECKS_ALLOWED = {
    # a checkpoint policy given as primitive names is the user's spelling (public API)
    "tenferro/_src/autodiff/checkpoint.py",
    # which primitives the loop fallback has warned about: state, not a fact (tests reset it)
    "tenferro/_src/batching/trace.py",
}


def test_no_per_primitive_fact_is_decided_by_name_outside_chainrules():
    """``prim.name in SOME_NAMES`` / ``prim.name == "svd"`` keeps a fact about primitives away
    from them; such facts are attributes of the ``Primitive`` (or, for a pass's own patterns,
    sets of primitive objects)."""
    found = []
    for path in _sources("tenferro"):
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Compare):
                continue
            left = node.left
            if (isinstance(left, ast.Attribute) and left.attr == "name"
                    and "prim" in ast.unparse(left.value)
                    and any(isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq))
                            for op in node.ops)
                    and rel not in NAME_CHECKS_ALLOWED):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
