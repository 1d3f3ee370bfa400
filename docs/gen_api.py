"""Writes ``docs/api/<module>.rst`` for every public module of tenferro (every file of the
package outside ``tenferro/_src``): one page per module, an autosummary list of its
``__all__`` (each name gets a generated page) and links to its public submodules.

Run it after adding a public name or module (``python docs/gen_api.py``);
tests/docs/test_reference.py fails when a page and its module's ``__all__`` disagree."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import tenferro

DOCS = Path(__file__).resolve().parent
HEADER = ".. This page is written by docs/gen_api.py from the module's __all__; rerun it.\n\n"


def public_module_names() -> list[str]:
    """Every public module: each file of the tenferro package outside ``_src``."""
    root = Path(tenferro.__file__).parent
    names = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if "_src" in parts:
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def split_names(module: types.ModuleType) -> tuple[list[str], list[str]]:
    """``(names documented on their own page, public submodules)`` of ``module.__all__``."""
    objects, submodules = [], []
    for name in module.__all__:
        value = getattr(module, name)
        (submodules if isinstance(value, types.ModuleType) else objects).append(name)
    return objects, submodules


def page(name: str) -> str:
    module = importlib.import_module(name)
    objects, submodules = split_names(module)
    lines = [HEADER + f"``{name}``", "=" * (len(name) + 4), "",
             f".. automodule:: {name}", "   :no-members:", "",
             f".. currentmodule:: {name}", ""]
    if submodules:
        lines += ["Submodules", "----------", ""]
        lines += [f"* :mod:`{name}.{s}`" for s in submodules] + [""]
    if objects:
        lines += ["Names", "-----", "", ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {o}" for o in objects] + [""]
    return "\n".join(lines)


def main() -> None:
    names = public_module_names()
    (DOCS / "api").mkdir(exist_ok=True)
    for name in names:
        (DOCS / "api" / f"{name}.rst").write_text(page(name))
    toc = [HEADER + "API reference", "=============", "",
           "Every public module of tenferro and every name in its ``__all__``.", "",
           ".. toctree::", "   :maxdepth: 1", ""]
    toc += [f"   {n}" for n in names] + [""]
    (DOCS / "api" / "index.rst").write_text("\n".join(toc))


if __name__ == "__main__":
    main()
