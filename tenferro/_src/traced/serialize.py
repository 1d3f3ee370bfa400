"""Saving and loading graphs: a versioned, documented format with no pickled code.

The format, its versions and every rule a file must satisfy are in design/graph-files.md. In
short, a graph file is a NumPy ``.npz`` (a zip of ``.npy`` entries): ``graph.json.npy`` holds
a JSON description (primitives by name, values with shapes and dtypes, parameters, pytree
structure, bounds of run-time sizes, and since version 2 a table of custom-rule calls with
their sub-programs), ``const_<i>.npy`` the value of constant ``i`` and ``call_const_<k>.npy``
the constants of the calls' programs.

Files are untrusted input. ``load`` checks the archive's sizes before decompressing anything,
the JSON document's size and nesting before decoding it, and every value, parameter and
equation before building the graph (shape inference is re-run and must agree with the file),
so a corrupt or hostile file raises ``GraphFormatError`` naming what is wrong, within limits
on memory and time. Saving shares no mutable state between threads.
"""

from __future__ import annotations

import errno
import functools
import inspect
import json
import os
import stat

import numpy as np

from chainrules import PRIMITIVES
from chainrules.core import ShapedArray, out_avals
from chainrules.params import DTYPES, MAX_PARAM_INT, MAX_RANK, BadParam, check_shape
from chainrules.symbolic import Sym, bound_of, encode_size, floordiv, sym_max, sym_min

from ..core.calls import StagedJVPCall, StagedVJPCall, _Staged
from ..core.eager import EagerTensor
from ..errors import GraphError, GraphFileError, GraphFormatError
from ..ir.gcpause import gc_paused
from ..ir.program import Eqn, Program, Var
from ..pytree import TreeDef, node_from_value, node_serialization
from .graph_archive import Archive, ArchiveError

FORMAT = "tenferro-graph"
VERSION = 2
"""The format version ``Graph.save`` writes (2 added the ``calls`` table)."""
OLDEST_VERSION = 1
"""The oldest format version ``load`` reads."""

MAX_ELEMENTS = 2**32
"""Default limit on the element count of every array a file declares (values, constants and
shape parameters such as ``full``'s): 2**32 elements are 32 GiB of float64. Nothing is
allocated for declared shapes at load time, but running the graph would."""
MAX_BYTES = 2**30
"""Default limit on the bytes of constants a file may hold (what ``load`` reads into memory)."""
MAX_JSON_BYTES = 64 * 2**20
"""Limit on the size of the JSON description."""
MAX_EQNS = 250_000
"""Default limit on the number of equations a file holds (the graph's and its calls'):
loading takes time and memory in proportion to it (design/graph-files.md has the figures)."""
FILE_SLACK = 16 * 2**20
"""Bytes a file may hold beyond its JSON description and constants (zip and ``.npy``
headers): the default ``max_file_bytes`` is ``max_bytes + MAX_JSON_BYTES + FILE_SLACK``."""
MAX_JSON_DEPTH = 160
"""Limit on the nesting depth of the JSON description (pytrees nest two levels per level)."""
MAX_TREE_DEPTH = 64
"""Limit on the nesting depth of the input and output pytrees."""
MAX_VALUE_DEPTH = 8
"""Limit on the nesting depth of a parameter value (tuples of tuples...)."""
MAX_SYM_EXPONENT = MAX_RANK
"""Largest exponent of a symbol in a run-time size (axes merged by reshapes)."""
MAX_CALL_DEPTH = 16
"""Limit on how deeply custom-rule calls nest inside each other's programs."""
_CALL_PROGRAMS = {"custom_vjp": ("fun", "fwd", "bwd"), "custom_jvp": ("fun", "jvp")}


# ----------------------------------------------------------------------------- encode
class _Encoder:
    """Encodes one graph; collects the bounds of the run-time sizes it meets and the
    custom-rule calls it uses (each call once, by index, so a rule that uses its own call is a
    finite document), per save, so concurrent saves share nothing."""

    def __init__(self):
        self.bounds: dict[int, int] = {}
        self.call_index: dict[int, int] = {}
        self.calls: list = []
        self.arrays: dict[str, np.ndarray] = {}

    def value(self, v, depth=0):
        if depth > MAX_VALUE_DEPTH:
            raise GraphError(f"save: parameter values nest deeper than {MAX_VALUE_DEPTH} levels")
        if isinstance(v, (tuple, list)):
            return {"tuple": [self.value(x, depth + 1) for x in v]}
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
            for k in v.symbols():
                self.bounds[k] = bound_of(Sym.make(1, {k: 1}))
            return encode_size(v)
        if isinstance(v, _Staged):
            return {"call": self.call(v)}
        raise GraphError(f"save: cannot encode parameter value {v!r} of type {type(v).__name__}")

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

    def call(self, c) -> int:
        idx = self.call_index.get(id(c))
        if idx is None:
            idx = self.call_index[id(c)] = len(self.calls)
            self.calls.append(None)  # reserved: the call's programs may refer to it
            self.calls[idx] = {"kind": c.kind, "name": c.name, "n_args": c.n_args,
                               "programs": {k: self.program(p) for k, p in c.programs.items()}}
        return idx

    def program(self, p) -> dict:
        consts = []
        for v, c in p.consts.items():
            k = len(self.arrays)
            self.arrays[f"call_const_{k}"] = _host(c)
            consts.append({"var": self.var(v), "array": k})
        return {"inputs": [self.var(v) for v in p.inputs], "consts": consts,
                "eqns": self.eqns(p.eqns),
                "outputs": [None if v is None else v.id for v in p.outputs]}

    def var(self, v: Var):
        return {"id": v.id, "shape": [self.value(d) for d in v.aval.shape],
                "dtype": v.aval.dtype.name}

    def tree(self, td: TreeDef, depth=0):
        if depth > MAX_TREE_DEPTH:
            raise GraphError(f"save: the argument or result structure nests deeper than "
                             f"{MAX_TREE_DEPTH} levels")
        kind = "tuple" if td.kind == "namedtuple" else td.kind
        out = {"kind": kind, "children": [self.tree(c, depth + 1) for c in td.children]}
        node = node_serialization(td.meta) if td.kind == "namedtuple" else None
        if node is not None:  # a registered class that knows how to write itself
            out.update(kind="node", name=node[0], aux=self.value(node[1]))
        if td.kind == "dict":
            out["keys"] = [self.value(k) for k in td.meta]
        return out


