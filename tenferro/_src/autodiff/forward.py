"""Forward mode: ``jvp`` (``hvp``, ``jacfwd`` and ``linearize`` build on it).

``JVPTrace`` carries (primal, tangent) pairs; each primitive's ``jvp`` rule runs with the
dispatch builder, so both halves are computed one level down, where an enclosing
transformation sees them. Levels keep nested derivatives apart (no perturbation confusion).
"""

from __future__ import annotations

from chainrules import Zero, aval_of
from chainrules.dtypes import is_inexact

from ..core.calls import bind_call, check_closure_operands
from ..core.dispatch import Trace, bind_list, dispatch, new_trace
from ..core.tracer import PrimalTracer
from ..errors import DTypeError, ShapeError, check_callable
from ..ops._base import tensor_of
from ..pytree import tree_flatten, tree_unflatten
from .arguments import argument_tuple
from .call import call_traced
from .custom import jvp_of_custom_vjp


class JVPTracer(PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    def _carries_derivative(self) -> bool:
        return type(self.tangent) is not Zero

    def __repr__(self):
        return f"JVPTracer({self.primal!r}, tangent={self.tangent!r})"

    def _assign(self, new):
        new = self._trace.full_raise(new)
        self.primal, self.tangent = new.primal, new.tangent


class JVPTrace(Trace):
    def __init__(self, level):
        self.level = level

    def pure(self, x):
        return JVPTracer(self, x, Zero(aval_of(x)))

    def process_primitive(self, prim, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(type(t) is Zero for t in tangents):
            return bind_list(prim, *primals, **params)
        out, tout = prim.jvp(dispatch, primals, tangents, **params)
        return self._box(prim.as_list(out), prim.as_list(tout))

    def _box(self, outs, touts) -> list:
        return [o if t is None or type(t) is Zero else JVPTracer(self, o, t)
                for o, t in zip(outs, touts)]

    def process_custom_jvp(self, call, tracers):
        primals, tangents = self._split(call, tracers)
        if tangents is None:
            return bind_call(call, *primals)
        outs, touts = call.rule(primals, tangents)
        return self._box(outs, touts)

    def process_custom_vjp(self, call, tracers):
        primals, tangents = self._split(call, tracers)
        if tangents is None:
            return bind_call(call, *primals)
        return self._box(*jvp_of_custom_vjp(call, primals, tangents))

    @staticmethod
    def _split(call, tracers):
        """Primals, and instantiated tangents (``None`` when every tangent is zero)."""
        primals = [t.primal for t in tracers]
        nonzero = [type(t.tangent) is not Zero for t in tracers]
        check_closure_operands(call, nonzero)
        if not any(nonzero):
            return primals, None
        return primals, [dispatch.instantiate(t.tangent) for t in tracers]


def _check_tangent(p, t):
    if t.shape != p.shape:
        raise ShapeError(f"jvp: tangent shape {t.shape} does not match primal shape {p.shape}.")
    if t.dtype != p.dtype:
        raise DTypeError(f"jvp: tangent dtype {t.dtype} does not match primal dtype {p.dtype}.")


def jvp(f, primals, tangents, has_aux: bool = False):
    """Evaluate ``f(*primals)`` and its directional derivative along ``tangents`` (forward mode).

    One pass computes the output and the Jacobian-vector product ``J(primals) @ tangents``
    together, at about the cost of evaluating ``f`` two or three times and with no tape: the
    right mode for few inputs and many outputs, and (as ``jvp(grad(f))``) for Hessian-vector
    products.

    Parameters
    ----------
    f : callable
        Called as ``f(*primals)``; returns a tensor or pytree of tensors (with ``has_aux``:
        ``(output, aux)``).
    primals : tuple
        The arguments (a tuple or list, each entry a tensor, number, array or pytree).
    tangents : tuple
        The direction: the same pytree structure, shapes and dtypes as ``primals``. Tangents of
        integer or boolean primals are ignored (those inputs are constants).
    has_aux : bool, optional
        ``f`` returns ``(output, aux)``; aux is returned third, not differentiated.

    Returns
    -------
    primals_out : Tensor or pytree
        ``f(*primals)``.
    tangents_out : Tensor or pytree
        ``J @ tangents``, with the structure of the output (zeros where an output does not
        depend on the inputs).
    aux : object
        Only with ``has_aux=True``.

    Raises
    ------
    tenferro.errors.GradientError
        ``f`` is not callable, or ``primals``/``tangents`` is not a tuple or list.
    tenferro.errors.ShapeError
        ``primals`` and ``tangents`` differ in pytree structure or in a leaf's shape.
    tenferro.errors.DTypeError
        A tangent's dtype differs from its primal's.

    Notes
    -----
    Complex numbers: the JVP is the R-linear derivative, ``f(z + eps t) = f(z) + eps J t``,
    so it is exact for non-holomorphic functions too (``jvp(abs, (z,), (t,))`` gives
    ``Re(conj(z) t) / |z|``). Non-differentiable points follow each primitive's convention
    (e.g. ``abs'(0) = 0``), the same as reverse mode, since reverse mode is the transpose
    of these rules.

    Examples
    --------
    >>> import tenferro as tf
    >>> tf.jvp(tf.sin, (tf.tensor(0.0),), (tf.tensor(2.0),))
    (tensor(0.), tensor(2.))
    >>> x = tf.tensor([1.0, 2.0, 3.0])
    >>> y, dy = tf.jvp(lambda x: x ** 2, (x,), (tf.ones(3),))
    >>> dy
    tensor([2., 4., 6.])
    """
    check_callable("jvp", f)
    primals = argument_tuple("jvp", "primals", primals)
    tangents = argument_tuple("jvp", "tangents", tangents)
    pflat, ptree = tree_flatten(primals)
    tflat, ttree = tree_flatten(tangents)
    if ptree != ttree:
        raise ShapeError(f"jvp: primals {ptree} and tangents {ttree} differ in structure.")
    pflat = [tensor_of(p) for p in pflat]
    tflat = [tensor_of(t, like=p) for p, t in zip(pflat, tflat)]
    with new_trace(JVPTrace) as tr:
        ins = []
        for p, t in zip(pflat, tflat):
            if is_inexact(p.dtype):
                _check_tangent(p, t)
                ins.append(JVPTracer(tr, p, t))
            else:
                ins.append(p)
        outs, otree, aux = call_traced("jvp", f, tr, ptree, ins, has_aux)
    touts = [dispatch.instantiate(o.tangent) for o in outs]
    res = tree_unflatten(otree, [o.primal for o in outs]), tree_unflatten(otree, touts)
    return (res + (aux,)) if has_aux else res
