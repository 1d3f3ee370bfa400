"""The design notes stay true: design/primitives.md is exactly what the registered primitives
say about themselves (regenerate it with ``python -m tests.core.test_docs``)."""

from pathlib import Path

import chainrules
import tenferro  # noqa: F401  (registers tenferro's own primitives: the custom-rule calls)

DESIGN = Path(__file__).resolve().parents[2] / "design"

HEADER = """# Primitives and their conventions

Generated from `chainrules.PRIMITIVES` by `python -m tests.core.test_docs` (the test in that
file fails when this page and the code disagree). Facts come from each `Primitive`:
*linear* (linear in all its float operands jointly, so its JVP is itself and it has a
transpose rule), *transpose* (a transpose rule for an operation linear in one operand at a time,
such as `mul` and `dot_general`), *no gradient* (its outputs carry no tangent: boolean/integer
results, constants), *decomposition* (expensive to recompute: checkpoint policies keep it),
*higher-order* (a call carrying functions; each interpreter processes it, see
`tenferro/core/calls.py`), *no CSE* (graph optimisation never merges two of them). The last
column is the primitive's documented convention at non-differentiable points.
"""


def facts(p) -> str:
    out = []
    if p.linear:
        out.append("linear")
    elif p.transpose is not None:
        out.append("transpose")
    if not p.differentiable:
        out.append("no gradient")
    if p.decomposition:
        out.append("decomposition")
    if p.process is not None:
        out.append("higher-order")
    if not p.cse:
        out.append("no CSE")
    return ", ".join(out)


def render() -> str:
    groups: dict[str, list] = {}
    for p in chainrules.PRIMITIVES.values():
        groups.setdefault(p.abstract_eval.__module__, []).append(p)
    parts = [HEADER]
    for module in sorted(groups, key=lambda m: (not m.startswith("chainrules"), m)):
        parts.append(f"\n## `{module.replace('.', '/')}.py`\n")
        parts.append("| primitive | facts | convention at non-differentiable points / notes |")
        parts.append("|---|---|---|")
        for p in sorted(groups[module], key=lambda p: p.name):
            conv = p.convention or ("smooth" if p.differentiable else "")
            conv = conv.replace("|", "\\|")
            parts.append(f"| `{p.name}` | {facts(p)} | {conv} |")
    return "\n".join(parts) + "\n"


def test_design_primitives_is_generated_from_the_code():
    assert (DESIGN / "primitives.md").read_text() == render(), (
        "design/primitives.md is stale: run python -m tests.core.test_docs")


def test_every_primitive_has_all_rules():
    for p in chainrules.PRIMITIVES.values():
        assert p.abstract_eval and p.impl, p.name
        assert p.jvp or p.process, f"{p.name}: no JVP rule (and not a higher-order call)"
        if p.linear:
            assert p.transpose, f"{p.name} is linear but has no transpose rule"


if __name__ == "__main__":
    (DESIGN / "primitives.md").write_text(render())
