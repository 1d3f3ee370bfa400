"""``custom_vjp`` and ``custom_jvp``: functions whose derivative the user supplies.

For implicit differentiation (fixed points such as converged CTMRG environments, iterative
solvers), straight-through estimators, or numerically better derivatives. As in JAX::

    @tenferro.custom_vjp
    def f(x, y): ...
    def f_fwd(x, y): return f(x, y), residuals       # residuals: any pytree of tensors
    def f_bwd(residuals, ct): return (ct_x, ct_y)     # one cotangent (or None) per argument
    f.defvjp(f_fwd, f_bwd)

    @tenferro.custom_jvp
    def g(x): ...
    @g.defjvp
    def g_jvp(primals, tangents): return g(*primals), tangent_out

What each mode does with the rule (every mode uses it; none differentiates ``f`` itself):

* reverse mode (the eager tape, ``grad``/``vjp``, also through ``jit`` in either order):
  ``custom_vjp`` records one node that calls ``f_bwd``; ``custom_jvp`` stages the JVP rule's
  tangent computation (it must be linear in the tangents) and records its transpose;
* forward mode (``jvp``, ``jacfwd``, ``hvp``): ``custom_jvp`` runs the rule; ``custom_vjp``
  uses the transpose of ``f_bwd`` in the cotangent (a VJP rule is linear in the cotangent, so
  its transpose is the JVP it implies). A ``bwd`` that is not linear (clipping, a
  straight-through estimator) cannot give a forward derivative: that raises and suggests
  ``custom_jvp``;
* staging (``jit``/``make_graph``): one call equation holding the function and its rule as
  sub-programs, saved and loaded with the graph.

The rules run through ``bind`` one level down, so they are themselves differentiable (grad of
grad, hvp). Tensors the function closes over are constants for its rule: pass a value you
differentiate with respect to as an argument.
"""

from __future__ import annotations

import functools

from chainrules import ShapedArray, aval_of
from chainrules.dtypes import is_inexact

from ..core.calls import CustomJVPCall, CustomVJPCall, bind_call, check_closure_operands
from ..core.calls import check_cotangents as _check_cotangents
from ..core.dispatch import bind_list, dispatch
from ..errors import GradientError, NonLinearError, check_callable
from ..ir.eval import eval_program
from ..ir.transpose import transpose_program
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from ..traced.staging import stage_linear
from .tape import _SEQ, Node, released_error


