"""``Graph``: a traced, optimised program with its input/output structure.

A graph is callable. With plain eager inputs (no gradient recording, no active
transformation) it runs its compiled executor; with anything else (tracers, tensors that
require grad, traced tensors of an enclosing trace) it is *interpreted* through ``bind``, so
every transformation and the tape see each operation and differentiate it with the same rules.
"""

from __future__ import annotations

import io
import sys

import numpy as np

from chainrules.core import params_str

from ..backends import get_backend
from ..core.dispatch import bind_list, state
from ..core.eager import EVAL_TRACE, EagerTensor, _wrap
from ..errors import DeviceError, DTypeError, ShapeError, fmt_aval
from ..ir import cost
from ..ir.eval import eval_program
from ..ir.gcpause import gc_paused
from ..ir.passes.liveness import last_uses
from ..ir.program import Program
from ..ops._base import tensor_of
from ..ops.creation import asarray
from ..pytree import tree_flatten, tree_unflatten
from .executor import Executable
from .serialize import MAX_BYTES, MAX_ELEMENTS, MAX_EQNS, read_graph, save_graph


class Graph:
    """A traced, optimised program with the pytree structure of its arguments and results:
    callable (compiled executor for plain eager inputs; interpreted through ``bind`` under
    transformations or the tape, so it differentiates like the original), printable
    (``str``, ``to_dot``, ``summary``), and saved with ``save``/``tenferro.load``."""

    def __init__(self, program: Program, in_tree, out_tree, name: str = "f"):
        self.program = program
        self.in_tree = in_tree
        self.out_tree = out_tree
        self.name = name
        self._exe = None
        self._const_tensors: dict = {}

    # ------------------------------------------------------------------ inspection
    @property
    def eqns(self):
        return self.program.eqns

    @property
    def num_nodes(self) -> int:
        return len(self.program.eqns)

    @property
    def in_avals(self):
        return [v.aval for v in self.program.inputs]

    @property
    def out_avals(self):
        return [v.aval for v in self.program.outputs]

    def __repr__(self):
        return f"<Graph {self.name}: {len(self.program.inputs)} inputs, {self.num_nodes} nodes>"

    def __str__(self):
        p = self.program
        names = {}
        for i, v in enumerate(p.inputs):
            names[id(v)] = f"%in{i}"
        for i, v in enumerate(p.consts):
            names[id(v)] = f"%c{i}"
        counter = 0
        for eqn in p.eqns:
            for v in eqn.outputs:
                names[id(v)] = f"%{counter}"
                counter += 1

        def decl(v):
            return f"{names[id(v)]}:{v.aval}"

        lines = [f"graph {self.name}({', '.join(decl(v) for v in p.inputs)}) {{"]
        for v, c in p.consts.items():
            lines.append(f"  {decl(v)} = const{_const_preview(c)}")
        for eqn in p.eqns:
            outs = ", ".join(decl(v) for v in eqn.outputs)
            ins = ", ".join(names[id(v)] for v in eqn.inputs)
            ps = params_str(eqn.params)
            line = f"  {outs} = {eqn.prim.name}({ins})" + (f"  {{{ps}}}" if ps else "")
            if eqn.source:
                line += f"    # {eqn.source}"
            lines.append(line)
        lines.append(f"  return {', '.join(names[id(v)] for v in p.outputs)}")
        lines.append("}")
        return "\n".join(lines)

    def to_dot(self) -> str:
        """Graphviz source: inputs, constants and operations as nodes, values as edges."""
        p = self.program
        lines = [f'digraph "{self.name}" {{', "  rankdir=TB;", '  node [fontname="monospace"];']
        src = {}
        for i, v in enumerate(p.inputs):
            lines.append(f'  in{i} [shape=box, label="in{i}\\n{v.aval}"];')
            src[id(v)] = f"in{i}"
        for i, v in enumerate(p.consts):
            lines.append(f'  c{i} [shape=box, style=dashed, label="const\\n{v.aval}"];')
            src[id(v)] = f"c{i}"
        for k, eqn in enumerate(p.eqns):
            lines.append(f'  n{k} [label="{eqn.prim.name}"];')
            for v in eqn.inputs:
                lines.append(f'  {src[id(v)]} -> n{k} [label="{v.aval}"];')
            for v in eqn.outputs:
                src[id(v)] = f"n{k}"
        for i, v in enumerate(p.outputs):
            lines.append(f'  out{i} [shape=box, label="out{i}"];')
            lines.append(f'  {src[id(v)]} -> out{i} [label="{v.aval}"];')
        lines.append("}")
        return "\n".join(lines)

    def summary(self) -> dict:
        """Node count, FLOPs, bytes of intermediates/inputs/constants, per-primitive counts.
        FLOPs/bytes are ``None`` where a shape is only known at run time."""
        p = self.program
        flops = [cost.eqn_flops(e) for e in p.eqns]
        byts = [cost.eqn_bytes(e) for e in p.eqns]
        per_prim: dict[str, int] = {}
        for e in p.eqns:
            per_prim[e.prim.name] = per_prim.get(e.prim.name, 0) + 1
        return {
            "nodes": len(p.eqns),
            "flops": None if None in flops else sum(flops),
            "intermediate_bytes": None if None in byts else sum(byts),
            "input_bytes": sum(v.aval.nbytes for v in p.inputs),
            "constant_bytes": int(sum(np.asarray(c).nbytes for c in p.consts.values())),
            "primitives": dict(sorted(per_prim.items(), key=lambda kv: -kv[1])),
        }

    def peak_live_bytes(self) -> int | None:
        """Peak bytes of values alive at once when the executor runs this graph (inputs,
        constants and intermediates; intermediates are freed at their last use). ``None``
        if some shape is only known at run time."""

        p = self.program
        live = sum(v.aval.nbytes for v in p.inputs) + sum(
            int(np.asarray(c).nbytes) for c in p.consts.values())
        peak = live
        for eqn, dead in zip(p.eqns, last_uses(p)):
            if not all(v.aval.is_static for v in eqn.outputs):
                return None
            live += sum(v.aval.nbytes for v in eqn.outputs)
            peak = max(peak, live)
            live -= sum(v.aval.nbytes for v in dead if v not in p.inputs)
        return peak

    # ----------------------------------------------------------------------- calling
    def __call__(self, *args):
        flat, tree = tree_flatten(args)
        if tree != self.in_tree:
            raise ShapeError(
                f"graph {self.name}: called with argument structure {tree}, traced with "
                f"{self.in_tree}."
            )
        flat = [tensor_of(x) for x in flat]
        for i, (x, v) in enumerate(zip(flat, self.program.inputs)):
            if tuple(x.shape) != tuple(v.aval.shape) and v.aval.is_static:
                raise ShapeError(
                    f"graph {self.name}: input {i} has shape {x.shape}, the graph was traced for "
                    f"{v.aval}. Trace again (jit does it for you)."
                )
            if x.dtype != v.aval.dtype:
                raise DTypeError(
                    f"graph {self.name}: input {i} is {fmt_aval(x)}, the graph was traced for "
                    f"{v.aval}."
                )
        if _can_execute(flat):
            outs = self._execute(flat)
        else:
            outs = self._interpret(flat)
        return tree_unflatten(self.out_tree, outs)

    def _execute(self, flat):
        if self._exe is None:
            self._exe = Executable(self.program)
        backend = flat[0]._backend if flat else _default_backend()
        for x in flat[1:]:
            if x._backend is not backend:
                raise DeviceError(
                    f"graph {self.name}: inputs on different devices ({backend.device}, "
                    f"{x._backend.device}); move them to one device first."
                )
        raw = self._exe.run(backend, [x._value for x in flat])
        return [_wrap(r, backend) for r in raw]

    def _interpret(self, flat):
        device = next((x.device for x in flat if getattr(x, "device", None) is not None), None)
        consts = self._consts_on(device)
        prog = self.program
        env_prog = Program(prog.inputs, prog.eqns, prog.outputs,
                           dict(zip(prog.consts.keys(), consts)))
        return eval_program(env_prog, flat, bind_list)

    def _consts_on(self, device):
        got = self._const_tensors.get(device)
        if got is None:
            got = [asarray(c, device=device) for c in self.program.consts.values()]
            self._const_tensors[device] = got
        return got

    # ------------------------------------------------------------------- save/load
    def save(self, path) -> None:
        """Write the graph to ``path`` (a file name or an open binary file) in the versioned
        graph-file format (design/graph-files.md)."""

        save_graph(self, path)

    def to_bytes(self) -> bytes:
        """The graph file's contents (``save``), as bytes."""
        buf = io.BytesIO()
        save_graph(self, buf)
        return buf.getvalue()

    def __reduce__(self):
        # pickles (and deep copies) go through the graph file format: data, never code
        return _graph_from_bytes, (self.to_bytes(),)