def save_graph(graph, path) -> None:
    p = graph.program
    if any(v is None for v in p.outputs):
        raise GraphError("save: the graph has a symbolic-zero output; it cannot be saved")
    enc = _Encoder()
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "name": graph.name,
        "inputs": [enc.var(v) for v in p.inputs],
        "consts": [enc.var(v) for v in p.consts],
        "outputs": [v.id for v in p.outputs],
        "eqns": enc.eqns(p.eqns),
        "in_tree": enc.tree(graph.in_tree),
        "out_tree": enc.tree(graph.out_tree),
    }
    doc["calls"] = enc.calls
    doc["sym_bounds"] = {str(k): b for k, b in enc.bounds.items()}
    arrays = {"graph.json": np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)}
    for i, c in enumerate(p.consts.values()):
        arrays[f"const_{i}"] = np.asarray(c)
    arrays.update(enc.arrays)
    if hasattr(path, "write"):  # an open binary file (or io.BytesIO: pickling a Graph)
        np.savez(path, **arrays)
        return
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _host(c) -> np.ndarray:
    if isinstance(c, EagerTensor):
        return np.asarray(c._backend.to_numpy(c._value))
    return np.asarray(c)


# ----------------------------------------------------------------------------- load
def read_graph(path, *, max_elements: int = MAX_ELEMENTS, max_bytes: int = MAX_BYTES,
               max_eqns: int = MAX_EQNS, max_file_bytes: int | None = None):
    """The parts of a graph file written by ``Graph.save``: ``(program, in_tree, out_tree,
    name)``, every part checked (``traced.graph.load`` documents the limits and errors), in
    time and memory proportional to the file's size."""
    if max_file_bytes is None:
        max_file_bytes = max_bytes + MAX_JSON_BYTES + FILE_SLACK if type(max_bytes) is int \
            else max_bytes
    for name, lim in (("max_elements", max_elements), ("max_bytes", max_bytes),
                      ("max_eqns", max_eqns), ("max_file_bytes", max_file_bytes)):
        if type(lim) is not int or lim < 0:
            raise GraphError(f"load: {name} must be a non-negative int, got {lim!r}")
    if not hasattr(path, "read") and not isinstance(path, (str, bytes, os.PathLike)):
        raise GraphError(f"load: expected a file path or an open binary file, got "
                         f"{type(path).__name__}.")
    with gc_paused():  # millions of small acyclic objects (see ir/gcpause.py)
        return _load(path, max_elements, max_bytes, max_eqns, max_file_bytes)


def _load(path, max_elements, max_bytes, max_eqns, max_file_bytes):
    if hasattr(path, "read"):
        where = str(getattr(path, "name", path))
        _check_open_file(path, where, max_file_bytes)
        fh = path
    else:
        where = os.fsdecode(path)
        fh = _open(where, max_file_bytes)
    try:
        arc = _container(where, lambda: Archive(fh))
        try:
            raw = _container(where, lambda: arc.read_json(MAX_JSON_BYTES))
            doc = _parse_json(raw, where)
            del raw
            _check_header(doc, where)
            d = _Decoder(where, max_elements, max_eqns)
            d.bounds = d.sym_bounds(doc.get("sym_bounds", {}))
            d.call_docs = d.list(doc.get("calls", []), "calls")
            inputs = [d.new_var(s, f"inputs[{i}]", static=True)
                      for i, s in enumerate(d.list(doc["inputs"], "inputs"))]
            const_vars = [d.new_var(s, f"consts[{i}]", static=True)
                          for i, s in enumerate(d.list(doc["consts"], "consts"))]
            eqns = d.eqns(doc["eqns"], "eqns")
            outputs = [d.var(v, f"outputs[{i}]")
                       for i, v in enumerate(d.list(doc["outputs"], "outputs"))]
            in_tree = d.tree(doc["in_tree"], "in_tree")
            out_tree = d.tree(doc["out_tree"], "out_tree")
            _check_trees(d, in_tree, out_tree, len(inputs), len(outputs))
            name = doc["name"]
            if type(name) is not str:
                d.fail("name", f"expected a string, got {_describe(name)}")
            del doc
            consts = _read_consts(arc, const_vars, max_bytes, where, d.call_consts)
        finally:
            arc.close()
    finally:
        if fh is not path:
            fh.close()
    return Program(inputs, eqns, outputs, consts), in_tree, out_tree, name


