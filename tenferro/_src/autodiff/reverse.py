"""Reverse mode as a transformation: ``vjp``, ``grad``, ``value_and_grad``.

``TapeTrace`` is the functional front end of the one reverse-mode recorder (``tape.py``): its
values are ``TapeTracer(primal, node)`` with the primal a value one level down. Each primitive
is bound one level down and recorded; the backward pass runs the templates' programs through
``bind`` at that level, so the cotangents are themselves differentiable by any enclosing
transformation: grad of grad, jvp of grad (hvp), and so on, with no special cases.
"""

from __future__ import annotations

import numpy as np

from chainrules import ShapedArray, aval_of
from chainrules.dtypes import is_inexact

from ..core.dispatch import Trace, bind_list, dispatch, new_trace
from ..core.source import take_emitted
from ..core.tracer import PrimalTracer
from ..errors import DTypeError, GradientError, ShapeError, check_callable
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .activity import accumulate, active_argnums, check_spec
from .arguments import check_argnums, resolve_argnums, split_aux
from .call import call_traced
from .custom import record_custom_jvp, record_custom_vjp
from .tape import BindContext, LeafNode, Tape, backward_pass
from .templates import get_template


class TapeTracer(PrimalTracer):
    __slots__ = ("node", "index")

    def __init__(self, trace, primal, node, index):
        self._trace = trace
        self.primal = primal
        self.node = node
        self.index = index

    def _carries_derivative(self) -> bool:
        return self.node is not None

    def __repr__(self):
        return f"TapeTracer({self.primal!r})"

    def _assign(self, new):
        new = self._trace.full_raise(new)
        self.primal, self.node, self.index = new.primal, new.node, new.index


class TapeTrace(Trace, Tape):
    """The functional tape: records primitives bound one level down."""

    def __init__(self, level):
        self.level = level

    # ------------------------------------------------------------ the trace
    def pure(self, x):
        return TapeTracer(self, x, None, 0)

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        take_emitted()
        outs = bind_list(prim, *primals, **params)
        source = take_emitted()  # the staged forward equation's line (under jit)
        parents = tuple(None if t.node is None else (t.node, t.index) for t in tracers)
        if parents.count(None) == len(parents):
            return outs
        tmpl = get_template(prim, params, [aval_of(p) for p in primals],
                            tuple(p is not None for p in parents))
        if True not in tmpl.nonzero_out:
            return outs
        return self.record(tmpl, parents, tracers, outs, source=source)

    def process_checkpoint(self, fn, tracers, policy):
        from .checkpoint import record_checkpoint

        return record_checkpoint(self, fn, tracers, policy)

    def process_custom_vjp(self, call, tracers):
        return record_custom_vjp(self, call, tracers)

    def process_custom_jvp(self, call, tracers):
        return record_custom_jvp(self, call, tracers)

    # ---------------------------------------------------- the tape's hooks
    def parent(self, x):
        return None if x.node is None else (x.node, x.index)

    def lowered(self, x):
        return x.primal

    def box(self, y, node, index):
        return TapeTracer(self, y, node, index)

    def save(self, x):
        return x.primal

    def save_output(self, y):
        return y.primal if type(y) is TapeTracer and y._trace is self else y


def watch(tr, xs, watched=None):
    """``xs`` as inputs of the functional tape ``tr``: tracers with a leaf node each (float and
    complex values, unless ``watched`` says otherwise; others are constants). Returns
    (tracers, leaves)."""
    if watched is None:
        watched = [True] * len(xs)
    leaves = [LeafNode(tr, None, ShapedArray(x.shape, x.dtype))
              if w and is_inexact(x.dtype) else None for x, w in zip(xs, watched)]
    return [TapeTracer(tr, x, leaf, 0) for x, leaf in zip(xs, leaves)], leaves


