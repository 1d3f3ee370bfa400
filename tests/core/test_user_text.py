"""What users read (docstrings, messages, examples, the README) speaks of the library only and
points at names that exist."""

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest

import tenferro

pytestmark = pytest.mark.numpy_only

ROOT = Path(__file__).resolve().parents[2]

#: talk about how the project is run rather than about the library
PROCESS = re.compile(
    r"\bissues? ?#?\d+|\bissue's|\b(?:the|this|that) task\b|\bsessions?\b|\bacceptance\b|"
    r"\bthe lead\b|\bworktree\b|\bhardening\b", re.IGNORECASE)


def public_modules() -> list:
    """Every public module: ``tenferro`` and the facades outside ``tenferro/_src``."""
    names = []
    for path in sorted((ROOT / "tenferro").rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        if "_src" not in rel.parts:
            names.append(".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts))
    return [importlib.import_module(n) for n in names]


def public_docstrings():
    """(where, text) for each public module and each public object's docstring, methods of
    public classes included: what ``help()`` shows."""
    for mod in public_modules():
        yield mod.__name__, mod.__doc__ or ""
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            yield f"{mod.__name__}.{name}", inspect.getdoc(obj) or ""
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    doc = getattr(member, "__doc__", None)
                    if attr.startswith("__") or not isinstance(doc, str):
                        continue
                    yield f"{mod.__name__}.{name}.{attr}", doc


def source_strings(path: Path):
    """Every string constant of a module (docstrings and messages), with its line."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_library_text_speaks_of_the_library_only():
    found = []
    for package in ("tenferro", "chainrules"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for line, text in source_strings(path):
                found += [f"{path.relative_to(ROOT)}:{line}: ...{m.group(0)}..."
                          for m in PROCESS.finditer(text)]
    assert not found, "\n".join(found)


def test_examples_and_readme_speak_of_the_library_only():
    paths = sorted((ROOT / "examples").glob("*.py")) + [ROOT / "README.md"]
    found = [f"{p.relative_to(ROOT)}: ...{m.group(0)}..." for p in paths
             for m in PROCESS.finditer(p.read_text())]
    assert not found, "\n".join(found)


def _resolves(ref: str) -> bool:
    obj, parts = tenferro, ref.split(".")
    for i, part in enumerate(parts[1:], 1):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        try:
            obj = importlib.import_module(".".join(parts[:i + 1]))
        except ImportError:
            return False
    return True


def test_public_docstrings_name_only_public_modules_and_objects():
    """``tenferro.x.y`` in a docstring users read is importable or an attribute."""
    bad = []
    for where, doc in public_docstrings():
        for ref in re.findall(r"\btenferro(?:\.[A-Za-z_]\w*)+", doc):
            if not _resolves(ref):
                bad.append(f"{where}: {ref}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", ["tenferro.symmetric"])
def test_module_contents_lists_name_existing_functions(module):
    """The module docstring's list of contents names functions that exist (there or in
    ``tenferro``)."""
    mod = importlib.import_module(module)
    missing = [name for name in re.findall(r"``([A-Za-z_]\w*)``", mod.__doc__)
               if not (hasattr(mod, name) or hasattr(tenferro, name))]
    assert not missing
