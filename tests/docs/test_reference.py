"""The API reference (docs/api/*.rst) lists every public module and every name of its
``__all__``: a public name missing from the reference, or a stale one, fails here (rerun
``python docs/gen_api.py``). The Sphinx build itself, with warnings as errors, runs in
test_build.py."""

import importlib
import re
import types
from pathlib import Path

import pytest

import tenferro as tf

pytestmark = pytest.mark.numpy_only

DOCS = Path(__file__).resolve().parents[2] / "docs"


def public_modules() -> list[str]:
    """Every public module: each file of the tenferro package outside ``_src``."""
    root = Path(tf.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if "_src" not in parts:
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def autosummary_entries(text: str) -> list[str]:
    """The names listed in the ``.. autosummary::`` directives of one page."""
    names = []
    for block in re.finditer(r"^\.\. autosummary::\n((?:[ \t]+.*\n|\n)*)", text, re.M):
        for line in block.group(1).splitlines():
            line = line.strip()
            if line and not line.startswith(":"):
                names.append(line.lstrip("~"))
    return names


def submodule_links(text: str, module: str) -> list[str]:
    return re.findall(rf"^\* :mod:`{re.escape(module)}\.(\w+)`", text, re.M)


def test_every_public_module_has_a_page_in_the_index():
    modules = public_modules()
    assert len(modules) >= 20 and "tenferro.linalg" in modules
    index = (DOCS / "api" / "index.rst").read_text()
    listed = re.findall(r"^   (tenferro[\w.]*)$", index, re.M)
    assert sorted(listed) == sorted(modules), set(listed) ^ set(modules)
    pages = {p.stem for p in (DOCS / "api").glob("tenferro*.rst")}
    assert pages == set(modules), pages ^ set(modules)


@pytest.mark.parametrize("name", public_modules())
def test_page_lists_exactly_the_modules_all(name):
    module = importlib.import_module(name)
    text = (DOCS / "api" / f"{name}.rst").read_text()
    assert f".. automodule:: {name}\n" in text and f".. currentmodule:: {name}\n" in text
    objects = autosummary_entries(text)
    subs = submodule_links(text, name)
    assert len(objects) == len(set(objects)), f"{name}: a name listed twice"
    missing = set(module.__all__) - set(objects) - set(subs)
    stale = (set(objects) | set(subs)) - set(module.__all__)
    assert not missing, f"{name}: not in docs/api/{name}.rst (run docs/gen_api.py): {missing}"
    assert not stale, f"{name}: docs/api/{name}.rst lists names not in __all__: {stale}"
    for s in subs:  # a submodule is linked to its own page, not documented as a name
        assert isinstance(getattr(module, s), types.ModuleType), (name, s)


def test_autosummary_parser_reads_a_page():
    """The parser the checks above rely on: entries, options and links."""
    text = (".. autosummary::\n   :toctree: generated\n\n   grad\n   ~vjp\n\nText\n"
            "* :mod:`tenferro.linalg`\n")
    assert autosummary_entries(text) == ["grad", "vjp"]
    assert submodule_links(text, "tenferro") == ["linalg"]
