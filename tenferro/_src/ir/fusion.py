"""Fused elementwise regions for the graph compiler (``compile_program(..., fuse=True)``).

A *region* is a run of elementwise equations (``add``, ``sub``, ``mul``, ``div``, ``neg``,
``sin``, ``cos``, ``tanh``, ``exp``, ``log``, ``sqrt`` and scalar ``full`` constants) on one
static shape of at least ``MIN_ELEMENTS`` real floating-point elements. ``schedule`` moves the
non-elementwise equations that interrupt a run (a ``reduce_sum`` of the forward value in the
middle of a gradient graph, say) past it when nothing in the run depends on them, so runs
grow; ``region_kernel`` turns a run into one Python function that

* turns ``full`` constants into scalars (no 8 MB array of 0.9s per call),
* writes every intermediate into a buffer of the region that is dead by then (``out=``, in
  place where an operand dies at that step): a 40-op chain touches a handful of buffers
  instead of allocating 40, and values needed after the region are fresh arrays;
* runs the operations through an *engine*:

  - ``"torch"``: PyTorch's CPU kernels on zero-copy views of the NumPy buffers. Chosen by
    measurement (benchmarks/README.md, the compiler section): on a 2-core Xeon without AVX-512,
    NumPy's float64 ``sin``/``cos`` call scalar libm (25 ns per element) while PyTorch's are
    vectorised (SLEEF, < 2 ns); numexpr and numba call the same scalar libm, so fusing
    through them made the 40-op chain 2.2x (numexpr) and 2.5x (numba) *slower* than NumPy.
    Results agree with NumPy's to about an ulp per transcendental call (tested: <= 1e-14).
  - ``"numpy"``: the same plan with NumPy ufuncs and ``out=`` (bit-identical to the unfused
    graph); used when PyTorch is not installed (the engine is the optional extra
    ``tenferro[compile]``) or when asked for.

``ENGINE`` (from ``TENFERRO_FUSION``: ``auto`` = torch when importable else numpy, ``torch``,
``numpy``, ``off``) is read when a graph is compiled for the NumPy backend.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from chainrules import primitives as P

ENGINE = os.environ.get("TENFERRO_FUSION", "auto")
"""Which engine fused regions use: ``auto``, ``torch``, ``numpy`` or ``off``."""

MIN_ELEMENTS = 1 << 15
"""Regions on fewer elements are not fused: per-call overhead would dominate."""

BLOCK = 1 << 15
"""Elements per block of a fused region (a few 256 kB buffers: they stay in cache)."""

MAX_DEFERRED = 64
"""At most this many non-elementwise equations are moved past one region."""

# primitive -> (NumPy ufunc name, torch function name, arity)
_OPS = {
    P.add_p: ("add", "add", 2), P.sub_p: ("subtract", "sub", 2),
    P.mul_p: ("multiply", "mul", 2), P.div_p: ("divide", "div", 2),
    P.neg_p: ("negative", "neg", 1), P.sin_p: ("sin", "sin", 1), P.cos_p: ("cos", "cos", 1),
    P.tanh_p: ("tanh", "tanh", 1), P.exp_p: ("exp", "exp", 1), P.log_p: ("log", "log", 1),
    P.sqrt_p: ("sqrt", "sqrt", 1),
}
_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))
_torch = None


def engine() -> str | None:
    """The engine fused regions use now (``None``: fusion is off)."""
    global _torch
    e = ENGINE
    if e == "off":
        return None
    if e in ("auto", "torch"):
        if _torch is None:
            try:
                import torch

                _torch = torch
            except ImportError:
                _torch = False
        if _torch:
            return "torch"
        if e == "torch":
            warnings.warn("TENFERRO_FUSION=torch but PyTorch is not installed: fused regions "
                          "use NumPy (pip install tenferro[compile]).", stacklevel=2)
    return "numpy"


def _key(eqn):
    """The (shape, dtype) of a fusible equation, or ``None`` if it is not fusible."""
    if eqn.prim is P.full_p:
        v = eqn.outputs[0].aval
        value = eqn.params["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
            return None
    elif eqn.prim in _OPS:
        v = eqn.outputs[0].aval
        if any(u.aval != v for u in eqn.inputs):
            return None
    else:
        return None
    if not v.is_static or v.dtype not in _DTYPES:
        return None
    n = 1
    for d in v.shape:
        n *= d
    return (tuple(v.shape), v.dtype) if n >= MIN_ELEMENTS else None


def schedule(eqns):
    """Reorder ``eqns`` (a valid order still) so that fusible runs grow, and return
    ``(eqns, regions)`` with ``regions`` a list of ``(start, stop)`` index ranges (at least two
    equations with an operation each)."""
    out, regions = [], []
    run, key, deferred, deferred_outs = [], None, [], set()

    def close():
        nonlocal run, key, deferred, deferred_outs
        if sum(e.prim is not P.full_p for e in run) >= 2:
            regions.append((len(out), len(out) + len(run)))
        out.extend(run)
        out.extend(deferred)
        run, key, deferred, deferred_outs = [], None, [], set()

    for eqn in eqns:
        k = _key(eqn)
        depends = any(id(v) in deferred_outs for v in eqn.inputs)
        if k is not None and not depends and (key is None or k == key):
            run.append(eqn)
            key = k
        elif k is None and run and not depends and len(deferred) < MAX_DEFERRED:
            deferred.append(eqn)
            deferred_outs.update(id(v) for v in eqn.outputs)
        else:
            close()
            if k is not None:
                run.append(eqn)
                key = k
            else:
                out.append(eqn)
    close()
    return out, regions


def region_kernel(eqns, live_out: set, last_use: dict, where: int, eng: str):
    """One function for the run ``eqns`` (program positions ``where...``): returns
    ``(fn, in_vars, out_vars)`` with ``fn(*inputs) -> tuple(outputs)``. ``live_out`` holds the
    ids of values used after the run (or returned); ``last_use`` maps a value's id to the
    position of its last use.

    The function walks the flattened operands in blocks of ``BLOCK`` elements and applies every
    operation of the run to one block before the next, so intermediates stay in cache (the
    memory traffic of a 100-op chain on 1e6 elements dominated its time); intermediates live
    in a few block-sized buffers, reused as soon as a value is dead; values needed after the
    run are written straight into their (full-size) result arrays."""
    torch_ = eng == "torch"
    shape = tuple(eqns[0].outputs[0].aval.shape)
    dtype = np.dtype(eqns[0].outputs[0].aval.dtype)
    slot: dict[int, str] = {}  # value -> its block view's name (x: input, t: temp, o: result)
    scalars: dict[int, str] = {}  # full() outputs -> Python literal
    fulls: dict[int, object] = {}
    in_vars: list = []
    out_vars: list = []
    pool: list[str] = []
    n_temps = [0]
    pre: list[str] = []  # before the block loop (materialised constants)
    body: list[str] = []  # per block

    def input_slot(v):
        if id(v) not in slot:
            slot[id(v)] = f"x{len(in_vars)}"
            in_vars.append(v)
        return slot[id(v)]

    def materialise(v):  # a full() needed as an array: a region input made here
        full = fulls[id(v)]
        k = len(in_vars)
        value = float(full.params["value"])
        pre.append(f"    I{k} = _np.full({shape!r}, {_literal(value)}, dtype=_np.{dtype.name})")
        slot[id(v)] = f"x{k}"
        in_vars.append(None)  # filled by the kernel itself
        return slot[id(v)]

    for j, eqn in enumerate(eqns):
        pos = where + j
        o = eqn.outputs[0]
        if eqn.prim is P.full_p:
            fulls[id(o)] = eqn
            scalars[id(o)] = _literal(eqn.params["value"])
            if id(o) in live_out:
                materialise(o)
                out_vars.append(o)
            continue
        np_name, t_name, _ = _OPS[eqn.prim]
        args, is_scalar = [], []
        for v in eqn.inputs:
            scalar = id(v) in scalars and id(v) not in slot
            args.append(scalars[id(v)] if scalar else (slot.get(id(v)) or input_slot(v)))
            is_scalar.append(scalar)
        if all(is_scalar):  # every operand a scalar constant: materialise one
            args[0], is_scalar[0] = materialise(eqn.inputs[0]), False
        dying = list(dict.fromkeys(
            slot[id(v)] for v in eqn.inputs if slot.get(id(v), "x").startswith("t")
            and last_use.get(id(v)) == pos and id(v) not in live_out))
        if id(o) in live_out:
            target = f"o{len(out_vars)}"
            out_vars.append(o)
            pool.extend(dying)
        elif dying:
            target = dying[0]
            pool.extend(dying[1:])
        elif pool:
            target = pool.pop()
        else:
            n_temps[0] += 1
            target = f"t{n_temps[0]}"
        slot[id(o)] = target
        body.append("        " + _call(torch_, np_name, t_name, args, is_scalar, target))
    real_ins = [v for v in in_vars if v is not None]
    params = [f"I{k}" for k, v in enumerate(in_vars) if v is not None]
    # result k: the materialised full() or the value an operation wrote to o<k>
    lines = [f"def region({', '.join(params)}):"]
    lines += pre
    view = "_t({}).reshape(-1)" if torch_ else "{}.reshape(-1)"
    lines += [f"    X{k} = " + view.format(f"I{k}") for k in range(len(in_vars))]
    results = []
    for k, v in enumerate(out_vars):
        src = slot[id(v)]
        if src.startswith("x"):  # a materialised constant
            results.append(f"I{src[1:]}")
            continue
        lines.append(f"    R{k} = _np.empty({shape!r}, dtype=_np.{dtype.name})")
        lines.append(f"    O{src[1:]} = " + view.format(f"R{k}"))
        results.append(f"R{k}")
    empty = (f"_T.empty(BLOCK, dtype=_T.{dtype.name})" if torch_
             else f"_np.empty(BLOCK, dtype=_np.{dtype.name})")
    lines += [f"    T{k} = {empty}" for k in range(1, n_temps[0] + 1)]
    size = 1
    for d in shape:
        size *= d
    lines.append(f"    for s in range(0, {size}, BLOCK):")
    lines.append(f"        e = min(s + BLOCK, {size})")
    names = ([f"x{k}" for k in range(len(in_vars))] + [f"t{k}" for k in range(1, n_temps[0] + 1)]
             + sorted({slot[id(v)] for v in out_vars if slot[id(v)].startswith("o")}))
    for nm in names:
        src = nm.upper()
        lines.append(f"        {nm} = {src}[s:e]" if not nm.startswith("t")
                     else f"        {nm} = {src}[:e - s]")
    lines += body
    lines.append(f"    return ({''.join(r + ', ' for r in results)})")
    ns = {"_np": np, "_T": _torch, "_t": _as_torch, "BLOCK": BLOCK}
    exec("\n".join(lines), ns)  # noqa: S102 - generated from our own IR
    fn = ns["region"]
    fn.source = "\n".join(lines)
    return fn, real_ins, out_vars


def _literal(value) -> str:
    """``value`` as Python source (``float('inf')``, ``float('nan')`` for the non-finite)."""
    v = float(value)
    return repr(v) if np.isfinite(v) else f"float({str(v)!r})"


def _call(torch_, np_name, t_name, args, is_scalar, target):
    """One operation's call text (``target``: the block view written with ``out=``)."""
    out = f", out={target}"
    if not torch_:
        return f"_np.{np_name}({', '.join(args)}{out})"
    if len(args) == 2 and is_scalar[0]:  # torch wants the tensor first
        a, b = args
        if t_name in ("add", "mul"):  # commutative: exactly the same result
            return f"_T.{t_name}({b}, {a}{out})"
        if t_name == "sub":  # a - b is exactly (-b) + a in IEEE arithmetic
            return f"_T.neg({b}{out}).add_({a})"
        return f"_T.div(_T.full_like({b}, {a}), {b}{out})"
    return f"_T.{t_name}({', '.join(args)}{out})"


def _as_torch(a):
    """A zero-copy tensor view of the NumPy array ``a`` (a copy for what torch cannot view:
    negative strides, non-native byte order; read-only arrays are viewed: the region never
    writes its inputs)."""
    if not isinstance(a, np.ndarray):
        a = np.asarray(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # non-writable arrays: never written here
        try:
            return _torch.from_numpy(a)
        except (ValueError, TypeError, RuntimeError):  # negative strides, non-native order
            return _torch.from_numpy(
                np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("=")))
