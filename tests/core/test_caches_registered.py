"""Every cache is a registered, locked ``BoundedCache`` (``tenferro.caches.sizes()`` reports
it, ``clear()`` empties it, ``put`` evicts under a lock). The scan reads every module of
``chainrules`` and ``tenferro`` for module-level dicts that functions write into; each such
dict must be a ``BoundedCache`` or a registry named below with the reason it is not a cache
(its entries define something, so none may be dropped)."""

import ast
from pathlib import Path

import tenferro as tf

ROOT = Path(__file__).resolve().parents[2]

REGISTRIES = {
    "chainrules/caches.py REGISTRY": "the registry of caches itself",
    "chainrules/core.py PRIMITIVES": "every primitive by name (graph files look them up)",
    "chainrules/symbolic.py _bounds": "a run-time size's upper bound is part of its definition",
    "tenferro/_src/backends/__init__.py _backends": "one backend per device, made once",
    "tenferro/_src/errors.py _FILE_ERRORS": "one error class per OSError subclass (pickling "
                                            "rebuilds them by identity)",
    "tenferro/_src/lax.py _FUNCTIONS": "one function per primitive, made on first use",
    "tenferro/_src/nn/modules.py _PARAMETERS": "weak references to live parameters",
    "tenferro/_src/pytree.py _REGISTRY": "pytree node types the user registered",
    "tenferro/_src/pytree.py _SERIAL_BY_CLASS": "pytree types registered for graph files",
    "tenferro/_src/pytree.py _SERIAL_BY_NAME": "the same, by name",
    "tenferro/_src/symmetric/tensor.py _CLASSES": "one class per block structure, registered as "
                                                  "a pytree node: its identity must not change",
    "tenferro/_src/tn/dispatch.py _IMPLEMENTATIONS": "tensor types with their own tn algorithms",
}


def _written_module_dicts(path: Path) -> set[str]:
    """Names of module-level dicts that some function of ``path`` writes into."""
    tree = ast.parse(path.read_text())
    dicts = set()
    for node in tree.body:
        target = value = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and (isinstance(value, ast.Dict) or (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                and value.func.id in ("dict", "OrderedDict", "defaultdict"))):
            dicts.add(target.id)
    written = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for n in ast.walk(fn):
            targets = n.targets if isinstance(n, ast.Assign) else (
                [n.target] if isinstance(n, ast.AugAssign) else [])
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    written.add(t.value.id)
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and isinstance(n.func.value, ast.Name)
                    and n.func.attr in ("setdefault", "update", "pop", "popitem", "clear")):
                written.add(n.func.value.id)
    return dicts & written


def test_every_module_level_cache_is_a_registered_bounded_cache():
    found = {f"{p.relative_to(ROOT).as_posix()} {name}"
             for top in ("chainrules", "tenferro") for p in sorted((ROOT / top).rglob("*.py"))
             for name in _written_module_dicts(p)}
    assert found - set(REGISTRIES) == set(), (
        "module-level dicts written at run time that are neither a BoundedCache nor a listed "
        "registry: make them tenferro.caches.BoundedCache (or chainrules.caches) instances")
    assert set(REGISTRIES) <= found, "a listed registry is gone: drop it from the list"


def test_the_scan_finds_a_plain_dict_cache(tmp_path):
    """The scan itself: a module-level dict cleared and refilled in a function is found."""
    src = tmp_path / "m.py"
    src.write_text("_C: dict = {}\n\n\ndef f(k):\n    if len(_C) > 9:\n        _C.clear()\n"
                   "    _C[k] = 1\n")
    assert _written_module_dicts(src) == {"_C"}


def test_the_symmetric_and_symbolic_caches_are_registered():
    names = set(tf.caches.sizes())
    for name in ("symmetric contraction plans", "symmetric DMRG block pairs",
                 "symmetric leg fusions", "symmetric fused legs", "symmetric allowed sectors",
                 "symbolic size proofs", "symbolic size arithmetic", "validated optimizer names"):
        assert name in names, name
    assert all(n <= m for n, m in tf.caches.sizes().values())
