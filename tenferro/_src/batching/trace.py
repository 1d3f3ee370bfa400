"""``BatchTrace``: the vmap interpreter.

A ``BatchTracer`` holds one value of the level below (``val``) that stacks every batch
member along axis ``bdim`` (``None``: the same value for every member, which only happens for
tracers created by lifting). Each primitive is handed to its ``batch`` rule (written against
the Builder, next to the primitive in ``chainrules``), which binds ordinary primitives one
level down, where enclosing transformations see them: ``grad(vmap(f))``, ``vmap(grad(f))``,
``jit(vmap(f))`` and ``vmap(vmap(f))`` need nothing special. A primitive without a rule runs
once per member (a loop), with a one-time warning naming it.
"""

from __future__ import annotations

import warnings

from chainrules.primitives import basic_index_p
from chainrules.primitives._batching import data_dependent, move_axis

from ..autodiff.checkpoint import checkpoint
from ..core.calls import CustomJVPCall, CustomVJPCall, bind_call
from ..core.dispatch import Trace, bind, bind_list, dispatch, new_trace
from ..core.tracer import Tracer
from ..errors import ConcretizationError

_WARNED: set[str] = set()


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def shape(self):
        s = tuple(self.val.shape)
        return s if self.bdim is None else s[: self.bdim] + s[self.bdim + 1:]

    dtype = property(lambda self: self.val.dtype)

    def _lower(self):
        return self.val

    def _check_concrete(self, what: str) -> None:
        if self.bdim is not None:
            raise ConcretizationError(
                f"vmap: {what} needs one concrete value of a batched tensor {self.shape} "
                f"({self.dtype}), but it holds one value per batch member. A decision taken "
                f"from values (a Python branch, a cutoff-truncated SVD's rank) cannot be "
                f"batched: use a value-independent form (tenferro.where instead of if; svd "
                f"with max_rank instead of cutoff), or loop over the batch."
            )

    def __repr__(self):
        return f"BatchTracer({self.val!r}, bdim={self.bdim})"

    def _assign(self, new):
        new = self._trace.full_raise(new)
        self.val, self.bdim = new.val, new.bdim