_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def _open(where: str, max_file_bytes: int):
    """Open a graph file for reading: only a regular file (after following symbolic links),
    checked before opening (so a FIFO is never opened and a device never read) and again on
    the open descriptor (in case the path changed in between; the open does not block)."""
    try:
        _check_regular(os.stat(where), where, max_file_bytes)
        fd = os.open(where, _OPEN_FLAGS)
    except OSError as e:
        if isinstance(e, GraphError):
            raise
        hint = ("check the path (Graph.save(path) writes the file; tenferro.load(path) reads it)"
                if isinstance(e, FileNotFoundError) else "give the path of a readable file")
        raise GraphFileError.like(e, f"load: cannot open {where!r}: {e.strerror}; {hint}",
                                  where) from e
    try:
        _check_regular(os.fstat(fd), where, max_file_bytes)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _check_open_file(fh, where: str, max_file_bytes: int) -> None:
    """An open file given to ``load``: when it has a descriptor, the same checks as a path."""
    try:
        fd = fh.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation: e.g. BytesIO
        return
    _check_regular(os.fstat(fd), where, max_file_bytes)


def _check_regular(st, where: str, max_file_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        fmt = stat.S_IFMT(st.st_mode)
        kind = _FILE_KINDS.get(fmt, "not a regular file")
        real = os.path.realpath(where)
        if real != os.path.abspath(where):
            kind += f" (the path leads to {real!r})"
        code = errno.EISDIR if fmt == stat.S_IFDIR else errno.EINVAL
        cause = (IsADirectoryError if code == errno.EISDIR else OSError)(code, kind, where)
        raise GraphFileError.like(cause, f"load: cannot open {where!r}: it is {kind}, not a "
                                         f"graph file; give the path of a file written by "
                                         f"Graph.save", where)
    if st.st_size > max_file_bytes:
        _fail(where, f"the file is {st.st_size} bytes, more than max_file_bytes="
                     f"{max_file_bytes}; if the file is trusted, load it with a larger "
                     f"max_file_bytes (and max_bytes, if its constants are that large)")


_FILE_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
               stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
               stat.S_IFSOCK: "a socket"}


def _fail(where: str, msg: str):
    raise GraphFormatError(f"load: {where}: {msg}")


def _container(where, read):
    """Run a read of the zip container, turning whatever a damaged archive raises inside
    ``zipfile``/``zlib``/NumPy's header parser into ``GraphFormatError``."""
    try:
        return read()
    except ArchiveError as e:
        _fail(where, str(e))
    except Exception as e:  # BadZipFile, EOFError, zlib.error, OSError, struct.error, ...
        _fail(where, f"not a readable tenferro graph file ({type(e).__name__}: {e})")


def _read_consts(arc, const_vars, max_bytes, where, call_consts=()):
    """The graph's constants, and (filled into their programs) those of its calls."""
    _container(where, lambda: arc.check_consts(len(const_vars)))
    _container(where, lambda: arc.check_consts(len(call_consts), call=True))
    total = sum(v.aval.size * v.dtype.itemsize
                for v in const_vars + [v for v, _ in call_consts])
    if total > max_bytes:
        _fail(where, f"its constants take {total} bytes, more than max_bytes={max_bytes}; if the "
                     f"file is trusted, load it with a larger max_bytes")
    for k, (v, program) in enumerate(call_consts):
        program.consts[v] = _container(
            where, lambda k=k, v=v: arc.read_const(k, v.aval.shape, v.dtype, call=True))
    return {v: _container(where, lambda i=i, v=v: arc.read_const(i, v.aval.shape, v.dtype))
            for i, v in enumerate(const_vars)}


