"""Saving and loading graphs: a versioned, documented format with no pickled code.

A graph file is a NumPy ``.npz`` archive (a zip of ``.npy`` files) holding:

* ``graph.json`` — UTF-8 JSON (stored as a uint8 array):
  ``{"format": "tenferro-graph", "version": 2, "name": str,
     "inputs": [var], "consts": [var], "outputs": [var id],
     "eqns": [{"prim": name, "inputs": [var id], "outputs": [var], "params": {k: value},
               "source": "file:line (function)" or null}],
     "in_tree": tree, "out_tree": tree, "calls": [call], "sym_bounds": {symbol: bound}}``
  where ``var = {"id": int, "shape": [dim], "dtype": numpy dtype name}``; a dim is an int or
  ``{"sym": [coef, [[symbol, exponent], ...]]}`` (a size known only at run time, see
  ``chainrules.symbolic``; ``"sym_bounds"`` maps symbols to their static upper bounds); params
  encode tuples as
  ``{"tuple": [...]}``, dtypes as ``{"dtype": name}``, complex numbers as
  ``{"complex": [re, im]}``, a custom-rule call as ``{"call": index into "calls"}``, and
  ints/floats/bools/strings/None as themselves;
  ``tree`` is ``{"kind": "leaf"|"none"|"tuple"|"list"|"dict", "keys": [...]?,
  "children": [tree]}`` (namedtuples are stored as tuples).
  A ``call`` (version 2) is ``{"kind": "custom_vjp"|"custom_jvp", "name": str, "n_args": int,
  "programs": {"fun": program, "fwd": ..., "bwd": ...} or {"fun": ..., "jvp": ...}}`` with
  ``program = {"inputs": [var], "consts": [{"var": var, "array": name}], "eqns": [...],
  "outputs": [var id or null]}``; each call is stored once, so a rule that uses its own call
  refers back to it by index. Version-1 files (no ``calls``) load unchanged.
* ``const_<i>.npy`` — the value of ``consts[i]``; ``call_const_<k>.npy`` — constants of the
  calls' programs.

Primitives are referenced by name and looked up in ``chainrules.PRIMITIVES``. Loading refuses
files with a newer version, unknown primitives, or malformed content, with a ``GraphError``.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np

from chainrules import PRIMITIVES, ShapedArray
from chainrules.symbolic import Sym

from ..core.calls import StagedJVPCall, StagedVJPCall, _Staged
from ..core.eager import EagerTensor
from ..errors import GraphError
from ..ir.program import Eqn, Program, Var
from ..pytree import TreeDef

FORMAT = "tenferro-graph"
VERSION = 2  # 2: custom-rule calls (``calls``); files of version 1 still load


# ----------------------------------------------------------------------------- encode
class _Encoder:
    """Encodes one graph: values, variables, programs, and the custom-rule calls they use
    (each call once, by index, so a rule that refers to its own call is a finite document)."""

    def __init__(self):
        self.bounds: dict[int, int] = {}
        self.call_index: dict[int, int] = {}
        self.calls: list = []
        self.arrays: dict[str, np.ndarray] = {}

    def value(self, v):
        if isinstance(v, tuple):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, list):
            return {"tuple": [self.value(x) for x in v]}
        if isinstance(v, np.dtype):
            return {"dtype": v.name}
        if isinstance(v, (bool, np.bool_)):
            return bool(v)
        if isinstance(v, (int, np.integer)):
            return int(v)
        if isinstance(v, (float, np.floating)):
            return float(v)
        if isinstance(v, (complex, np.complexfloating)):
            return {"complex": [float(v.real), float(v.imag)]}
        if v is None or isinstance(v, str):
            return v
        if isinstance(v, Sym):
            for k, _ in v.terms:
                self.bounds[k] = Sym.make(1, {k: 1}).bound()
            return {"sym": [v.coef, [[k, e] for k, e in v.terms]]}
        if isinstance(v, _Staged):
            return {"call": self.call(v)}
        raise GraphError(f"save: cannot encode parameter value {v!r} of type {type(v).__name__}")

    def var(self, v: Var):
        return {"id": v.id, "shape": [self.value(d) for d in v.aval.shape],
                "dtype": v.aval.dtype.name}

    def eqns(self, eqns) -> list:
        return [
            {
                "prim": e.prim.name,
                "inputs": [v.id for v in e.inputs],
                "outputs": [self.var(v) for v in e.outputs],
                "params": {k: self.value(val) for k, val in e.params.items()},
                "source": e.source,
            }
            for e in eqns
        ]

    def program(self, p) -> dict:
        consts = []
        for v, c in p.consts.items():
            name = f"call_const_{len(self.arrays)}"
            self.arrays[name] = _host(c)
            consts.append({"var": self.var(v), "array": name})
        return {"inputs": [self.var(v) for v in p.inputs], "consts": consts,
                "eqns": self.eqns(p.eqns),
                "outputs": [None if v is None else v.id for v in p.outputs]}

    def call(self, c) -> int:
        idx = self.call_index.get(id(c))
        if idx is None:
            idx = self.call_index[id(c)] = len(self.calls)
            self.calls.append(None)
            self.calls[idx] = {"kind": c.kind, "name": c.name, "n_args": c.n_args,
                               "programs": {k: self.program(p) for k, p in c.programs.items()}}
        return idx

    def tree(self, td: TreeDef):
        kind = "tuple" if td.kind == "namedtuple" else td.kind
        out = {"kind": kind, "children": [self.tree(c) for c in td.children]}
        if td.kind == "dict":
            out["keys"] = [self.value(k) for k in td.meta]
        return out


def _host(c) -> np.ndarray:
    if isinstance(c, EagerTensor):
        return np.asarray(c._backend.to_numpy(c._value))
    return np.asarray(c)


def save_graph(graph, path) -> None:
    p = graph.program
    e = _Encoder()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "inputs": [e.var(v) for v in p.inputs],
        "consts": [e.var(v) for v in p.consts],
        "outputs": [v.id for v in p.outputs],
        "eqns": e.eqns(p.eqns),
        "in_tree": e.tree(graph.in_tree),
        "out_tree": e.tree(graph.out_tree),
    }
    doc["calls"] = e.calls
    doc["sym_bounds"] = {str(k): b for k, b in e.bounds.items()}
    arrays = {"graph.json": np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)}
    for i, c in enumerate(p.consts.values()):
        arrays[f"const_{i}"] = np.asarray(c)
    arrays.update(e.arrays)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


# ----------------------------------------------------------------------------- decode
class _Decoder:
    def __init__(self, bounds=None, calls=(), arrays=None):
        self.vars: dict[int, Var] = {}
        self.syms: dict[int, Sym] = {}
        self.bounds = {int(k): int(b) for k, b in (bounds or {}).items()}
        self.call_docs = list(calls)
        self.calls: dict[int, object] = {}
        self.arrays = arrays or {}

    def value(self, v):
        if isinstance(v, dict):
            if "tuple" in v:
                return tuple(self.value(x) for x in v["tuple"])
            if "dtype" in v:
                return np.dtype(v["dtype"])
            if "complex" in v:
                re, im = v["complex"]
                return complex(re, im)
            if "sym" in v:
                coef, terms = v["sym"]
                out = int(coef)
                for k, e in terms:
                    sym = self.syms.get(int(k))
                    if sym is None:
                        sym = self.syms[int(k)] = Sym.new(self.bounds.get(int(k), 1))
                    out = out * sym ** int(e)
                return out
            if "call" in v:
                return self.call(v["call"])
            raise GraphError(f"load: unknown encoded value {v!r}")
        return v

    def eqns(self, docs) -> list:
        eqns = []
        for e in docs:
            prim = PRIMITIVES.get(e["prim"])
            if prim is None:
                raise GraphError(
                    f"load: unknown primitive {e['prim']!r} (saved by a newer tenferro?)"
                )
            ins = [self.var(i) for i in e["inputs"]]
            params = {k: self.value(v) for k, v in e["params"].items()}
            outs = [self.new_var(s) for s in e["outputs"]]
            eqns.append(Eqn(prim, ins, params, outs, e.get("source")))
        _validate(eqns)
        return eqns

    def program(self, doc) -> Program:
        outer, self.vars = self.vars, {}  # a sub-program has its own values
        try:
            inputs = [self.new_var(v) for v in doc["inputs"]]
            consts = {}
            for c in doc["consts"]:
                v = self.new_var(c["var"])
                arr = self.arrays[c["array"]]
                if tuple(arr.shape) != tuple(v.aval.shape) or arr.dtype != v.aval.dtype:
                    raise GraphError(f"load: a constant does not match its declared {v.aval}")
                consts[v] = arr
            eqns = self.eqns(doc["eqns"])
            outputs = [None if i is None else self.var(i) for i in doc["outputs"]]
        finally:
            self.vars = outer
        return Program(inputs, eqns, outputs, consts)

    def call(self, idx):
        """The custom-rule call ``idx``: made once, before its programs are read, so a call
        whose rule refers to itself resolves to the same object."""
        made = self.calls.get(idx)
        if made is not None:
            return made
        if not isinstance(idx, int) or not 0 <= idx < len(self.call_docs):
            raise GraphError(f"load: reference to an unknown call {idx!r}")
        doc = self.call_docs[idx]
        kind = doc["kind"]
        if kind == "custom_vjp":
            call = StagedVJPCall(str(doc["name"]), int(doc["n_args"]), None, None, None)
        elif kind == "custom_jvp":
            call = StagedJVPCall(str(doc["name"]), int(doc["n_args"]), None, None)
        else:
            raise GraphError(f"load: unknown call kind {kind!r}")
        self.calls[idx] = call
        progs = doc["programs"]
        expected = set(call.programs)
        if set(progs) != expected:
            raise GraphError(f"load: a {kind} call needs programs {sorted(expected)}")
        # the function first: a rule may call it again (its shapes come from ``fun``)
        call.fun_program = self.program(progs["fun"])
        for k in sorted(expected - {"fun"}):
            setattr(call, f"{k}_program", self.program(progs[k]))
        return call

    def new_var(self, spec) -> Var:
        try:
            shape = tuple(self.value(d) for d in spec["shape"])
            var = Var(ShapedArray(shape, np.dtype(spec["dtype"])))
            self.vars[int(spec["id"])] = var
        except (KeyError, TypeError, ValueError) as e:
            raise GraphError(f"load: malformed value description {spec!r} ({e})") from None
        return var

    def var(self, vid) -> Var:
        v = self.vars.get(vid)
        if v is None:
            raise GraphError(f"load: value {vid} is used before it is defined (corrupt file)")
        return v

    def tree(self, t) -> TreeDef:
        kind = t["kind"]
        kids = tuple(self.tree(c) for c in t.get("children", ()))
        if kind == "leaf":
            return TreeDef("leaf", None, ())
        if kind == "none":
            return TreeDef("none", None, ())
        if kind == "dict":
            return TreeDef("dict", tuple(self.value(k) for k in t["keys"]), kids)
        if kind in ("tuple", "list"):
            return TreeDef(kind, None, kids)
        raise GraphError(f"load: unknown tree kind {kind!r}")


def load_graph(path):
    from .graph import Graph

    try:
        with np.load(path, allow_pickle=False) as z:
            doc = json.loads(bytes(z["graph.json"]).decode())
            arrays = {k: z[k] for k in z.files if k.startswith(("const_", "call_const_"))}
    except GraphError:
        raise
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise GraphError(f"load: {path} is not a readable tenferro graph file ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise GraphError(f"load: {path} is not a tenferro graph file")
    version = doc.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise GraphError(
            f"load: {path} uses graph format version {version}, newer than this tenferro "
            f"understands ({VERSION}); upgrade tenferro to load it."
        )
    d = _Decoder(doc.get("sym_bounds"), doc.get("calls", ()), arrays)
    try:
        inputs = [d.new_var(s) for s in doc["inputs"]]
        consts = {}
        for i, s in enumerate(doc["consts"]):
            v = d.new_var(s)
            arr = arrays[f"const_{i}"]
            if tuple(arr.shape) != tuple(v.aval.shape) or arr.dtype != v.aval.dtype:
                raise GraphError(f"load: constant {i} does not match its declared {v.aval}")
            consts[v] = arr
        eqns = d.eqns(doc["eqns"])
        outputs = [d.var(i) for i in doc["outputs"]]
        in_tree, out_tree = d.tree(doc["in_tree"]), d.tree(doc["out_tree"])
    except GraphError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise GraphError(f"load: {path} is corrupt ({type(e).__name__}: {e})") from None
    return Graph(Program(inputs, eqns, outputs, consts), in_tree, out_tree, doc.get("name", "f"))


def _validate(eqns):
    """Re-run shape inference: a file whose equations do not type-check is corrupt."""
    from chainrules.core import out_avals

    for e in eqns:
        try:
            avals = out_avals(e.prim, [v.aval for v in e.inputs], e.params)
        except Exception as err:
            raise GraphError(f"load: equation {e.prim.name} does not type-check ({err})") from None
        for v, a in zip(e.outputs, avals):
            if not _same(v.aval, a):
                raise GraphError(
                    f"load: equation {e.prim.name} declares output {v.aval} but computes {a}"
                )


def _same(a, b) -> bool:
    return a.dtype == b.dtype and len(a.shape) == len(b.shape) and all(
        x is y or x == y for x, y in zip(a.shape, b.shape)
    )

