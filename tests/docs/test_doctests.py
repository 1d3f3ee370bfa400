"""The Examples sections of the documented functions, and every guide under docs/guides/,
run as doctests: each ``>>>`` line is executed and its printed output compared (ELLIPSIS and
NORMALIZE_WHITESPACE are the only relaxations; ``...`` marks what is left out on purpose,
such as source locations in a printed graph)."""

import doctest
import importlib
import warnings
from pathlib import Path

import pytest

pytestmark = pytest.mark.numpy_only

ROOT = Path(__file__).resolve().parents[2]
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

# The modules of the functions whose docstrings carry full numpy-style sections and examples
# (grad, vjp, jvp, vmap, jit, make_graph, hvp, jacfwd, jacrev, hessian, checkpoint,
# custom_vjp/custom_jvp, einsum, ncon, linalg.svd/qr/eigh/eigsh, tn.ctmrg/dmrg/trg).
MODULES = [
    "tenferro._src.autodiff.reverse",
    "tenferro._src.autodiff.forward",
    "tenferro._src.autodiff.higher",
    "tenferro._src.autodiff.checkpoint",
    "tenferro._src.autodiff.custom",
    "tenferro._src.batching.api",
    "tenferro._src.traced.jit",
    "tenferro._src.traced.trace",
    "tenferro._src.contract.api",
    "tenferro._src.contract.ncon",
    "tenferro._src.linalg.dense",
    "tenferro._src.linalg.krylov",
    "tenferro._src.tn.ctmrg",
    "tenferro._src.tn.dmrg",
    "tenferro._src.tn.trg",
]

# Every function the docs promise a doctested Examples section for (the list).
DOCUMENTED = [
    "grad", "value_and_grad", "vjp", "jvp", "vmap", "jit", "make_graph", "hvp", "jacfwd",
    "jacrev", "hessian", "checkpoint", "custom_vjp", "custom_jvp", "einsum", "ncon",
    "linalg.svd", "linalg.qr", "linalg.eigh", "linalg.eigsh", "tn.ctmrg", "tn.dmrg", "tn.trg",
]
SECTIONS = ("Parameters", "Returns", "Raises", "Notes", "Examples")

GUIDES = sorted(p for p in (ROOT / "docs" / "guides").glob("*.rst") if p.stem != "index")


def _run(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        runner.run(test, out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(out)


def _examples(module: str) -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    mod = importlib.import_module(module)
    return [t for t in finder.find(mod, mod.__name__) if t.examples]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples(module):
    tests = _examples(module)
    assert tests, f"{module} has no doctest examples"
    for t in tests:
        _run(t)


def _resolve(name: str):
    import tenferro

    obj = tenferro
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", DOCUMENTED)
def test_documented_function_has_every_section(name):
    """The documented functions have the numpy-style sections, and their examples are among
    the doctests run above (so the examples are checked, not only shown)."""
    obj = _resolve(name)
    doc = obj.__doc__ or ""
    for section in SECTIONS:
        assert f"\n    {section}\n    {'-' * len(section)}\n" in doc, f"{name}: no {section}"
    assert obj.__module__ in MODULES, f"{name}: {obj.__module__} is not run by this test"
    assert ">>> " in doc.split("Examples\n")[1], f"{name}: Examples has no doctest"


# Optional libraries a guide imports (all in the `test` extra), with the reason to skip
GUIDE_NEEDS = {"interop": ("array_api_compat", "einops", "cotengra", "quimb")}


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_guide(guide):
    for module in GUIDE_NEEDS.get(guide.stem, ()):
        pytest.importorskip(module, reason=f"the {guide.stem} guide uses {module} (the `test` "
                                           f"extra: pip install -e '.[test]')")
    text = guide.read_text()
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, guide.stem, str(guide), 0)
    assert test.examples, f"{guide.name} has no code (write it as >>> blocks)"
    _run(test)