def _no_duplicate_keys(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        dup = next(k for k in keys if keys.count(k) > 1)
        raise GraphFormatError(f"graph.json: the key {dup!r} appears twice in one object")
    return out


def _parse_json(raw: bytes, where: str):
    try:
        doc = json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except GraphFormatError as e:
        _fail(where, str(e))
    except RecursionError:
        _fail(where, f"graph.json nests too deeply (the limit is {MAX_JSON_DEPTH} levels)")
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, int too large to parse
        _fail(where, f"graph.json is not valid UTF-8 JSON ({type(e).__name__}: {e})")
    if _json_depth(doc, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        _fail(where, f"graph.json nests more than {MAX_JSON_DEPTH} levels deep")
    if type(doc) is not dict:
        _fail(where, f"graph.json must hold an object, not {_describe(doc)}")
    return doc


def _json_depth(doc, limit: int) -> int:
    """Nesting depth of a parsed JSON value, level by level over its objects and lists only
    (one short loop per container: linear in the document; stops once past ``limit``)."""
    depth, level = 0, [doc] if type(doc) in (dict, list) else []
    while level and depth <= limit:
        depth += 1
        nxt = []
        for obj in level:
            nxt += [v for v in (obj.values() if type(obj) is dict else obj)
                    if type(v) is dict or type(v) is list]
        level = nxt
    return depth


_EQN_KEYS = frozenset(("prim", "inputs", "outputs", "params"))
_EQN_KEYS_SRC = _EQN_KEYS | {"source"}
_VAR_KEYS = frozenset(("id", "shape", "dtype"))
_PLAIN = (bool, int, float, str)

_REQUIRED = ("format", "version", "name", "inputs", "consts", "outputs", "eqns", "in_tree",
             "out_tree")
_OPTIONAL = ("sym_bounds", "calls")  # absent in early version-1 files; calls: version 2


def _check_header(doc: dict, where: str) -> None:
    """The format tag and version come first: a newer file gets the version message, not a
    complaint about keys this tenferro does not know."""
    fmt = doc.get("format")
    if fmt != FORMAT:
        _fail(where, f"not a tenferro graph file (its format field is {_describe(fmt)}, "
                     f"expected {FORMAT!r})")
    reads = (f"this tenferro reads graph format version {VERSION}" if OLDEST_VERSION == VERSION
             else f"this tenferro reads graph format versions {OLDEST_VERSION} to {VERSION}")
    if "version" not in doc:
        _fail(where, f"the file has no format version; {reads}. The file is damaged or was not "
                     f"written by Graph.save: save the graph again.")
    version = doc["version"]
    if type(version) is not int:
        _fail(where, f"the file's format version {_describe(version)} is not an integer; "
                     f"{reads}. The file is damaged: save the graph again.")
    if version > VERSION:
        _fail(where, f"the file uses graph format version {version}, newer than this tenferro "
                     f"understands; {reads}. Upgrade tenferro to load it.")
    if version < OLDEST_VERSION:
        _fail(where, f"the file uses graph format version {version}, which is no longer "
                     f"supported; {reads}. Load it with the older tenferro that wrote it and "
                     f"save it again with this one.")
    _check_keys(doc, _REQUIRED, _OPTIONAL, lambda msg: _fail(where, msg))


def _check_keys(obj: dict, required, optional, fail) -> None:
    missing = [k for k in required if k not in obj]
    if missing:
        fail(f"missing key {missing[0]!r}")
    extra = [k for k in obj if k not in required and k not in optional]
    if extra:
        fail(f"unexpected key {extra[0]!r}")


def _describe(v) -> str:
    text = repr(v)
    text = text if len(text) <= 60 else text[:57] + "..."
    kind = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number", type(None): "null"}.get(type(v), "a value")
    return f"{kind} {text}"


@functools.cache
def _arity(prim) -> tuple[int, bool]:
    """(number of operands, whether more may follow), from the signature of ``impl``."""
    params = list(inspect.signature(prim.impl).parameters.values())[1:]  # skip xp
    fixed = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    return fixed, any(p.kind == p.VAR_POSITIONAL for p in params)


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape  # sizes compare by identity first


def _symbols(value, out: set) -> set:
    """The run-time symbols mentioned anywhere in a decoded parameter value."""
    if isinstance(value, Sym):
        out.update(value.symbols())
    elif isinstance(value, tuple):
        for v in value:
            _symbols(v, out)
    return out


def _check_trees(d, in_tree, out_tree, n_in, n_out):
    if in_tree.kind != "tuple":
        d.fail("in_tree", f"the arguments' structure must be a tuple, not {in_tree.kind}")
    for name, tree, n, what in (("in_tree", in_tree, n_in, "inputs"),
                                ("out_tree", out_tree, n_out, "outputs")):
        if tree.num_leaves != n:
            d.fail(name, f"the structure has {tree.num_leaves} leaves but the program has "
                         f"{n} {what}")


class _Decoder:
    """Decodes and checks the JSON description. Every method takes ``where``, a JSON path
    used in error messages. Values of parameters are decoded by ``value``, which dispatches
    on the single key of an encoded object (``_TAGS``): a new value type, such as a nested
    program for higher-order primitives, is one more entry there, with ``depth`` bounding
    its nesting."""

    def __init__(self, path: str, max_elements: int, max_eqns: int = MAX_EQNS):
        self.path = path
        self.max_elements = max_elements
        self.eqns_left = max_eqns  # equations the file may still hold (graph and calls)
        self.max_eqns = max_eqns
        self.bounds: dict[int, int] = {}
        self.vars: dict[int, Var] = {}
        self.syms: dict[int, Sym] = {}  # file symbol id -> a fresh run-time size
        self.produced: dict[int, tuple] = {}  # run-time symbol -> the equation producing it
        self.call_docs: list = []  # the "calls" table (version 2)
        self.calls: dict[int, _Staged] = {}  # decoded calls, by index
        self.call_consts: list = []  # (var, program) of every call-program constant, in order
        self.call_depth = 0

    def fail(self, where: str, msg: str):
        _fail(self.path, f"{where}: {msg}")

    # --------------------------------------------------------------- JSON shapes
    def list(self, v, where) -> list:
        if type(v) is not list:
            self.fail(where, f"expected a list, got {_describe(v)}")
        return v

    def obj(self, v, where, required, optional=()) -> dict:
        if type(v) is not dict:
            self.fail(where, f"expected an object, got {_describe(v)}")
        _check_keys(v, required, optional, lambda msg: self.fail(where, msg))
        return v

    def int(self, v, where, lo=0, hi=MAX_PARAM_INT) -> int:
        if type(v) is not int or not lo <= v <= hi:
            self.fail(where, f"expected an integer from {lo} to {hi}, got {_describe(v)}")
        return v

    # ------------------------------------------------------------- run-time sizes
    def sym_bounds(self, raw) -> dict[int, int]:
        if type(raw) is not dict:
            self.fail("sym_bounds", f"expected an object, got {_describe(raw)}")
        out = {}
        for k, b in raw.items():
            if not (k.isdecimal() and k.isascii() and str(int(k)) == k and len(k) < 20):
                self.fail("sym_bounds", f"the key {k!r} is not a symbol number")
            out[int(k)] = self.int(b, f"sym_bounds[{k!r}]", 1, self.max_elements)
        return out

    def symbol(self, k: int) -> Sym:
        sym = self.syms.get(k)
        if sym is None:
            sym = self.syms[k] = Sym.new(self.bounds.get(k, 1))
        return sym

    def sym(self, payload, where, depth) -> Sym:
        parts = self.list(payload, where)
        if len(parts) != 2:
            self.fail(where, "a run-time size is [coefficient, [[symbol, exponent], ...]]")
        coef = self.int(parts[0], f"{where}[0]", 1, self.max_elements)
        terms = self.list(parts[1], f"{where}[1]")
        if not 1 <= len(terms) <= MAX_RANK:
            self.fail(where, f"a run-time size has 1 to {MAX_RANK} symbols, not {len(terms)}")
        out, seen = coef, set()
        for j, t in enumerate(terms):
            t = self.list(t, f"{where}[1][{j}]")
            if len(t) != 2:
                self.fail(f"{where}[1][{j}]", "expected [symbol, exponent]")
            k = self.int(t[0], f"{where}[1][{j}][0]")
            e = self.int(t[1], f"{where}[1][{j}][1]", 1, MAX_SYM_EXPONENT)
            if k in seen:
                self.fail(where, f"the symbol {k} appears twice")
            seen.add(k)
            out = out * self.symbol(k) ** e
        return out

    def symexpr(self, payload, where, depth):
        """A run-time size that is not a monomial: a sum of terms ``coef * atom^e * ...``
        whose atoms are symbols or ``{"op": floordiv|min|max, "args": [size, size]}``."""
        terms = self.list(payload, where)
        if not 1 <= len(terms) <= MAX_RANK:
            self.fail(where, f"a run-time size has 1 to {MAX_RANK} terms, not {len(terms)}")
        total = 0
        for i, t in enumerate(terms):
            t = self.list(t, f"{where}[{i}]")
            if len(t) != 2:
                self.fail(f"{where}[{i}]", "a term is [coefficient, [[atom, exponent], ...]]")
            term = self.int(t[0], f"{where}[{i}][0]", -self.max_elements, self.max_elements)
            mono = self.list(t[1], f"{where}[{i}][1]")
            if len(mono) > MAX_RANK:
                self.fail(f"{where}[{i}]", f"more than {MAX_RANK} factors")
            for j, f in enumerate(mono):
                f = self.list(f, f"{where}[{i}][1][{j}]")
                if len(f) != 2:
                    self.fail(f"{where}[{i}][1][{j}]", "expected [atom, exponent]")
                e = self.int(f[1], f"{where}[{i}][1][{j}][1]", 1, MAX_SYM_EXPONENT)
                term = term * self.atom(f[0], f"{where}[{i}][1][{j}][0]", depth + 1) ** e
            total = total + term
        return total

    def atom(self, raw, where, depth):
        if depth > MAX_VALUE_DEPTH:
            self.fail(where, f"the run-time size nests deeper than {MAX_VALUE_DEPTH} levels")
        if type(raw) is int:
            return self.symbol(self.int(raw, where))
        a = self.obj(raw, where, ("op", "args"))
        ops = {"floordiv": floordiv, "min": sym_min, "max": sym_max}
        if a["op"] not in ops:
            self.fail(f"{where}.op", f"unknown size operation {_describe(a['op'])}")
        args = self.list(a["args"], f"{where}.args")
        if len(args) != 2:
            self.fail(f"{where}.args", "a size operation takes two sizes")
        x, y = (self.size(v, f"{where}.args[{i}]", depth + 1) for i, v in enumerate(args))
        try:
            return ops[a["op"]](x, y)
        except (ArithmeticError, ValueError) as e:  # ShapeError is a ValueError
            self.fail(where, f"invalid size operation ({e})")

    def size(self, raw, where, depth):
        """A size inside a run-time size expression: an int, or an encoded run-time size."""
        if type(raw) is int:
            return self.int(raw, where, 0, self.max_elements)
        if type(raw) is dict and len(raw) == 1 and set(raw) <= {"sym", "symexpr"}:
            ((tag, payload),) = raw.items()
            return (self.sym if tag == "sym" else self.symexpr)(payload, f"{where}.{tag}", depth)
        self.fail(where, f"expected a size, got {_describe(raw)}")

    # ------------------------------------------------------------ parameter values
    def value(self, raw, where, depth=0):
        if depth > MAX_VALUE_DEPTH:
            self.fail(where, f"the value nests deeper than {MAX_VALUE_DEPTH} levels")
        if raw is None or type(raw) in (bool, int, float, str):
            return raw
        if type(raw) is dict and len(raw) == 1:
            ((tag, payload),) = raw.items()
            decode = self._TAGS.get(tag)
            if decode is None:
                self.fail(where, f"unknown encoded value {{{tag!r}: ...}} (expected one of "
                                 f"{', '.join(self._TAGS)})")
            return decode(self, payload, where, depth)
        self.fail(where, f"expected a number, string, null or an object with one key "
                         f"({', '.join(self._TAGS)}), got {_describe(raw)}")

    def _tuple(self, payload, where, depth):
        items = self.list(payload, where)
        return tuple(self.value(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(items))

    def _dtype(self, payload, where, depth):
        if type(payload) is not str or payload not in DTYPES:
            self.fail(where, f"unknown dtype {_describe(payload)}; expected one of "
                             f"{', '.join(DTYPES)}")
        return DTYPES[payload]

    def _complex(self, payload, where, depth):
        parts = self.list(payload, where)
        if len(parts) != 2 or any(type(x) not in (int, float) for x in parts):
            self.fail(where, f"a complex number is [real, imag], got {_describe(payload)}")
        try:
            return complex(parts[0], parts[1])
        except OverflowError:
            self.fail(where, f"the complex number {payload!r} is out of range")

    def _call(self, payload, where, depth):
        """A custom-rule call: decoded once, as a shell registered before its programs (whose
        rules may refer to the call itself), the function's program first (it gives the
        call's output shapes)."""
        idx = self.int(payload, where, 0, max(len(self.call_docs) - 1, 0))
        if idx >= len(self.call_docs):
            self.fail(where, f"refers to call {idx}, but the file has {len(self.call_docs)}")
        made = self.calls.get(idx)
        if made is not None:
            if made.fun_program is None:  # still reading its function: it would call itself
                self.fail(where, f"the function of calls[{idx}] ({made.name!r}) uses calls[{idx}] "
                                 f"itself (directly or through another call); a function with "
                                 f"a custom rule cannot call itself, only its rules can")
            return made
        here = f"calls[{idx}]"
        doc = self.obj(self.call_docs[idx], here, ("kind", "name", "n_args", "programs"))
        kind = doc["kind"]
        if kind not in _CALL_PROGRAMS:
            self.fail(f"{here}.kind", f"unknown call kind {_describe(kind)}")
        if type(doc["name"]) is not str:
            self.fail(f"{here}.name", f"expected a string, got {_describe(doc['name'])}")
        n_args = self.int(doc["n_args"], f"{here}.n_args", 0, MAX_PARAM_INT)
        names = _CALL_PROGRAMS[kind]
        progs = self.obj(doc["programs"], f"{here}.programs", names)
        if self.call_depth >= MAX_CALL_DEPTH:
            self.fail(here, f"calls nest more than {MAX_CALL_DEPTH} levels deep")
        cls = StagedVJPCall if kind == "custom_vjp" else StagedJVPCall
        call = self.calls[idx] = cls(doc["name"], n_args, *[None] * len(names))
        self.call_depth += 1
        try:
            for name in names:  # "fun" first
                setattr(call, f"{name}_program",
                        self.program(progs[name], f"{here}.programs.{name}"))
        finally:
            self.call_depth -= 1
        if len(call.fun_program.inputs) < n_args:
            self.fail(f"{here}.n_args", f"{n_args} arguments but the function takes "
                                        f"{len(call.fun_program.inputs)} operands")
        return call

    def program(self, raw, where) -> Program:
        """A call's sub-program, with its own values (constants are read after decoding)."""
        p = self.obj(raw, where, ("inputs", "consts", "eqns", "outputs"))
        outer = self.vars, self.produced
        self.vars, self.produced = {}, {}
        try:
            inputs = [self.new_var(s, f"{where}.inputs[{i}]")
                      for i, s in enumerate(self.list(p["inputs"], f"{where}.inputs"))]
            program = Program(inputs, [], [], {})
            for i, c in enumerate(self.list(p["consts"], f"{where}.consts")):
                c = self.obj(c, f"{where}.consts[{i}]", ("var", "array"))
                v = self.new_var(c["var"], f"{where}.consts[{i}].var", static=True)
                k = self.int(c["array"], f"{where}.consts[{i}].array")
                if k != len(self.call_consts):
                    self.fail(f"{where}.consts[{i}].array",
                              f"expected call_const_{len(self.call_consts)}, got {k}")
                self.call_consts.append((v, program))
            program.eqns = self.eqns(p["eqns"], f"{where}.eqns")
            program.outputs = [None if o is None else self.var(o, f"{where}.outputs[{i}]")
                               for i, o in enumerate(self.list(p["outputs"], f"{where}.outputs"))]
        finally:
            self.vars, self.produced = outer
        return program

    _TAGS = {"tuple": _tuple, "dtype": _dtype, "complex": _complex, "sym": sym,
             "symexpr": symexpr, "call": _call}

    # ------------------------------------------------------------------- values
    def new_var(self, raw, where, static=False) -> Var:
        """A value declaration (``where``: its JSON path, or a function making it: paths are
        only formatted for error messages)."""
        if type(raw) is dict and raw.keys() == _VAR_KEYS:  # the common case, checked quickly
            vid, dims, dt = raw["id"], raw["shape"], DTYPES.get(raw["dtype"]) \
                if type(raw["dtype"]) is str else None
            if (type(vid) is int and 0 <= vid <= MAX_PARAM_INT and vid not in self.vars
                    and type(dims) is list and len(dims) <= MAX_RANK and dt is not None):
                n, limit = 1, self.max_elements
                for d in dims:
                    if type(d) is not int or not 0 <= d <= limit:
                        break
                    n *= d
                else:
                    if n <= limit:
                        var = self.vars[vid] = Var(ShapedArray(tuple(dims), dt))
                        return var
        return self._new_var(raw, where if type(where) is str else where(), static)

    def _new_var(self, raw, where, static) -> Var:
        spec = self.obj(raw, where, ("id", "shape", "dtype"))
        vid = self.int(spec["id"], f"{where}.id")
        if vid in self.vars:
            self.fail(f"{where}.id", f"the value id {vid} is defined twice")
        dims = self.list(spec["shape"], f"{where}.shape")
        if len(dims) > MAX_RANK:
            self.fail(f"{where}.shape", f"{len(dims)} axes; at most {MAX_RANK} are allowed")
        shape = []
        for j, d in enumerate(dims):
            w = f"{where}.shape[{j}]"
            if type(d) is dict and len(d) == 1 and set(d) <= {"sym", "symexpr"}:
                if static:
                    self.fail(w, "inputs and constants must have static sizes")
                shape.append(self.size(d, w, 0))
            elif type(d) is int and 0 <= d <= self.max_elements:
                shape.append(d)
            else:
                self.fail(w, f"expected a size from 0 to max_elements={self.max_elements}, got "
                             f"{_describe(d)}")
        shape = tuple(shape)
        try:
            check_shape(shape, self.max_elements)
        except BadParam as e:
            self.fail(f"{where}.shape", str(e))
        dtype = spec["dtype"]
        if type(dtype) is not str or dtype not in DTYPES:
            self.fail(f"{where}.dtype", f"unknown dtype {_describe(dtype)}; expected one of "
                                        f"{', '.join(DTYPES)}")
        var = self.vars[vid] = Var(ShapedArray(shape, DTYPES[dtype]))
        return var

    def var(self, vid, where) -> Var:
        if type(vid) is not int or vid not in self.vars:
            self.fail(where, f"{_describe(vid)} is not a value defined earlier in the file")
        return self.vars[vid]

    # ---------------------------------------------------------------- equations
    def eqns(self, raw, where) -> list:
        """A list of equations, counted against ``max_eqns`` before any is decoded."""
        raw = self.list(raw, where)
        self.eqns_left -= len(raw)
        if self.eqns_left < 0:
            self.fail(where, f"the file holds more than max_eqns={self.max_eqns} equations "
                             f"(here {len(raw)}); if the file is trusted, load it with a larger "
                             f"max_eqns")
        out = []
        for i, e in enumerate(raw):
            out.append(self.eqn(e, i, where))
            raw[i] = None  # the decoded equation replaces its JSON: memory stays ~one copy
        return out

    def eqn(self, raw, index: int, prefix: str = "eqns") -> Eqn:
        # JSON paths are formatted only for error messages: this runs once per equation
        if type(raw) is not dict or not (raw.keys() == _EQN_KEYS or raw.keys() == _EQN_KEYS_SRC):
            self.obj(raw, f"{prefix}[{index}]", ("prim", "inputs", "outputs", "params"),
                     ("source",))
        name = raw["prim"]
        prim = PRIMITIVES.get(name) if type(name) is str else None
        if prim is None:
            self.fail(f"{prefix}[{index}].prim", f"unknown primitive {name!r} (saved by a newer "
                                                 f"tenferro?)")

        def here():
            return f"{prefix}[{index}] ({name})"

        raw_ins = raw["inputs"]
        if type(raw_ins) is not list:
            self.list(raw_ins, f"{here()}.inputs")
        ins = []
        for i, v in enumerate(raw_ins):
            var = self.vars.get(v) if type(v) is int else None
            ins.append(var if var is not None else self.var(v, f"{here()}.inputs[{i}]"))
        fixed, variadic = _arity(prim)
        if len(ins) != fixed and not (variadic and len(ins) >= fixed):
            want = f"at least {fixed}" if variadic else f"{fixed}"
            self.fail(here(), f"{name} takes {want} operands, the file gives {len(ins)}")
        params = self.params(prim, raw["params"], here)
        new = self.new_sizes(prim, ins, params, here) if params else None
        raw_outs = raw["outputs"]
        if type(raw_outs) is not list:
            self.list(raw_outs, f"{here()}.outputs")
        outs = [self.new_var(s, lambda j=j: f"{here()}.outputs[{j}]")
                for j, s in enumerate(raw_outs)]
        source = raw.get("source")
        if source is not None and type(source) is not str:
            self.fail(f"{here()}.source", f"expected a string or null, got {_describe(source)}")
        try:
            avals = out_avals(prim, [v.aval for v in ins], params)
        except Exception as err:
            self.fail(here(), f"does not type-check ({type(err).__name__}: {err})")
        if len(avals) != len(outs):
            self.fail(here(), f"declares {len(outs)} outputs, but {name} produces {len(avals)}")
        for j, (v, a) in enumerate(zip(outs, avals)):
            if not _same(v.aval, a):
                self.fail(here(), f"declares output {j} as {v.aval} but the equation "
                                  f"computes {a}")
        if new:
            for k, key in new.items():
                self.produced.setdefault(k, key)
        return Eqn(prim, ins, params, outs, source)

    def params(self, prim, raw, here) -> dict:
        kinds = prim.params
        if not kinds and type(raw) is dict and not raw:
            return {}
        raw = self.obj(raw, f"{here()}.params", tuple(kinds or ()))
        params = {}
        for k, kind in kinds.items():
            v = raw[k]
            if not (v is None or type(v) in _PLAIN):
                v = self.value(v, f"{here()}.params.{k}")
            params[k] = v
            try:
                kind(v, self.max_elements)
            except BadParam as e:
                self.fail(f"{here()}.params.{k}", str(e))
        if prim.check_params is not None:
            try:
                prim.check_params(params)
            except BadParam as e:
                self.fail(f"{here()}.params", str(e))
        return params

    def new_sizes(self, prim, ins, params, here) -> dict:
        """Check the run-time sizes an equation mentions: its parameters may only use sizes
        produced by earlier equations (the executor binds a size right after its producer),
        except the one a size-producing primitive (``Primitive.produces_size``) introduces,
        which must be new, or produced by an identical equation (same operands and
        parameters)."""
        produces = prim.produces_size
        new = {}
        key = None
        for k, v in params.items():
            if not isinstance(v, (Sym, tuple)):
                continue
            for s in _symbols(v, set()):
                if k == produces:
                    if key is None:
                        key = (prim.name, tuple(id(x) for x in ins),
                               repr(sorted(params.items())))
                    if self.produced.get(s, key) != key:
                        self.fail(f"{here()}.params.{k}",
                                  "this run-time size is already produced by another equation")
                    new[s] = key
                elif s not in self.produced:
                    self.fail(f"{here()}.params.{k}",
                              f"uses the run-time size {v!r} before an equation produces it")
        return new

    # ------------------------------------------------------------------ pytrees
    def node(self, t, where):
        """The rebuilder of a registered pytree node (register_pytree_serialization)."""
        name = t["name"]
        if type(name) is not str:
            self.fail(f"{where}.name", f"expected a string, got {_describe(name)}")
        value = self.value(t["aux"], f"{where}.aux")
        try:
            meta = node_from_value(name, value)
        except Exception as e:  # the class's own reader rejected the data
            self.fail(f"{where}.aux", f"invalid data for {name}: {type(e).__name__}: {e}")
        if meta is None:
            self.fail(f"{where}.name", f"the file stores a {name!r} object, which no "
                                       f"register_pytree_serialization call in this process "
                                       f"knows; import the module that registers it first")
        return meta

    _TREE_KINDS = ("leaf", "none", "tuple", "list", "dict", "node")
    _TREE_FIELDS = {"dict": ("kind", "children", "keys"),
                    "node": ("kind", "children", "name", "aux")}

    def tree(self, raw, where, depth=0) -> TreeDef:
        if depth > MAX_TREE_DEPTH:
            self.fail(where, f"the structure nests deeper than {MAX_TREE_DEPTH} levels")
        kind = raw.get("kind") if type(raw) is dict else None
        if kind not in self._TREE_KINDS:
            self.fail(where, f"expected a tree node with kind one of {self._TREE_KINDS}, got "
                             f"{_describe(raw)}")
        t = self.obj(raw, where, self._TREE_FIELDS.get(kind, ("kind", "children")))
        kids = self.list(t["children"], f"{where}.children")
        if kind in ("leaf", "none") and kids:
            self.fail(where, f"a {kind} node has no children")
        children = tuple(self.tree(c, f"{where}.children[{i}]", depth + 1)
                         for i, c in enumerate(kids))
        if kind == "leaf":
            return TreeDef("leaf", None, ())
        if kind == "none":
            return TreeDef("none", None, ())
        if kind == "node":
            return TreeDef("namedtuple", self.node(t, where), children)
        if kind != "dict":
            return TreeDef(kind, None, children)
        keys = tuple(self.value(k, f"{where}.keys[{i}]")
                     for i, k in enumerate(self.list(t["keys"], f"{where}.keys")))
        if len(keys) != len(children):
            self.fail(where, f"{len(keys)} keys for {len(children)} children")
        if any(_symbols(k, set()) for k in keys):
            self.fail(f"{where}.keys", "a dictionary key cannot be a run-time size")
        if len(set(keys)) != len(keys):
            self.fail(f"{where}.keys", "repeated dictionary key")
        return TreeDef("dict", keys, children)