# ------------------------------------------------------------------- public API
class custom_vjp:  # noqa: N801 - a decorator, named like JAX's
    """Decorate a function whose reverse-mode derivative you supply (as ``jax.custom_vjp``).

    For implicit differentiation (a fixed point, an iterative solver), numerically better
    derivatives, or deliberate changes such as gradient clipping. After ``f.defvjp(fwd,
    bwd)``, every mode uses the rule and none differentiates ``f`` itself: reverse mode calls
    ``bwd``; forward mode (``jvp``, ``jacfwd``, ``hvp``) uses the transpose of ``bwd`` (which
    is linear in the cotangent); ``jit``/``make_graph`` stage the function and its rule as
    sub-programs (saved and loaded with a graph); ``vmap`` batches them.

    Parameters
    ----------
    fun : callable
        The primal function of positional tensor (pytree) arguments.

    Returns
    -------
    custom_vjp
        A callable with ``fun``'s signature and a ``defvjp(fwd, bwd)`` method:
        ``fwd(*args) -> (out, residuals)`` (residuals: any pytree of tensors) and
        ``bwd(residuals, ct) -> tuple`` with one cotangent (or ``None`` for zero) per
        positional argument.

    Raises
    ------
    tenferro.errors.GradientError
        ``fun``, ``fwd`` or ``bwd`` is not callable; the function is called before
        ``defvjp``; ``bwd`` returns the wrong number or structure of cotangents, or a
        complex cotangent for a real argument (take its real part on purpose); forward mode
        is asked of a ``bwd`` that is not linear (use ``custom_jvp`` then).

    Notes
    -----
    The rules run through tenferro's primitives, so they are differentiable again (grad of
    grad, ``hvp``). Tensors ``fun`` closes over are constants for the rule: pass what you
    differentiate as an argument. For complex arguments ``bwd`` receives and returns
    cotangents in the convention of ``grad`` (``dL/dRe z + i dL/dIm z``).

    Examples
    --------
    Gradient clipping on the way back:

    >>> import tenferro as tf
    >>> @tf.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def fwd(x):
    ...     return x, None
    >>> def bwd(res, ct):
    ...     return (tf.clip(ct, -1.0, 1.0),)
    >>> _ = clip_gradient.defvjp(fwd, bwd)
    >>> tf.grad(lambda x: tf.sum(5.0 * clip_gradient(x)))(tf.tensor([1.0, 2.0]))
    tensor([1., 1.])
    """

    def __init__(self, fun):
        check_callable("custom_vjp", fun)
        self.fun = fun
        self.fwd = self.bwd = None
        self._trees: dict = {}  # per argument signature: the output and residual structures
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd, bwd):
        """``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct) -> one cotangent (or
        None) per positional argument``. A real argument's cotangent must be real (a complex
        one raises ``GradientError``: take its real part on purpose)."""
        check_callable(f"custom_vjp {self.__name__}: defvjp (fwd)", fwd)
        check_callable(f"custom_vjp {self.__name__}: defvjp (bwd)", bwd)
        self.fwd, self.bwd = fwd, bwd
        return self

    def __call__(self, *args):
        if self.fwd is None:
            raise GradientError(f"custom_vjp {self.__name__}: call defvjp(fwd, bwd) first.")
        flat, in_tree = tree_flatten(args)
        flat = [tensor_of(a) for a in flat]
        in_avals = [aval_of(a) for a in flat]
        trees = self._trees.setdefault((in_tree, tuple(in_avals)), {})

        def fun_flat(*xs):
            return _flatten_out(self.fun(*tree_unflatten(in_tree, xs)), trees)

        def fwd_flat(*xs):
            out, res = self.fwd(*tree_unflatten(in_tree, xs))
            res_leaves, trees["res"] = tree_flatten(res)
            return _flatten_out(out, trees), [tensor_of(r) for r in res_leaves]

        def bwd_flat(res, cts):
            grads = self.bwd(tree_unflatten(trees["res"], res), tree_unflatten(trees["out"], cts))
            return _check_cotangents(call, _per_leaf(grads, args), in_avals)

        call = CustomVJPCall(self.__name__, fun_flat, fwd_flat, bwd_flat, origin=self)
        outs = bind_call(call, *flat)
        return tree_unflatten(trees["out"], outs)


class custom_jvp:  # noqa: N801 - a decorator, named like JAX's
    """Decorate a function whose forward-mode derivative you supply (as ``jax.custom_jvp``).

    After ``f.defjvp(rule)`` every mode uses the rule: forward mode runs it; reverse mode
    stages the rule's tangent computation (which must be linear in the tangents) and records
    its transpose, so one rule serves ``grad``, ``jvp``, ``hvp`` and ``jit``.

    Parameters
    ----------
    fun : callable
        The primal function of positional tensor (pytree) arguments.

    Returns
    -------
    custom_jvp
        A callable with ``fun``'s signature and a ``defjvp(rule)`` method (usable as a
        decorator): ``rule(primals, tangents) -> (out, tangent_out)``, where ``primals`` and
        ``tangents`` are tuples of the arguments and ``tangent_out`` has the structure of the
        output.

    Raises
    ------
    tenferro.errors.GradientError
        ``fun`` or the rule is not callable; the function is called before ``defjvp``; the
        rule's tangent output does not match the output's structure, or its primal output
        depends on the tangents; reverse mode through a rule whose tangent output is not
        linear in the tangents.

    Notes
    -----
    Typical uses: a stable derivative at a point where the composition would produce
    ``0 * inf`` (e.g. ``log1p(exp(x))`` for large ``x``), or an explicit convention at a
    non-differentiable point. For complex arguments the rule gives the R-linear JVP (as
    ``jvp``).

    Examples
    --------
    >>> import tenferro as tf
    >>> @tf.custom_jvp
    ... def softplus(x):
    ...     return tf.log1p(tf.exp(x))
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return softplus(x), t * tf.sigmoid(x)
    >>> tf.grad(softplus)(tf.tensor(0.0))
    tensor(0.5)
    >>> tf.jvp(softplus, (tf.tensor(0.0),), (tf.tensor(2.0),))[1]
    tensor(1.)
    """

    def __init__(self, fun):
        check_callable("custom_jvp", fun)
        self.fun = fun
        self.rule = None
        self._trees: dict = {}
        functools.update_wrapper(self, fun)

    def defjvp(self, rule):
        """``rule(primals, tangents) -> (out, tangent_out)`` (tuples of the arguments; the
        tangent output has the output's structure). Usable as a decorator."""
        check_callable(f"custom_jvp {self.__name__}: defjvp", rule)
        self.rule = rule
        return rule

    def __call__(self, *args):
        if self.rule is None:
            raise GradientError(f"custom_jvp {self.__name__}: call defjvp(rule) first.")
        flat, in_tree = tree_flatten(args)
        flat = [tensor_of(a) for a in flat]
        trees = self._trees.setdefault((in_tree, tuple(aval_of(a) for a in flat)), {})

        def fun_flat(*xs):
            return _flatten_out(self.fun(*tree_unflatten(in_tree, xs)), trees)

        def rule_flat(primals, tangents):
            out, tout = self.rule(tree_unflatten(in_tree, primals),
                                  tree_unflatten(in_tree, tangents))
            outs = _flatten_out(out, trees)
            touts, ttree = tree_flatten(tout)
            if ttree != trees["out"]:
                raise GradientError(
                    f"custom_jvp {self.__name__}: the rule's tangent output {ttree} does not "
                    f"match the output {trees['out']}."
                )
            return outs, [tensor_of(t, like=o) for t, o in zip(touts, outs)]

        call = CustomJVPCall(self.__name__, fun_flat, rule_flat, origin=self)
        outs = bind_call(call, *flat)
        return tree_unflatten(trees["out"], outs)


