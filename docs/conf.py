"""Sphinx configuration of tenferro's documentation (design/docs.md says why Sphinx).

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (warnings are errors:
a missing or broken reference fails the build)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document the checkout's tenferro, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "tenferro"
author = "the tenferro developers"
copyright = "the tenferro developers"  # noqa: A001  (Sphinx's name)

import re  # noqa: E402

# the version is pyproject.toml's (one place to change it)
release = version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(),
                              re.M).group(1)

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "tenferro_docs",
]

exclude_patterns = ["_build", "gen_api.py", "_ext"]
templates_path = ["_templates"]

# autosummary writes one page per public name (docs/api/generated, not committed)
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "signature"
autodoc_class_signature = "mixed"
autodoc_inherit_docstrings = False

# numpy-style docstrings (Parameters, Returns, Raises, Notes, Examples)
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_preprocess_types = False

html_theme = "alabaster"
html_title = f"tenferro {release}"
html_static_path: list[str] = []