class BatchTrace(Trace):
    def __init__(self, level, axis_size: int):
        self.level = level
        self.axis_size = axis_size

    def pure(self, x):
        return BatchTracer(self, x, None)

    def _box(self, outs, dims) -> list:
        return [o if d is None else BatchTracer(self, o, d) for o, d in zip(outs, dims)]

    def process_primitive(self, prim, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        if all(d is None for d in dims):
            return bind_list(prim, *vals, **params)
        if prim.batch is None:
            outs, odims = loop_batch(prim, vals, dims, params, self.axis_size)
        else:
            outs, odims = prim.batch(dispatch, vals, dims, **params)
        return self._box(outs, odims)

    # -------------------------------------------- functions with rules, checkpoints
    def _split(self, tracers):
        vals = [t.val for t in tracers]
        dims = [t.bdim for t in tracers]
        return vals, dims

    def process_custom_vjp(self, call, tracers):
        """The function, its ``fwd`` and its ``bwd`` all batched: the rule survives vmap, so
        ``grad(vmap(f))`` still uses it."""
        vals, dims = self._split(tracers)
        if all(d is None for d in dims):
            return bind_call(call, *vals)
        n = self.axis_size

        def fwd(*xs):
            box = []

            def joined(*ys):
                o, r = call.fwd(*ys)
                box.append(len(o))
                return list(o) + list(r)

            outs = batched_flat(joined, n)(*xs)
            return outs[: box[0]], outs[box[0]:]

        def bwd(res, cts):
            k = len(res)
            return batched_flat(lambda *a: list(call.bwd(list(a[:k]), list(a[k:]))), n)(
                *res, *cts)

        new = CustomVJPCall(f"vmap({call.name})", batched_flat(call.fun, n), fwd, bwd)
        new.n_args = call.n_args
        return self._box_all(bind_call(new, *at_front(vals, dims, n)))

    def process_custom_jvp(self, call, tracers):
        vals, dims = self._split(tracers)
        if all(d is None for d in dims):
            return bind_call(call, *vals)
        n = self.axis_size
        fun = batched_flat(call.fun, n)

        def rule(primals, tangents):
            k = len(primals)
            outs = batched_flat(lambda *a: _join(call.rule(list(a[:k]), list(a[k:]))), n)(
                *primals, *tangents)
            half = len(outs) // 2
            return outs[:half], outs[half:]

        new = CustomJVPCall(f"vmap({call.name})", fun, rule)
        new.n_args = call.n_args
        return self._box_all(bind_call(new, *at_front(vals, dims, n)))

    def process_checkpoint(self, fn, tracers, policy):
        vals, dims = self._split(tracers)
        if all(d is None for d in dims):
            return checkpoint(fn, policy=policy)(*vals)
        n = self.axis_size
        outs = checkpoint(batched_flat(fn, n), policy=policy)(*at_front(vals, dims, n))
        return self._box_all(outs)

    def _box_all(self, outs):
        return [BatchTracer(self, o, 0) for o in outs]


def _join(pair) -> list:
    """``(outs, tangent_outs)`` as one flat list."""
    a, b = pair
    return list(a) + list(b)


def at_front(vals, dims, n) -> list:
    """Every value mapped over axis 0 (shared ones broadcast)."""
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            shape = (n,) + tuple(v.shape)
            v = dispatch.broadcast_in_dim(v, shape, tuple(range(1, len(shape))))
        else:
            v = move_axis(dispatch, v, d, 0)
        out.append(v)
    return out


def batched_flat(fn, n):
    """``fn`` (flat tensors in, flat list out) mapped over axis 0 of every input; outputs are
    mapped over axis 0 too (shared ones broadcast, ``None`` kept). Runs under a fresh
    ``BatchTrace``, so it can be called at any level (inside a custom rule or a checkpoint)."""

    def run(*xs):
        size = n
        with new_trace(lambda lvl: BatchTrace(lvl, size)) as tr:
            ins = [None if x is None else BatchTracer(tr, x, 0) for x in xs]
            outs = fn(*ins)
            outs = [None if o is None else tr.full_raise(o) for o in outs]
        return [None if o is None else _unbox_front(o, size) for o in outs]

    return run


def _unbox_front(o, size):
    if o.bdim is None:
        shape = (size,) + tuple(o.val.shape)
        return dispatch.broadcast_in_dim(o.val, shape, tuple(range(1, len(shape))))
    return move_axis(dispatch, o.val, o.bdim, 0)


def _take(x, axis: int, i: int):
    spec = tuple(i if j == axis else (None, None, None) for j in range(x.ndim))
    return bind(basic_index_p, x, spec=spec)


def loop_batch(prim, vals, dims, params, size):
    """The fallback: apply ``prim`` to each member and stack the results along axis 0."""
    if prim.name not in _WARNED:
        _WARNED.add(prim.name)
        warnings.warn(
            f"vmap: primitive {prim.name!r} has no batching rule; it runs once per batch "
            f"member (a loop). Give it a rule (Primitive.def_batch) for speed.",
            stacklevel=4,
        )
    per = []
    for i in range(size):
        args = [v if d is None else _take(v, d, i) for v, d in zip(vals, dims)]
        per.append(bind_list(prim, *args, **params))
    outs = []
    for k in range(len(per[0])):
        items = [p[k] for p in per]
        shapes = {tuple(x.shape) for x in items}
        if len(shapes) > 1:
            raise data_dependent(
                f"{prim.name} (output shapes {sorted(map(str, shapes))})",
                "Make the shape independent of the values (a static size such as max_rank), "
                "or loop over the batch.")
        outs.append(dispatch.concatenate(
            [dispatch.reshape(x, (1,) + tuple(x.shape)) for x in items], 0))
    return outs, [0] * len(outs)