def _flatten_out(out, trees) -> list:
    leaves, trees["out"] = tree_flatten(out)
    return [tensor_of(o) for o in leaves]


def _per_leaf(grads, args) -> list:
    """One cotangent per positional argument (pytrees allowed) -> one per leaf."""
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    if len(grads) != len(args):
        return list(grads)  # the count check names the mismatch
    out = []
    for g, a in zip(grads, args):
        n = len(tree_flatten(a)[0])
        if g is None:
            out.extend([None] * n)
        else:
            leaves = tree_flatten(g)[0] if n != 1 else [g]
            out.extend(leaves)
    return out


# ------------------------------------------------------------------------ nodes
class CustomVJPNode(Node):
    """A call whose backward pass is the user's ``bwd`` of saved residuals and cotangents."""

    __slots__ = ("call", "saved", "n_out", "out_avals", "in_avals")
    runs_user_code = True

    def __init__(self, tape, call, parents, residuals, out_avals, in_avals, backend):
        self.seq = next(_SEQ)
        self.tape, self.backend = tape, backend
        self.call, self.parents, self.saved = call, parents, residuals
        self.out_avals, self.in_avals = out_avals, in_avals
        self.n_out = len(out_avals)

    @property
    def name(self) -> str:
        return f"custom_vjp {self.call.name}"

    def backward(self, cts, ctx):
        if self.saved is None:
            raise released_error(self.name)
        res = self.tape.load_tensors(self.saved, self, ctx)
        cts = _instantiate(ctx.to_tensors(cts, self), self.out_avals)
        grads = _check_cotangents(self.call, self.call.bwd(res, cts), self.in_avals)
        return ctx.from_tensors([None if p is None or g is None else tensor_of(g)
                                 for g, p in zip(grads, self.parents)])

    def release(self):
        self.saved = None


class LinearNode(Node):
    """A node whose backward pass is a staged linear program (the transpose of a custom JVP
    rule's tangent map); its constants are the residuals."""

    __slots__ = ("program", "n_out", "out_avals", "slots", "label")

    def __init__(self, tape, program, parents, out_avals, slots, label, backend):
        self.seq = next(_SEQ)
        self.tape, self.backend = tape, backend
        self.program, self.parents, self.out_avals = program, parents, out_avals
        self.slots, self.label = slots, label  # argument index of each program output
        self.n_out = len(out_avals)

    @property
    def name(self) -> str:
        return self.label

    def backward(self, cts, ctx):
        if self.program is None:
            raise released_error(self.name)
        cts = _instantiate(ctx.to_tensors(cts, self), self.out_avals)
        lin = eval_program(self.program, cts, bind_list)
        grads = [None] * len(self.parents)
        for i, g in zip(self.slots, lin):
            grads[i] = g
        return ctx.from_tensors([None if p is None else g for g, p in zip(grads, self.parents)])

    def release(self):
        self.program = None


