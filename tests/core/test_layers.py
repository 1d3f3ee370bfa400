"""The architecture's layering, checked over every import of chainrules/ and tenferro/.

The layer table and the allow-list are parsed from design/architecture.md ("Layers"), so the
note and this test are one source of truth. An import (at module level or inside a function)
may only point to its own layer or a lower one; an import inside a function (a deferred
import) must be on the allow-list, which says why each one stays; and no import cycle exists
among the modules once the allow-listed imports are set aside."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("chainrules", "tenferro")
MAX_ALLOWED = 10


def _table(text: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _names(cell: str) -> list[str]:
    return re.findall(r"`([\w.*]+)`", cell)


def layers_and_allowed():
    text = (ROOT / "design" / "architecture.md").read_text()
    layers = {}  # module prefix -> rank (0 = top)
    rows = _table(text, "| layer |")
    for rank, row in enumerate(rows):
        for name in _names(row[1]):
            layers[name] = len(rows) - rank  # higher number = higher layer
    allowed = [(_names(r[0]), _names(r[1]), r[2]) for r in _table(text, "| deferred import |")]
    return layers, allowed


def modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def imports(mods) -> list[tuple[str, str, bool, int]]:
    """(importer, imported module, deferred, line) for every import of a project module."""
    found = []
    for name, (path, is_pkg) in mods.items():
        def visit(node, deferred):
            for child in ast.iter_child_nodes(node):
                inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                if isinstance(child, ast.Import):
                    for a in child.names:
                        if a.name.split(".")[0] in PACKAGES:
                            found.append((name, a.name, deferred, child.lineno))
                elif isinstance(child, ast.ImportFrom):
                    if child.level:
                        pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                        pkg = pkg[:len(pkg) - (child.level - 1)]
                        base = ".".join(pkg + ([child.module] if child.module else []))
                    else:
                        base = child.module or ""
                    if base.split(".")[0] not in PACKAGES:
                        continue
                    for a in child.names:
                        target = f"{base}.{a.name}"
                        found.append((name, target if target in mods else base, deferred,
                                      child.lineno))
                visit(child, inner)
        visit(ast.parse(path.read_text()), False)
    return found


def layer_of(module: str, layers: dict) -> int | None:
    best = None
    for prefix, rank in layers.items():
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return None if best is None else best[1]


def _matches(module: str, patterns: list[str]) -> bool:
    return any(module == p or (p.endswith(".*") and module.startswith(p[:-1])) for p in patterns)


def _allowed(edge, allowed) -> int | None:
    src, dst = edge[0], edge[1]
    for i, (importers, imported, _) in enumerate(allowed):
        if _matches(src, importers) and _matches(dst, imported):
            return i
    return None


MODS = modules()
LAYERS, ALLOWED = layers_and_allowed()
EDGES = [e for e in imports(MODS) if e[1] != e[0]]


def test_every_module_has_a_layer():
    assert not [m for m in MODS if layer_of(m, LAYERS) is None]


def test_imports_point_down_or_sideways():
    up = [f"{s}:{line} -> {d}" for s, d, _, line in EDGES
          if layer_of(d, LAYERS) > layer_of(s, LAYERS) and _allowed((s, d), ALLOWED) is None]
    assert not up, "imports pointing to a higher layer:\n" + "\n".join(up)


def test_deferred_imports_are_on_the_allow_list():
    deferred = [f"{s}:{line} -> {d}" for s, d, lazy, line in EDGES
                if lazy and _allowed((s, d), ALLOWED) is None]
    assert not deferred, ("imports inside functions that nothing forces there (move them to "
                          "the top of the module) or that the allow-list lacks:\n"
                          + "\n".join(deferred))


def test_allow_list_is_short_and_every_entry_is_used_and_explained():
    assert len(ALLOWED) <= MAX_ALLOWED
    used = {_allowed((s, d), ALLOWED) for s, d, _, _ in EDGES}
    for i, (importers, imported, why) in enumerate(ALLOWED):
        assert importers and imported and len(why) > 30, ALLOWED[i]
        assert i in used, f"allow-list entry {importers} -> {imported} matches no import"


def _cycles(graph: dict) -> list[list[str]]:
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    return out


def test_no_import_cycles():
    graph = {m: set() for m in MODS}
    for s, d, _, _ in EDGES:
        if d in MODS and _allowed((s, d), ALLOWED) is None:
            graph[s].add(d)
    assert not _cycles(graph)


def test_the_checker_sees_a_violation():
    """The scan is not vacuous: a made-up upward, deferred import is found and refused."""
    assert len(EDGES) > 500
    assert layer_of("chainrules.core", LAYERS) < layer_of("tenferro._src.tn.dmrg", LAYERS)
    assert _allowed(("chainrules.core", "tenferro._src.tn.dmrg"), ALLOWED) is None
    assert _cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
