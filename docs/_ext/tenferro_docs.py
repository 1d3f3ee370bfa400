"""Sphinx glue for tenferro's docstrings.

tenferro's docstrings are written to read well in ``help()``: ``|x|`` is an absolute value and
``(C, *kernel_size)`` a shape, not reStructuredText substitutions or emphasis. This extension
escapes those characters (outside inline literals, literal blocks and doctests) before Sphinx
parses a docstring, gives NumPy's dtype objects a docstring of their own, and takes
autosummary's one-line summaries at a sentence end that is not inside an inline literal."""

from __future__ import annotations

import re

import numpy as np

_PROTECTED = re.compile(
    r"(``.+?``"  # inline literal
    r"|:[\w:.-]+:`[^`]+`"  # role
    r"|`[^`]+`_{0,2}"  # interpreted text / hyperlink reference
    r"|(?<![\w*\\])\*\*(?=\S).+?(?<=\S)\*\*(?![\w*])"  # strong
    r"|(?<![\w*\\])\*(?=[^\s*]).*?(?<=[^\s*\\])\*(?![\w*]))"  # emphasis
)


def escape_text(text: str) -> str:
    """Escape ``|`` and unpaired ``*`` in one line of running text."""
    parts = _PROTECTED.split(text)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 1:  # protected markup
            out.append(part)
        else:
            part = re.sub(r"(?<!\\)\|", r"\\|", part)
            part = re.sub(r"(?<!\\)\*", r"\\*", part)
            out.append(part)
    return "".join(out)


def escape_lines(lines: list[str]) -> list[str]:
    """Escape running text; keep literal blocks, directives' bodies and doctests as they are."""
    out: list[str] = []
    block_indent = None  # indentation of the line that opened a literal block / directive
    in_doctest = False
    for line in lines:
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                out.append(line)
                continue
            block_indent = None
        if in_doctest:
            if stripped:
                out.append(line)
                continue
            in_doctest = False
        if stripped.startswith(">>>"):
            in_doctest = True
            out.append(line)
            continue
        if stripped.startswith(".. "):
            block_indent = indent
            out.append(line)
            continue
        # a list item's marker stays markup (also after a field name: ``:returns: * **x**``)
        bullet = re.match(r"\s*(?::[^:`]+:\s+)?(?:[*+-]|\d+\.) ", line)
        cut = bullet.end() if bullet else 0
        text = line[:cut] + escape_text(line[cut:])
        if stripped.endswith("::"):
            block_indent = indent
        out.append(text)
    return out


def process_docstring(app, what, name, obj, options, lines):
    if isinstance(obj, np.dtype):
        lines[:] = [f"The ``{obj.name}`` data type (a :class:`numpy.dtype`; tenferro's dtypes "
                    "are NumPy's, so ``tenferro.float64 == numpy.float64``)."]
        return
    lines[:] = escape_lines(lines)


def _first_sentence(doc: list[str], document) -> str:
    """The text up to the first sentence end that is not inside an inline literal."""
    paragraph = []
    for line in doc:
        if not line.strip():
            if paragraph:
                break
            continue
        paragraph.append(line.strip())
    text = " ".join(paragraph)
    literal = False
    i = 0
    while i < len(text):
        if text.startswith("``", i):
            literal = not literal
            i += 2
            continue
        if not literal and text[i] == "." and (i + 1 == len(text) or text[i + 1] == " "):
            return text[: i + 1]
        i += 1
    return text


def _public_class_documenter():
    from sphinx.ext.autodoc import ClassDocumenter

    class PublicClassDocumenter(ClassDocumenter):
        """Documents a class under its public names only: the defining module is private
        (``tenferro._src``), so no ``:canonical:`` name is registered there (two public
        names of one class would otherwise describe the private one twice)."""

        priority = ClassDocumenter.priority + 1

        def get_canonical_fullname(self) -> str | None:
            return None

    return PublicClassDocumenter


def setup(app):
    from sphinx.ext import autosummary

    app.setup_extension("sphinx.ext.autodoc")
    app.add_autodocumenter(_public_class_documenter(), override=True)

    autosummary.extract_summary = _first_sentence
    app.connect("autodoc-process-docstring", process_docstring, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