def vjp(f, *primals, has_aux: bool = False, activity=None):
    """Evaluate ``f(*primals)`` and return a function that pulls cotangents back (reverse mode).

    Use it for the vector-Jacobian product ``ct^H J`` of a function with any outputs (``grad``
    is ``vjp`` seeded with 1 for a real scalar). The forward pass runs once; ``vjp_fn`` can be
    called any number of times, with different cotangents, reusing its saved values.

    Parameters
    ----------
    f : callable
        The function, called as ``f(*primals)``; it returns a tensor or a pytree of tensors
        (with ``has_aux``: a pair ``(output, aux)``).
    *primals : Tensor or pytree of tensors
        The point at which to linearize ``f``. Python numbers and NumPy arrays are converted.
        Float and complex leaves are differentiated; integer and boolean leaves are constants
        (their cotangent is zero).
    has_aux : bool, optional
        ``f`` returns ``(output, aux)``; ``aux`` is returned as is, not differentiated.
    activity : sequence of {"active", "const"}, optional
        One entry per primal (default: all active). A ``"const"`` primal is not watched:
        nothing is recorded or computed backward for it and ``vjp_fn`` returns ``None`` in its
        place (design/vmap.md, "activity").

    Returns
    -------
    out : Tensor or pytree
        ``f(*primals)`` (without the aux part).
    vjp_fn : callable
        ``vjp_fn(ct)`` takes a cotangent of the structure, shapes and dtypes of ``out`` and
        returns a tuple with one cotangent per primal (pytrees kept).
    aux : object
        Only with ``has_aux=True``.

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable, ``activity`` is malformed, or the cotangent's pytree structure
        differs from the output's.
    tenferro.errors.ShapeError
        A cotangent's shape differs from its output's.
    tenferro.errors.DTypeError
        A cotangent's dtype cannot be cast to its output's (e.g. complex into real).

    Notes
    -----
    Complex numbers: for a real loss ``L`` of a complex input ``z`` the cotangent returned is
    ``dL/dRe z + i dL/dIm z`` (PyTorch's convention, so gradient descent is
    ``z - lr * g``); for a complex output the cotangent ``ct`` pulls back as
    ``J^H ct`` with ``J`` the R-linear Jacobian. At points where ``f`` is not differentiable
    each primitive's documented convention applies (e.g. ``abs`` has derivative 0 at 0,
    ``max`` shares the cotangent equally among ties).

    Examples
    --------
    >>> import tenferro as tf
    >>> x = tf.tensor([1.0, 2.0, 3.0])
    >>> out, vjp_fn = tf.vjp(lambda x: x ** 2, x)
    >>> out
    tensor([1., 4., 9.])
    >>> vjp_fn(tf.tensor([1.0, 0.0, 1.0]))
    (tensor([2., 0., 6.]),)

    Two primals, one constant:

    >>> out, vjp_fn = tf.vjp(lambda a, b: a * b, x, x, activity=("active", "const"))
    >>> vjp_fn(tf.ones(3))
    (tensor([1., 2., 3.]), None)
    """
    check_callable("vjp", f)
    const = [False] * len(primals)
    if activity is not None:
        const = [a == "const" for a in check_spec(activity, len(primals), "vjp")]
    flat, tree = tree_flatten(primals)
    flat = [tensor_of(x) for x in flat]
    watched = [not c for p, c in zip(primals, const) for _ in tree_flatten(p)[0]]
    with new_trace(TapeTrace) as tr:
        ins, leaves = watch(tr, flat, watched)
        outs, out_tree, aux = call_traced("vjp", f, tr, tree, ins, has_aux)
    out_primals = [o.primal for o in outs]
    refs = [tr.parent(o) for o in outs]

    def vjp_fn(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise GradientError(
                f"vjp: the cotangent structure {ct_tree} does not match the output {out_tree}."
            )
        seeds = []
        for c, p, r in zip(ct_flat, out_primals, refs):
            c = tensor_of(c, like=p)
            if c.shape != p.shape:
                raise ShapeError(f"vjp: cotangent shape {c.shape} != output shape {p.shape}.")
            if c.dtype != p.dtype:
                if not np.can_cast(c.dtype, p.dtype, "same_kind"):
                    raise DTypeError(f"vjp: cotangent dtype {c.dtype} != output dtype {p.dtype}.")
                c = dispatch.convert(c, p.dtype)
            if r is not None:
                seeds.append((r[0], r[1], c))
        got = backward_pass(seeds, BindContext(), retain_graph=True) if seeds else {}
        grads = []
        for x, leaf, w in zip(flat, leaves, watched):
            g = got.get((id(leaf), 0)) if leaf is not None else None
            grads.append(g[1] if g is not None else dispatch.zeros_like(x) if w else None)
        res = tree_unflatten(tree, grads)
        if activity is not None:
            res = tuple(None if c else r for r, c in zip(res, const))
        return res

    out_tree_val = tree_unflatten(out_tree, out_primals)
    if has_aux:
        return out_tree_val, vjp_fn, aux
    return out_tree_val, vjp_fn


def _check_scalar_out(out):
    if not hasattr(out, "shape") or out.size != 1:
        raise GradientError(
            f"grad: the function must return a one-element tensor, got "
            f"{getattr(out, 'shape', type(out).__name__)}. Use vjp or jacrev for other outputs."
        )
    if not is_inexact(out.dtype) or out.dtype.kind == "c":
        raise DTypeError(
            f"grad: the function must return a real float value, got {out.dtype}. For complex "
            f"outputs differentiate .real, abs(...)**2, or use vjp."
        )


def check_inexact_args(name: str, args, nums) -> None:
    """Differentiating with respect to an integer or boolean input is a mistake (its
    derivative would silently be zero): raise, as JAX does."""
    for n, a in zip(nums, args):
        for leaf in tree_flatten(a)[0]:
            dt = getattr(leaf, "dtype", None)
            if dt is None:
                if isinstance(leaf, (bool, int)):
                    dt = np.dtype(bool if isinstance(leaf, bool) else np.int64)
                else:
                    continue
            dt = np.dtype(dt)
            if dt.kind in "biu":
                raise DTypeError(
                    f"{name}: argument {n} has dtype {dt} (shape {tuple(np.shape(leaf))}); "
                    f"derivatives are taken with respect to float or complex inputs only. Pass "
                    f"a float value (e.g. x.astype(float), or 3.0 instead of 3), or leave the "
                    f"argument out of argnums."
                )


def value_and_grad(f, argnums=0, has_aux: bool = False, *, activity=None,
                   accumulate_into=None):
    """Make a function that returns both ``f(*args)`` and its gradient, in one pass.

    Same as ``grad`` (see there for every parameter and convention) but the returned function
    gives ``(value, gradient)``, or ``((value, aux), gradient)`` with ``has_aux=True``:
    the value comes from the forward pass the gradient needed anyway.

    Parameters
    ----------
    f : callable
        A function returning a real one-element tensor (with ``has_aux``: ``(value, aux)``).
    argnums : int or tuple of int, optional
        Which positional arguments to differentiate (default 0; negative counts from the end).
        A tuple gives a tuple of gradients.
    has_aux : bool, optional
        ``f`` returns ``(value, aux)``; aux is passed through, not differentiated.
    activity : sequence of {"active", "const"}, optional
        Instead of ``argnums``: one entry per positional argument (Enzyme's Active/Const);
        the gradient is then the tuple of the active arguments' gradients.
    accumulate_into : Tensor or tuple, optional
        Caller-owned eager buffers the gradients are added into in place (Enzyme's
        Duplicated shadows): the buffer itself for one differentiated argument, else one
        buffer (or None) per differentiated argument. The gradients returned are those
        buffers (design/vmap.md, "activity").

    Returns
    -------
    callable
        ``value_and_grad(f)(*args, **kwargs) -> (value, gradient)``; keyword arguments are
        passed to ``f`` and not differentiated.

    Raises
    ------
    tenferro.errors.GradientError
        As ``grad``: ``f`` not callable, bad ``argnums``, output not one element.
    tenferro.errors.DTypeError
        As ``grad``: integer/boolean argument differentiated, complex or integer output.

    Notes
    -----
    The conventions are ``grad``'s: complex inputs get ``dL/dRe z + i dL/dIm z``;
    non-differentiable points follow each primitive's documented convention.

    Examples
    --------
    >>> import tenferro as tf
    >>> loss = lambda w: tf.sum((w - 1.0) ** 2)
    >>> value, g = tf.value_and_grad(loss)(tf.tensor([0.0, 3.0]))
    >>> value
    tensor(5.)
    >>> g
    tensor([-2.,  4.])
    """
    check_callable("grad", f)
    single = isinstance(argnums, int) and not isinstance(argnums, bool) and activity is None
    if activity is None:
        argnums = check_argnums("grad", argnums)  # a clear error now, not at the first call

    def wrapped(*args, **kwargs):
        nums = active_argnums(activity, argnums, len(args), "grad")
        nums = resolve_argnums("grad", nums, len(args))

        def partial(*diff):
            full = list(args)
            for n, d in zip(nums, diff):
                full[n] = d
            out = f(*full, **kwargs)
            return split_aux("grad", out) if has_aux else out

        check_inexact_args("grad", [args[n] for n in nums], nums)
        res = vjp(partial, *[args[n] for n in nums], has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        _check_scalar_out(out)
        g = tuple(vjp_fn(dispatch.ones_like(out)))
        if accumulate_into is not None:
            g = accumulate(accumulate_into, g, "grad")
        g = g[0] if single else g
        return ((out, res[2]) if has_aux else out), g

    wrapped.__name__ = f"value_and_grad({getattr(f, '__name__', 'f')})"
    return wrapped


def grad(f, argnums=0, has_aux: bool = False, *, activity=None, accumulate_into=None):
    """Make a function that returns the gradient of the real scalar function ``f``.

    ``grad(f)(*args)`` evaluates ``f(*args)`` once, recording it, and runs one reverse
    pass from the seed 1. The result works in eager mode (no ``requires_grad`` needed), on
    traced tensors under ``jit``, and nests with every transformation (``grad(grad(f))``,
    ``jvp(grad(f))``, ``vmap(grad(f))``) to any order, because every primitive's reverse rule
    is the transpose of its forward rule.

    Parameters
    ----------
    f : callable
        The function to differentiate. It must return a real floating-point tensor with
        one element (shape ``()`` or ``(1,)``...), or ``(value, aux)`` with ``has_aux``.
        Its arguments may be tensors, Python numbers, NumPy arrays or pytrees (tuples,
        lists, dicts, registered classes) of them.
    argnums : int or tuple of int, optional
        Which positional arguments to differentiate with respect to (default 0; negative
        numbers count from the end). An int gives one gradient, a tuple a tuple of gradients
        in the same order.
    has_aux : bool, optional
        ``f`` returns a pair ``(value, aux)``; only ``value`` is differentiated and the
        function returns ``(gradient, aux)``.
    activity : sequence of {"active", "const"}, optional
        Instead of ``argnums``, one entry per positional argument (see
        ``value_and_grad``); constant arguments are never recorded.
    accumulate_into : Tensor or tuple, optional
        Buffers the gradients are added into in place (see ``value_and_grad``).

    Returns
    -------
    callable
        ``grad(f)(*args, **kwargs)`` returns the gradient with the structure, shape and dtype
        of the differentiated argument(s) (a tuple for a tuple ``argnums``), or
        ``(gradient, aux)`` with ``has_aux=True``. Keyword arguments are passed to ``f`` and
        not differentiated.

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable, ``argnums`` is not an int or a tuple of ints (or names an
        argument that was not passed), or ``f`` returns more than one element (use ``vjp``
        or ``jacrev``).
    tenferro.errors.DTypeError
        A differentiated argument is an integer or boolean (its derivative would silently
        be zero: pass ``3.0``, not ``3``), or ``f`` returns a complex or integer value
        (differentiate ``.real`` or ``abs(...) ** 2``).

    Notes
    -----
    Complex inputs: the gradient of a real ``L`` with respect to a complex ``z`` is
    ``dL/dRe z + i dL/dIm z`` (PyTorch's convention; JAX returns its conjugate), so
    ``grad(lambda z: abs(z) ** 2)(z) == 2 * z`` and ``z - lr * grad`` descends.

    Non-differentiable points: each primitive's docstring gives its convention; the common
    ones are ``abs'(0) = 0`` (``sign(0) = 0``), ``relu'(0) = 0``, and ties of ``max``/``min``
    /``sort`` sharing the cotangent equally. Decompositions at degenerate spectra are
    described in ``tenferro.linalg.svd`` and ``tenferro.linalg.eigh``.

    Gradients of tensors ``f`` closes over are not computed: pass what you differentiate
    as an argument.

    Examples
    --------
    >>> import tenferro as tf
    >>> f = lambda x: tf.sum(x ** 3)
    >>> tf.grad(f)(tf.tensor([1.0, 2.0]))
    tensor([ 3., 12.])

    Several arguments, and a second derivative:

    >>> tf.grad(lambda x, y: x * y ** 2, argnums=(0, 1))(2.0, 3.0)
    (tensor(9.), tensor(12.))
    >>> tf.grad(tf.grad(lambda x: x ** 3))(2.0)
    tensor(12.)

    Auxiliary outputs and complex inputs:

    >>> def loss(x):
    ...     y = x * 2.0
    ...     return tf.sum(y ** 2), y
    >>> tf.grad(loss, has_aux=True)(tf.tensor([1.0]))
    (tensor([8.]), tensor([2.]))
    >>> tf.grad(lambda z: tf.abs(z) ** 2)(tf.tensor(1.0 + 2.0j))
    tensor(2.+4.j, dtype=complex128)

    Non-scalar outputs raise:

    >>> tf.grad(lambda x: x * 2.0)(tf.tensor([1.0, 2.0]))
    Traceback (most recent call last):
        ...
    tenferro.errors.GradientError: grad: the function must return a one-element tensor, got (2,)...
    """
    vg = value_and_grad(f, argnums, has_aux, activity=activity, accumulate_into=accumulate_into)

    def wrapped(*args, **kwargs):
        (val, g) = vg(*args, **kwargs)
        if has_aux:
            return g, val[1]
        return g

    wrapped.__name__ = f"grad({getattr(f, '__name__', 'f')})"
    return wrapped