def _instantiate(cts, avals) -> list:
    return [dispatch.full(a.shape, 0, a.dtype) if c is None else c for c, a in zip(cts, avals)]


# -------------------------------------------------------------------- recording
def record_custom_vjp(tape, call, args) -> list:
    """Run ``call``'s forward rule on ``args``' values and record one ``CustomVJPNode``."""
    parents = tuple(tape.parent(a) for a in args)
    check_closure_operands(call, [p is not None for p in parents])
    primals = [tape.lowered(a) for a in args]
    if parents.count(None) == len(parents):
        return bind_call(call, *primals)
    with tape.paused():
        outs, res = call.fwd(*primals)
    _check_no_leak(tape, call, outs)
    node = CustomVJPNode(tape, call, parents, tape.save_residuals(res, primals, args),
                         [aval_of(o) for o in outs], [aval_of(p) for p in primals],
                         getattr(args[0], "_backend", None))
    return [tape.box(o, node, i) if is_inexact(o.dtype) else o for i, o in enumerate(outs)]


def record_custom_jvp(tape, call, args) -> list:
    """Stage ``call``'s JVP rule in the tangents at ``args``' values and record its transpose."""
    parents = tuple(tape.parent(a) for a in args)
    check_closure_operands(call, [p is not None for p in parents])
    primals = [tape.lowered(a) for a in args]
    if parents.count(None) == len(parents):
        return bind_call(call, *primals)
    slots = [i for i, p in enumerate(primals) if is_inexact(p.dtype)]
    got = {}

    def tangent_map(*ts):
        tangents = [dispatch.zeros_like(p) for p in primals]
        for i, t in zip(slots, ts):
            tangents[i] = t
        outs, touts = call.rule(primals, tangents)
        level = ts[0]._trace if ts else None
        if any(getattr(o, "_trace", None) is level for o in outs):
            raise GradientError(f"custom_jvp {call.name}: the rule's primal output depends on "
                                f"the tangents; compute it from the primals only.")
        got["outs"] = outs
        return touts

    with tape.paused():
        linear = stage_linear(tangent_map, [aval_of(primals[i]) for i in slots])
    outs = got["outs"]
    try:
        transposed = transpose_program(linear, [True] * len(slots))
    except NonLinearError as e:
        raise GradientError(
            f"custom_jvp {call.name}: reverse mode transposes the JVP rule, which must be linear "
            f"in the tangents ({e})"
        ) from None
    _check_no_leak(tape, call, outs)
    node = LinearNode(tape, transposed, parents, [aval_of(o) for o in outs], slots,
                      f"custom_jvp {call.name}", getattr(args[0], "_backend", None))
    return [tape.box(o, node, i) if is_inexact(o.dtype) else o for i, o in enumerate(outs)]


def jvp_of_custom_vjp(call, primals, tangents):
    """Forward mode through a ``custom_vjp`` rule: the transpose of ``bwd(res, .)``."""
    outs, res = call.fwd(*primals)
    out_avals = [ShapedArray(o.shape, o.dtype) for o in outs]
    bwd_program = stage_linear(lambda *cts: call.bwd(res, list(cts)), out_avals)
    try:
        forward = transpose_program(bwd_program, [True] * len(out_avals))
    except NonLinearError as e:
        raise GradientError(
            f"forward-mode derivative (jvp, jacfwd, hvp) of custom_vjp function {call.name}: "
            f"its backward rule is not linear in the cotangent ({e}), so it implies no JVP. "
            f"Define the function with tenferro.custom_jvp to give forward mode a rule."
        ) from None
    feed = [t for t, v in zip(tangents, bwd_program.outputs) if v is not None]
    touts = eval_program(forward, feed, bind_list)
    return outs, touts


def _check_no_leak(tape, call, outs) -> None:
    if any(getattr(o, "_trace", None) is tape for o in outs):
        raise GradientError(
            f"{call.kind} function {call.name}: it closes over a value that is being "
            f"differentiated, so its output depends on it outside the rule. Pass that value "
            f"to the function as an argument."
        )