def _can_execute(flat) -> bool:
    if state.stack or (state.base is not None and state.base is not EVAL_TRACE):
        return False
    return all(type(x) is EagerTensor and x._node is None for x in flat)


def _default_backend():
    return get_backend(state.default_device)


def _const_preview(c) -> str:
    a = np.asarray(c)
    if a.size <= 4:
        return " " + np.array2string(a, separator=",", precision=4).replace("\n", "")
    return ""


def _graph_from_bytes(data: bytes) -> Graph:
    """Unpickle a ``Graph``: read its graph file. The size limits guard ``load`` against
    hostile files; a pickle is trusted code anyway (unpickling runs what it names), so they are
    lifted here."""
    return Graph(*read_graph(io.BytesIO(data), max_elements=sys.maxsize, max_bytes=sys.maxsize,
                             max_eqns=sys.maxsize, max_file_bytes=sys.maxsize))


def load(path, *, max_elements: int = MAX_ELEMENTS, max_bytes: int = MAX_BYTES,
         max_eqns: int = MAX_EQNS, max_file_bytes: int | None = None):
    """Load a graph written by ``Graph.save``.

    Limits (raise them to load a trusted file that exceeds them): ``max_elements`` (default
    2**32) bounds the element count of every array the file declares, ``max_bytes`` (default
    2**30) the bytes of its constants, ``max_eqns`` (default 250,000) its equations, and
    ``max_file_bytes`` (default ``max_bytes`` + 64 MiB + 16 MiB) the size of the file.
    Loading takes time and memory in proportion to the file's size (about 25 us and 1.3 kB
    per equation). Only regular files (or symbolic links to them) are read: a directory,
    device, FIFO or socket is refused before anything is read from it. A file that is
    corrupt, hostile, over a limit or of an unsupported version raises ``GraphFormatError``;
    a path that cannot be opened or is not a regular file raises ``GraphFileError`` (also an
    ``OSError``, with the errno and filename).
    """
    with gc_paused():  # the program is read and wrapped without cyclic collections
        return Graph(*read_graph(path, max_elements=max_elements, max_bytes=max_bytes,
                                 max_eqns=max_eqns, max_file_bytes=max_file_bytes))
